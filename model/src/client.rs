//! One chat-completions request, retried with backoff where a later try
//! can succeed.

use std::io::Read;
use std::time::Duration;

use hermes_runtime::dialect;
use serde_json::{json, Value};
use ureq::config::Config;
use ureq::Agent;

use crate::Endpoint;

/// The most of an answer read (a longer one is an error).
const MAX_ANSWER_BYTES: u64 = 16 << 20;

/// Why a request brought no message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ModelError {
    /// An answer no retry can change (4xx but 429), or the last of the retries.
    #[error("{url} answered HTTP {status}{after}: {body}")]
    Status {
        url: String,
        status: u16,
        body: String,
        /// `after N attempts`, when there were retries.
        after: String,
    },
    /// No answer (refused, reset, timed out).
    #[error("POST {url}{after}: {error}")]
    Transport {
        url: String,
        error: String,
        after: String,
    },
    /// An answer that is not a chat completion.
    #[error("{url} answered no chat completion ({why}): {head}")]
    BadAnswer {
        url: String,
        why: String,
        head: String,
    },
    /// The request was not sent: the endpoint cannot take it.
    #[error("{0}")]
    Request(String),
}

/// A client of one endpoint. Cheap to clone; requests run on tokio's
/// blocking pool.
#[derive(Debug, Clone)]
pub struct ModelClient {
    endpoint: Endpoint,
    agent: Agent,
}

impl ModelClient {
    pub fn new(endpoint: Endpoint) -> Self {
        let config = Config::builder()
            .timeout_global(Some(endpoint.timeout))
            .http_status_as_error(false)
            .build();
        ModelClient {
            agent: Agent::new_with_config(config),
            endpoint,
        }
    }

    pub fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    /// Tool definitions (the registry's, OpenAI envelope) rewritten for the
    /// endpoint's dialect. A tool the dialect cannot carry is left out and
    /// named in the second list with why.
    pub fn tools_for(&self, definitions: &[Value]) -> (Vec<Value>, Vec<String>) {
        let mut kept = Vec::with_capacity(definitions.len());
        let mut left_out = Vec::new();
        for tool in definitions {
            match dialect::rewrite(tool, self.endpoint.dialect) {
                Ok(t) => kept.push(t),
                Err(issues) => {
                    let name = tool["function"]["name"].as_str().unwrap_or("?");
                    let why: Vec<String> = issues.iter().map(ToString::to_string).collect();
                    left_out.push(format!("{name}: {}", why.join("; ")));
                }
            }
        }
        (kept, left_out)
    }

    /// Sends `messages` (and `tools`, already in the endpoint's dialect:
    /// [`ModelClient::tools_for`]) and answers the first choice's message.
    /// A 429, a 5xx or no answer at all is tried again, at most
    /// `max_retries` times, after the answer's `Retry-After` or the backoff.
    pub async fn chat(&self, messages: &[Value], tools: &[Value]) -> Result<Value, ModelError> {
        let mut body = json!({"model": self.endpoint.model, "messages": messages});
        if !tools.is_empty() {
            body["tools"] = Value::Array(tools.to_vec());
        }
        let answer = self.complete(body).await?;
        Ok(answer
            .pointer("/choices/0/message")
            .cloned()
            .unwrap_or(Value::Null))
    }

    /// Sends `body` as it is (with the endpoint's `model` when it names
    /// none), retried as [`ModelClient::chat`]; answers the whole chat
    /// completion, which has a `choices[0].message` object.
    pub(crate) async fn complete(&self, mut body: Value) -> Result<Value, ModelError> {
        if body.get("model").is_none_or(|m| !m.is_string()) {
            body["model"] = Value::String(self.endpoint.model.clone());
        }
        let body = body.to_string();
        let client = self.clone();
        tokio::task::spawn_blocking(move || client.post_with_retries(&body))
            .await
            .unwrap_or_else(|e| {
                Err(ModelError::Request(format!(
                    "the request's task failed: {e}"
                )))
            })
    }

    fn url(&self) -> String {
        format!(
            "{}/chat/completions",
            self.endpoint.base_url.trim_end_matches('/')
        )
    }

    fn post_with_retries(&self, body: &str) -> Result<Value, ModelError> {
        let url = self.url();
        let attempts = self.endpoint.max_retries.saturating_add(1);
        let mut wait = self.endpoint.backoff;
        for attempt in 1..=attempts {
            let after = if attempt > 1 {
                format!(" after {attempt} attempts")
            } else {
                String::new()
            };
            let last = attempt == attempts;
            match self.post_once(&url, body) {
                Ok(Answer::Message(m)) => return Ok(m),
                Ok(Answer::Final(e)) => return Err(e),
                Ok(Answer::Retry {
                    status,
                    body: text,
                    retry_after,
                }) => {
                    if last {
                        return Err(ModelError::Status {
                            url,
                            status,
                            body: text,
                            after,
                        });
                    }
                    std::thread::sleep(retry_after.unwrap_or(wait).min(Endpoint::MAX_BACKOFF));
                }
                Err(error) => {
                    // A request that timed out is not sent again: it may
                    // have been answered slowly, and another would wait as long.
                    if last || matches!(error, ureq::Error::Timeout(_)) {
                        return Err(ModelError::Transport {
                            url,
                            error: error.to_string(),
                            after,
                        });
                    }
                    std::thread::sleep(wait.min(Endpoint::MAX_BACKOFF));
                }
            }
            wait = wait.saturating_mul(2);
        }
        Err(ModelError::Request("no attempt was made".into()))
    }

    fn post_once(&self, url: &str, body: &str) -> Result<Answer, ureq::Error> {
        let mut request = self
            .agent
            .post(url)
            .header("Content-Type", "application/json");
        if let Some(key) = &self.endpoint.api_key {
            request = request.header("Authorization", format!("Bearer {key}"));
        }
        let mut response = request.send(body)?;
        let status = response.status().as_u16();
        let retry_after = response
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map(Duration::from_secs);
        let mut bytes = Vec::new();
        response
            .body_mut()
            .as_reader()
            .take(MAX_ANSWER_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(ureq::Error::from)?;
        let text = String::from_utf8_lossy(&bytes);
        let head = |t: &str| t.chars().take(300).collect::<String>();
        if status == 429 || (500..600).contains(&status) {
            return Ok(Answer::Retry {
                status,
                body: head(&text),
                retry_after,
            });
        }
        if !(200..300).contains(&status) {
            return Ok(Answer::Final(ModelError::Status {
                url: url.to_string(),
                status,
                body: head(&text),
                after: String::new(),
            }));
        }
        let bad = |why: String| {
            Ok(Answer::Final(ModelError::BadAnswer {
                url: url.to_string(),
                why,
                head: head(&text),
            }))
        };
        if bytes.len() as u64 > MAX_ANSWER_BYTES {
            return bad(format!("longer than {MAX_ANSWER_BYTES} bytes"));
        }
        let answer: Value = match serde_json::from_slice(&bytes) {
            Ok(v) => v,
            Err(e) => return bad(format!("not JSON: {e}")),
        };
        match answer.pointer("/choices/0/message") {
            Some(m) if m.is_object() => Ok(Answer::Message(answer)),
            _ => bad("no `choices[0].message`".into()),
        }
    }
}

/// What one attempt brought.
enum Answer {
    /// A chat completion with a `choices[0].message` object.
    Message(Value),
    Final(ModelError),
    Retry {
        status: u16,
        body: String,
        retry_after: Option<Duration>,
    },
}
