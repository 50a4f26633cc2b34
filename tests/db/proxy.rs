//! A TCP proxy in front of a real Postgres that loses replies on demand: armed with a piece of
//! SQL, it forwards the next request that carries it, lets the server execute (and commit) it,
//! then cuts that connection before one byte of the answer reaches the client. This is what a
//! database that goes away mid-request does to a client (the statement ran, its reply is lost),
//! made to happen exactly where a test wants it, every time.
//!
//! The SQL text travels in the `Parse` message of the extended query protocol, and the
//! statement runs at the `Execute` that follows (in the same write, or in the next one once the
//! client has prepared it): the cut comes after the first `Execute` the connection sends from
//! the request that carried the SQL on. A statement already prepared on a connection does not
//! send its text again, so arm the proxy before the first time a statement runs.
//!
//! Include it with `#[path = "../db/proxy.rs"] mod proxy;` (needs tokio's `net` feature).
#![allow(dead_code)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// The proxy; it runs until the test's runtime ends.
pub struct CutProxy {
    /// The port clients connect to (on 127.0.0.1).
    pub port: u16,
    state: Arc<Mutex<State>>,
}

#[derive(Default)]
struct State {
    /// Cut the connection that sends a request containing the first, at the `Execute` that
    /// follows — or, when there is a second, at the request containing it.
    armed: Option<(Vec<u8>, Option<Vec<u8>>)>,
    /// How many requests were cut so far.
    cuts: usize,
}

impl CutProxy {
    /// A proxy to the server on `127.0.0.1:upstream`.
    pub async fn start(upstream: u16) -> CutProxy {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind the proxy");
        let port = listener.local_addr().expect("address").port();
        let state = Arc::new(Mutex::new(State::default()));
        let shared = state.clone();
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let Ok(server) = TcpStream::connect(("127.0.0.1", upstream)).await else {
                    continue;
                };
                tokio::spawn(pump(client, server, shared.clone()));
            }
        });
        CutProxy { port, state }
    }

    /// Lose the reply of the next request whose bytes contain `sql`.
    pub fn cut_reply_to(&self, sql: &str) {
        self.state.lock().unwrap().armed = Some((sql.as_bytes().to_vec(), None));
    }

    /// Lose the reply of the first request containing `then` on the connection that next sends
    /// `first` (the `COMMIT` of a transaction that ran a statement, say).
    pub fn cut_reply_after(&self, first: &str, then: &str) {
        self.state.lock().unwrap().armed =
            Some((first.as_bytes().to_vec(), Some(then.as_bytes().to_vec())));
    }

    /// How many replies were lost so far.
    pub fn cuts(&self) -> usize {
        self.state.lock().unwrap().cuts
    }

    /// Whether an armed cut is still waiting for its request.
    pub fn armed(&self) -> bool {
        self.state.lock().unwrap().armed.is_some()
    }

    /// A Postgres URL through the proxy for `database`.
    pub fn url(&self, database: &str) -> String {
        format!("postgres://postgres@127.0.0.1:{}/{database}", self.port)
    }
}

/// Copies both ways until either side closes, or until the client sends the armed request:
/// then that request goes through, the server is given time to run it, and both sides close
/// with the answer unread.
async fn pump(client: TcpStream, server: TcpStream, state: Arc<Mutex<State>>) {
    let _ = client.set_nodelay(true);
    let _ = server.set_nodelay(true);
    let (mut client_read, mut client_write) = client.into_split();
    let (mut server_read, mut server_write) = server.into_split();
    let cut = Arc::new(tokio::sync::Notify::new());
    let to_client = {
        let cut = cut.clone();
        tokio::spawn(async move {
            let mut buffer = vec![0u8; 64 * 1024];
            loop {
                tokio::select! {
                    () = cut.notified() => return,
                    read = server_read.read(&mut buffer) => match read {
                        Ok(0) | Err(_) => return,
                        Ok(n) => {
                            if client_write.write_all(&buffer[..n]).await.is_err() {
                                return;
                            }
                        }
                    }
                }
            }
        })
    };
    let mut buffer = vec![0u8; 64 * 1024];
    // Once the first pattern went by: the request that ends the connection (`None`: the next
    // `Execute`).
    let mut doomed: Option<Option<Vec<u8>>> = None;
    loop {
        let n = match client_read.read(&mut buffer).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let chunk = &buffer[..n];
        let contains =
            |chunk: &[u8], pattern: &[u8]| chunk.windows(pattern.len()).any(|w| w == pattern);
        if doomed.is_none() {
            let mut state = state.lock().unwrap();
            let hit = state
                .armed
                .as_ref()
                .is_some_and(|(first, _)| contains(chunk, first));
            if hit {
                let (_, then) = state.armed.take().unwrap_or_default();
                state.cuts += 1;
                doomed = Some(then);
            }
        }
        let cut_now = match &doomed {
            Some(None) => has_execute(chunk),
            Some(Some(then)) => contains(chunk, then),
            None => false,
        };
        if cut_now {
            // Stop the answer first, then let the request through and the server run it.
            cut.notify_one();
            let _ = server_write.write_all(chunk).await;
            tokio::time::sleep(Duration::from_millis(300)).await;
            break;
        }
        if server_write.write_all(chunk).await.is_err() {
            break;
        }
    }
    to_client.abort();
}

/// Whether `chunk`, read as frontend messages (a type byte, then a 4-byte length counting
/// itself), holds an `Execute`. A chunk that does not parse is taken to hold one.
fn has_execute(chunk: &[u8]) -> bool {
    let mut at = 0;
    while at + 5 <= chunk.len() {
        let kind = chunk[at];
        let len = u32::from_be_bytes([chunk[at + 1], chunk[at + 2], chunk[at + 3], chunk[at + 4]])
            as usize;
        if kind == b'E' {
            return true;
        }
        if len < 4 {
            return true;
        }
        at += 1 + len;
    }
    at != chunk.len()
}
