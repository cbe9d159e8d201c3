//! MCP over stdio: one JSON-RPC message per line.
//!
//! rmcp's own stdio transport drops a line it cannot parse without a word,
//! so the client waits forever on that request. Here a reader of our own
//! stands in front of rmcp: it reads stdin line by line (at most
//! [`Limits::max_message_bytes`] per line, the rest of a longer line is
//! discarded up to its newline), answers what is not a message itself
//! (-32700 for invalid UTF-8 or JSON, -32600 for JSON that is no JSON-RPC
//! message or a line over the limit) and hands the messages to rmcp through
//! a channel. One task owns stdout: rmcp's replies and the reader's errors go
//! through it a whole line at a time, so they never interleave.

use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::{RoleServer, ServiceExt};
use serde_json::{json, Value};
use std::time::Duration;
use tokio::io::{AsyncBufRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

use hermes_mcp_client::stdio::{read_line, Line};

use crate::error::ServeError;
use crate::options::Limits;
use crate::server::HermesServer;

/// Lines waiting to be written to stdout; a client that does not read its
/// replies stalls the server's reading too, instead of growing a queue.
const OUTGOING_QUEUE: usize = 64;
/// Messages read ahead of rmcp.
const INCOMING_QUEUE: usize = 16;
/// How long replies already queued may take to be written once the session
/// has ended.
const FLUSH_ON_EXIT: Duration = Duration::from_secs(1);

/// JSON-RPC: the message is not valid JSON (or not text).
const PARSE_ERROR: i64 = -32700;
/// JSON-RPC: valid JSON, but not a valid request.
const INVALID_REQUEST: i64 = -32600;

/// Serves one session on stdin/stdout until stdin closes or the client goes.
pub(super) async fn serve(server: HermesServer, limits: &Limits) -> Result<(), ServeError> {
    let (stdin, stdout) = rmcp::transport::stdio_pipes();
    let (out_tx, out_rx) = mpsc::channel::<String>(OUTGOING_QUEUE);
    let (in_tx, in_rx) = mpsc::channel::<ClientJsonRpcMessage>(INCOMING_QUEUE);
    let writer = tokio::spawn(write_lines(stdout, out_rx));
    let reader = tokio::spawn(read_messages(
        BufReader::new(stdin),
        limits.max_message_bytes,
        in_tx,
        out_tx.clone(),
    ));
    let transport = LineTransport {
        incoming: in_rx,
        outgoing: out_tx,
    };
    let outcome = match server.serve(transport).await {
        Ok(running) => running
            .waiting()
            .await
            .map(|_| ())
            .map_err(ServeError::StdioEnded),
        Err(e) => Err(ServeError::StdioStart(Box::new(e))),
    };
    // Stdin may still be open (the client went away on stdout): stop reading,
    // then give the replies already queued a moment to go out.
    reader.abort();
    let _ = tokio::time::timeout(FLUSH_ON_EXIT, writer).await;
    outcome
}

/// rmcp's side of the channels: messages in, replies out as JSON lines.
struct LineTransport {
    incoming: mpsc::Receiver<ClientJsonRpcMessage>,
    outgoing: mpsc::Sender<String>,
}

impl Transport<RoleServer> for LineTransport {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: ServerJsonRpcMessage,
    ) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send + 'static {
        let outgoing = self.outgoing.clone();
        async move {
            let line = serde_json::to_string(&item).map_err(std::io::Error::other)?;
            outgoing
                .send(line)
                .await
                .map_err(|_| std::io::Error::new(std::io::ErrorKind::BrokenPipe, "stdout closed"))
        }
    }

    async fn receive(&mut self) -> Option<ClientJsonRpcMessage> {
        self.incoming.recv().await
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.incoming.close();
        Ok(())
    }
}

/// The one writer of stdout: each line whole, flushed, in queue order. Ends
/// when every sender is gone or stdout is closed.
async fn write_lines(mut out: impl AsyncWrite + Unpin, mut lines: mpsc::Receiver<String>) {
    while let Some(mut line) = lines.recv().await {
        line.push('\n');
        if out.write_all(line.as_bytes()).await.is_err() || out.flush().await.is_err() {
            return;
        }
    }
}

