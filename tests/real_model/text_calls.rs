//! The model's own chat template: the server gets no tool-call syntax from it, the model writes
//! its calls as text (`{"name": .., "arguments": ..}`, bare or fenced), and only the providers'
//! reading of text calls makes them calls — through the same rules as structured ones. And the
//! server's refusal of the model's own output (two calls where its template allows one), which
//! is not sent again unchanged.

use agent_toolkit::model::{AnthropicMessages, OpenAiChat};
use serde_json::json;

use super::model::{REQUEST_TIMEOUT, Template};
use super::tasks::{API_KEY, USER};
use super::*;

/// Tasks of the suite that the model completes through text calls, on both wires.
#[tokio::test(flavor = "multi_thread")]
async fn everyday_tasks_complete_with_the_models_own_template() {
    let Some(server) = server(Template::Own) else {
        return;
    };
    let names = [
        "weather",
        "add",
        "read_file",
        "currency",
        "stock_preset",
        "delete_approved",
    ];
    for wire in WIRES {
        for (n, task) in tasks::tasks()
            .iter()
            .filter(|t| names.contains(&t.name))
            .enumerate()
        {
            let (toolkit, log) = kit(task.tools);
            let model = Recorded::new(server, wire);
            let mut agent = agent(&model, &toolkit, yes).build().unwrap();
            let run = drive(
                &mut agent,
                &model,
                &log,
                task.prompt,
                n.is_multiple_of(2),
                yes,
            )
            .await;
            let answer = run
                .outcome
                .as_ref()
                .unwrap_or_else(|e| panic!("{wire:?} {}: {e}", task.name));
            tasks::check_calls(task, &run.log)
                .unwrap_or_else(|e| panic!("{wire:?} {}: {e}", task.name));
            tasks::check_answer(task, answer)
                .unwrap_or_else(|e| panic!("{wire:?} {}: {e}", task.name));
            // The call was read from the text, and went back as the text it was.
            let text_call = agent
                .memory()
                .iter()
                .filter_map(Message::as_assistant)
                .find(|m| !m.tool_calls.is_empty());
            let text_call = text_call.unwrap_or_else(|| panic!("{wire:?} {}: no call", task.name));
            assert!(
                text_call.calls_in_text,
                "{wire:?} {}: {text_call:?}",
                task.name
            );
            assert!(
                text_call.content.contains(&*text_call.tool_calls[0].name),
                "{text_call:?}"
            );
            if task.name == "stock_preset" {
                for request in &run.requests {
                    let sent = format!("{request:?}");
                    assert!(
                        !sent.contains(API_KEY) && !sent.contains(USER),
                        "{wire:?}: {sent}"
                    );
                }
            }
            if task.name == "delete_approved" {
                assert!(called(&run, "delete_file", json!({"path": "/tmp/old.log"})));
            }
        }
    }
}

/// A call written as text asks the approver like any other, and a denied one never runs.
#[tokio::test(flavor = "multi_thread")]
async fn a_text_call_goes_through_approval() {
    let Some(server) = server(Template::Own) else {
        return;
    };
    for wire in WIRES {
        let (toolkit, log) = kit(&["delete_file"]);
        let model = Recorded::new(server, wire);
        let mut agent = agent(&model, &toolkit, no)
            .max_iterations(2)
            .build()
            .unwrap();
        let run = drive(
            &mut agent,
            &model,
            &log,
            "Delete the file /tmp/cache.txt.",
            wire == Wire::OpenAi,
            no,
        )
        .await;
        assert!(run.log.is_empty(), "{wire:?}: {:?}", run.log);
        let first = agent
            .memory()
            .iter()
            .filter_map(Message::as_assistant)
            .find(|m| !m.tool_calls.is_empty())
            .expect("a call");
        assert!(
            first.calls_in_text && first.tool_calls[0].name == "delete_file",
            "{first:?}"
        );
        let denial = agent
            .memory()
            .iter()
            .find(|m| m.role() == Role::Tool)
            .expect("a result");
        assert!(
            denial.content().contains("the user said no"),
            "{wire:?}: {denial:?}"
        );
        if wire == Wire::OpenAi {
            assert_eq!(run.asked.first().map(String::as_str), Some("delete_file"));
        }
    }
}

