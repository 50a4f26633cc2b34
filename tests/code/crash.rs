//! Real processes killed with SIGKILL in the middle of a program (the `code-child` binary,
//! `child.rs`; the tools and program in `crash_fixture.rs`), and the program resumed in another
//! process from its journal in the database:
//!
//! - a process running `CodeMode::run` with a `SqlJournalStore` on a SQLite file, killed, then a
//!   new process running the same program id;
//! - `run_code` as a background tool of the durable queue: a worker process killed
//!   mid-program, and another worker finishing the job (SQLite and Postgres).
//!
//! Each kill is decided on what the killed process did, never on time: it waits until the
//! effects file shows the charges made so far and the trace shows the process inside a lookup
//! (or a charge) that it will never leave, because it was told to hang there.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use agent_toolkit::background::JobQueue;
use agent_toolkit::code::{CodeMode, CodeTool, JournalStore, SqlJournalStore};
use agent_toolkit::prelude::*;
use agent_toolkit::storage::Database;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};
use tokio::process::{Child, Command};

use super::crash_fixture::{self as fixture, Files, Hang, ITEMS};
use super::db;

const CHILD: &str = env!("CARGO_BIN_EXE_code-child");

/// The database of one test, removed on drop, and the files its processes write.
struct Place {
    db: Db,
    effects: PathBuf,
    trace: PathBuf,
    /// Keeps the directory of the logs (and of a SQLite database) until the test ends.
    _dir: db::SqliteFile,
}

enum Db {
    Sqlite(PathBuf),
    /// The cluster, stopped on drop, and the URL of the test's database.
    Postgres(#[allow(dead_code)] db::Postgres, String),
}

impl Place {
    fn sqlite(name: &str) -> Place {
        let dir = db::SqliteFile::new(name);
        let path = dir.path();
        Place::new(Db::Sqlite(path), dir)
    }

    /// `None` when Postgres is not installed and this is not CI (the message is printed).
    fn postgres(name: &str) -> Option<Place> {
        let pg = db::Postgres::start()?;
        let url = pg.database("code");
        Some(Place::new(Db::Postgres(pg, url), db::SqliteFile::new(name)))
    }

    fn new(db: Db, dir: db::SqliteFile) -> Place {
        let logs = dir.path().parent().unwrap().to_path_buf();
        std::fs::create_dir_all(&logs).unwrap();
        Place {
            db,
            effects: logs.join("effects.log"),
            trace: logs.join("trace.log"),
            _dir: dir,
        }
    }

    /// What `code-child` takes as DB.
    fn arg(&self) -> String {
        match &self.db {
            Db::Sqlite(path) => format!("sqlite:{}", path.display()),
            Db::Postgres(_, url) => url.clone(),
        }
    }

    async fn database(&self) -> Database {
        fixture::database(&self.arg()).await
    }

    fn paths(&self) -> [String; 2] {
        [&self.effects, &self.trace].map(|p| p.to_string_lossy().into_owned())
    }
}

/// The result of the program run here, without any crash, with logs of its own.
async fn uninterrupted() -> String {
    let dir = db::SqliteFile::new("code-reference");
    let logs = dir.path().parent().unwrap().to_path_buf();
    let files = Files {
        effects: logs.join("effects.log"),
        trace: logs.join("trace.log"),
        hang: Hang::Nowhere,
    };
    let effects = files.effects.clone();
    let toolkit = fixture::tools(files).build().unwrap();
    let result = CodeMode::new()
        .run(&toolkit, "reference", fixture::PROGRAM, &ToolContext::new())
        .await;
    assert_eq!(fixture::charges(&effects).len(), ITEMS as usize);
    super::ok(&result)
}

fn command(args: &[&str]) -> Command {
    let mut command = Command::new(CHILD);
    command
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true);
    command
}

