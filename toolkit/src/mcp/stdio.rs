//! The stdio transport of [`McpServer`]: rmcp's newline-delimited JSON-RPC transport, plus two
//! answers to bad input that rmcp does not give.
//!
//! rmcp drops a line that is not JSON without a word (rmcp issue #938: replying to garbage can
//! start an echo storm between two programs that both reply). JSON-RPC 2.0 §5.1 asks for a
//! `-32700` parse error with `"id": null`, and a client that sent a broken line otherwise waits
//! for an answer that never comes, so this transport sends one. The storm cannot happen here:
//! the reply is valid JSON, which never draws another parse error. rmcp already answers JSON
//! that is not a JSON-RPC message with `-32600`.
//!
//! Second, rmcp ends the session if the first message is not a request (a stray notification
//! or response before `initialize`); such messages are dropped here until the server has
//! answered its first request, so bad input cannot stop the server.
//!
//! Third, the task messages of revision 2025-11-25 that rmcp does not model are adjusted on
//! the way (see `tasks.rs`): [`LineWatch`] renames a task request in its line, and the answers
//! to `initialize` and `tools/list` get their task fields before rmcp's writer writes them.
//!
//! The framing stays rmcp's: [`LineWatch`] hands rmcp's reader whole lines (a line not yet
//! complete waits for its newline), and the replies are written by rmcp's writer.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use rmcp::RoleServer;
use rmcp::model::{CustomResult, ErrorData, ServerJsonRpcMessage, ServerResult};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::transport::async_rw::{AsyncRwTransport, DEFAULT_MAX_LINE_LENGTH};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::mpsc;

use super::error::McpError;
use super::server::McpServer;
use super::tasks::{self, Decorate, Inbound};
use crate::error::Cause;
use crate::toolkit::Toolkit;

/// The answers owed a decoration (`tasks.rs`), by request id.
type Decorations = Arc<Mutex<HashMap<serde_json::Value, Decorate>>>;

/// Replies owed for lines that were not JSON; more than this many at once are not all answered.
const PENDING_REPLIES: usize = 64;

impl McpServer {
    /// Serve this handler on stdin/stdout until the client disconnects. See
    /// [`Toolkit::serve_mcp_stdio`](crate::Toolkit::serve_mcp_stdio).
    pub async fn serve_stdio(self) -> Result<(), McpError> {
        let (stdin, stdout) = rmcp::transport::stdio();
        self.serve_io(stdin, stdout).await
    }

    /// Serve this handler on any byte streams carrying newline-delimited JSON-RPC (a socket, a
    /// pipe), with the same handling of bad input as [`serve_stdio`](Self::serve_stdio).
    pub async fn serve_io<R, W>(self, reader: R, writer: W) -> Result<(), McpError>
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let transport = LineTransport::new(reader, writer, self.toolkit().clone());
        let running = rmcp::service::serve_server(self, transport)
            .await
            .map_err(|e| {
                McpError::Protocol(Cause::explained(
                    format!("the MCP session could not start: {e}"),
                    e,
                ))
            })?;
        running.waiting().await.map(drop).map_err(|e| {
            McpError::Protocol(Cause::explained(
                format!("the MCP session ended abnormally: {e}"),
                e,
            ))
        })
    }
}

/// rmcp's stdio transport with the replies described in the module docs.
pub(super) struct LineTransport<R: AsyncRead + Unpin, W: AsyncWrite> {
    inner: AsyncRwTransport<RoleServer, LineWatch<R>, W>,
    bad_lines: mpsc::Receiver<()>,
    /// Set once the server answered a request other than `ping`: from then on rmcp handles
    /// every kind of message.
    started: Arc<AtomicBool>,
    decorations: Decorations,
    toolkit: Toolkit,
}

impl<R, W> LineTransport<R, W>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    pub(super) fn new(reader: R, writer: W, toolkit: Toolkit) -> Self {
        let (tx, bad_lines) = mpsc::channel(PENDING_REPLIES);
        let decorations = Decorations::default();
        let watch = LineWatch::new(reader, tx, decorations.clone());
        LineTransport {
            inner: AsyncRwTransport::new_server(watch, writer),
            bad_lines,
            started: Arc::new(AtomicBool::new(false)),
            decorations,
            toolkit,
        }
    }
}

