//! A chat-completions client for OpenAI-compatible endpoints, configured
//! from a profile's `model:` section and `.env` ([`Endpoint`]), with
//! timeouts and retries ([`ModelClient`]), and the agent loop that runs a
//! conversation's tool calls through a registry ([`run`]), and the
//! executor of `delegate_task`, whose children run that loop ([`delegation`]),
//! and an MCP server's `sampling/createMessage` answered by the model
//! ([`sampling`]). What an agent
//! binary and the tools that run agents of their own build on.

mod client;
mod completions;
mod conversation;
pub mod delegation;
mod endpoint;
pub mod sampling;

pub use client::{ModelClient, ModelError};
pub use conversation::{run, Outcome};
pub use endpoint::{Endpoint, EndpointError, Provider, PROVIDERS};