/// Poll until `ready` holds for what the child did, failing if the child exits first.
async fn wait_until(what: &str, child: &mut Child, mut ready: impl FnMut() -> bool) {
    let waited = tokio::time::timeout(Duration::from_secs(180), async {
        loop {
            if ready() {
                return;
            }
            if let Some(status) = child.try_wait().unwrap() {
                panic!("code-child exited ({status}) before {what}");
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    waited.unwrap_or_else(|_| panic!("code-child never got to {what}"));
}

/// SIGKILL, and wait for the process to be gone.
async fn kill(mut child: Child) {
    child.start_kill().unwrap();
    child.wait().await.unwrap();
}

/// Kill the process once it made `charges` charges and hangs where it was told to.
async fn kill_at(child: &mut Child, place: &Place, hang: Hang) -> u32 {
    let pid = child.id().unwrap();
    let (effects, trace) = (place.effects.clone(), place.trace.clone());
    match hang {
        Hang::Price(item) => {
            wait_until(&format!("pricing item {item}"), child, || {
                fixture::charges(&effects).len() == item as usize
                    && fixture::started(&trace, "price", item, pid)
            })
            .await
        }
        Hang::Charge(item) => {
            wait_until(&format!("charging item {item}"), child, || {
                fixture::charges(&effects).len() == item as usize + 1
            })
            .await
        }
        Hang::Nowhere => unreachable!(),
    }
    pid
}

/// `code-child run` to its end: the program's result.
async fn run_to_the_end(args: &[&str]) -> (bool, String) {
    let mut child = command(args).spawn().expect("start code-child");
    let mut out = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .await
        .unwrap();
    let status = tokio::time::timeout(Duration::from_secs(180), child.wait())
        .await
        .expect("code-child ends")
        .unwrap();
    assert!(status.success(), "code-child {args:?}: {status}\n{out}");
    let line = out
        .lines()
        .find_map(|l| l.strip_prefix("result "))
        .unwrap_or_else(|| panic!("no result from code-child: {out}"));
    let result: serde_json::Value = serde_json::from_str(line).unwrap();
    (
        result["ok"].as_bool().unwrap(),
        result["text"].as_str().unwrap().to_string(),
    )
}

/// Every item charged exactly once: the first `before` by the killed process, the rest by the
/// one that resumed.
fn charged_once_each(effects: &Path, before: u32, killed: u32) {
    let charges = fixture::charges(effects);
    let items: Vec<u32> = charges.iter().map(|&(item, _)| item).collect();
    assert_eq!(items, (0..ITEMS).collect::<Vec<_>>(), "{charges:?}");
    for &(item, pid) in &charges {
        assert_eq!(
            pid == killed,
            item < before,
            "item {item} charged by {pid} (the killed process was {killed}): {charges:?}"
        );
    }
}

/// The journal left in the database: finished, with every call answered.
async fn journal_finished(place: &Place, program: &str) {
    let store = SqlJournalStore::new(&place.database().await).await.unwrap();
    let journal = store.load(program).await.unwrap().expect("journaled");
    assert!(journal.is_finished());
    assert_eq!(journal.entries().len(), 3 * ITEMS as usize);
    assert!(journal.entries().iter().all(|e| e.outcome.is_some()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_program_killed_in_a_lookup_resumes_in_a_new_process_with_the_same_result() {
    let place = Place::sqlite("code-crash-lookup");
    let [effects, trace] = place.paths();
    let db = place.arg();

    // The first process charges items 0 to 2 and is killed inside the lookup of item 3.
    let mut a = command(&["run", &db, "program-1", &effects, &trace, "price:3"])
        .spawn()
        .expect("start code-child");
    let killed = kill_at(&mut a, &place, Hang::Price(3)).await;
    kill(a).await;
    assert_eq!(fixture::charges(&place.effects).len(), 3);

    // A new process runs the same program id: the same result as a run never interrupted.
    let second = ["run", &db, "program-1", &effects, &trace, "none"];
    let (ok, text) = run_to_the_end(&second).await;
    assert!(ok, "{text}");
    assert_eq!(text, uninterrupted().await);

    // No charge ran twice: 0–2 by the killed process (answered from the journal after), 3–5
    // by the new one.
    charged_once_each(&place.effects, 3, killed);
    // The lookups the kill cut off (read-only) ran again; those that finished did not.
    let resumed = |tool: &str, item: u32| {
        fixture::lines(&place.trace)
            .iter()
            .filter(|l| {
                l.starts_with(&format!("{tool} {item} ")) && !l.ends_with(&format!(" {killed}"))
            })
            .count()
    };
    assert_eq!((resumed("price", 3), resumed("stock", 3)), (1, 1));
    assert_eq!((resumed("price", 2), resumed("stock", 2)), (0, 0));
    journal_finished(&place, "program-1").await;

    // Run once more: the finished program hands back its result and runs nothing.
    let lines = fixture::lines(&place.trace).len();
    assert_eq!(run_to_the_end(&second).await, (true, text));
    assert_eq!(fixture::lines(&place.trace).len(), lines);
    assert_eq!(fixture::charges(&place.effects).len(), ITEMS as usize);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_charge_cut_off_by_the_kill_is_not_run_again() {
    let place = Place::sqlite("code-crash-charge");
    let [effects, trace] = place.paths();
    let db = place.arg();

    // Killed inside the charge of item 3, after it took effect.
    let mut a = command(&["run", &db, "program-2", &effects, &trace, "charge:3"])
        .spawn()
        .expect("start code-child");
    let killed = kill_at(&mut a, &place, Hang::Charge(3)).await;
    kill(a).await;

    let (ok, text) = run_to_the_end(&["run", &db, "program-2", &effects, &trace, "none"]).await;
    assert!(ok, "{text}");
    // Item 3's charge was not run again: the program was told its outcome is unknown, and went
    // on with the other items.
    charged_once_each(&place.effects, 4, killed);
    let receipts: Vec<String> = serde_json::from_str(&text).unwrap();
    let expected: Vec<String> = serde_json::from_str(&uninterrupted().await).unwrap();
    assert_eq!(receipts.len(), ITEMS as usize);
    for (item, (got, want)) in receipts.iter().zip(&expected).enumerate() {
        if item == 3 {
            assert!(got.starts_with("charge 3 failed"), "{got}");
            assert!(
                got.contains("not idempotent, so it was not run again"),
                "{got}"
            );
        } else {
            assert_eq!(got, want);
        }
    }
    journal_finished(&place, "program-2").await;
}

/// `code-child work`, once it serves.
async fn worker(place: &Place, hang: &str) -> Child {
    let [effects, trace] = place.paths();
    let args = ["work", &place.arg(), "code", &effects, &trace, hang];
    let mut child = command(&args).spawn().expect("start code-child");
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let first = tokio::time::timeout(Duration::from_secs(120), lines.next_line())
        .await
        .expect("code-child answers")
        .unwrap();
    assert_eq!(first.as_deref(), Some("working"), "code-child {args:?}");
    child
}

async fn worker_killed_mid_program(place: Place) {
    let db = place.database().await;
    let queue = JobQueue::new(&db)
        .await
        .unwrap()
        .name("code")
        .heartbeat(Duration::from_secs(1));
    // The submitting toolkit: `run_code` in the background; it runs nothing itself.
    let kit = Toolkit::builder()
        .register(CodeTool::new(CodeMode::new()).background())
        .job_queue(queue)
        .build()
        .unwrap();
    let code = serde_json::json!({ "code": fixture::PROGRAM }).to_string();
    let pending = kit
        .call(
            ToolCall::new("call_7", "run_code", code),
            &ToolContext::new(),
        )
        .await;
    assert!(pending.is_pending(), "{}", pending.model_text());

    // Worker A charges items 0 to 2 and dies inside the lookup of item 3.
    let mut a = worker(&place, "price:3").await;
    let killed = kill_at(&mut a, &place, Hang::Price(3)).await;
    kill(a).await;

    // Worker B gets the job once A missed its heartbeats, and resumes the program.
    let mut b = worker(&place, "none").await;
    tokio::time::timeout(Duration::from_secs(240), kit.background().drain())
        .await
        .expect("worker B finishes the job")
        .unwrap();
    drop(b.stdin.take()); // graceful stop
    tokio::time::timeout(Duration::from_secs(60), b.wait())
        .await
        .unwrap()
        .unwrap();

    let results = kit.background().take_finished().await.unwrap();
    assert_eq!(results.len(), 1);
    assert_eq!(&*results[0].call_id, "call_7");
    // Resumed, not ended "outcome unknown": the same result as a run never interrupted.
    assert_eq!(super::ok(&results[0]), uninterrupted().await);
    charged_once_each(&place.effects, 3, killed);
    assert!(fixture::started(&place.trace, "price", 3, killed));
    journal_finished(&place, "call_7").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_worker_killed_mid_program_and_another_resumes_it() {
    worker_killed_mid_program(Place::sqlite("code-crash-sqlite-worker")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_worker_killed_mid_program_and_another_resumes_it() {
    let Some(place) = Place::postgres("code-crash-postgres-worker") else {
        return;
    };
    worker_killed_mid_program(place).await;
}
