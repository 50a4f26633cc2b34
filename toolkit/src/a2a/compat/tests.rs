use a2a::{
    AgentCapabilities, AgentExtension, AgentInterface, AgentSkill, Artifact,
    HttpAuthSecurityScheme, Message, Part, PartContent, Role, SecurityScheme,
    SendMessageConfiguration, Task, TaskState, TaskStatus,
};
use serde::Serialize;
use serde_json::{Value, json};

use super::card::{card_from_v03, card_to_v03};
use super::events::*;
use super::objects::*;
use super::params::*;
use a2a::{
    AgentCard, SendMessageRequest, SendMessageResponse, StreamResponse, TaskArtifactUpdateEvent,
    TaskStatusUpdateEvent,
};

fn v(value: &impl Serialize) -> Value {
    serde_json::to_value(value).unwrap()
}

#[test]
fn parts_both_ways() {
    let cases = [
        (json!({"text": "hi"}), json!({"kind": "text", "text": "hi"})),
        (
            json!({"data": {"a": 1}, "mediaType": "application/json", "metadata": {"type": "x"}}),
            json!({"kind": "data", "data": {"a": 1}, "metadata": {"type": "x"}}),
        ),
        (
            json!({"url": "https://x/f.pdf", "mediaType": "application/pdf", "filename": "f.pdf"}),
            json!({"kind": "file", "file": {"uri": "https://x/f.pdf", "mimeType": "application/pdf", "name": "f.pdf"}}),
        ),
        (
            json!({"raw": "AQID", "mediaType": "application/octet-stream"}),
            json!({"kind": "file", "file": {"bytes": "AQID", "mimeType": "application/octet-stream"}}),
        ),
    ];
    for (v1, v03) in cases {
        let part: Part = serde_json::from_value(v1.clone()).unwrap();
        assert_eq!(part_to_v03(&part), v03);
        let back = part_from_v03(&v03).unwrap();
        match (&back.content, &part.content) {
            (PartContent::Data(_), _) => {
                assert_eq!(back.media_type.as_deref(), Some("application/json"))
            }
            _ => assert_eq!(v(&back), v1),
        }
    }
    // Raw bytes really are bytes on the 1.0 side.
    let raw = part_from_v03(&json!({"kind": "file", "file": {"bytes": "AQID"}})).unwrap();
    assert_eq!(raw.content, PartContent::Raw(vec![1, 2, 3]));
}

#[test]
fn non_object_data_is_wrapped_for_0_3() {
    for data in [json!(42), json!("text"), json!([1, 2]), json!(null)] {
        let part = Part::data(data.clone());
        assert_eq!(
            part_to_v03(&part),
            json!({"kind": "data", "data": {"result": data}})
        );
    }
}

