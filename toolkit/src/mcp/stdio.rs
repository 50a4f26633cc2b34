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
//! The framing stays rmcp's: [`LineWatch`] only looks at the bytes on their way to rmcp's
//! reader, and the replies are written by rmcp's writer.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};

use rmcp::RoleServer;
use rmcp::model::{ErrorData, ServerJsonRpcMessage, ServerResult};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::transport::async_rw::{AsyncRwTransport, DEFAULT_MAX_LINE_LENGTH};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::mpsc;

use super::error::McpError;
use super::server::McpServer;
use crate::error::Cause;

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
        let transport = LineTransport::new(reader, writer);
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
}

impl<R, W> LineTransport<R, W>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    pub(super) fn new(reader: R, writer: W) -> Self {
        let (tx, bad_lines) = mpsc::channel(PENDING_REPLIES);
        let watch = LineWatch {
            inner: reader,
            line: Vec::new(),
            oversized: false,
            bad_lines: tx,
        };
        LineTransport {
            inner: AsyncRwTransport::new_server(watch, writer),
            bad_lines,
            started: Arc::new(AtomicBool::new(false)),
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
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        if let ServerJsonRpcMessage::Response(response) = &item
            && !matches!(response.result, ServerResult::EmptyResult(_))
        {
            self.started.store(true, Ordering::Release);
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

/// Passes bytes through unchanged, and reports each complete line that is not JSON.
pub(super) struct LineWatch<R> {
    inner: R,
    /// The current line so far.
    line: Vec<u8>,
    /// The current line outgrew rmcp's limit (rmcp drops it and logs).
    oversized: bool,
    bad_lines: mpsc::Sender<()>,
}

impl<R> LineWatch<R> {
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
        if !self.oversized && !is_json_or_blank(&self.line) {
            // A full queue means replies are already owed; dropping this one keeps memory bounded.
            let _ = self.bad_lines.try_send(());
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
        let before = buf.filled().len();
        let this = &mut *self;
        std::task::ready!(Pin::new(&mut this.inner).poll_read(cx, buf))?;
        let fresh = &buf.filled()[before..];
        if fresh.is_empty() {
            // End of input: a last line without a newline is not a message rmcp will read.
            this.line.clear();
        } else {
            this.observe(fresh);
        }
        Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_that_are_not_json_are_reported_once_each() {
        let (tx, mut rx) = mpsc::channel(8);
        let mut watch = LineWatch {
            inner: tokio::io::empty(),
            line: Vec::new(),
            oversized: false,
            bad_lines: tx,
        };
        watch.observe(b"{\"jsonrpc\":\"2.0\"}\n\nnot js");
        assert!(rx.try_recv().is_err());
        watch.observe(b"on\r\n\xEF\xBB\xBF{}\r\n{\"a\":");
        assert!(rx.try_recv().is_ok());
        assert!(rx.try_recv().is_err());
        watch.observe(b"1}\n");
        assert!(rx.try_recv().is_err());
    }
}