/// A tool error the model recovers from: it reads a file that does not exist, is told which
/// files there are, and reads the right one.
#[tokio::test(flavor = "multi_thread")]
async fn the_model_recovers_from_a_tool_error() {
    let Some(server) = server(Template::Own) else {
        return;
    };
    for wire in WIRES {
        let (toolkit, log) = kit(&["read_file"]);
        let model = Recorded::new(server, wire);
        let mut agent = agent(&model, &toolkit, yes)
            .max_iterations(5)
            .build()
            .unwrap();
        let run = drive(
            &mut agent,
            &model,
            &log,
            "Read the notes file.",
            wire == Wire::Anthropic,
            yes,
        )
        .await;
        let error = agent
            .memory()
            .iter()
            .position(|m| m.as_tool().is_some_and(|m| m.is_error));
        let error =
            error.unwrap_or_else(|| panic!("{wire:?}: no failed call: {:#?}", agent.memory()));
        let later = agent.memory()[error..].iter().flat_map(|m| m.tool_calls());
        assert!(
            later
                .into_iter()
                .any(|c| c.arguments.contains("/srv/notes.txt")),
            "{wire:?}: the model did not try the file the error named: {:?}",
            run.log
        );
        assert!(called(&run, "read_file", json!({"path": "/srv/notes.txt"})));
    }
}

/// Two calls in one turn make llama.cpp answer HTTP 500 ("The model produced output that does
/// not match the expected … format"). The request is not sent again as it was: the provider
/// asks once more with the tools in the prompt and reads the calls from the text; with text
/// calls off, the run fails at once with a typed error naming the cause.
#[tokio::test(flavor = "multi_thread")]
async fn the_servers_refusal_of_the_models_output() {
    let Some(server) = server(Template::Structured) else {
        return;
    };
    let prompt = "Call get_weather twice: once for Paris, once for Berlin.";
    for wire in WIRES {
        let (toolkit, log) = kit(&["get_weather"]);
        let model = Recorded::new(server, wire);
        let mut agent = agent(&model, &toolkit, yes)
            .max_iterations(3)
            .build()
            .unwrap();
        let run = drive(&mut agent, &model, &log, prompt, wire == Wire::OpenAi, yes).await;
        match &run.outcome {
            Ok(_) | Err(AgentError::MaxIterations { .. }) => {}
            Err(e) => panic!("{wire:?}: {e}"),
        }
        assert!(
            called(&run, "get_weather", json!({"city": "Paris"})),
            "{wire:?}: {:?}",
            run.log
        );
        let first = agent
            .memory()
            .iter()
            .filter_map(Message::as_assistant)
            .find(|m| !m.tool_calls.is_empty())
            .expect("a call");
        assert!(
            first.calls_in_text,
            "{wire:?}: the calls were read from text: {first:?}"
        );

        let off: Box<dyn ChatModel> = match wire {
            Wire::OpenAi => Box::new(
                OpenAiChat::builder()
                    .base_url(format!("{}/v1", server.url))
                    .model("local")
                    .timeout(REQUEST_TIMEOUT)
                    .text_tool_calls(false)
                    .build()
                    .unwrap(),
            ),
            Wire::Anthropic => Box::new(
                AnthropicMessages::builder()
                    .base_url(&server.url)
                    .model("local")
                    .timeout(REQUEST_TIMEOUT)
                    .text_tool_calls(false)
                    .build()
                    .unwrap(),
            ),
        };
        let mut agent = ReActAgent::builder(off)
            .toolkit(&toolkit)
            .generation_options(model::options())
            .build()
            .unwrap();
        match agent.run(prompt).await {
            Err(AgentError::Model(ModelError::OutputRejected {
                status: 500,
                message,
            })) => {
                assert!(
                    message.contains("The model produced output"),
                    "{wire:?}: {message}"
                );
            }
            other => panic!("{wire:?}: expected the server's refusal, got {other:?}"),
        }
        // The run kept its place and nothing of the failed turn is in the conversation.
        assert!(agent.paused_run().is_some());
        assert!(agent.memory().iter().all(|m| m.role() != Role::Assistant));
    }
}
