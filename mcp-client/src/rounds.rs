//! A `tools/call` to the end of its multi-round exchange (SEP-2322, the
//! 2026-07-28 revision): a server that needs input first answers
//! `input_required` with the requests it has (`inputRequests`) and an
//! opaque `requestState`; the call is sent again, with the same arguments,
//! the answers (`inputResponses`) and that state echoed unchanged, until a
//! complete result comes, for at most [`MAX_ROUNDS`] rounds.
//!
//! The answers: an `elicitation/create` is declined (this client asks no
//! user yet); a request for the client's model (`sampling/createMessage`)
//! or its roots (`roots/list`) ends the call with an error naming it.

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, InputRequest, InputResponses,
};
use rmcp::service::{Peer, RoleClient};

/// The most rounds one call may take before it is given up.
pub const MAX_ROUNDS: usize = 8;

/// Calls the tool, answering `input_required` rounds; `Err` says why not.
pub async fn call_tool(
    peer: &Peer<RoleClient>,
    mut params: CallToolRequestParams,
) -> Result<CallToolResult, String> {
    for _ in 0..MAX_ROUNDS {
        match peer
            .call_tool_once(params.clone())
            .await
            .map_err(|e| e.to_string())?
        {
            CallToolResponse::Complete(result) => return Ok(result),
            CallToolResponse::InputRequired(round) => {
                let mut answers = InputResponses::new();
                for (key, request) in round.input_requests.unwrap_or_default() {
                    let answer = match request {
                        InputRequest::Elicitation(_) => serde_json::json!({"action": "decline"}),
                        InputRequest::CreateMessage(_) => {
                            return Err("the server asks for a completion by the client's \
                                        model (sampling), which this client does not offer"
                                .into())
                        }
                        InputRequest::ListRoots(_) => {
                            return Err("the server asks for the client's roots, which \
                                        this client does not offer"
                                .into())
                        }
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
