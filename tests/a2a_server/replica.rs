//! `a2a-replica`: one more A2A tool server on a shared Postgres task store, started as a child
//! process by the durable-store tests (`durable.rs`): `a2a-replica <postgres-url> <port>
//! <marker-dir>` serves on 127.0.0.1:<port> (0: any free port) and prints `ready <base-url>`.
//!
//! Its one tool, `wait_for_cancel`, writes `<marker-dir>/<label>.started` when it starts and
//! `<marker-dir>/<label>.cancelled` when its run is dropped before it finished (the engine
//! drops a cancelled call's future), then waits (up to a minute) for its cancellation token.

use std::path::PathBuf;
use std::time::Duration;

use agent_toolkit::a2a::server::{A2aToolServer, ServerOptions, SqlTaskStore};
use agent_toolkit::prelude::*;

#[derive(Clone)]
struct Markers(PathBuf);

/// Writes `<label>.cancelled` unless the run finished.
struct Unfinished {
    path: PathBuf,
    finished: bool,
}

impl Drop for Unfinished {
    fn drop(&mut self) {
        if !self.finished {
            let _ = std::fs::write(&self.path, "cancelled");
        }
    }
}

/// Wait until cancelled (at most a minute).
#[tool]
async fn wait_for_cancel(
    label: String,
    #[ctx] markers: Ctx<Markers>,
    #[ctx] cancel: CancellationToken,
) -> String {
    let dir = &markers.0.0;
    let mut guard = Unfinished {
        path: dir.join(format!("{label}.cancelled")),
        finished: false,
    };
    let _ = std::fs::write(dir.join(format!("{label}.started")), "started");
    tokio::select! {
        () = cancel.cancelled() => {}
        () = tokio::time::sleep(Duration::from_secs(60)) => {
            guard.finished = true;
            return "never cancelled".into();
        }
    }
    // Seen the token: record it even if the future is not dropped.
    drop(guard);
    "cancelled".into()
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let [_, url, port, markers] = &args[..] else {
        eprintln!("usage: a2a-replica <postgres-url> <port> <marker-dir>");
        std::process::exit(2);
    };
    let store = match SqlTaskStore::postgres(url).await {
        Ok(store) => store,
        Err(e) => {
            eprintln!("a2a-replica: the task store could not be opened: {e}");
            std::process::exit(1);
        }
    };
    let toolkit = Toolkit::builder()
        .register(WaitForCancel)
        .context(Markers(PathBuf::from(markers)))
        .build()
        .expect("the replica's toolkit");
    let listener = tokio::net::TcpListener::bind(format!("127.0.0.1:{port}"))
        .await
        .expect("bind the replica's port");
    let addr = listener.local_addr().expect("its address");
    println!("ready http://{addr}");
    let server = A2aToolServer::new(&toolkit).options(ServerOptions::new().task_store(store));
    if let Err(e) = server.serve(listener).await {
        eprintln!("a2a-replica: {e}");
        std::process::exit(1);
    }
}
