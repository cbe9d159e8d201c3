//! Approval questions of `serve --mcp` calls go to the calling client as an
//! MCP elicitation (a form with one required choice: once, session, always
//! or deny), when the client declared it can answer one. A client that
//! cannot gets no callback: the call is refused with the runtime's
//! "no one can approve it here" message. Declining, cancelling, an
//! unreadable answer, a failed request or no answer within the profile's
//! `approvals.timeout` all count as deny (the runtime holds the question
//! to the same limit).

use std::sync::Arc;
use std::time::Duration;

use hermes_runtime::context::{ApprovalAnswer, ApprovalCallback, ApprovalRequest};
use rmcp::model::{ElicitRequestParams, ElicitationAction, ElicitationSchema};
use rmcp::service::{ElicitationMode, Peer};
use rmcp::RoleServer;
use serde_json::json;

/// The answers offered, as [`ApprovalAnswer::parse`] reads them.
const CHOICES: [ApprovalAnswer; 4] = [
    ApprovalAnswer::Once,
    ApprovalAnswer::Session,
    ApprovalAnswer::Always,
    ApprovalAnswer::Deny,
];

/// The callback that asks `peer`, if it can be asked.
pub(super) fn approver(peer: &Peer<RoleServer>) -> Option<ApprovalCallback> {
    if !peer
        .supported_elicitation_modes()
        .contains(&ElicitationMode::Form)
    {
        return None;
    }
    let peer = peer.clone();
    Some(Arc::new(move |request: ApprovalRequest| {
        let peer = peer.clone();
        Box::pin(async move { ask(&peer, &request).await })
    }))
}

async fn ask(peer: &Peer<RoleServer>, request: &ApprovalRequest) -> ApprovalAnswer {
    let schema = json!({
        "type": "object",
        "properties": {
            "answer": {
                "type": "string",
                "title": "Allow it?",
                "description": "once: this call; session: such calls in this session; \
                                always: such calls from now on; deny: do not run it",
                "enum": CHOICES.map(ApprovalAnswer::as_str),
            }
        },
        "required": ["answer"],
    });
    let Ok(schema) = serde_json::from_value::<serde_json::Map<String, serde_json::Value>>(schema)
        .map_err(|e| e.to_string())
        .and_then(|o| ElicitationSchema::from_json_schema(o).map_err(|e| e.to_string()))
    else {
        return ApprovalAnswer::Deny;
    };
    let message = if request.detail.is_empty() {
        format!(
            "`{}` needs your approval: {}.",
            request.tool, request.reason
        )
    } else {
        format!(
            "`{}` needs your approval: {}.\n\n{}",
            request.tool, request.reason, request.detail
        )
    };
    let params = ElicitRequestParams::FormElicitationParams {
        meta: None,
        message,
        requested_schema: schema,
    };
    match peer
        .create_elicitation_with_timeout(
            params,
            Some(Duration::from_secs(
                request.ctx.profile().config().approvals.timeout.value,
            )),
        )
        .await
    {
        Ok(result) if result.action == ElicitationAction::Accept => result
            .content
            .as_ref()
            .and_then(|c| c.get("answer"))
            .and_then(serde_json::Value::as_str)
            .and_then(ApprovalAnswer::parse)
            .unwrap_or(ApprovalAnswer::Deny),
        _ => ApprovalAnswer::Deny,
    }
}
