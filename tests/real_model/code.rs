//! Code mode with the real model: the tasks of the code-mode figures (tests/code/tasks.rs),
//! solved by the model writing a program that runs in the local sandbox, and by the model
//! calling the tools directly; the success rates side by side (printed, and recorded in
//! BENCHMARKS.md). What must hold whatever the model writes: in code mode it is shown the code
//! tool alone, every call (a program, or a declared tool called directly) gets exactly one
//! result, and every run ends with an answer or a typed error. The success rates are figures,
//! not assertions: the 0.5B model mostly calls the declared functions directly rather than
//! writing a program (see BENCHMARKS.md).

use agent_toolkit::code::{CODE_TOOL, CodeExecution, CodeMode};

use super::code_tasks::{self, Task};
use super::model::Template;
use super::*;

/// Instructions that show a whole call of `run_code`, for the A/B against the default ones.
const EXAMPLE_INSTRUCTIONS: &str = "You have one tool, `run_code`. It runs a JavaScript program \
    in which every tool it declares is an async function: `await tools.NAME({...})`. Write one \
    program that makes all the calls the question needs and returns their results, then answer \
    from what it returns. A call of run_code looks like this:\n\
    {\"name\": \"run_code\", \"arguments\": {\"code\": \"const [a, b] = await Promise.all([tools.lookup({id: 1}), tools.lookup({id: 2})]); return {a, b};\"}}\n\
    Do not call the declared tools by their own names: they exist only inside the program.";

struct Outcome {
    solved: bool,
    round_trips: usize,
    programs: usize,
    programs_ok: usize,
}

async fn attempt(server: &ModelServer, task: &Task, code: bool) -> Outcome {
    // `CODE_CONSTRAINED=1`: both sides with constrained tool calls (the reply held to a call of
    // an offered tool or an answer; in code mode the one offered tool is `run_code`).
    let model = if std::env::var_os("CODE_CONSTRAINED").is_some() {
        Recorded::of(std::sync::Arc::new(server.openai_constrained()))
    } else {
        Recorded::new(server, Wire::OpenAi)
    };
    let mut builder = ReActAgent::builder(model.clone())
        .toolkit(&code_tasks::toolkit())
        .max_iterations(if code { 3 } else { 4 })
        // Room for a program: 200 tokens (the other real-model tests' bound) cut the 1.5B's
        // longer programs in the middle.
        .generation_options(model::options().with_max_tokens(400));
    if code {
        let mut mode = CodeMode::new()
            .execution(CodeExecution::Local)
            .time_limit(std::time::Duration::from_secs(30));
        // The A/B of BENCHMARKS.md: `CODE_INSTRUCTIONS=example` replaces the default
        // instructions with ones that show one whole call of `run_code` (generic names, no
        // task's tool).
        if std::env::var("CODE_INSTRUCTIONS").as_deref() == Ok("example") {
            mode = mode.instructions(Some(EXAMPLE_INSTRUCTIONS.to_string()));
        }
        builder = builder.code_mode(mode);
    }
    let mut agent = builder.build().unwrap();
    let outcome = agent.run(task.question.clone()).await;
    one_result_per_call(agent.memory());
    let requests = model.requests();
    if code {
        for request in &requests {
            let names: Vec<&str> = request.tools.iter().map(|t| t.name()).collect();
            assert_eq!(
                names,
                [CODE_TOOL],
                "in code mode the model is shown the code tool alone"
            );
        }
    }
    let results: Vec<&ToolMessage> = agent
        .memory()
        .iter()
        .filter_map(Message::as_tool)
        .filter(|m| m.name == CODE_TOOL)
        .collect();
    let shown = match &outcome {
        Ok(answer) => format!("answered {answer:?}"),
        Err(error) => format!("failed: {error}"),
    };
    let calls: Vec<String> = agent
        .memory()
        .iter()
        .flat_map(|m| m.tool_calls().iter())
        .map(|c| format!("{}({})", c.name, c.arguments))
        .collect();
    for result in &results {
        println!(
            "    {} result{}: {}",
            CODE_TOOL,
            if result.is_error { " (error)" } else { "" },
            result.content.chars().take(400).collect::<String>()
        );
    }
    println!(
        "  {} ({}): {}; calls: {}",
        task.name,
        if code { "code mode" } else { "direct" },
        shown.chars().take(300).collect::<String>(),
        calls.join(" ").chars().take(600).collect::<String>()
    );
    let answer = outcome.as_deref().unwrap_or_default().to_lowercase();
    Outcome {
        solved: !task.expected.is_empty()
            && task
                .expected
                .iter()
                .all(|e| answer.contains(&e.to_lowercase())),
        round_trips: requests.len(),
        programs: results.len(),
        programs_ok: results.iter().filter(|m| !m.is_error).count(),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn code_mode_beside_direct_calling() {
    // The structured template in CI; `CODE_TEMPLATE=own` measures the model's own (with it the
    // 1.5B writes its calls as text), `REAL_MODEL=1.5b` the 1.5B (BENCHMARKS.md).
    let template = match std::env::var("CODE_TEMPLATE").as_deref() {
        Ok("own") => Template::Own,
        _ => Template::Structured,
    };
    let Some(server) = server(template) else {
        return;
    };
    let mut tasks = vec![code_tasks::three_cities()];
    if std::env::var_os("CODE_ONLY_EASY").is_none() {
        tasks.extend(code_tasks::tasks());
    }
    let (mut solved_direct, mut solved_code, mut programs) = (0, 0, 0);
    for task in &tasks {
        let direct = attempt(server, task, false).await;
        let code = attempt(server, task, true).await;
        println!(
            "real model, {}: direct {} in {} round trips; code mode {} in {} round trips ({} programs, {} ran to their end)",
            task.name,
            if direct.solved {
                "solved"
            } else {
                "not solved"
            },
            direct.round_trips,
            if code.solved { "solved" } else { "not solved" },
            code.round_trips,
            code.programs,
            code.programs_ok,
        );
        solved_direct += usize::from(direct.solved);
        solved_code += usize::from(code.solved);
        programs += code.programs;
    }
    println!(
        "real model success: direct calling {solved_direct}/{n}, code mode {solved_code}/{n}",
        n = tasks.len()
    );
    println!("real model: {programs} programs written in code mode");
}
