//! The other processes of the durable-jobs tests (`tests/jobs/crash.rs`):
//!
//! - `jobs-child work DB QUEUE LOG CONCURRENCY`: a worker serving the queue until killed (or
//!   until stdin closes, which shuts it down gracefully).
//! - `jobs-child submit DB QUEUE COUNT MS`: submit COUNT calls (even `n` to `record`, odd to
//!   `transfer`), print `submitted` and exit without waiting for any result.
//! - `jobs-child open DB QUEUE`: open the queue (creating its tables), submit one call, and print
//!   `opened`, or print the error and exit with 1 (many of these at once on one fresh file).
//! - `jobs-child open-only DB`: open the queue, print `opened` or `failed after TIME: ERROR`, and
//!   exit (many of these, one after another, while a worker is busy on the file).
//!
//! DB is `sqlite:PATH` or a `postgres://` URL.

#[path = "fixture.rs"]
mod fixture;

use agent_toolkit::background::{JobQueue, Worker};
use agent_toolkit::prelude::*;

async fn open(db: &str, queue: &str) -> JobQueue {
    let opened = match db.strip_prefix("sqlite:") {
        Some(path) => JobQueue::sqlite(path).await,
        None => JobQueue::postgres(db).await,
    };
    opened
        .expect("open the job queue")
        .name(queue)
        .heartbeat(std::time::Duration::from_secs(1))
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["work", db, queue, log, concurrency] => {
            let queue = open(db, queue).await;
            let toolkit = fixture::worker_toolkit(log.into());
            let worker = Worker::new(&toolkit, &queue).concurrency(concurrency.parse().unwrap());
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
        ["submit", db, queue, count, ms] => {
            let queue = open(db, queue).await;
            let toolkit = fixture::submitter().job_queue(queue).build().unwrap();
            let ctx = ToolContext::new();
            let count: u32 = count.parse().unwrap();
            let calls = (0..count).map(|n| {
                let tool = if n.is_multiple_of(2) {
                    "record"
                } else {
                    "transfer"
                };
                fixture::call(&format!("call_{n}"), tool, n, ms.parse().unwrap())
            });
            let results = futures::future::join_all(calls.map(|c| toolkit.call(c, &ctx))).await;
            for result in &results {
                assert!(result.is_pending(), "{}", result.model_text());
            }
            println!("submitted");
        }
        ["open", db, name] => {
            let opened = match db.strip_prefix("sqlite:") {
                Some(path) => JobQueue::sqlite(path).await,
                None => JobQueue::postgres(db).await,
            };
            match opened {
                Ok(queue) => {
                    let toolkit = fixture::submitter()
                        .job_queue(queue.name(name))
                        .build()
                        .unwrap();
                    let result = toolkit
                        .call(fixture::call("c", "record", 1, 1), &ToolContext::new())
                        .await;
                    if result.is_pending() {
                        println!("opened");
                    } else {
                        println!(
                            "failed: {}",
                            result.error().map(|e| format!("{e:?}")).unwrap_or_default()
                        );
                        std::process::exit(1);
                    }
                }
                Err(e) => {
                    println!("failed: {e}");
                    std::process::exit(1);
                }
            }
        }
        ["open-only", db] => {
            let start = std::time::Instant::now();
            let opened = match db.strip_prefix("sqlite:") {
                Some(path) => JobQueue::sqlite(path).await,
                None => JobQueue::postgres(db).await,
            };
            match opened {
                Ok(_) => println!("opened"),
                Err(e) => println!("failed after {:?}: {e}", start.elapsed()),
            }
        }
        _ => panic!(
            "usage: jobs-child work DB QUEUE LOG CONCURRENCY | submit DB QUEUE COUNT MS | \
             open DB QUEUE | open-only DB (got {args:?})"
        ),
    }
}
