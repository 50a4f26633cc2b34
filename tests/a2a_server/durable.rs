//! Durable task stores (`SqlTaskStore`) on real databases: a throwaway Postgres cluster and
//! temporary SQLite files (`tests/db`). The store's contract on both engines, compared with
//! the in-memory store on the same tasks; two servers on one database, a cancel answered by
//! one stopping the run on the other (Postgres: another process, `a2a-replica`; SQLite: two
//! servers of this process on one file); a database that goes away and comes back; an agent
//! server's conversation continued by a new server on the same database.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use agent_toolkit::ReActAgent;
use agent_toolkit::a2a::server::{
    A2aAgentServer, A2aToolServer, InMemoryTaskStore, MemoryTaskStore, ServerOptions, SqlTaskStore,
    TaskStore,
};
use agent_toolkit::a2a::types::{
    ListTasksRequest, Message, Part, Role, Task, TaskState, TaskStatus, error_code,
};
use agent_toolkit::model::Role as ModelRole;
use agent_toolkit::testing::{ScriptedModel, ScriptedTurn};
use reqwest::StatusCode;
use serde_json::{Value, json};
use tokio::io::AsyncBufReadExt;

use crate::db;
use crate::fixtures::{Probe, V1, call_message, post, serve, toolkit, uuid, weather_agent};

fn task(id: &str, context: &str, state: TaskState, seconds: Option<i64>) -> Task {
    let timestamp = seconds.map(|s| {
        serde_json::from_value(json!(format!("2025-01-01T00:00:{s:02}Z"))).expect("a timestamp")
    });
    Task {
        id: id.into(),
        context_id: context.into(),
        status: TaskStatus {
            state,
            message: None,
            timestamp,
        },
        artifacts: None,
        history: Some(vec![
            Message::new(Role::User, vec![Part::text("one")]),
            Message::new(Role::Agent, vec![Part::text("two")]),
            Message::new(Role::User, vec![Part::text("three")]),
        ]),
        metadata: None,
    }
}

fn list(
    context: Option<&str>,
    status: Option<TaskState>,
    after: Option<i64>,
    size: Option<i32>,
    token: Option<&str>,
    history: Option<i32>,
) -> ListTasksRequest {
    ListTasksRequest {
        context_id: context.map(str::to_string),
        status,
        page_size: size,
        page_token: token.map(str::to_string),
        history_length: history,
        status_timestamp_after: after
            .map(|s| serde_json::from_value(json!(format!("2025-01-01T00:00:{s:02}Z"))).unwrap()),
        include_artifacts: None,
        tenant: None,
    }
}

/// The contract of a task store, checked on `store`.
async fn contract(store: &SqlTaskStore) {
    // Create and read back, versions from 1.
    let t1 = task("t1", "c1", TaskState::Working, Some(1));
    assert_eq!(store.create(t1.clone()).await.unwrap(), 1);
    assert_eq!(store.get("t1").await.unwrap(), Some(t1.clone()));
    assert_eq!(store.get("nope").await.unwrap(), None);
    let duplicate = store.create(t1.clone()).await.unwrap_err();
    assert_eq!(duplicate.code, error_code::INTERNAL_ERROR, "{duplicate:?}");
    assert!(
        duplicate.message.contains("already exists"),
        "{duplicate:?}"
    );

    // Every write increments the version; a writer at an old version is refused.
    let mut working = t1.clone();
    working.metadata = Some([("step".to_string(), json!(2))].into());
    assert_eq!(store.update(working.clone()).await.unwrap(), 2);
    let stored = store.get_versioned("t1").await.unwrap().unwrap();
    assert_eq!((stored.task, stored.version), (working.clone(), 2));
    let stale = store
        .update_at_version(t1.clone(), 1)
        .await
        .expect_err("version 1 is stale");
    assert_eq!(stale.code, error_code::INVALID_REQUEST, "{stale:?}");
    assert!(stale.message.contains("version 2"), "{stale:?}");
    assert_eq!(store.get("t1").await.unwrap(), Some(working.clone()));
    assert_eq!(store.update_at_version(t1.clone(), 2).await.unwrap(), 3);
    let missing = store
        .update(task("ghost", "c1", TaskState::Working, None))
        .await
        .unwrap_err();
    assert_eq!(missing.code, error_code::TASK_NOT_FOUND, "{missing:?}");

    // A terminal state stays: another state is refused, the same one may be written again.
    let done = task("t2", "c2", TaskState::Completed, Some(2));
    store.create(done.clone()).await.unwrap();
    for state in [TaskState::Working, TaskState::Canceled, TaskState::Failed] {
        let refused = store
            .update(task("t2", "c2", state.clone(), None))
            .await
            .unwrap_err();
        assert_eq!(refused.code, error_code::INVALID_REQUEST, "{state:?}");
    }
    assert_eq!(store.update(done.clone()).await.unwrap(), 2);

    // Cancels: missing, terminal, then a running task once (and not twice).
    let no_task = store.begin_cancel("ghost").await.unwrap_err();
    assert_eq!(no_task.code, error_code::TASK_NOT_FOUND, "{no_task:?}");
    let finished = store.begin_cancel("t2").await.unwrap_err();
    assert_eq!(
        finished.code,
        error_code::TASK_NOT_CANCELABLE,
        "{finished:?}"
    );
    let cancelled = store.begin_cancel("t1").await.unwrap();
    assert_eq!(cancelled.status.state, TaskState::Canceled);
    assert!(cancelled.status.timestamp.is_some());
    let stored = store.get_versioned("t1").await.unwrap().unwrap();
    assert_eq!((stored.task, stored.version), (cancelled, 4));
    let again = store.begin_cancel("t1").await.unwrap_err();
    assert_eq!(again.code, error_code::TASK_NOT_CANCELABLE, "{again:?}");
    let after_cancel = store
        .update(task("t1", "c1", TaskState::Completed, None))
        .await
        .unwrap_err();
    assert_eq!(after_cancel.code, error_code::INVALID_REQUEST);

    // Concurrent cancels of one task: exactly one wins.
    store
        .create(task("race", "c3", TaskState::Working, None))
        .await
        .unwrap();
    let (a, b) = tokio::join!(store.begin_cancel("race"), store.begin_cancel("race"));
    assert!(a.is_ok() != b.is_ok(), "one cancel wins: {a:?} {b:?}");
}

