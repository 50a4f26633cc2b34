//! Full runs, streamed runs, memory, limits.

use agent_toolkit::model::Role;
use agent_toolkit::{
    AgentEvent, ReActAgent,
    testing::{ScriptedModel, ScriptedTurn},
};
use agent_toolkit::{agent::AgentError, model::ChatRequest};
use futures::StreamExt;
use serde_json::json;

use super::tools::toolkit;

fn last_tool_texts(req: &ChatRequest, n: usize) -> Vec<String> {
    let tools: Vec<_> = req
        .messages
        .iter()
        .filter(|m| m.role() == Role::Tool)
        .collect();
    tools[tools.len().saturating_sub(n)..]
        .iter()
        .map(|m| m.content().to_string())
        .collect()
}

/// Three iterations: a parallel batch of three calls with one failure, a corrected call, an
/// answer.
fn script() -> ScriptedModel {
    ScriptedModel::new([ScriptedTurn::calls([
        ("get_weather", json!({"city": "Paris"})),
        ("get_time", json!({"tz": "CET"})),
        ("lookup_stock", json!({"sku": "umbrella"})),
    ])])
    .then_expect(
        |req| {
            let texts = last_tool_texts(req, 3);
            (texts
                == [
                    "Paris: 21°C, sunny",
                    "12:00 CET",
                    "Error: unknown sku umbrella; skus look like A-1",
                ])
            .then_some(())
            .ok_or(format!("tool results not fed back: {texts:?}"))
        },
        ScriptedTurn::call("lookup_stock", json!({"sku": "A-7"})),
    )
    .then_expect(
        |req| {
            (last_tool_texts(req, 1) == ["A-7: 12 in stock"])
                .then_some(())
                .ok_or("no stock result".into())
        },
        ScriptedTurn::text("It is 21°C and sunny in Paris at 12:00; A-7 has 12 in stock."),
    )
}

#[tokio::test]
async fn a_run_calls_tools_in_parallel_recovers_from_an_error_and_answers() {
    let kit = toolkit();
    let model = std::sync::Arc::new(script());
    let mut agent = ReActAgent::builder(model.clone())
        .toolkit(&kit)
        .system_prompt("You are a shop assistant.")
        .build()
        .unwrap();
    let answer = agent
        .run("Weather in Paris, the time, and do we have umbrellas?")
        .await
        .unwrap();
    assert_eq!(
        answer,
        "It is 21°C and sunny in Paris at 12:00; A-7 has 12 in stock."
    );
    assert_eq!(model.remaining(), 0);
    let requests = model.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(requests[0].messages[0].role(), Role::System);
    assert!(requests[0].parallel_tool_calls);
    let names: Vec<_> = requests[0]
        .tools
        .iter()
        .map(|t| t.name().to_string())
        .collect();
    assert_eq!(
        names,
        [
            "get_weather",
            "get_time",
            "lookup_stock",
            "delete",
            "faq",
            "reindex",
            "wait"
        ],
        "inactive groups are not offered"
    );
    // user, assistant(3 calls), 3 tool results, assistant(1 call), 1 result, final answer.
    assert_eq!(agent.memory().len(), 8);
}

#[tokio::test]
async fn the_same_run_as_a_stream_reports_every_step_in_order() {
    let kit = toolkit();
    let mut agent = ReActAgent::builder(script()).toolkit(&kit).build().unwrap();
    let events: Vec<AgentEvent> = agent
        .run_stream("Weather, time, umbrellas?")
        .collect()
        .await;
    let summary: Vec<String> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Iteration(n) => Some(format!("iteration {n}")),
            AgentEvent::ToolCallStarted(c) => Some(format!("start {}", c.name)),
            AgentEvent::ToolResult(r) => Some(format!(
                "result {} {}",
                r.name,
                if r.is_error() { "err" } else { "ok" }
            )),
            AgentEvent::Final(_) => Some("final".into()),
            AgentEvent::Failed(e) => Some(format!("failed {e}")),
            _ => None,
        })
        .collect();
    assert_eq!(
        summary,
        [
            "iteration 1",
            "start get_weather",
            "start get_time",
            "start lookup_stock",
            "result get_weather ok",
            "result get_time ok",
            "result lookup_stock err",
            "iteration 2",
            "start lookup_stock",
            "result lookup_stock ok",
            "iteration 3",
            "final",
        ]
    );
    let text: String = events
        .iter()
        .filter_map(|e| {
            if let AgentEvent::TextDelta(t) = e {
                Some(t.as_str())
            } else {
                None
            }
        })
        .collect();
    assert_eq!(
        text,
        "It is 21°C and sunny in Paris at 12:00; A-7 has 12 in stock."
    );
    let deltas = events
        .iter()
        .filter(|e| matches!(e, AgentEvent::TextDelta(_)))
        .count();
    assert!(deltas > 5, "text arrives in pieces");
    let AgentEvent::Final(answer) = events.last().unwrap() else {
        panic!("last event is not Final")
    };
    assert_eq!(answer, &text);
}

