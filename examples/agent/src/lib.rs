//! An agent on hermes-tools: the built-in tools and this crate's own
//! (`src/tools/`, declared by `cargo hermes gen` in `src/tools/mod.rs` and
//! registered in `src/generated.rs`)
//! in one registry, and a loop against an OpenAI-compatible endpoint.

pub mod chat;
pub mod generated;
pub mod tools;

use hermes_runtime::{ComposeError, Registry};

pub use chat::{ChatConfig, Outcome};

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
        chat::run(
            config,
            registry,
            &ctx,
            definitions.to_vec(),
            prompt,
            on_tool,
        )
        .await
        .map_err(ConversationError::Chat)
    } else {
        Err(ConversationError::UnknownToolsets(
            definitions.unknown.clone(),
        ))
    };
    // Teardown waits for processes: off the async threads.
    let _ = tokio::task::spawn_blocking(move || session.end()).await;
    outcome
}
