//! Programs calling tools: results, parallel calls, printing, errors thrown into the program,
//! the precedence rule and groups applied to calls from code, deferred tools found by search.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use agent_toolkit::ToolContext;
use agent_toolkit::code::CodeMode;

use super::fixtures::{Effects, toolkit};
use super::{err, ok};

async fn run(code: &str) -> (agent_toolkit::ToolResult, Arc<Effects>) {
    let effects = Arc::new(Effects::default());
    let toolkit = toolkit(effects.clone());
    let result = CodeMode::new()
        .run(&toolkit, "prog-1", code, &ToolContext::new())
        .await;
    (result, effects)
}

#[tokio::test]
async fn a_program_fans_out_and_returns_one_answer() {
    let (result, effects) = run(r#"
        const cities = ["Oslo", "Lisbon", "Rome", "Cairo"];
        const all = await Promise.all(cities.map(city => tools.forecast({ city })));
        all.sort((a, b) => b.high - a.high);
        text(`checked ${all.length}`);
        return all[0];
    "#)
    .await;
    let text = ok(&result);
    assert_eq!(effects.lookups.load(Ordering::SeqCst), 4);
    let (printed, value) = text.split_once('\n').expect("printed line, then the value");
    assert_eq!(printed, "checked 4");
    let best: serde_json::Value = serde_json::from_str(value).unwrap();
    let highs: Vec<i64> = ["Oslo", "Lisbon", "Rome", "Cairo"]
        .iter()
        .map(|c| c.bytes().map(i64::from).sum::<i64>() % 35)
        .collect();
    assert_eq!(best["high"], *highs.iter().max().unwrap());
    assert_eq!(result.call_id.as_ref(), "prog-1");
    assert_eq!(result.name, "run_code");
}

#[tokio::test]
async fn a_failed_call_throws_a_tool_error_the_program_can_catch() {
    let (result, effects) = run(r#"
        try {
            await tools.charge({ customer: "acme", cents: -5 });
            return "no error";
        } catch (e) {
            return `${e.name} ${e.tool} ${e.kind}: ${e.message}`;
        }
    "#)
    .await;
    assert_eq!(
        ok(&result),
        "ToolError charge execution: cannot charge -5 cents"
    );
    assert_eq!(effects.charges.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn an_uncaught_error_is_the_error_result_with_its_line() {
    let (result, _) = run("const x = 1;\nnull.field;\n").await;
    let message = err(&result);
    assert!(
        message.starts_with("Execution: the program failed: TypeError"),
        "{message}"
    );
    assert!(message.contains(":2"), "the line is named: {message}");
}

#[tokio::test]
async fn a_syntax_error_is_an_argument_error() {
    let (result, _) = run("return (;").await;
    let message = err(&result);
    assert!(
        message.starts_with("InvalidArguments: the program does not parse: SyntaxError"),
        "{message}"
    );
}

#[tokio::test]
async fn arguments_are_checked_as_a_models_are() {
    let (result, _) = run(r#"
        try { await tools.forecast({ town: "Oslo" }); } catch (e) { return e.kind; }
    "#)
    .await;
    assert_eq!(ok(&result), "invalid_arguments");
}

#[tokio::test]
async fn one_value_goes_to_a_tools_one_parameter() {
    // As programs call functions: `forecast` has one parameter, `send` one visible one (its key
    // is hidden). `charge` has two, so a lone value is refused with a valid call to copy.
    let (result, _) = run(r#"
        const a = await tools.forecast("Oslo");
        const b = await tools.send("bo");
        try { await tools.charge(100); return "charged"; }
        catch (e) { return [a.city, b, e.kind, e.message.includes('"customer"')]; }
    "#)
    .await;
    assert_eq!(
        ok(&result),
        r#"["Oslo","sent to bo with key 5","invalid_arguments",true]"#
    );
}

#[tokio::test]
async fn switched_off_tools_are_refused_from_code() {
    let effects = Arc::new(Effects::default());
    let toolkit = toolkit(effects.clone());
    toolkit.set_group_active("weather", false).unwrap();
    let code = CodeMode::new();
    assert!(
        !code
            .definition(&toolkit)
            .description()
            .contains("forecast(")
    );
    let result = code
        .run(
            &toolkit,
            "p",
            r#"await tools.forecast({ city: "Oslo" }); return "ran";"#,
            &ToolContext::new(),
        )
        .await;
    // Not in the view's `tools` at all: calling it is a TypeError.
    assert!(err(&result).contains("TypeError"), "{}", err(&result));
    // Switched off after the program started: the toolkit refuses it.
    toolkit.set_group_active("weather", true).unwrap();
    let ctx = ToolContext::new();
    let switching = code
        .run(
            &toolkit,
            "q",
            r#"const first = await tools.forecast({ city: "Oslo" });
               await tools.wait_gate();
               try { await tools.forecast({ city: "Rome" }); return "ran"; } catch (e) { return e.kind; }"#,
            &ctx,
        );
    let toggler = async {
        // Switch the group off while the program waits on its first call's answer.
        while effects.lookups.load(Ordering::SeqCst) == 0 {
            tokio::task::yield_now().await;
        }
        toolkit.set_group_active("weather", false).unwrap();
        effects.gate.notify_one();
    };
    let (result, ()) = tokio::join!(switching, toggler);
    assert_eq!(ok(&result), "unavailable");
    assert_eq!(effects.lookups.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn hidden_parameters_cannot_be_set_from_code() {
    let (result, _) = run(r#"
        const fine = await tools.send({ to: "bo" });
        try { await tools.send({ to: "bo", api_key: "stolen" }); return "set"; }
        catch (e) { return fine + " | " + e.kind; }
    "#)
    .await;
    assert_eq!(ok(&result), "sent to bo with key 5 | hidden_argument");
}

#[tokio::test]
async fn deferred_tools_are_found_by_search_then_callable() {
    let effects = Arc::new(Effects::default());
    let toolkit = toolkit(effects);
    let code = CodeMode::new();
    let description = code.definition(&toolkit).description().to_string();
    assert!(description.contains("search_tools("), "{description}");
    assert!(
        !description.contains("find_invoices("),
        "deferred tools are not declared up front"
    );
    let result = code
        .run(
            &toolkit,
            "p",
            r#"
            let before;
            try { await tools.find_invoices({ customer: "acme" }); before = "ran"; } catch (e) { before = e.kind; }
            const hits = await search_tools("invoices for a customer");
            const found = hits.find(h => h.name === "find_invoices");
            const invoices = await tools.find_invoices({ customer: "acme" });
            return { before, signature: found.signature, invoices };
            "#,
            &ToolContext::new(),
        )
        .await;
    let value: serde_json::Value = serde_json::from_str(&ok(&result)).unwrap();
    assert_eq!(value["before"], "unavailable");
    assert!(
        value["signature"]
            .as_str()
            .unwrap()
            .contains("find_invoices(args: { customer: string })")
    );
    assert_eq!(value["invoices"], serde_json::json!([4, 42]));
}

#[tokio::test]
async fn approvals_are_asked_of_the_toolkits_approver() {
    let effects = Arc::new(Effects::default());
    let toolkit = toolkit(effects.clone()).with_approval_hook(
        |request: agent_toolkit::exec::ApprovalRequest| async move {
            if request.call_id.ends_with("/0") {
                agent_toolkit::exec::ApprovalDecision::Approve
            } else {
                agent_toolkit::exec::ApprovalDecision::Deny("only the first".into())
            }
        },
    );
    let result = CodeMode::new()
        .run(
            &toolkit,
            "p",
            r#"const a = await tools.delete_record({ id: 1 });
               try { await tools.delete_record({ id: 2 }); } catch (e) { return a + " | " + e.kind; }"#,
            &ToolContext::new(),
        )
        .await;
    assert_eq!(ok(&result), "deleted 1 | denied");
    assert_eq!(effects.charges.load(Ordering::SeqCst), 100);
}

#[tokio::test]
async fn printing_and_returning_nothing() {
    let (result, _) = run(r#"console.log("a", 1, {b: 2}); print([3]);"#).await;
    assert_eq!(ok(&result), "a 1 {\"b\":2}\n[3]");
    let (result, _) = run("const x = 1;").await;
    assert_eq!(
        ok(&result),
        "(the program returned nothing and printed nothing)"
    );
}

#[tokio::test]
async fn random_and_the_clock_are_fixed_by_the_journal() {
    use agent_toolkit::code::{Journal, JournalStore, MemoryJournalStore};
    let code = "return [Math.random(), Math.random(), Date.now(), new Date().getTime()];";
    let toolkit = toolkit(Arc::new(Effects::default()));
    let mut seen = Vec::new();
    for id in ["a", "b"] {
        let store = MemoryJournalStore::new();
        let journal = Journal::new(code).with_seed_and_clock(7, 1_700_000_000_000.0);
        store.save(id, &journal).await.unwrap();
        let result = CodeMode::new()
            .journal_store(store)
            .run(&toolkit, id, code, &ToolContext::new())
            .await;
        seen.push(ok(&result));
    }
    assert_eq!(seen[0], seen[1]);
    let values: Vec<f64> = serde_json::from_str(&seen[0]).unwrap();
    assert_ne!(values[0], values[1]);
    assert!((0.0..1.0).contains(&values[0]));
    assert_eq!(values[2], 1_700_000_000_000.0);
    assert_eq!(values[3], 1_700_000_000_000.0);
}