#[tokio::test]
async fn tool_progress_reaches_the_stream() {
    let kit = toolkit();
    let model = ScriptedModel::new([
        ScriptedTurn::call("wait", json!({"ms": 5})),
        ScriptedTurn::text("done"),
    ]);
    let mut agent = ReActAgent::builder(model).toolkit(&kit).build().unwrap();
    let events: Vec<AgentEvent> = agent.run_stream("wait please").collect().await;
    let progress: Vec<_> = events
        .iter()
        .filter_map(|e| {
            if let AgentEvent::ToolProgress(p) = e {
                Some(p.tool_name.to_string())
            } else {
                None
            }
        })
        .collect();
    assert_eq!(progress, ["wait", "wait"]);
}

#[tokio::test]
async fn memory_survives_several_runs() {
    let kit = toolkit();
    let model = std::sync::Arc::new(
        ScriptedModel::new([ScriptedTurn::text("Hello Ada.")]).then_expect(
            |req| {
                let said: Vec<_> = req.messages.iter().map(|m| m.content()).collect();
                (said == ["I am Ada.", "Hello Ada.", "What is my name?"])
                    .then_some(())
                    .ok_or(format!("memory lost: {said:?}"))
            },
            ScriptedTurn::text("Your name is Ada."),
        ),
    );
    let mut agent = ReActAgent::builder(model.clone())
        .toolkit(&kit)
        .build()
        .unwrap();
    agent.run("I am Ada.").await.unwrap();
    assert_eq!(
        agent.run("What is my name?").await.unwrap(),
        "Your name is Ada."
    );
    agent.clear_memory();
    assert!(agent.memory().is_empty());
}

#[tokio::test]
async fn repeated_argument_errors_stop_the_run_clearly() {
    let kit = toolkit();
    let bad = || ScriptedTurn::call("get_weather", json!({"town": "Paris"}));
    let model = ScriptedModel::new([bad(), bad(), bad(), ScriptedTurn::text("never reached")]);
    let mut agent = ReActAgent::builder(model)
        .toolkit(&kit)
        .argument_budget(3)
        .build()
        .unwrap();
    let err = agent.run("weather?").await.unwrap_err();
    let AgentError::ArgumentBudget {
        tool,
        count,
        last_error,
    } = &err
    else {
        panic!("{err}")
    };
    assert_eq!((tool.as_str(), *count), ("get_weather", 3));
    assert!(
        last_error.contains("unknown argument `town`"),
        "{last_error}"
    );
}

#[tokio::test]
async fn a_successful_call_resets_the_argument_budget() {
    let kit = toolkit();
    let bad = || ScriptedTurn::call("get_weather", json!({"town": "Paris"}));
    let good = ScriptedTurn::call("get_weather", json!({"city": "Paris"}));
    let model = ScriptedModel::new([bad(), good, bad(), ScriptedTurn::text("ok")]);
    let mut agent = ReActAgent::builder(model)
        .toolkit(&kit)
        .argument_budget(2)
        .build()
        .unwrap();
    assert_eq!(agent.run("weather?").await.unwrap(), "ok");
}

