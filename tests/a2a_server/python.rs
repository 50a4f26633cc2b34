//! The official Python SDKs as clients of our servers.

use std::time::Duration;

use agent_toolkit::a2a::server::ServerOptions;
use serde_json::{Value, json};

use crate::fixtures::{Probe, agent_server, tool_server, toolkit};
use crate::peers::{Env, run_script};

async fn report(env: Env, script: &str, args: &[&str]) -> Value {
    let (ok, stdout, stderr) = run_script(env, script, args, Duration::from_secs(120)).await;
    assert!(ok, "{script} failed:\n{stderr}\n{stdout}");
    let last = stdout.lines().last().unwrap_or_default();
    serde_json::from_str(last)
        .unwrap_or_else(|e| panic!("{script} printed no report ({e}):\n{stdout}\n{stderr}"))
}

/// How many `slow_count` calls were stopped, once the count has settled (the tool's future is
/// dropped on the server's runtime just after the CANCELED answer goes out).
async fn stopped(probe: &Probe) -> usize {
    for _ in 0..100 {
        if probe.cancelled() > 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    probe.cancelled()
}

/// a2a-sdk 1.3 reads our card, calls a tool, streams its progress and cancels a running call;
/// with bearer auth on, through the SDK's own HTTP client.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_1x_client_calls_streams_and_cancels_remote_tools() {
    let probe = Probe::default();
    let kit = toolkit(&probe);
    let base = tool_server(&kit, |s| {
        s.options(
            ServerOptions::new()
                .name("Test tools")
                .bearer_token("s3cret"),
        )
    })
    .await;
    let r = report(Env::A2a1, "a2a_client_tools.py", &[&base, "s3cret"]).await;

    // The card: one skill per active tool, tagged `tool`, schemas in the extension (the
    // inactive `admin` group's tool is absent), both interfaces, the bearer requirement.
    let card = &r["card"];
    let skills: Vec<&str> = card["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert_eq!(skills, ["tool-add", "tool-get_weather", "tool-slow_count"]);
    assert!(
        card["skills"]
            .as_array()
            .unwrap()
            .iter()
            .all(|s| s["tags"] == json!(["tool"]))
    );
    let tools = &card["tools"];
    assert_eq!(tools["add"]["skillId"], "tool-add");
    assert_eq!(tools["add"]["inputSchema"]["required"], json!(["a", "b"]));
    assert_eq!(tools["add"]["annotations"]["readOnlyHint"], true);
    assert_eq!(
        tools["get_weather"]["outputSchema"]["required"],
        json!(["city", "temp_c"])
    );
    let versions: Vec<&str> = card["interfaces"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["protocolVersion"].as_str().unwrap())
        .collect();
    assert_eq!(versions, ["1.0", "0.3"]);
    assert_eq!(card["security"], json!([{"schemes": {"bearer": {}}}]));

    // A blocking call: COMPLETED task, `_tool_call` copied into the task metadata, the result
    // in an artifact marked `_tool_result` (protobuf makes 5 a double on the 1.x wire).
    let add = &r["add"]["task"];
    assert_eq!(r["add"]["kind"], "task");
    assert_eq!(add["status"]["state"], "TASK_STATE_COMPLETED");
    assert_eq!(add["metadata"]["_tool_call"]["name"], "add");
    let artifact = &add["artifacts"][0];
    assert_eq!(artifact["name"], "add");
    let meta = &artifact["metadata"];
    assert_eq!(
        (
            &meta["_tool_result"],
            &meta["tool_name"],
            &meta["is_error"],
            &meta["wrapped"]
        ),
        (&json!(true), &json!("add"), &json!(false), &json!(true)),
        "{meta}"
    );
    assert!(meta["execution_time_ms"].is_number(), "{meta}");
    assert_eq!(artifact["parts"][0]["data"], json!({"result": 5.0}));
    // Arguments failing the schema: a model-visible tool error, not a protocol error.
    let bad = &r["add_bad"];
    assert_eq!(bad["status"]["state"], "TASK_STATE_COMPLETED");
    assert_eq!(bad["artifacts"][0]["metadata"]["is_error"], true);
    assert_eq!(
        bad["artifacts"][0]["metadata"]["error_kind"],
        "invalid_arguments"
    );

    // Streaming: task → WORKING → one WORKING update per progress event → artifact → COMPLETED.
    let stream = &r["stream"];
    assert_eq!(
        stream["kinds"],
        json!([
            "task",
            "statusUpdate",
            "statusUpdate",
            "statusUpdate",
            "statusUpdate",
            "artifactUpdate",
            "statusUpdate"
        ])
    );
    assert_eq!(
        stream["states"],
        json!([
            "TASK_STATE_SUBMITTED",
            "TASK_STATE_WORKING",
            "TASK_STATE_WORKING",
            "TASK_STATE_WORKING",
            "TASK_STATE_WORKING",
            "TASK_STATE_COMPLETED"
        ])
    );
    let progress: Vec<f64> = stream["progress"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["progress"].as_f64().unwrap())
        .collect();
    assert_eq!(progress, [1.0, 2.0, 3.0]);
    assert_eq!(stream["progress"][2]["total"], json!(3.0));
    assert_eq!(stream["progress"][2]["message"], "counted 3");
    // A text result: the data part, and the text beside it.
    assert_eq!(
        stream["artifacts"][0]["parts"][0]["data"],
        json!({"result": "counted to 3"})
    );
    assert_eq!(stream["artifacts"][0]["parts"][1]["text"], "counted to 3");

    // Cancel: the task ends CANCELED, the stream ends, and the tool really stopped.
    let cancel = &r["cancel"];
    assert_eq!(cancel["cancel_answer"], "TASK_STATE_CANCELED", "{cancel:#}");
    assert_eq!(cancel["final"], "TASK_STATE_CANCELED");
    assert_eq!(
        cancel["states"].as_array().unwrap().last().unwrap(),
        "TASK_STATE_CANCELED"
    );
    assert_eq!(cancel["artifacts"], 0);
    assert_eq!(
        stopped(&probe).await,
        1,
        "the cancelled tool call was not stopped"
    );
}

/// a2a-sdk 1.3 as the client of the client-side-tools flow: its own tool definitions, the
/// calls it runs itself, its results, our agent's answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_1x_client_runs_its_own_tools_for_our_agent() {
    let base = agent_server().await;
    let r = report(Env::A2a1, "a2a_client_agent.py", &[&base]).await;
    let rounds = r["rounds"].as_array().unwrap();
    assert_eq!(rounds.len(), 1, "{r:#}");
    let call = &rounds[0]["calls"][0];
    assert_eq!(call["type"], "function");
    assert_eq!(call["function"]["name"], "get_weather");
    assert_eq!(call["function"]["arguments"], r#"{"city":"Paris"}"#);
    let final_task = &r["final"];
    assert_eq!(
        final_task["status"]["state"], "TASK_STATE_COMPLETED",
        "{final_task:#}"
    );
    let artifact = &final_task["artifacts"][0];
    assert_eq!(artifact["name"], "answer");
    assert_eq!(artifact["parts"][0]["text"], "It is 18°C in Paris.");
    // The whole exchange is on one task: question, results.
    assert_eq!(
        final_task["history"].as_array().unwrap().len(),
        2,
        "{final_task:#}"
    );
    let invalid = r["invalid_tools"].as_str().unwrap();
    assert!(invalid.contains("tools[0].type"), "{invalid}");
    assert!(
        invalid.contains("tools[0].function.description: missing"),
        "{invalid}"
    );
}

/// a2a-sdk 0.3.26 (the 0.3 wire, `kind` shapes, `message/send`) against both servers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_0_3_client_uses_both_servers() {
    let probe = Probe::default();
    let kit = toolkit(&probe);
    let tools = tool_server(&kit, |s| s).await;
    let agent = agent_server().await;
    let r = report(Env::A2a03, "a2a03_client.py", &[&tools, &agent]).await;

    // The merged card read as a 0.3 card.
    let card = &r["card"];
    assert_eq!(card["protocolVersion"], "0.3");
    assert_eq!(card["url"], format!("{tools}/"));
    assert_eq!(card["preferredTransport"], "JSONRPC");
    assert_eq!(
        card["skills"],
        json!(["tool-add", "tool-get_weather", "tool-slow_count"])
    );
    assert_eq!(
        card["extension_tools"],
        json!(["add", "get_weather", "slow_count"])
    );

    // 0.3 data must be an object: the integer result is wrapped.
    let add = &r["add"];
    assert_eq!(add["kind"], "task");
    assert_eq!(add["status"]["state"], "completed");
    assert_eq!(
        add["artifacts"][0]["parts"][0],
        json!({"kind": "data", "data": {"result": 5}})
    );
    assert_eq!(add["artifacts"][0]["metadata"]["_tool_result"], true);
    assert_eq!(add["artifacts"][0]["metadata"]["tool_name"], "add");
    assert!(add["artifacts"][0]["metadata"]["execution_time_ms"].is_number());
    let unknown = &r["unknown"]["artifacts"][0];
    assert_eq!(unknown["metadata"]["is_error"], true);
    assert_eq!(unknown["metadata"]["error_kind"], "unknown_tool");
    assert_eq!(unknown["parts"][0]["kind"], "data");
    for message in [
        &unknown["parts"][0]["data"]["error"],
        &unknown["parts"][1]["text"],
    ] {
        assert!(
            message
                .as_str()
                .unwrap()
                .contains("no tool named `no_such_tool`"),
            "{unknown:#}"
        );
    }

    let stream = &r["stream"];
    assert_eq!(
        stream["kinds"],
        json!([
            "task",
            "status-update",
            "status-update",
            "status-update",
            "status-update",
            "artifact-update",
            "status-update"
        ])
    );
    assert_eq!(stream["progress"].as_array().unwrap().len(), 3);
    assert_eq!(stream["progress"][0]["progress"], json!(1.0));
    assert_eq!(stream["final"]["status"]["state"], "completed");
    assert_eq!(
        stream["final"]["artifacts"][0]["parts"],
        json!([{"kind": "data", "data": {"result": "counted to 3"}},
               {"kind": "text", "text": "counted to 3"}])
    );

    let cancel = &r["cancel"];
    assert_eq!(cancel["answer"], "canceled", "{cancel:#}");
    assert_eq!(cancel["final"], "canceled");
    assert_eq!(
        stopped(&probe).await,
        1,
        "the cancelled tool call was not stopped"
    );

    let agent = &r["agent"];
    assert_eq!(agent["rounds"].as_array().unwrap().len(), 1, "{agent:#}");
    assert_eq!(
        agent["rounds"][0]["calls"][0]["function"]["name"],
        "get_weather"
    );
    let final_task = &agent["final"];
    assert_eq!(final_task["status"]["state"], "completed", "{final_task:#}");
    assert_eq!(
        final_task["artifacts"][0]["parts"][0],
        json!({"kind": "text", "text": "It is 18°C in Paris."})
    );
}
