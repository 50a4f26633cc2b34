//! Faults a real server produces: killed in the middle of a streamed answer. The run fails with
//! a typed error naming the cause, never hangs, keeps a valid conversation, and resumes
//! elsewhere (another server, another agent) without running its finished calls again.

use std::time::Duration;

use agent_toolkit::agent::{PausedRun, RunOutcome};
use serde_json::json;

use super::model::Template;
use super::*;

#[tokio::test(flavor = "multi_thread")]
async fn a_server_killed_mid_stream_then_the_run_resumed_elsewhere() {
    for wire in WIRES {
        let Some(mut doomed) = ModelServer::start(Template::Structured) else {
            return;
        };
        let (toolkit, log) = kit(&["get_weather"]);
        let model = Recorded::new(&doomed, wire);
        let mut agent = agent(&model, &toolkit, yes).build().unwrap();
        let mut events = Box::pin(
            agent.run_stream("What is the weather in Paris? Then write a long poem about it."),
        );
        let mut failed = None;
        let mut killed = false;
        let deadline = tokio::time::sleep(Duration::from_secs(300));
        tokio::pin!(deadline);
        loop {
            tokio::select! {
                event = events.next() => match event {
                    // The first call has run; kill the server while the answer streams.
                    Some(AgentEvent::TextDelta(_)) if !killed && !log.calls().is_empty() => {
                        doomed.kill();
                        killed = true;
                    }
                    Some(AgentEvent::Failed(error)) => failed = Some(error),
                    Some(AgentEvent::Final(answer)) => panic!("{wire:?}: the answer came whole: {answer}"),
                    Some(_) => {}
                    None => break,
                },
                () = &mut deadline => panic!("{wire:?}: the run hung after the server was killed"),
            }
        }
        drop(events);
        assert!(
            killed,
            "{wire:?}: the answer never streamed: {:?}",
            log.calls()
        );
        match failed {
            Some(AgentError::Model(ModelError::Transport(why))) => {
                assert!(!why.to_string().is_empty(), "{wire:?}");
            }
            other => panic!("{wire:?}: expected a transport error, got {other:?}"),
        }
        one_result_per_call(agent.memory());
        assert_eq!(log.calls().len(), 1);

        // Another server, another agent built the same way: the run goes on from its failed
        // turn, and the finished call is not run again.
        let stored = serde_json::to_string(&agent.paused_run().expect("the failed run")).unwrap();
        let run = PausedRun::from_json(&stored).unwrap();
        let Some(other) = server(Template::Structured) else {
            return;
        };
        let model = Recorded::new(other, wire);
        let mut resumed = super::agent(&model, &toolkit, yes).build().unwrap();
        match resumed.resume(run).await {
            Ok(RunOutcome::Final(answer)) => assert!(!answer.is_empty()),
            Err(AgentError::MaxIterations { .. }) => {}
            other => panic!("{wire:?}: {other:?}"),
        }
        // Every call in the conversation ran exactly once: the one before the failure was not
        // run again (the model may make new ones).
        let calls = resumed.memory().iter().flat_map(|m| m.tool_calls()).count();
        assert_eq!(log.calls().len(), calls, "{wire:?}: {:?}", log.calls());
        assert_eq!(log.calls()[0].1, json!({"city": "Paris"}));
        // The resumed model saw the finished call's result.
        let first = &model.requests()[0];
        assert!(
            first
                .messages
                .iter()
                .any(|m| m.role() == Role::Tool && m.content().contains("21")),
            "{first:?}"
        );
        one_result_per_call(resumed.memory());
    }
}
