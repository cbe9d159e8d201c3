//! A `tools/call` to the end of its multi-round exchange (SEP-2322, the
//! 2026-07-28 revision): a server that needs input first answers
//! `input_required` with the requests it has (`inputRequests`) and an
//! opaque `requestState`; the call is sent again, with the same arguments,
//! the answers (`inputResponses`) and that state echoed unchanged, until a
//! complete result comes, for at most [`MAX_ROUNDS`] rounds.
//!
//! The answers come from the same place as the answers to requests sent
//! back over a session ([`crate::callbacks`]): the agent's elicitation and
//! sampling callbacks under the entry's limits, and the roots of the call.
//! A request the client refuses (disabled, no callback, a limit) ends the
//! call with an error naming why.

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, InputRequest, InputResponses,
};
use rmcp::service::{Peer, RoleClient};
use serde_json::Value;

use crate::auth::{call_failed, OAuthServer};
use crate::callbacks::Asks;

/// The most rounds one call may take before it is given up.
pub const MAX_ROUNDS: usize = 8;

/// Calls the tool, answering `input_required` rounds; `Err` says why not.
pub async fn call_tool(
    peer: &Peer<RoleClient>,
    mut params: CallToolRequestParams,
    asks: &Asks,
    oauth: Option<&OAuthServer>,
) -> Result<CallToolResult, String> {
    fn answer<T: serde::Serialize>(
        answered: Result<T, rmcp::ErrorData>,
        what: &str,
    ) -> Result<Value, String> {
        let answered =
            answered.map_err(|e| format!("the server's {what} request: {}", e.message))?;
        serde_json::to_value(answered).map_err(|e| e.to_string())
    }
    for _ in 0..MAX_ROUNDS {
        match peer
            .call_tool_once(params.clone())
            .await
            .map_err(|e| call_failed(oauth, e))?
        {
            CallToolResponse::Complete(result) => return Ok(result),
            CallToolResponse::InputRequired(round) => {
                let mut answers = InputResponses::new();
                for (key, request) in round.input_requests.unwrap_or_default() {
                    let answer = match request {
                        InputRequest::Elicitation(r) => {
                            answer(asks.create_elicitation(r.params).await, "elicitation")?
                        }
                        InputRequest::CreateMessage(r) => {
                            answer(asks.create_message(r.params).await, "sampling")?
                        }
                        InputRequest::ListRoots(_) => answer(Ok(asks.roots()), "roots")?,
                        _ => return Err("the server asks for input of an unknown kind".into()),
                    };
                    answers.insert(key, answer);
                }
                params.input_responses = (!answers.is_empty()).then_some(answers);
                params.request_state = round.request_state;
            }
            _ => {
                return Err(
                    "the server made the call a task (tasks extension), which this \
                            client does not follow"
                        .into(),
                )
            }
        }
    }
    Err(format!(
        "the server still asked for input after {MAX_ROUNDS} rounds"
    ))
}