#[test]
fn the_tool_definitions_part_in_both_dialects() {
    // protocols.md §1.6: the 0.3 form is the 1.0 form with `kind: "data"` and no `mediaType`.
    let def = crate::ToolDefinition::new(
        "get_weather",
        "Current weather for a city",
        json!({"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}),
    );
    let part = crate::a2a::parts::to_data_part(std::slice::from_ref(&def));
    let v03 = part_to_v03(&part);
    let mut expected = v(&part);
    expected.as_object_mut().unwrap().remove("mediaType");
    expected["kind"] = json!("data");
    assert_eq!(v03, expected);
    let msg = message_from_v03(&json!({
        "kind": "message", "messageId": "m1", "role": "user", "parts": [v03]
    }))
    .unwrap();
    assert_eq!(crate::a2a::parts::extract_tools(&msg).unwrap(), vec![def]);
}

#[test]
fn part_errors_name_the_path() {
    let e = part_from_v03(&json!({"kind": "video"})).unwrap_err();
    assert_eq!(e.path, "part.kind");
    assert!(e.problem.contains("unknown part kind `video`"), "{e}");
    let e = part_from_v03(&json!({"kind": "text", "text": 3})).unwrap_err();
    assert_eq!(e.path, "part.text");
    let e = part_from_v03(&json!({"kind": "file", "file": {"name": "x"}})).unwrap_err();
    assert_eq!(e.path, "part.file");
    let e = part_from_v03(&json!({"metadata": {}})).unwrap_err();
    assert!(e.problem.contains("needs `kind`"), "{e}");
    // A missing kind is inferred.
    assert_eq!(
        part_from_v03(&json!({"text": "x"})).unwrap().as_text(),
        Some("x")
    );
}

#[test]
fn messages_both_ways_with_the_spec_example() {
    // protocols.md §1.4, the 0.3 spec example request's message.
    let v03 = json!({"role":"user","parts":[{"kind":"text","text":"tell me a joke"}],
                     "messageId":"9229e770-767c-417b-a0b0-f0741243c589"});
    let m = message_from_v03(&v03).unwrap();
    assert_eq!(m.role, Role::User);
    assert_eq!(m.text(), Some("tell me a joke"));
    assert_eq!(m.message_id, "9229e770-767c-417b-a0b0-f0741243c589");
    let mut expected = v03.clone();
    expected["kind"] = json!("message");
    assert_eq!(message_to_v03(&m), expected);

    let mut agent = Message::new(Role::Agent, vec![Part::text("ok")]);
    agent.context_id = Some("c".into());
    agent.task_id = Some("t".into());
    agent.metadata = Some([("k".to_string(), json!(1))].into());
    agent.extensions = Some(vec!["urn:x".into()]);
    agent.reference_task_ids = Some(vec!["t0".into()]);
    let wire = message_to_v03(&agent);
    assert_eq!(wire["role"], "agent");
    assert_eq!(wire["contextId"], "c");
    assert_eq!(wire["referenceTaskIds"], json!(["t0"]));
    assert_eq!(message_from_v03(&wire).unwrap(), agent);
}

#[test]
fn message_errors() {
    let e =
        message_from_v03(&json!({"messageId": "m", "role": "ROLE_USER", "parts": []})).unwrap_err();
    assert_eq!(e.path, "message.role");
    let e = message_from_v03(&json!({"role": "user", "parts": []})).unwrap_err();
    assert_eq!(e.path, "message.messageId");
    let e = message_from_v03(&json!({"messageId": "m", "role": "user"})).unwrap_err();
    assert_eq!(e.path, "message.parts");
    let e = message_from_v03(&json!({"messageId": "m", "role": "user", "parts": [{"kind": "x"}]}))
        .unwrap_err();
    assert_eq!(e.path, "message.parts[0].kind");
    assert!(
        e.to_string()
            .starts_with("invalid A2A 0.3 JSON at `message.parts[0].kind`")
    );
}

#[test]
fn every_state_both_ways() {
    let names = [
        "submitted",
        "working",
        "input-required",
        "completed",
        "canceled",
        "failed",
        "rejected",
        "auth-required",
        "unknown",
    ];
    for name in names {
        let state = state_from_v03(name).unwrap();
        assert_eq!(state_to_v03(&state), name);
        let v1 = v(&state);
        let status = status_from_v03(&json!({"state": name})).unwrap();
        assert_eq!(v(&status.state), v1);
    }
    assert_eq!(state_from_v03("TASK_STATE_WORKING"), None);
    let e = status_from_v03(&json!({"state": "paused"})).unwrap_err();
    assert_eq!(e.path, "status.state");
}

#[test]
fn tasks_both_ways_with_the_spec_example() {
    // protocols.md §1.4: the 0.3 spec example result.
    let v03 = json!({
      "id":"363422be-b0f9-4692-a24d-278670e7c7f1","contextId":"c295ea44-7543-4f78-b524-7a38915ad6e4",
      "status":{"state":"completed","timestamp":"2026-03-12T10:30:00Z"},
      "artifacts":[{"artifactId":"9b6934dd-37e3-4eb1-8766-962efaab63a1","name":"joke",
                    "parts":[{"kind":"text","text":"Why did the chicken cross the road?"}]}],
      "history":[{"role":"user","parts":[{"kind":"text","text":"tell me a joke"}],
                  "messageId":"9229e770-767c-417b-a0b0-f0741243c589",
                  "taskId":"363422be-b0f9-4692-a24d-278670e7c7f1",
                  "contextId":"c295ea44-7543-4f78-b524-7a38915ad6e4"}],
      "kind":"task","metadata":{}});
    let task = task_from_v03(&v03).unwrap();
    assert_eq!(task.status.state, TaskState::Completed);
    assert!(task.status.timestamp.is_some());
    let artifacts = task.artifacts.as_ref().unwrap();
    assert_eq!(
        artifacts[0].parts[0].as_text(),
        Some("Why did the chicken cross the road?")
    );
    assert_eq!(task.history.as_ref().unwrap()[0].role, Role::User);

    let back = task_to_v03(&task);
    assert_eq!(back["kind"], "task");
    assert_eq!(back["status"]["state"], "completed");
    assert_eq!(back["artifacts"], v03["artifacts"]);
    let mut history = v03["history"][0].clone();
    history["kind"] = json!("message");
    assert_eq!(back["history"][0], history);
    assert_eq!(task_from_v03(&back).unwrap(), task);

    // 1.0 example (protocols.md §1.3) → 0.3.
    let v1: Task = serde_json::from_value(json!({
      "id":"task-uuid","contextId":"context-uuid",
      "status":{"state":"TASK_STATE_COMPLETED","timestamp":"2026-03-12T10:30:00.000Z"},
      "artifacts":[{"artifactId":"artifact-uuid","name":"Weather Report",
                    "parts":[{"text":"Today will be sunny with a high of 75°F"}]}]}))
    .unwrap();
    let wire = task_to_v03(&v1);
    assert_eq!(
        wire["artifacts"][0]["parts"][0],
        json!({"kind":"text","text":"Today will be sunny with a high of 75°F"})
    );
    assert_eq!(task_from_v03(&wire).unwrap(), v1);
}

#[test]
fn status_with_a_message_converts_the_message() {
    let status = TaskStatus {
        state: TaskState::InputRequired,
        message: Some(Message::new(
            Role::Agent,
            vec![crate::a2a::parts::tool_calls_part(&[crate::ToolCall::new(
                "c1",
                "get_weather",
                r#"{"city":"Paris"}"#,
            )])],
        )),
        timestamp: None,
    };
    let wire = status_to_v03(&status);
    assert_eq!(wire["state"], "input-required");
    assert_eq!(wire["message"]["role"], "agent");
    assert_eq!(wire["message"]["parts"][0]["kind"], "data");
    assert_eq!(
        wire["message"]["parts"][0]["metadata"]["type"],
        "tool-calls"
    );
    let back = status_from_v03(&wire).unwrap();
    let calls = crate::a2a::parts::extract_tool_calls(back.message.as_ref().unwrap()).unwrap();
    assert_eq!(calls[0].name, "get_weather");
}

#[test]
fn stream_events_both_ways() {
    let update = TaskStatusUpdateEvent {
        task_id: "t".into(),
        context_id: "c".into(),
        status: TaskStatus {
            state: TaskState::Working,
            message: None,
            timestamp: None,
        },
        metadata: None,
    };
    let wire = stream_response_to_v03(&StreamResponse::StatusUpdate(update.clone()));
    assert_eq!(
        wire,
        json!({"kind":"status-update","taskId":"t","contextId":"c","status":{"state":"working"},"final":false})
    );
    assert_eq!(
        stream_response_from_v03(&wire).unwrap(),
        StreamResponse::StatusUpdate(update.clone())
    );
    for (state, fin) in [
        (TaskState::Completed, true),
        (TaskState::Failed, true),
        (TaskState::Canceled, true),
        (TaskState::InputRequired, true),
        (TaskState::AuthRequired, true),
        (TaskState::Submitted, false),
    ] {
        let mut u = update.clone();
        u.status.state = state;
        assert_eq!(status_update_to_v03(&u)["final"], fin);
    }

    let artifact = TaskArtifactUpdateEvent {
        task_id: "t".into(),
        context_id: "c".into(),
        artifact: Artifact {
            artifact_id: "a1".into(),
            name: Some("r".into()),
            description: None,
            parts: vec![Part::data(json!([1, 2]))],
            metadata: Some([("_tool_result".to_string(), json!(true))].into()),
            extensions: None,
        },
        append: Some(false),
        last_chunk: Some(true),
        metadata: None,
    };
    let wire = stream_response_to_v03(&StreamResponse::ArtifactUpdate(artifact.clone()));
    assert_eq!(
        wire,
        json!({"kind":"artifact-update","taskId":"t","contextId":"c","append":false,"lastChunk":true,
               "artifact":{"artifactId":"a1","name":"r","metadata":{"_tool_result":true},
                           "parts":[{"kind":"data","data":{"result":[1,2]}}]}})
    );
    let StreamResponse::ArtifactUpdate(back) = stream_response_from_v03(&wire).unwrap() else {
        panic!("not an artifact update")
    };
    assert_eq!(back.artifact.artifact_id, "a1");
    assert_eq!(back.last_chunk, Some(true));

    // Without `kind` (some 0.2 peers), the members decide.
    let no_kind = json!({"taskId":"t","contextId":"c","status":{"state":"completed"}});
    assert!(matches!(
        stream_response_from_v03(&no_kind).unwrap(),
        StreamResponse::StatusUpdate(_)
    ));
    let task = json!({"kind":"task","id":"t","contextId":"c","status":{"state":"working"}});
    assert!(matches!(
        stream_response_from_v03(&task).unwrap(),
        StreamResponse::Task(_)
    ));
    let e = stream_response_from_v03(&json!({"kind":"weird"})).unwrap_err();
    assert_eq!(e.path, "result.kind");
}

#[test]
fn send_responses_are_unwrapped_in_0_3() {
    let task: Task = serde_json::from_value(
        json!({"id":"t","contextId":"c","status":{"state":"TASK_STATE_WORKING"}}),
    )
    .unwrap();
    let wire = send_response_to_v03(&SendMessageResponse::Task(task.clone()));
    assert_eq!(
        wire,
        json!({"kind":"task","id":"t","contextId":"c","status":{"state":"working"}})
    );
    assert_eq!(
        send_response_from_v03(&wire).unwrap(),
        SendMessageResponse::Task(task)
    );
    let msg = Message::new(Role::Agent, vec![Part::text("hi")]);
    let wire = send_response_to_v03(&SendMessageResponse::Message(msg.clone()));
    assert_eq!(wire["kind"], "message");
    assert_eq!(
        send_response_from_v03(&wire).unwrap(),
        SendMessageResponse::Message(msg)
    );
    let e = send_response_from_v03(&json!({"kind":"status-update"})).unwrap_err();
    assert!(e.problem.contains("status-update"));
}

#[test]
fn send_params_both_ways() {
    // protocols.md §1.4: the 0.3 spec example request's params.
    let v03 = json!({"message":{"role":"user","parts":[{"kind":"text","text":"tell me a joke"}],
                                "messageId":"9229e770-767c-417b-a0b0-f0741243c589"},
                     "metadata":{}});
    let req = send_params_from_v03(&v03).unwrap();
    assert_eq!(req.message.text(), Some("tell me a joke"));
    assert_eq!(req.metadata, Some(Default::default()));

    let full = json!({
        "message": {"kind":"message","role":"user","messageId":"m","parts":[{"kind":"text","text":"x"}]},
        "configuration": {"acceptedOutputModes":["text/plain"],"historyLength":3,"blocking":false,
            "pushNotificationConfig":{"url":"http://127.0.0.1:9/hook","id":"p1","token":"tok",
                "authentication":{"schemes":["Bearer"],"credentials":"secret"}}},
        "metadata": {"k": "v"}
    });
    let req = send_params_from_v03(&full).unwrap();
    let config = req.configuration.as_ref().unwrap();
    assert_eq!(config.return_immediately, Some(true));
    assert_eq!(config.history_length, Some(3));
    let push = config.task_push_notification_config.as_ref().unwrap();
    assert_eq!(push.authentication.as_ref().unwrap().scheme, "Bearer");
    assert_eq!(send_params_to_v03(&req), full);

    let blocking = SendMessageRequest {
        message: Message::new(Role::User, vec![Part::text("x")]),
        configuration: Some(SendMessageConfiguration {
            accepted_output_modes: None,
            task_push_notification_config: None,
            history_length: None,
            return_immediately: Some(false),
        }),
        metadata: None,
        tenant: Some("dropped".into()),
    };
    let wire = send_params_to_v03(&blocking);
    assert_eq!(wire["configuration"], json!({"blocking": true}));
    assert!(wire.get("tenant").is_none());

    let e = send_params_from_v03(&json!({"configuration": {}})).unwrap_err();
    assert_eq!(e.path, "params.message");
    let e = send_params_from_v03(
        &json!({"message": {"role":"user","messageId":"m","parts":[]},
                                         "configuration": {"blocking": "yes"}}),
    )
    .unwrap_err();
    assert_eq!(e.path, "params.configuration.blocking");
}

#[test]
fn task_id_params_both_ways() {
    let get = get_task_params_from_v03(&json!({"id":"t","historyLength":2,"metadata":{}})).unwrap();
    assert_eq!((get.id.as_str(), get.history_length), ("t", Some(2)));
    assert_eq!(
        get_task_params_to_v03(&get),
        json!({"id":"t","historyLength":2})
    );
    let cancel = cancel_params_from_v03(&json!({"id":"t","metadata":{"why":"x"}})).unwrap();
    assert_eq!(
        cancel_params_to_v03(&cancel),
        json!({"id":"t","metadata":{"why":"x"}})
    );
    let sub = subscribe_params_from_v03(&json!({"id":"t"})).unwrap();
    assert_eq!(subscribe_params_to_v03(&sub), json!({"id":"t"}));
    let e = cancel_params_from_v03(&json!({"id": 3})).unwrap_err();
    assert_eq!(e.path, "params.id");
    let e = get_task_params_from_v03(&json!("t")).unwrap_err();
    assert_eq!(e.path, "params");
}

#[test]
fn method_names_both_ways() {
    for (v03, v1) in METHODS {
        assert_eq!(method_from_v03(v03), Some(v1));
        assert_eq!(method_to_v03(v1), Some(v03));
    }
    assert_eq!(method_to_v03("ListTasks"), None);
    assert_eq!(method_from_v03("SendMessage"), None);
}

fn sample_card() -> AgentCard {
    let url = "http://127.0.0.1:41241/";
    let mut v03 = AgentInterface::new(url, "JSONRPC");
    v03.protocol_version = "0.3".into();
    AgentCard {
        name: "Weather Tools".into(),
        description: "Tool server".into(),
        version: "0.1.0".into(),
        supported_interfaces: vec![AgentInterface::new(url, "JSONRPC"), v03],
        capabilities: AgentCapabilities {
            streaming: Some(true),
            push_notifications: None,
            extensions: Some(vec![AgentExtension {
                uri: "https://example.org/a2a/ext/tools/v1".into(),
                description: None,
                required: Some(false),
                params: Some([("tools".to_string(), json!({"get_weather": {}}))].into()),
            }]),
            extended_agent_card: None,
        },
        default_input_modes: vec!["application/json".into()],
        default_output_modes: vec!["application/json".into()],
        skills: vec![AgentSkill {
            id: "tool-get_weather".into(),
            name: "get_weather".into(),
            description: "Current weather".into(),
            tags: vec!["tool".into()],
            examples: None,
            input_modes: Some(vec!["application/json".into()]),
            output_modes: Some(vec!["application/json".into()]),
            security_requirements: Some(vec![[("bearer".to_string(), vec![])].into()]),
        }],
        provider: None,
        documentation_url: None,
        icon_url: None,
        security_schemes: Some(
            [(
                "bearer".to_string(),
                SecurityScheme::HttpAuth(HttpAuthSecurityScheme {
                    scheme: "Bearer".into(),
                    description: None,
                    bearer_format: None,
                }),
            )]
            .into(),
        ),
        security_requirements: Some(vec![[("bearer".to_string(), vec![])].into()]),
        signatures: None,
    }
}

#[test]
fn the_merged_card_carries_both_generations() {
    let card = sample_card();
    let merged = card_to_v03(&card);
    // 1.0 members, untouched.
    assert_eq!(
        merged["supportedInterfaces"],
        v(&card)["supportedInterfaces"]
    );
    assert_eq!(
        merged["securityRequirements"],
        json!([{"schemes": {"bearer": {"list": []}}}])
    );
    // 0.3 members.
    assert_eq!(merged["url"], "http://127.0.0.1:41241/");
    assert_eq!(merged["preferredTransport"], "JSONRPC");
    assert_eq!(merged["protocolVersion"], "0.3");
    assert!(merged.get("additionalInterfaces").is_none());
    assert_eq!(merged["security"], json!([{"bearer": []}]));
    assert_eq!(merged["skills"][0]["security"], json!([{"bearer": []}]));
    assert_eq!(merged["skills"][0]["tags"], json!(["tool"]));
    assert_eq!(
        merged["securitySchemes"]["bearer"],
        json!({"httpAuthSecurityScheme": {"scheme": "Bearer"}, "type": "http", "scheme": "Bearer"})
    );
    assert_eq!(
        merged["capabilities"]["extensions"][0]["params"]["tools"],
        json!({"get_weather": {}})
    );
    // Both readers get the same card back.
    assert_eq!(card_from_v03(&merged).unwrap(), card);
    let plain: AgentCard = serde_json::from_value(merged).unwrap();
    assert_eq!(plain, card);
}

#[test]
fn a_card_without_a_0_3_interface_stays_1_0() {
    let mut card = sample_card();
    card.supported_interfaces.truncate(1);
    assert_eq!(card_to_v03(&card), v(&card));
}

#[test]
fn a_0_3_card_becomes_a_1_0_card() {
    let v03 = json!({
        "protocolVersion": "0.3.0", "name": "Echo", "description": "test peer",
        "url": "http://127.0.0.1:9999/", "preferredTransport": "JSONRPC", "version": "1.0.0",
        "additionalInterfaces": [
            {"url": "http://127.0.0.1:9999/", "transport": "JSONRPC"},
            {"url": "http://127.0.0.1:9999/rest", "transport": "HTTP+JSON"}
        ],
        "capabilities": {"streaming": true, "extensions": [{"uri": "urn:tools", "params": {"tools": {}}}]},
        "defaultInputModes": ["application/json"], "defaultOutputModes": ["application/json"],
        "skills": [{"id": "tool-echo", "name": "echo", "description": "echo", "tags": ["tool"],
                    "security": [{"key": []}]}],
        "supportsAuthenticatedExtendedCard": true,
        "securitySchemes": {"key": {"type": "apiKey", "in": "header", "name": "X-Key"}},
        "security": [{"key": []}]
    });
    let card = card_from_v03(&v03).unwrap();
    assert_eq!(card.supported_interfaces.len(), 2);
    assert_eq!(card.supported_interfaces[0].url, "http://127.0.0.1:9999/");
    assert_eq!(card.supported_interfaces[0].protocol_version, "0.3");
    assert_eq!(card.supported_interfaces[1].protocol_binding, "HTTP+JSON");
    assert_eq!(card.capabilities.extended_agent_card, Some(true));
    assert_eq!(card.skills[0].id, "tool-echo");
    assert_eq!(
        card.skills[0].security_requirements,
        Some(vec![[("key".to_string(), vec![])].into()])
    );
    let Some(SecurityScheme::ApiKey(key)) = card.security_schemes.as_ref().unwrap().get("key")
    else {
        panic!("apiKey scheme not converted")
    };
    assert_eq!(
        (key.location.as_str(), key.name.as_str()),
        ("header", "X-Key")
    );
    assert_eq!(
        card.capabilities.extensions.as_ref().unwrap()[0].uri,
        "urn:tools"
    );
    // And back out again: the 0.3 members are there for 0.3 readers.
    let merged = card_to_v03(&card);
    assert_eq!(merged["url"], "http://127.0.0.1:9999/");
    assert_eq!(merged["securitySchemes"]["key"]["in"], "header");
    assert_eq!(merged["supportsAuthenticatedExtendedCard"], true);

    let e = card_from_v03(&json!({"name": "x", "version": "1"})).unwrap_err();
    assert_eq!(e.path, "agentCard.url");
}

#[test]
fn the_1_0_card_example_reads_unchanged() {
    // protocols.md §1.3, trimmed spec example.
    let v1 = json!({
      "name": "GeoSpatial Route Planner Agent", "description": "Provides advanced route planning",
      "supportedInterfaces": [
        {"url": "https://georoute-agent.example.com/a2a/v1", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
        {"url": "https://georoute-agent.example.com/a2a/json", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"}],
      "provider": {"organization": "Example Geo Services Inc.", "url": "https://www.examplegeoservices.com"},
      "version": "1.2.0",
      "capabilities": {"streaming": true, "pushNotifications": true, "extendedAgentCard": true},
      "defaultInputModes": ["application/json", "text/plain"],
      "defaultOutputModes": ["application/json", "image/png"],
      "skills": [{"id": "route-optimizer-traffic", "name": "Traffic-Aware Route Optimizer",
        "description": "Calculates the optimal driving route", "tags": ["maps", "routing"],
        "examples": ["Plan a route from A to B avoiding tolls."],
        "inputModes": ["application/json", "text/plain"], "outputModes": ["application/json"]}]
    });
    let card = card_from_v03(&v1).unwrap();
    assert_eq!(v(&card), v1);
    // No 0.3 interface: the card stays as it was.
    assert_eq!(card_to_v03(&card), v1);
}