/// `ListTasks` of `store` answers as the in-memory store does on the same tasks.
async fn lists_like_memory(store: &impl TaskStore) {
    let memory = InMemoryTaskStore::new();
    // Ids whose byte order differs from a locale's (`Z` < `_` < `a`), some without a status
    // time, states and contexts mixed.
    let ids = ["b", "Z", "_x", "a", "a1", "B2", "c", "zz", "é", "A"];
    for (i, id) in ids.iter().enumerate() {
        let state = [
            TaskState::Working,
            TaskState::Completed,
            TaskState::Submitted,
        ][i % 3]
            .clone();
        let context = if i % 2 == 0 { "even" } else { "odd" };
        let seconds = (i % 4 != 3).then_some(i64::try_from(i).unwrap());
        let t = task(id, context, state, seconds);
        store.create(t.clone()).await.unwrap();
        memory.create(t).await.unwrap();
    }
    let requests = [
        list(None, None, None, None, None, None),
        list(None, None, None, Some(3), None, None),
        list(None, None, None, Some(3), Some("3"), Some(1)),
        list(None, None, None, Some(3), Some("9"), Some(0)),
        list(None, None, None, Some(3), Some("99"), None),
        list(None, None, None, Some(0), None, Some(-1)),
        list(None, None, None, Some(1000), None, Some(2)),
        list(Some("odd"), None, None, Some(2), None, None),
        list(Some("odd"), None, None, Some(2), Some("2"), None),
        list(None, Some(TaskState::Completed), None, None, None, None),
        list(
            Some("even"),
            Some(TaskState::Working),
            None,
            None,
            None,
            None,
        ),
        list(None, None, Some(4), Some(2), None, None),
        list(None, None, Some(4), Some(2), Some("2"), None),
        list(Some("none"), None, None, None, None, None),
    ];
    for request in &requests {
        let ours = store.list(request).await.unwrap();
        let theirs = memory.list(request).await.unwrap();
        assert_eq!(
            serde_json::to_value(&ours).unwrap(),
            serde_json::to_value(&theirs).unwrap(),
            "{request:?}"
        );
    }
    // Following the tokens visits every task once, in id byte order.
    let mut seen = Vec::new();
    let mut token = None;
    loop {
        let page = store
            .list(&list(None, None, None, Some(4), token.as_deref(), None))
            .await
            .unwrap();
        seen.extend(page.tasks.into_iter().map(|t| t.id));
        if page.next_page_token.is_empty() {
            break;
        }
        token = Some(page.next_page_token);
    }
    let mut sorted: Vec<String> = ids.iter().map(|s| s.to_string()).collect();
    sorted.sort();
    assert_eq!(seen, sorted);
    let bad = store
        .list(&list(None, None, None, None, Some("page two"), None))
        .await
        .unwrap_err();
    assert_eq!(bad.code, error_code::INVALID_PARAMS, "{bad:?}");
}

