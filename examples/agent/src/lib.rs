//! An agent on hermes-tools: the built-in tools and this crate's own
//! (`src/tools/`, declared by `cargo hermes gen` in `src/tools/mod.rs` and
//! registered in `src/generated.rs`)
//! in one registry, and a loop against an OpenAI-compatible endpoint
//! (`hermes-model`'s client and agent loop).

pub mod generated;
pub mod tools;

use hermes_model::{Endpoint, ModelClient};
use hermes_runtime::{ComposeError, Registry};
use serde_json::json;

pub use hermes_model::Outcome;

/// Where the model is and how the loop runs.
#[derive(Debug, Clone)]
pub struct ChatConfig {
    /// `https://api.openai.com/v1`, `http://127.0.0.1:8080/v1`, ...
    pub base_url: String,
    pub model: String,
    /// Sent as `Authorization: Bearer ...` when set.
    pub api_key: Option<String>,
    /// Model turns at most (each a request).
    pub max_turns: usize,
}

/// The built-in tools and this crate's, composed.
pub fn registry() -> Result<Registry, ComposeError> {
    Registry::compose(&[&hermes_tools::generated::TABLES, &generated::TABLES])
}

/// Why a conversation gave no outcome.
#[derive(Debug)]
pub enum ConversationError {
    /// Toolsets the registry does not know (named as given).
    UnknownToolsets(Vec<String>),
    /// The endpoint failed or answered something that is not a reply.
    Chat(String),
}

impl std::fmt::Display for ConversationError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ConversationError::UnknownToolsets(names) => {
                write!(f, "unknown toolsets: {}", names.join(", "))
            }
            ConversationError::Chat(message) => f.write_str(message),
        }
    }
}

/// One conversation from `prompt`: `session`'s calls, the model of
/// `config`, the definitions of `toolsets`, until an answer or the turn
/// limit; `on_tool` is told each call and its result. The session ends
/// with the conversation, whatever its outcome: the background processes
/// its calls started are torn down, its terminal session, file read state
/// and todo list are forgotten.
pub async fn conversation(
    registry: &Registry,
    session: hermes_tools::Session,
    config: &ChatConfig,
    toolsets: &[String],
    prompt: &str,
    on_tool: impl FnMut(&str, &str),
) -> Result<Outcome, ConversationError> {
    let enabled: Vec<&str> = toolsets.iter().map(String::as_str).collect();
    let definitions = registry.get_tool_definitions(Some(&enabled), &[], session.profile());
    let outcome = if definitions.unknown.is_empty() {
        let ctx = session.context();
        let mut endpoint = Endpoint::new(&config.base_url, &config.model);
        endpoint.api_key = config.api_key.clone();
        let client = ModelClient::new(endpoint);
        // A tool the endpoint's dialect cannot carry is not offered.
        let (tools, _left_out) = client.tools_for(&definitions.to_vec());
        let mut messages = vec![json!({"role": "user", "content": prompt})];
        hermes_model::run(
            &client,
            registry,
            &ctx,
            &tools,
            &mut messages,
            config.max_turns,
            on_tool,
        )
        .await
        .map_err(|e| ConversationError::Chat(e.to_string()))
    } else {
        Err(ConversationError::UnknownToolsets(
            definitions.unknown.clone(),
        ))
    };
    // Teardown waits for processes: off the async threads.
    let _ = tokio::task::spawn_blocking(move || session.end()).await;
    outcome
}
