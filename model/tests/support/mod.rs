//! A scripted chat-completions server on 127.0.0.1: the one thing these
//! tests script is the model. Each request is answered by a route that
//! sees the request's body; connections are served concurrently (children
//! of one delegation ask at once), at most `MAX_REQUESTS` of them, and
//! the server stops after 60 s without one.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};

/// Requests served at most, per server.
const MAX_REQUESTS: usize = 200;

/// One planned reply.
pub enum Reply {
    /// Status, extra header lines (each ending `\r\n`), body.
    Http(u16, &'static str, String),
    /// Read the request, answer nothing until the server ends.
    Silent,
    /// Wait, then the reply.
    After(Duration, Box<Reply>),
}

/// An assistant message answered with 200.
pub fn ok(message: Value) -> Reply {
    Reply::Http(
        200,
        "",
        json!({"choices": [{"index": 0, "message": message}]}).to_string(),
    )
}

/// A final answer.
pub fn answer(text: &str) -> Reply {
    ok(json!({"role": "assistant", "content": text}))
}

/// One tool call (arguments as JSON).
pub fn call(id: &str, name: &str, arguments: Value) -> Reply {
    ok(
        json!({"role": "assistant", "content": null, "tool_calls": [{
        "id": id, "type": "function",
        "function": {"name": name, "arguments": arguments.to_string()}}]}),
    )
}

/// One request as the server saw it.
#[derive(Debug, Clone)]
pub struct Seen {
    pub path: String,
    pub authorization: Option<String>,
    pub body: Value,
}

/// Serves each request with `route(body)`.
pub fn serve(
    route: impl Fn(&Value) -> Reply + Send + Sync + 'static,
) -> (String, mpsc::Receiver<Seen>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let (tx, rx) = mpsc::channel();
    let route = Arc::new(route);
    std::thread::spawn(move || {
        listener.set_nonblocking(true).unwrap();
        let mut idle = 0;
        let mut served = 0;
        while served < MAX_REQUESTS && idle < 600 {
            let Ok((stream, _)) = listener.accept() else {
                idle += 1;
                std::thread::sleep(Duration::from_millis(100));
                continue;
            };
            idle = 0;
            served += 1;
            let (route, tx) = (Arc::clone(&route), tx.clone());
            std::thread::spawn(move || {
                stream.set_nonblocking(false).unwrap();
                stream
                    .set_read_timeout(Some(Duration::from_secs(30)))
                    .unwrap();
                let Some(seen) = read_request(&stream) else {
                    return;
                };
                let reply = route(&seen.body);
                let _ = tx.send(seen);
                respond(&stream, reply);
            });
        }
    });
    (url, rx)
}

/// Serves `replies` in order, whatever is asked.
pub fn scripted(replies: Vec<Reply>) -> (String, mpsc::Receiver<Seen>) {
    let queue = Mutex::new(replies.into_iter());
    serve(move |_| {
        queue
            .lock()
            .unwrap()
            .next()
            .unwrap_or_else(|| Reply::Http(500, "", "no more planned replies".into()))
    })
}

fn respond(stream: &TcpStream, reply: Reply) {
    match reply {
        Reply::Http(status, headers, body) => {
            let mut out = stream;
            let _ = write!(
                out,
                "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\n{headers}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
        Reply::Silent => std::thread::sleep(Duration::from_secs(10)),
        Reply::After(wait, reply) => {
            std::thread::sleep(wait);
            respond(stream, *reply);
        }
    }
}

fn read_request(stream: &TcpStream) -> Option<Seen> {
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    let path = line.split_whitespace().nth(1)?.to_string();
    let (mut length, mut authorization) = (0usize, None);
    for _ in 0..100 {
        let mut header = String::new();
        reader.read_line(&mut header).ok()?;
        let header = header.trim_end();
        if header.is_empty() {
            break;
        }
        let (name, value) = header.split_once(':')?;
        match name.to_ascii_lowercase().as_str() {
            "content-length" => length = value.trim().parse().ok()?,
            "authorization" => authorization = Some(value.trim().to_string()),
            _ => {}
        }
    }
    let mut body = vec![0; length.min(64 << 20)];
    reader.read_exact(&mut body).ok()?;
    Some(Seen {
        path,
        authorization,
        body: serde_json::from_slice(&body).ok()?,
    })
}

pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// The names of the tools a request offered.
pub fn offered(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .filter_map(|t| t["function"]["name"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}
