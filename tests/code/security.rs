//! Every escape and limit ends with a clear error result and the host unharmed: the same
//! toolkit runs a program normally right after each.

use std::sync::Arc;
use std::time::{Duration, Instant};

use agent_toolkit::ToolContext;
use agent_toolkit::code::CodeMode;

use super::fixtures::{Effects, toolkit};
use super::{err, ok};

/// Run `code` with small limits; then check the host still runs programs.
async fn contained(code: &str) -> String {
    let toolkit = toolkit(Arc::new(Effects::default()));
    let mode = CodeMode::new()
        .cpu_limit(Duration::from_millis(300))
        .time_limit(Duration::from_secs(5))
        .memory_limit(32 << 20);
    let started = Instant::now();
    let result = mode.run(&toolkit, "evil", code, &ToolContext::new()).await;
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "the host waited {:?}",
        started.elapsed()
    );
    let after = mode
        .run(
            &toolkit,
            "fine",
            r#"return (await tools.forecast({ city: "Oslo" })).city;"#,
            &ToolContext::new(),
        )
        .await;
    assert_eq!(ok(&after), "Oslo");
    match &result.outcome {
        Ok(out) => format!("ok: {}", out.as_text()),
        Err(e) => format!("{:?}: {}", e.kind(), e.message()),
    }
}

#[tokio::test]
async fn an_endless_loop_is_stopped_by_the_cpu_limit() {
    let message = contained("while (true) {}").await;
    assert!(
        message.starts_with("Timeout: the program used up its CPU time"),
        "{message}"
    );
}

#[tokio::test]
async fn an_endless_loop_that_catches_everything_is_still_stopped() {
    let message = contained("while (true) { try { for (;;) {} } catch (e) {} }").await;
    assert!(
        message.starts_with("Timeout: the program used up its CPU time"),
        "{message}"
    );
}

#[tokio::test]
async fn a_gigabyte_allocation_fails_within_the_memory_limit() {
    let message = contained("const big = new ArrayBuffer(1 << 30); return big.byteLength;").await;
    assert!(message.contains("out of memory"), "{message}");
    let message = contained("const a = []; while (true) a.push('x'.repeat(1 << 20));").await;
    assert!(message.contains("out of memory"), "{message}");
}

#[tokio::test]
async fn deep_recursion_hits_the_stack_limit() {
    let message = contained("function f(n) { return f(n + 1) + 1; } return f(0);").await;
    assert!(
        message.contains("recursed too deeply") || message.contains("stack"),
        "{message}"
    );
}

#[tokio::test]
async fn import_is_not_available() {
    let message = contained("import fs from 'fs'; return 1;").await;
    assert!(message.contains("SyntaxError"), "{message}");
    let message = contained("const fs = await import('fs'); return fs;").await;
    assert!(
        message.starts_with("Execution: the program failed"),
        "{message}"
    );
}

#[tokio::test]
async fn eval_finds_no_host_names() {
    for name in [
        "process.env",
        "require('fs')",
        "Deno",
        "std.getenv('HOME')",
        "os.exec(['ls'])",
        "hostCall",
        "hostPrint",
        "fetch('http://x')",
    ] {
        let code = format!("return eval({:?});", name);
        let message = contained(&code).await;
        assert!(
            message.contains("ReferenceError") || message.contains("is not defined"),
            "{name}: {message}"
        );
    }
    // `globalThis` has no host object either.
    let message = contained("return Object.getOwnPropertyNames(globalThis).filter(n => /^(host.*|std|os|process|require|fetch|Deno|Bun)$/i.test(n));").await;
    assert_eq!(message, "ok: []");
}

#[tokio::test]
async fn the_tools_object_cannot_be_tampered_with() {
    let message = contained(r#"
        const out = [];
        try { tools.forecast = async () => ({ high: 99 }); } catch (e) { out.push(e.name); }
        try { tools.fake = async () => 1; } catch (e) { out.push(e.name); }
        try { Object.setPrototypeOf(tools, { fake: async () => 1 }); } catch (e) { out.push(e.name); }
        try { Object.defineProperty(tools, "charge", { value: 1 }); } catch (e) { out.push(e.name); }
        try { globalThis.tools = {}; } catch (e) { out.push(e.name); }
        try { delete tools.forecast; } catch (e) { out.push(e.name); }
        Object.prototype.toJSON = function () { return { city: "Hacked" }; };
        Function.prototype.call = () => "hijacked";
        Promise.prototype.then = function () { return "hijacked"; };
        out.push(typeof tools.fake);
        return out.join(",");
    "#).await;
    assert_eq!(
        message,
        "ok: TypeError,TypeError,TypeError,TypeError,TypeError,TypeError,undefined"
    );
}

#[tokio::test]
async fn a_promise_that_never_settles_ends_the_program() {
    let message = contained("await new Promise(() => {}); return 1;").await;
    assert!(
        message.contains("waits on a promise that nothing settles"),
        "{message}"
    );
}

#[tokio::test]
async fn too_many_calls_end_the_program() {
    let toolkit = toolkit(Arc::new(Effects::default()));
    let result = CodeMode::new()
        .max_calls(5)
        .run(
            &toolkit,
            "p",
            "for (let i = 0; i < 10; i++) await tools.forecast({ city: 'a' + i }); return 1;",
            &ToolContext::new(),
        )
        .await;
    assert!(
        err(&result).contains("more than 5 tool calls"),
        "{}",
        err(&result)
    );
}

#[tokio::test]
async fn the_wall_clock_limit_stops_a_program_waiting_on_slow_calls() {
    let toolkit = toolkit(Arc::new(Effects::default()));
    let mode = CodeMode::new()
        .time_limit(Duration::from_millis(200))
        .cpu_limit(Duration::from_secs(10));
    let started = Instant::now();
    // Busy but below the CPU limit, and never done: the wall clock ends it.
    let result = mode
        .run(
            &toolkit,
            "p",
            "let i = 0; while (true) { i++; }",
            &ToolContext::new(),
        )
        .await;
    assert!(started.elapsed() < Duration::from_secs(3));
    assert!(
        err(&result).starts_with("Timeout: the program did not finish within its time limit"),
        "{}",
        err(&result)
    );
}

#[tokio::test]
async fn the_wall_clock_limit_holds_while_a_call_runs() {
    let effects = Arc::new(Effects::default());
    let toolkit = toolkit(effects.clone());
    let mode = CodeMode::new().time_limit(Duration::from_millis(200));
    let started = Instant::now();
    // `wait_gate` waits until the gate opens, which nothing does.
    let result = mode
        .run(
            &toolkit,
            "p",
            "await tools.wait_gate(); return 1;",
            &ToolContext::new(),
        )
        .await;
    assert!(started.elapsed() < Duration::from_secs(3));
    assert!(
        err(&result).starts_with("Timeout: the program did not finish within its time limit"),
        "{}",
        err(&result)
    );
}

#[tokio::test]
async fn calls_never_awaited_are_dropped_with_the_program() {
    // The program ends with calls it made and never awaited: they never run, and the host
    // frees the sandbox cleanly.
    let message = contained("tools.charge({ customer: 'x', cents: 1 }); tools.forecast({ city: 'Oslo' }); return 'left';").await;
    assert_eq!(message, "ok: left");
    let message = contained("tools.forecast({ city: 'Oslo' }); throw new Error('boom');").await;
    assert!(message.contains("Error: boom"), "{message}");
}
