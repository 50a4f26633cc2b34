//! The other processes of the code-mode crash tests (`tests/code/crash.rs`):
//!
//! - `code-child run DB PROGRAM EFFECTS TRACE HANG`: run the crash program as program id
//!   PROGRAM with `CodeMode::run`, its journal in a `SqlJournalStore` on DB, and print
//!   `result {"ok": bool, "text": string}`.
//! - `code-child work DB QUEUE EFFECTS TRACE HANG`: a worker of the durable queue QUEUE on DB
//!   whose toolkit has `run_code` (background, journals in DB), serving until killed or until
//!   stdin closes (a graceful stop). Prints `working` once it serves.
//!
//! DB is `sqlite:PATH` or a `postgres://` URL; HANG is `none`, `price:N` or `charge:N` (the
//! call this process hangs in for good, for the test to kill it there).

#[path = "crash_fixture.rs"]
mod fixture;

use std::time::Duration;

use agent_toolkit::background::{JobQueue, Worker};
use agent_toolkit::code::{CodeMode, CodeTool, SqlJournalStore};
use agent_toolkit::prelude::*;

use fixture::{Files, Hang};

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["run", db, program, effects, trace, hang] => {
            let db = fixture::database(db).await;
            let store = SqlJournalStore::new(&db).await.expect("the journal store");
            let files = Files {
                effects: effects.into(),
                trace: trace.into(),
                hang: Hang::parse(hang),
            };
            let toolkit = fixture::tools(files).build().expect("the toolkit");
            let mode = CodeMode::new().journal_store(store);
            let result = mode
                .run(&toolkit, program, fixture::PROGRAM, &ToolContext::new())
                .await;
            let line = serde_json::json!({
                "ok": result.outcome.is_ok(),
                "text": result.model_text(),
            });
            println!("result {line}");
        }
        ["work", db, queue, effects, trace, hang] => {
            let db = fixture::database(db).await;
            let queue = JobQueue::new(&db)
                .await
                .expect("the job queue")
                .name(queue)
                .heartbeat(Duration::from_secs(1));
            let store = SqlJournalStore::new(&db).await.expect("the journal store");
            let files = Files {
                effects: effects.into(),
                trace: trace.into(),
                hang: Hang::parse(hang),
            };
            let toolkit = fixture::tools(files)
                .register(CodeTool::new(CodeMode::new().journal_store(store)).background())
                .build()
                .expect("the worker toolkit");
            let worker = Worker::new(&toolkit, &queue).concurrency(4);
            println!("working");
            worker
                .run_until(async {
                    // Shut down gracefully when the parent closes our stdin.
                    let mut line = String::new();
                    let _ =
                        tokio::task::spawn_blocking(move || std::io::stdin().read_line(&mut line))
                            .await;
                })
                .await
                .expect("the worker");
        }
        _ => panic!(
            "usage: code-child run DB PROGRAM EFFECTS TRACE HANG | work DB QUEUE EFFECTS TRACE HANG (got {args:?})"
        ),
    }
}