/// Our in-memory store (the servers' default) lists like the official one too.
#[tokio::test]
async fn memory_store_lists_like_the_official_store() {
    lists_like_memory(&MemoryTaskStore::new()).await;
}

/// `delete_finished_before` deletes old finished tasks and nothing else.
async fn retention(store: &SqlTaskStore) {
    for (id, state) in [
        ("done", TaskState::Completed),
        ("failed", TaskState::Failed),
        ("running", TaskState::Working),
        ("waiting", TaskState::InputRequired),
    ] {
        store
            .create(task(id, "retention", state, Some(1)))
            .await
            .unwrap();
    }
    let past = std::time::SystemTime::now() - Duration::from_secs(3600);
    assert_eq!(store.delete_finished_before(past).await.unwrap(), 0);
    let soon = std::time::SystemTime::now() + Duration::from_secs(1);
    assert_eq!(store.delete_finished_before(soon).await.unwrap(), 2);
    for (id, kept) in [
        ("done", false),
        ("failed", false),
        ("running", true),
        ("waiting", true),
    ] {
        assert_eq!(store.get(id).await.unwrap().is_some(), kept, "{id}");
    }
}

#[tokio::test]
async fn postgres_store_keeps_the_task_store_contract() {
    let Some(pg) = db::Postgres::start() else {
        return;
    };
    let store = SqlTaskStore::postgres(&pg.database("contract"))
        .await
        .unwrap();
    contract(&store).await;
    let store = SqlTaskStore::postgres(&pg.database("lists")).await.unwrap();
    lists_like_memory(&store).await;
    let store = SqlTaskStore::postgres(&pg.database("retention"))
        .await
        .unwrap();
    retention(&store).await;
}

#[tokio::test]
async fn sqlite_store_keeps_the_task_store_contract() {
    let file = db::SqliteFile::new("a2a-contract");
    let store = SqlTaskStore::sqlite(file.path()).await.unwrap();
    contract(&store).await;
    let lists = db::SqliteFile::new("a2a-lists");
    let store = SqlTaskStore::sqlite(lists.path()).await.unwrap();
    lists_like_memory(&store).await;
    let file = db::SqliteFile::new("a2a-retention");
    retention(&SqlTaskStore::sqlite(file.path()).await.unwrap()).await;
}

#[tokio::test]
async fn tables_are_created_once_and_tasks_outlive_the_store() {
    let file = db::SqliteFile::new("a2a-reopen");
    let store = SqlTaskStore::sqlite(file.path()).await.unwrap();
    store
        .create(task("kept", "c", TaskState::Working, None))
        .await
        .unwrap();
    drop(store);
    let reopened = SqlTaskStore::sqlite(file.path()).await.unwrap();
    let kept = reopened.get_versioned("kept").await.unwrap().unwrap();
    assert_eq!((kept.task.context_id.as_str(), kept.version), ("c", 1));
}

/// A JSON-RPC request of `method` with `params` (A2A 1.0).
async fn rpc(base: &str, method: &str, params: Value) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let (status, body) = post(base, &[V1], body.to_string()).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body
}

/// Starts a call of `name` on `base` and returns its task id at once (`returnImmediately`).
async fn start_call(base: &str, name: &str, params: Value) -> String {
    let body = rpc(
        base,
        "SendMessage",
        json!({"message": call_message(name, params),
               "configuration": {"returnImmediately": true}}),
    )
    .await;
    body["result"]["task"]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("no task: {body:#}"))
        .to_string()
}

async fn state_on(base: &str, task_id: &str) -> Value {
    let body = rpc(base, "GetTask", json!({"id": task_id})).await;
    body["result"]["status"]["state"].clone()
}

