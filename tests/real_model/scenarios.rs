//! The agent's features with a real model that makes structured calls (the server's chat
//! template gives it a syntax llama.cpp parses), on both wires. Each scenario runs on both wires,
//! one of them streamed, alternating, so both wires are covered streamed and not.

use serde_json::json;

use super::model::Template;
use super::tasks::{API_KEY, USER};
use super::*;

/// Scenario `n`'s streaming choice on `wire`: the two wires alternate.
fn streamed(n: usize, wire: Wire) -> bool {
    (n + wire as usize).is_multiple_of(2)
}

#[tokio::test(flavor = "multi_thread")]
async fn one_tool() {
    let Some(server) = server(Template::Structured) else {
        return;
    };
    for wire in WIRES {
        let (toolkit, log) = kit(&["get_weather"]);
        let model = Recorded::new(server, wire);
        let mut agent = agent(&model, &toolkit, yes).build().unwrap();
        let run = drive(
            &mut agent,
            &model,
            &log,
            "What is the weather in Paris?",
            streamed(0, wire),
            yes,
        )
        .await;
        assert!(
            called(&run, "get_weather", json!({"city": "Paris"})),
            "{wire:?}: {:?}",
            run.log
        );
        assert!(run.answer().contains("21"), "{wire:?}: {}", run.answer());
        assert_eq!(run.requests.len(), 2, "{wire:?}: a call, then the answer");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn no_tool_needed() {
    let Some(server) = server(Template::Structured) else {
        return;
    };
    for wire in WIRES {
        let (toolkit, log) = kit(&["get_weather"]);
        let model = Recorded::new(server, wire);
        let mut agent = agent(&model, &toolkit, yes).build().unwrap();
        let prompt = "What is the capital of Italy? Answer in one word.";
        let run = drive(&mut agent, &model, &log, prompt, streamed(1, wire), yes).await;
        assert!(run.log.is_empty(), "{wire:?}: {:?}", run.log);
        assert!(run.answer().contains("Rome"), "{wire:?}: {}", run.answer());
    }
}

/// A second call whose arguments come from the first call's result. The model makes both calls
/// in order; this small model then tends to repeat the second call rather than answer, so the
/// run is bounded and the structure is what is checked.
#[tokio::test(flavor = "multi_thread")]
async fn second_call_uses_the_first_result() {
    let Some(server) = server(Template::Structured) else {
        return;
    };
    for wire in WIRES {
        let (toolkit, log) = kit(&["get_user_city", "get_weather"]);
        let model = Recorded::new(server, wire);
        let mut agent = agent(&model, &toolkit, yes)
            .max_iterations(3)
            .build()
            .unwrap();
        let prompt = "First find the city where Alice lives, then get the weather there.";
        let run = drive(&mut agent, &model, &log, prompt, streamed(2, wire), yes).await;
        let ran = run.ran();
        assert_eq!(
            ran.first(),
            Some(&"get_user_city"),
            "{wire:?}: {:?}",
            run.log
        );
        assert!(
            called(&run, "get_user_city", json!({"name": "Alice"})),
            "{wire:?}: {:?}",
            run.log
        );
        // "Berlin" is only in the first call's result.
        assert!(
            called(&run, "get_weather", json!({"city": "Berlin"})),
            "{wire:?}: {:?}",
            run.log
        );
        match &run.outcome {
            Ok(_) | Err(AgentError::MaxIterations { .. }) => {}
            Err(e) => panic!("{wire:?}: {e}"),
        }
    }
}

/// The preset and the context value reach the tool and never the model.
#[tokio::test(flavor = "multi_thread")]
async fn preset_and_context_stay_hidden() {
    let Some(server) = server(Template::Structured) else {
        return;
    };
    for wire in WIRES {
        let (toolkit, log) = kit(&["get_stock_price"]);
        let model = Recorded::new(server, wire);
        let mut agent = agent(&model, &toolkit, yes).build().unwrap();
        let prompt = "What is the current price of ACME stock?";
        let run = drive(&mut agent, &model, &log, prompt, streamed(3, wire), yes).await;
        assert!(
            called(
                &run,
                "get_stock_price",
                json!({"symbol": "ACME", "api_key": API_KEY, "user": USER})
            ),
            "{wire:?}: {:?}",
            run.log
        );
        assert!(run.answer().contains("132.5"), "{wire:?}: {}", run.answer());
        for request in &run.requests {
            let sent = format!("{request:?}");
            assert!(
                !sent.contains(API_KEY) && !sent.contains(USER),
                "{wire:?}: {sent}"
            );
            let schema = request.tools[0].parameters().to_string();
            assert!(
                !schema.contains("api_key") && !schema.contains("account"),
                "{schema}"
            );
        }
    }
}

/// The model equips an agent-managed group through `reset_equipped_tools`; the group's tools
/// are offered from the next request on, in this agent's view only.
#[tokio::test(flavor = "multi_thread")]
async fn a_group_switched_on_by_the_meta_tool() {
    let Some(server) = server(Template::Structured) else {
        return;
    };
    for wire in WIRES {
        let log = Arc::new(Log::default());
        let toolkit = tasks::toolkit(&["convert_currency", "get_weather"], log.clone(), true);
        let model = Recorded::new(server, wire);
        let mut agent = agent(&model, &toolkit, yes)
            .agent_managed_groups(["finance"])
            .build()
            .unwrap();
        let prompt = "Equip the finance tools, then convert 50 GBP to USD.";
        let _ = drive(&mut agent, &model, &log, prompt, streamed(4, wire), yes).await;
        let requests = model.requests();
        let offered = |r: &ChatRequest| -> Vec<String> {
            r.tools.iter().map(|t| t.name().to_owned()).collect()
        };
        assert!(
            !offered(&requests[0]).contains(&"convert_currency".into()),
            "{wire:?}"
        );
        let meta = agent
            .memory()
            .iter()
            .flat_map(|m| m.tool_calls())
            .find(|c| c.name == "reset_equipped_tools");
        let meta =
            meta.unwrap_or_else(|| panic!("{wire:?}: no meta tool call: {:#?}", agent.memory()));
        assert!(
            meta.arguments.contains("finance"),
            "{wire:?}: {}",
            meta.arguments
        );
        assert!(
            offered(&requests[1]).contains(&"convert_currency".into()),
            "{wire:?}"
        );
        assert_eq!(agent.toolkit().is_group_active("finance").ok(), Some(true));
        assert_eq!(
            toolkit.is_group_active("finance").ok(),
            Some(false),
            "only the agent's view"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn approval_approved_and_denied() {
    let Some(server) = server(Template::Structured) else {
        return;
    };
    for wire in WIRES {
        let (toolkit, log) = kit(&["delete_file"]);
        let model = Recorded::new(server, wire);
        let mut agent = agent(&model, &toolkit, yes).build().unwrap();
        let prompt = "Delete the file /tmp/old.log.";
        let stream = streamed(5, wire);
        let run = drive(&mut agent, &model, &log, prompt, stream, yes).await;
        assert!(
            called(&run, "delete_file", json!({"path": "/tmp/old.log"})),
            "{wire:?}: {:?}",
            run.log
        );
        assert!(run.outcome.is_ok(), "{wire:?}");
        if stream {
            assert_eq!(
                run.asked,
                ["delete_file"],
                "{wire:?}: asked through the stream"
            );
        }

        let (toolkit, log) = kit(&["delete_file"]);
        let model = Recorded::new(server, wire);
        let mut agent = super::agent(&model, &toolkit, no)
            .max_iterations(2)
            .build()
            .unwrap();
        let prompt = "Delete the file /tmp/cache.txt.";
        let run = drive(&mut agent, &model, &log, prompt, !stream, no).await;
        assert!(
            run.log.is_empty(),
            "{wire:?}: a denied call never runs: {:?}",
            run.log
        );
        let denial = agent
            .memory()
            .iter()
            .find_map(Message::as_tool)
            .expect("a result");
        assert!(
            denial.is_error && denial.content.contains("the user said no"),
            "{wire:?}: {denial:?}"
        );
        let call = agent
            .memory()
            .iter()
            .flat_map(|m| m.tool_calls())
            .next()
            .expect("a call");
        assert!(
            call.arguments.contains("/tmp/cache.txt"),
            "{wire:?}: {call:?}"
        );
    }
}

/// The run pauses at the approval, its state goes through JSON into a new agent (as into
/// another process), is approved there, and the call runs once.
#[tokio::test(flavor = "multi_thread")]
async fn approval_paused_then_resumed() {
    use agent_toolkit::agent::{PausedRun, RunOutcome};
    let Some(server) = server(Template::Structured) else {
        return;
    };
    for wire in WIRES {
        let (toolkit, log) = kit(&["delete_file"]);
        let model = Recorded::new(server, wire);
        let mut first = ReActAgent::builder(model.clone())
            .toolkit(&toolkit)
            .generation_options(model::options())
            .pause_at_approvals()
            .build()
            .unwrap();
        let stored = match first.run("Delete the file /tmp/old.log.").await {
            Err(AgentError::Paused(run)) => serde_json::to_string(&run).unwrap(),
            other => panic!("{wire:?}: expected a pause, got {other:?}"),
        };
        assert!(
            log.calls().is_empty(),
            "{wire:?}: nothing ran before the decision"
        );

        let mut run = PausedRun::from_json(&stored).unwrap();
        let id = run.pending_approvals()[0].call().id.clone();
        assert!(
            run.pending_approvals()[0]
                .call()
                .arguments
                .contains("/tmp/old.log")
        );
        run.approve(&id).unwrap();
        let model = Recorded::new(server, wire);
        let mut second = ReActAgent::builder(model.clone())
            .toolkit(&toolkit)
            .generation_options(model::options())
            .pause_at_approvals()
            .max_iterations(3)
            .build()
            .unwrap();
        let outcome = second.resume(run).await;
        assert!(
            matches!(
                outcome,
                Ok(RunOutcome::Final(_)) | Err(AgentError::MaxIterations { .. })
            ),
            "{wire:?}: {outcome:?}"
        );
        let deletes = log
            .calls()
            .iter()
            .filter(|(t, a)| t == "delete_file" && a["path"] == "/tmp/old.log")
            .count();
        assert_eq!(
            deletes,
            1,
            "{wire:?}: the approved call ran once: {:?}",
            log.calls()
        );
        one_result_per_call(second.memory());
    }
}

/// A background call answers pending at once; its result reaches the model in a later turn.
#[tokio::test(flavor = "multi_thread")]
async fn a_background_result_arrives_on_a_later_turn() {
    let Some(server) = server(Template::Structured) else {
        return;
    };
    for wire in WIRES {
        let (toolkit, log) = kit(&["generate_report"]);
        let model = Recorded::new(server, wire);
        let mut agent = agent(&model, &toolkit, yes)
            .max_iterations(3)
            .build()
            .unwrap();
        let prompt = "Generate a report about sales.";
        let run = drive(&mut agent, &model, &log, prompt, streamed(6, wire), yes).await;
        assert_eq!(
            run.ran().first(),
            Some(&"generate_report"),
            "{wire:?}: {:?}",
            run.log
        );
        let first = agent
            .memory()
            .iter()
            .find(|m| m.role() == Role::Tool)
            .expect("a result");
        assert!(
            first.content().contains("running in the background"),
            "{wire:?}: {first:?}"
        );
        // A later request carries the finished job's result: a later turn of this run when the
        // model took one, else the first turn of the next run.
        let mut requests = run.requests.clone();
        if run.outcome.is_ok() {
            let _ = toolkit.background().drain().await;
            let _ = agent.run("Is the report ready?").await;
            requests = model.requests();
        }
        let reported = requests.iter().skip(1).any(|r| {
            r.messages
                .iter()
                .any(|m| m.role() == Role::User && m.content().contains("finished: Report on"))
        });
        assert!(
            reported,
            "{wire:?}: the result never reached the model: {:#?}",
            agent.memory()
        );
        let _ = toolkit.background().drain().await;
    }
}
