//! Deferred tools with a real model: it is shown none of the task tools, only `search_tools`;
//! it searches, is told what it found, and calls it in its next step — on both wires, one
//! streamed, through the agent's local search (llama.cpp has no tool search of its own).
//! Like every two-step run with this small model, it may then repeat the call instead of
//! answering: the run is bounded, and the structure is what is checked (an answer, when there
//! is one, must carry the tool's fact).

use serde_json::json;

use super::model::Template;
use super::*;

const CATALOG: [&str; 10] = [
    "get_weather",
    "add",
    "multiply",
    "read_file",
    "search_contacts",
    "send_email",
    "get_time",
    "lookup_order",
    "get_population",
    "get_distance",
];

#[tokio::test(flavor = "multi_thread")]
async fn the_model_finds_a_deferred_tool_and_calls_it() {
    let Some(server) = server(Template::Structured) else {
        return;
    };
    for wire in WIRES {
        let log = Arc::new(tasks::Log::default());
        let toolkit = tasks::deferred_toolkit(&CATALOG, log.clone());
        let model = Recorded::new(server, wire);
        let mut agent = agent(&model, &toolkit, yes)
            .max_iterations(3)
            .build()
            .unwrap();
        let stream = wire == Wire::Anthropic;
        let run = drive(
            &mut agent,
            &model,
            &log,
            "What is the weather in Paris?",
            stream,
            yes,
        )
        .await;
        let first: Vec<&str> = run.requests[0].tools.iter().map(|t| t.name()).collect();
        assert_eq!(
            first,
            ["search_tools"],
            "{wire:?}: only the search is shown up front"
        );
        let searched = agent
            .memory()
            .iter()
            .any(|m| m.tool_calls().iter().any(|c| c.name == "search_tools"));
        assert!(
            searched,
            "{wire:?}: the model searched: {:#?}",
            agent.memory()
        );
        assert!(
            called(&run, "get_weather", json!({"city": "Paris"})),
            "{wire:?}: the model called what it found: {:?} {:#?}",
            run.log,
            agent.memory()
        );
        assert_eq!(
            run.ran().first(),
            Some(&"get_weather"),
            "{wire:?}: {:?}",
            run.log
        );
        match &run.outcome {
            Ok(answer) => assert!(answer.contains("21"), "{wire:?}: {answer}"),
            Err(AgentError::MaxIterations { .. }) => {}
            Err(e) => panic!("{wire:?}: {e}"),
        }
    }
}