/// Waits (at most 20 s) until `done` holds.
async fn eventually(what: &str, mut done: impl AsyncFnMut() -> bool) {
    for _ in 0..200 {
        if done().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("gave up waiting: {what}");
}

/// Another server process (`a2a-replica`) on `url`; killed on drop.
struct Replica {
    _child: tokio::process::Child,
    base: String,
}

impl Replica {
    async fn start(url: &str, markers: &Path) -> Replica {
        let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_a2a-replica"))
            .args([url, "0", markers.to_str().unwrap()])
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("start a2a-replica");
        let stdout = child.stdout.take().unwrap();
        let mut lines = tokio::io::BufReader::new(stdout).lines();
        let line = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
            .await
            .expect("a2a-replica did not start in 30 s")
            .unwrap()
            .expect("a2a-replica exited before it was ready");
        let base = line
            .strip_prefix("ready ")
            .unwrap_or_else(|| panic!("unexpected first line: {line}"))
            .to_string();
        Replica {
            _child: child,
            base,
        }
    }
}

#[tokio::test]
async fn a_cancel_on_one_postgres_server_stops_the_run_on_another_process() {
    let Some(pg) = db::Postgres::start() else {
        return;
    };
    let url = pg.database("replicas");
    let markers = db::SqliteFile::new("a2a-markers");
    let marker_dir = markers.path().parent().unwrap().to_path_buf();
    let replica = Replica::start(&url, &marker_dir).await;
    let here = SqlTaskStore::postgres(&url).await.unwrap();
    let probe = Probe::default();
    let server =
        A2aToolServer::new(&toolkit(&probe)).options(ServerOptions::new().task_store(here));
    let local = serve(server.router()).await;

    // The tool runs in the other process; this server sees its task.
    let task_id = start_call(&replica.base, "wait_for_cancel", json!({"label": "one"})).await;
    let started = marker_dir.join("one.started");
    eventually("the tool started", async || started.exists()).await;
    assert_eq!(state_on(&local, &task_id).await, "TASK_STATE_WORKING");
    let listed = rpc(&local, "ListTasks", json!({})).await;
    assert_eq!(listed["result"]["tasks"][0]["id"], task_id, "{listed:#}");

    // Cancelled here: the run there is cancelled, and both report CANCELED.
    let cancelled = rpc(&local, "CancelTask", json!({"id": task_id})).await;
    assert_eq!(
        cancelled["result"]["status"]["state"], "TASK_STATE_CANCELED",
        "{cancelled:#}"
    );
    let marker = marker_dir.join("one.cancelled");
    eventually("the tool in the other process was cancelled", async || {
        marker.exists()
    })
    .await;
    assert_eq!(
        state_on(&replica.base, &task_id).await,
        "TASK_STATE_CANCELED"
    );
    let again = rpc(&replica.base, "CancelTask", json!({"id": task_id})).await;
    assert_eq!(
        again["result"]["status"]["state"], "TASK_STATE_CANCELED",
        "{again:#}"
    );

    // A run that is not cancelled elsewhere is left alone: a second call still runs.
    let second = start_call(&replica.base, "wait_for_cancel", json!({"label": "two"})).await;
    let started = marker_dir.join("two.started");
    eventually("the second tool started", async || started.exists()).await;
    assert_eq!(state_on(&local, &second).await, "TASK_STATE_WORKING");
    assert!(!marker_dir.join("two.cancelled").exists());
    drop(replica);
}

#[tokio::test]
async fn a_cancel_on_one_sqlite_server_stops_the_run_on_another() {
    let file = db::SqliteFile::new("a2a-sqlite-replicas");
    let (probe_a, probe_b) = (Probe::default(), Probe::default());
    let store_a = SqlTaskStore::sqlite(file.path()).await.unwrap();
    let store_b = SqlTaskStore::sqlite(file.path()).await.unwrap();
    let a =
        A2aToolServer::new(&toolkit(&probe_a)).options(ServerOptions::new().task_store(store_a));
    let b =
        A2aToolServer::new(&toolkit(&probe_b)).options(ServerOptions::new().task_store(store_b));
    let (a, b) = (serve(a.router()).await, serve(b.router()).await);

    // One long step: no progress events, whose writes the store would refuse once the task is
    // cancelled (which also stops a run); only the server's check of the state can stop it.
    let task_id = start_call(&a, "slow_count", json!({"n": 1, "step_ms": 60_000})).await;
    eventually("the call runs", async || {
        state_on(&b, &task_id).await == "TASK_STATE_WORKING"
    })
    .await;
    let cancelled = rpc(&b, "CancelTask", json!({"id": task_id})).await;
    assert_eq!(
        cancelled["result"]["status"]["state"], "TASK_STATE_CANCELED",
        "{cancelled:#}"
    );
    eventually("the call on the other server was cancelled", async || {
        probe_a.cancelled.load(std::sync::atomic::Ordering::SeqCst) == 1
    })
    .await;
    assert_eq!(state_on(&a, &task_id).await, "TASK_STATE_CANCELED");
    assert_eq!(
        probe_b.cancelled.load(std::sync::atomic::Ordering::SeqCst),
        0
    );
}

#[tokio::test]
async fn a_database_that_goes_away_gives_errors_and_comes_back() {
    let Some(pg) = db::Postgres::start() else {
        return;
    };
    let url = pg.database("outage");
    let store = SqlTaskStore::postgres(&url).await.unwrap();
    let probe = Probe::default();
    let server = A2aToolServer::new(&toolkit(&probe))
        .options(ServerOptions::new().task_store(store.clone()));
    let base = serve(server.router()).await;
    let before = rpc(
        &base,
        "SendMessage",
        json!({"message": call_message("add", json!({"a": 1, "b": 2}))}),
    )
    .await;
    let kept = before["result"]["task"]["id"].as_str().unwrap().to_string();

    pg.stop();
    let error = store.get(&kept).await.unwrap_err();
    assert_eq!(error.code, error_code::INTERNAL_ERROR, "{error:?}");
    assert!(
        error.message.contains("the database Postgres 127.0.0.1:")
            && error.message.contains("/outage"),
        "{error:?}"
    );
    for (method, params) in [
        ("GetTask", json!({"id": kept})),
        ("ListTasks", json!({})),
        ("CancelTask", json!({"id": kept})),
        (
            "SendMessage",
            json!({"message": call_message("add", json!({"a": 1, "b": 2}))}),
        ),
    ] {
        let body = rpc(&base, method, params).await;
        assert_eq!(body["error"]["code"], -32603, "{method}: {body:#}");
        let message = body["error"]["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("task store") && message.contains("Postgres"),
            "{method}: {body:#}"
        );
    }

    pg.restart();
    assert_eq!(state_on(&base, &kept).await, "TASK_STATE_COMPLETED");
    let after = rpc(
        &base,
        "SendMessage",
        json!({"message": call_message("add", json!({"a": 2, "b": 2}))}),
    )
    .await;
    assert_eq!(
        after["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{after:#}"
    );
}

/// The second half of the weather agent's script (`fixtures::weather_agent`), for a server
/// that never saw the first: it must find the client's result after the question and its own
/// call, then the whole exchange when asked again.
fn weather_agent_after_restart(
    _context: &str,
) -> Result<ReActAgent, agent_toolkit::error::ConfigError> {
    let model = ScriptedModel::default()
        .then_expect(
            |req| {
                let texts: Vec<&str> = req.messages.iter().map(|m| m.content()).collect();
                let asked = req.messages.iter().any(|m| {
                    m.role() == ModelRole::User && m.content().contains("weather in Paris")
                });
                let called = req.messages.iter().any(|m| {
                    m.role() == ModelRole::Assistant
                        && m.tool_calls().iter().any(|c| c.name == "get_weather")
                });
                let last = req.messages.last().ok_or("no messages")?;
                (asked && called && last.role() == ModelRole::Tool && last.content().contains("18"))
                    .then_some(())
                    .ok_or_else(|| format!("the conversation was not restored: {texts:?}"))
            },
            ScriptedTurn::text("It is 18°C in Paris."),
        )
        .then_expect(
            |req| {
                let texts: Vec<&str> = req.messages.iter().map(|m| m.content()).collect();
                texts
                    .iter()
                    .any(|t| t.contains("It is 18°C in Paris."))
                    .then_some(())
                    .ok_or_else(|| format!("the answer was not kept: {texts:?}"))
            },
            ScriptedTurn::text("Still 18°C."),
        );
    ReActAgent::builder(model).build()
}

fn weather_question(context: &str) -> Value {
    json!({"messageId": uuid(), "role": "ROLE_USER", "contextId": context, "parts": [
        {"text": "What's the weather in Paris?"},
        {"data": {"tools": [{"type": "function", "function": {"name": "get_weather",
            "description": "Current weather", "parameters": {"type": "object",
            "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]},
         "mediaType": "application/json", "metadata": {"type": "tool-definitions", "format": "openai"}}]})
}

/// A conversation waiting for the client's tool result on one server is continued by a new
/// server on the same database (a restart): the result on the same task, then a new question.
async fn conversations_survive_a_restart(first: SqlTaskStore, second: SqlTaskStore) {
    let context = uuid();
    let before = A2aAgentServer::new(weather_agent).options(ServerOptions::new().task_store(first));
    let before = serve(before.router()).await;
    let asked = rpc(
        &before,
        "SendMessage",
        json!({"message": weather_question(&context)}),
    )
    .await;
    let task = &asked["result"]["task"];
    assert_eq!(
        task["status"]["state"], "TASK_STATE_INPUT_REQUIRED",
        "{asked:#}"
    );
    let call = &task["status"]["message"]["parts"][0]["data"]["tool_calls"][0];

    let after = A2aAgentServer::new(weather_agent_after_restart)
        .options(ServerOptions::new().task_store(second));
    let after = serve(after.router()).await;
    let results = json!({"messageId": uuid(), "role": "ROLE_USER", "taskId": task["id"],
        "contextId": context, "parts": [{"data": {"tool_results": [{"tool_call_id": call["id"],
        "name": "get_weather", "content": "{\"temp_c\": 18}", "is_error": false}]},
        "mediaType": "application/json", "metadata": {"type": "tool-results"}}]});
    let answered = rpc(&after, "SendMessage", json!({"message": results})).await;
    let done = &answered["result"]["task"];
    assert_eq!(
        done["status"]["state"], "TASK_STATE_COMPLETED",
        "{answered:#}"
    );
    assert_eq!(
        done["artifacts"][0]["parts"][0]["text"],
        "It is 18°C in Paris."
    );

    let again = json!({"messageId": uuid(), "role": "ROLE_USER", "contextId": context,
                       "parts": [{"text": "And now?"}]});
    let answered = rpc(&after, "SendMessage", json!({"message": again})).await;
    let done = &answered["result"]["task"];
    assert_eq!(
        done["status"]["state"], "TASK_STATE_COMPLETED",
        "{answered:#}"
    );
    assert_eq!(done["artifacts"][0]["parts"][0]["text"], "Still 18°C.");
}

#[tokio::test]
async fn agent_conversations_survive_a_restart_on_postgres() {
    let Some(pg) = db::Postgres::start() else {
        return;
    };
    let url = pg.database("conversations");
    let first = SqlTaskStore::postgres(&url).await.unwrap();
    let second = SqlTaskStore::postgres(&url).await.unwrap();
    conversations_survive_a_restart(first, second).await;
}

#[tokio::test]
async fn agent_conversations_survive_a_restart_on_sqlite() {
    let file = db::SqliteFile::new("a2a-conversations");
    let first = SqlTaskStore::sqlite(file.path()).await.unwrap();
    let second = SqlTaskStore::sqlite(file.path()).await.unwrap();
    conversations_survive_a_restart(first, second).await;
}

/// A blocking `SendMessage` stores its task twice (the official handler's SUBMITTED, then
/// finished) instead of once per step (five); a call that returns at once, or a stream, still goes step by step. The answers are the
/// same finished task either way.
#[tokio::test]
async fn a_blocking_call_stores_its_task_in_two_writes_and_answers_the_same() {
    let file = db::SqliteFile::new("a2a-writes");
    let store = SqlTaskStore::sqlite(file.path()).await.unwrap();
    let kit = toolkit(&Probe::default());
    let base = serve(
        A2aToolServer::new(&kit)
            .options(ServerOptions::new().task_store(store.clone()))
            .router(),
    )
    .await;
    let send = |config: Value| {
        json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {
            "message": call_message("add", json!({"a": 20, "b": 22})),
            "configuration": config,
        }})
        .to_string()
    };
    let (_, blocking) = post(&base, &[V1], send(json!({}))).await;
    let task = &blocking["result"]["task"];
    let (is_error, _, result) = crate::fixtures::tool_result(task);
    assert!(!is_error, "{blocking:#}");
    assert_eq!(result.as_f64(), Some(42.0));
    assert_eq!(
        task["history"].as_array().map(Vec::len),
        Some(1),
        "{task:#}"
    );
    let id = task["id"].as_str().unwrap();
    let stored = store.get_versioned(id).await.unwrap().unwrap();
    assert_eq!(stored.version, 2, "SUBMITTED, then finished: two writes");
    assert_eq!(stored.task.status.state, TaskState::Completed);

    // Returning at once: the first step is the answer, and every step is stored.
    let (_, early) = post(&base, &[V1], send(json!({"returnImmediately": true}))).await;
    let id = early["result"]["task"]["id"].as_str().unwrap().to_string();
    let mut version = 0;
    for _ in 0..100 {
        let stored = store.get_versioned(&id).await.unwrap().unwrap();
        version = stored.version;
        if stored.task.status.state == TaskState::Completed {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(
        version, 5,
        "SUBMITTED (the handler's, then ours), WORKING, the artifact, COMPLETED"
    );
}