#[tokio::test]
async fn reaching_max_iterations_is_a_typed_error_with_the_transcript() {
    let kit = toolkit();
    let turn = || ScriptedTurn::call("get_time", json!({"tz": "UTC"}));
    let model = ScriptedModel::new([turn(), turn(), turn()]);
    let mut agent = ReActAgent::builder(model)
        .toolkit(&kit)
        .max_iterations(3)
        .build()
        .unwrap();
    let err = agent.run("loop forever").await.unwrap_err();
    let AgentError::MaxIterations {
        iterations,
        transcript,
    } = &err
    else {
        panic!("{err}")
    };
    assert_eq!(*iterations, 3);
    assert_eq!(transcript.len(), 7, "user + 3 × (assistant, tool result)");
    assert_eq!(transcript[0].content(), "loop forever");
}

#[tokio::test]
async fn a_tool_not_offered_this_turn_is_refused_and_the_model_can_recover() {
    let kit = toolkit();
    let model = ScriptedModel::new([
        ScriptedTurn::call("reset_password", json!({"account": "bob"})),
        ScriptedTurn::text("I cannot reset passwords."),
    ]);
    let mut agent = ReActAgent::builder(model).toolkit(&kit).build().unwrap();
    let events: Vec<AgentEvent> = agent.run_stream("reset bob").collect().await;
    let refused = events
        .iter()
        .find_map(|e| {
            if let AgentEvent::ToolResult(r) = e {
                Some(r.clone())
            } else {
                None
            }
        })
        .unwrap();
    assert!(
        refused.model_text().contains("not available in this step"),
        "{}",
        refused.model_text()
    );
    assert!(matches!(events.last(), Some(AgentEvent::Final(_))));
}

#[tokio::test]
async fn a_return_directly_tool_ends_the_run_with_its_output() {
    let kit = toolkit();
    let model = ScriptedModel::new([ScriptedTurn::call("faq", json!({"question": "wifi?"}))]);
    let mut agent = ReActAgent::builder(model)
        .toolkit(&kit)
        .return_directly("faq")
        .build()
        .unwrap();
    assert_eq!(
        agent.run("my wifi is down").await.unwrap(),
        "FAQ answer to \"wifi?\": restart the router."
    );
}

#[tokio::test]
async fn background_results_are_fed_into_a_later_turn() {
    let kit = toolkit();
    let model = std::sync::Arc::new(
        ScriptedModel::new([ScriptedTurn::call("reindex", json!({}))])
            .then_expect(
                |req| {
                    let texts: Vec<&str> = req.messages.iter().map(|m| m.content()).collect();
                    let pending = texts
                        .iter()
                        .any(|t| t.contains("is running in the background"));
                    let listed = texts.last().is_some_and(|t| {
                        t.contains("Still running:\n- call call_1_0 (reindex, job 1)")
                    });
                    (pending && listed)
                        .then_some(())
                        .ok_or(format!("{texts:?}"))
                },
                ScriptedTurn::call("wait", json!({"ms": 150})),
            )
            .then_expect(
                |req| {
                    let note = req
                        .messages
                        .iter()
                        .rev()
                        .find(|m| m.content().starts_with("[background tools]"));
                    match note {
                        Some(m)
                            if m.content().contains(
                                "- call call_1_0 (reindex, job 1) finished: index rebuilt",
                            ) =>
                        {
                            Ok(())
                        }
                        other => Err(format!("no background note: {other:?}")),
                    }
                },
                ScriptedTurn::text("The index is rebuilt."),
            ),
    );
    let mut agent = ReActAgent::builder(model.clone())
        .toolkit(&kit)
        .build()
        .unwrap();
    assert_eq!(
        agent.run("rebuild the index").await.unwrap(),
        "The index is rebuilt."
    );
    assert_eq!(model.remaining(), 0);
}

#[tokio::test]
async fn a_model_error_ends_the_run() {
    let kit = toolkit();
    let model = ScriptedModel::new([ScriptedTurn::Fail(
        agent_toolkit::model::ModelError::Transport("offline".into()),
    )]);
    let mut agent = ReActAgent::builder(model).toolkit(&kit).build().unwrap();
    let err = agent.run("hi").await.unwrap_err();
    assert!(matches!(err, AgentError::Model(_)), "{err}");
}