impl<R, W> Transport<RoleServer> for LineTransport<R, W>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        mut item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        if let ServerJsonRpcMessage::Error(error) = &item
            && let Some(id) = &error.id
            && let Ok(id) = serde_json::to_value(id)
        {
            // Refused: no answer to decorate.
            crate::util::lock(&self.decorations).remove(&id);
        }
        if let ServerJsonRpcMessage::Response(response) = &mut item {
            if !matches!(response.result, ServerResult::EmptyResult(_)) {
                self.started.store(true, Ordering::Release);
            }
            let owed = serde_json::to_value(&response.id)
                .ok()
                .and_then(|id| crate::util::lock(&self.decorations).remove(&id));
            if let Some(what) = owed
                && let Ok(serde_json::Value::Object(mut result)) =
                    serde_json::to_value(&response.result)
            {
                tasks::decorate_result(&self.toolkit, what, &mut result);
                response.result = ServerResult::CustomResult(CustomResult::new(
                    serde_json::Value::Object(result),
                ));
            }
        }
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            tokio::select! {
                Some(()) = self.bad_lines.recv() => {
                    let reply = ServerJsonRpcMessage::error(
                        ErrorData::parse_error(
                            "Parse error: the line is not valid JSON; send one JSON-RPC message per line",
                            None,
                        ),
                        None,
                    );
                    if self.inner.send(reply).await.is_err() {
                        return None;
                    }
                }
                message = self.inner.receive() => {
                    let message = message?;
                    if !self.started.load(Ordering::Acquire)
                        && !matches!(message, RxJsonRpcMessage::<RoleServer>::Request(_))
                    {
                        tracing::debug!("dropped a message that is not a request before the session started");
                        continue;
                    }
                    return Some(message);
                }
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.inner.close().await
    }
}

/// Hands rmcp's reader whole lines, each as it came or renamed by `tasks::inbound`; reports
/// each complete line that is not JSON (and drops it: rmcp would too).
pub(super) struct LineWatch<R> {
    inner: R,
    /// The current line so far.
    line: Vec<u8>,
    /// The current line outgrew rmcp's limit (dropped, as rmcp drops it).
    oversized: bool,
    bad_lines: mpsc::Sender<()>,
    /// Whole lines not yet read by rmcp, and how far it read them.
    ready: Vec<u8>,
    read: usize,
    decorations: Decorations,
}

impl<R> LineWatch<R> {
    fn new(inner: R, bad_lines: mpsc::Sender<()>, decorations: Decorations) -> Self {
        LineWatch {
            inner,
            line: Vec::new(),
            oversized: false,
            bad_lines,
            ready: Vec::new(),
            read: 0,
            decorations,
        }
    }

    fn observe(&mut self, bytes: &[u8]) {
        let mut rest = bytes;
        while let Some(end) = rest.iter().position(|b| *b == b'\n') {
            self.push(&rest[..end]);
            self.end_line();
            rest = &rest[end + 1..];
        }
        self.push(rest);
    }

    fn push(&mut self, bytes: &[u8]) {
        if self.oversized {
            return;
        }
        if self.line.len() + bytes.len() > DEFAULT_MAX_LINE_LENGTH {
            self.oversized = true;
            self.line = Vec::new();
            return;
        }
        self.line.extend_from_slice(bytes);
    }

    fn end_line(&mut self) {
        if self.oversized {
            tracing::warn!("dropped an MCP message longer than {DEFAULT_MAX_LINE_LENGTH} bytes");
        } else if !is_json_or_blank(&self.line) {
            // A full queue means replies are already owed; dropping this one keeps memory bounded.
            let _ = self.bad_lines.try_send(());
        } else {
            match tasks::inbound(&self.line) {
                Inbound::Unchanged => self.ready.extend_from_slice(&self.line),
                Inbound::Renamed(line) => self.ready.extend_from_slice(&line),
                Inbound::Decorate(id, what) => {
                    crate::util::lock(&self.decorations).insert(id, what);
                    self.ready.extend_from_slice(&self.line);
                }
            }
            self.ready.push(b'\n');
        }
        self.line.clear();
        self.oversized = false;
    }
}

/// What rmcp would parse: a UTF-8 BOM and a trailing `\r` are ignored, blank lines skipped.
fn is_json_or_blank(line: &[u8]) -> bool {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    line.is_empty() || serde_json::from_slice::<serde::de::IgnoredAny>(line).is_ok()
}

impl<R: AsyncRead + Unpin> AsyncRead for LineWatch<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = &mut *self;
        loop {
            if this.read < this.ready.len() {
                let n = buf.remaining().min(this.ready.len() - this.read);
                buf.put_slice(&this.ready[this.read..this.read + n]);
                this.read += n;
                return Poll::Ready(Ok(()));
            }
            this.ready.clear();
            this.read = 0;
            let mut scratch = [0u8; 8192];
            let mut fresh = ReadBuf::new(&mut scratch);
            std::task::ready!(Pin::new(&mut this.inner).poll_read(cx, &mut fresh))?;
            if fresh.filled().is_empty() {
                // End of input: a last line without a newline is not a message rmcp would read.
                this.line.clear();
                return Poll::Ready(Ok(()));
            }
            this.observe(fresh.filled());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_that_are_not_json_are_reported_once_each() {
        let (tx, mut rx) = mpsc::channel(8);
        let mut watch = LineWatch::new(tokio::io::empty(), tx, Decorations::default());
        watch.observe(b"{\"jsonrpc\":\"2.0\"}\n\nnot js");
        assert!(rx.try_recv().is_err());
        watch.observe(b"on\r\n\xEF\xBB\xBF{}\r\n{\"a\":");
        assert!(rx.try_recv().is_ok());
        assert!(rx.try_recv().is_err());
        watch.observe(b"1}\n");
        assert!(rx.try_recv().is_err());
    }
}