/// Reads stdin until EOF: messages go to rmcp, anything else is answered on
/// stdout. Dropping `messages` at EOF ends the session.
async fn read_messages(
    mut input: impl AsyncBufRead + Unpin,
    max_line: usize,
    messages: mpsc::Sender<ClientJsonRpcMessage>,
    replies: mpsc::Sender<String>,
) {
    let mut line = Vec::new();
    loop {
        let read = match read_line(&mut input, &mut line, max_line, 0).await {
            Ok(read) => read,
            Err(e) => {
                eprintln!("hermes-tools: cannot read stdin: {e}");
                return;
            }
        };
        let answer = match read {
            Line::Eof => return,
            Line::TooLong => Err(error_reply(
                INVALID_REQUEST,
                format!(
                    "Invalid Request: the message is longer than {max_line} bytes \
                     (--max-message-bytes); it was discarded"
                ),
                Value::Null,
            )),
            Line::Complete => classify(&line),
        };
        line.clear();
        if line.capacity() > 64 * 1024 {
            // A long message is not a reason to keep its buffer.
            line.shrink_to(64 * 1024);
        }
        let delivered = match answer {
            Ok(Some(message)) => messages.send(message).await.is_ok(),
            Ok(None) => true,
            Err(reply) => replies.send(reply).await.is_ok(),
        };
        if !delivered {
            return;
        }
    }
}

/// One line of stdin: `Ok(Some)` a message for rmcp, `Ok(None)` nothing to
/// do (a blank line, a notification rmcp does not know), `Err` the error
/// reply to write.
fn classify(line: &[u8]) -> Result<Option<ClientJsonRpcMessage>, String> {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    let text = std::str::from_utf8(line).map_err(|e| {
        error_reply(
            PARSE_ERROR,
            format!(
                "Parse error: the message is not valid UTF-8 (at byte {})",
                e.valid_up_to()
            ),
            Value::Null,
        )
    })?;
    if text.trim().is_empty() {
        return Ok(None);
    }
    let value: Value = serde_json::from_str(text)
        .map_err(|e| error_reply(PARSE_ERROR, format!("Parse error: {e}"), Value::Null))?;
    let id = match value.get("id") {
        Some(id @ (Value::String(_) | Value::Number(_))) => Some(id.clone()),
        _ => None,
    };
    let is_notification = value.get("id").is_none() && value.get("method").is_some();
    match serde_json::from_value::<ClientJsonRpcMessage>(value) {
        Ok(message) => Ok(Some(message)),
        // A notification is never answered, even when it is malformed.
        Err(_) if is_notification => Ok(None),
        Err(e) => Err(error_reply(
            INVALID_REQUEST,
            format!("Invalid Request: not a JSON-RPC 2.0 message of MCP: {e}"),
            id.unwrap_or(Value::Null),
        )),
    }
}

/// A JSON-RPC error response as one line.
fn error_reply(code: i64, message: String, id: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn lines(input: &[u8], max: usize) -> Vec<Result<String, &'static str>> {
        let mut reader = BufReader::with_capacity(7, input);
        let mut buf = Vec::new();
        let mut out = Vec::new();
        for _ in 0..100 {
            match read_line(&mut reader, &mut buf, max, 0).await.unwrap() {
                Line::Eof => return out,
                Line::TooLong => out.push(Err("too long")),
                Line::Complete => out.push(Ok(String::from_utf8(buf.clone()).unwrap())),
            }
            buf.clear();
        }
        panic!("no EOF");
    }

    #[tokio::test]
    async fn lines_are_capped_and_the_rest_is_discarded() {
        let got = lines(b"short\nthis one is too long\nok\n\nlast", 10).await;
        assert_eq!(
            got,
            vec![
                Ok("short".into()),
                Err("too long"),
                Ok("ok".into()),
                Ok(String::new()),
                Ok("last".into())
            ]
        );
        assert_eq!(
            lines(b"0123456789\n01234567890", 10).await,
            vec![Ok("0123456789".into()), Err("too long")]
        );
    }

    #[test]
    fn classify_answers_what_is_not_a_message() {
        let reply =
            |line: &[u8]| -> Value { serde_json::from_str(&classify(line).unwrap_err()).unwrap() };
        let bad = reply(b"{not json");
        assert_eq!(bad["error"]["code"], -32700);
        assert_eq!(bad["id"], Value::Null);
        assert_eq!(reply(b"\xff\xfe{}")["error"]["code"], -32700);
        let invalid = reply(br#"{"jsonrpc":"2.0","id":7,"result":{},"error":{}}"#);
        assert_eq!(invalid["error"]["code"], -32600);
        assert_eq!(reply(b"[1,2]")["error"]["code"], -32600);
        assert!(classify(b"   \r").unwrap().is_none());
        assert!(classify(br#"{"jsonrpc":"2.0","method":"x/y","params":3}"#)
            .unwrap()
            .is_none());
        assert!(classify(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#)
            .unwrap()
            .is_some());
    }
}
