//! What a `serve --mcp` call asks its client, as an MCP elicitation (a
//! form), when the client declared it can answer one:
//!
//! - approval questions: a form with one required choice (once, session,
//!   always or deny). A client that cannot answer gets no callback: the
//!   call is refused with the runtime's "no one can approve it here"
//!   message. Declining, cancelling, an unreadable answer, a failed
//!   request or no answer within the profile's `approvals.timeout` all
//!   count as deny (the runtime holds the question to the same limit);
//! - the forms an upstream MCP server of a gateway asks while it runs the
//!   call ([`form_asker`], the call context's form callback), passed on
//!   as they came; a failed request is a cancel, and the limit is the
//!   upstream entry's `elicitation.timeout`.

use std::sync::Arc;
use std::time::Duration;

use hermes_runtime::context::{
    ApprovalAnswer, ApprovalCallback, ApprovalRequest, FormAnswer, FormCallback, FormRequest,
};
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

/// Whether `peer` declared it answers forms.
fn answers_forms(peer: &Peer<RoleServer>) -> bool {
    peer.supported_elicitation_modes()
        .contains(&ElicitationMode::Form)
}

/// The callback that asks `peer` approval questions, if it can be asked.
pub(super) fn approver(peer: &Peer<RoleServer>) -> Option<ApprovalCallback> {
    if !answers_forms(peer) {
        return None;
    }
    let peer = peer.clone();
    Some(Arc::new(move |request: ApprovalRequest| {
        let peer = peer.clone();
        Box::pin(async move { ask(&peer, &request).await })
    }))
}

/// The callback that passes forms on to `peer`, if it can be asked.
pub(super) fn form_asker(peer: &Peer<RoleServer>) -> Option<FormCallback> {
    if !answers_forms(peer) {
        return None;
    }
    let peer = peer.clone();
    Some(Arc::new(move |request: FormRequest| {
        let peer = peer.clone();
        Box::pin(async move {
            match request.schema {
                serde_json::Value::Object(schema) => {
                    elicit(&peer, request.message, schema, None).await
                }
                _ => FormAnswer::Cancel,
            }
        })
    }))
}

/// Asks `peer` the form (`schema` a JSON Schema object); a schema MCP
/// cannot send, a failed request or no answer within `timeout` is a cancel.
async fn elicit(
    peer: &Peer<RoleServer>,
    message: String,
    schema: serde_json::Map<String, serde_json::Value>,
    timeout: Option<Duration>,
) -> FormAnswer {
    let Ok(requested_schema) = ElicitationSchema::from_json_schema(schema) else {
        return FormAnswer::Cancel;
    };
    let params = ElicitRequestParams::FormElicitationParams {
        meta: None,
        message,
        requested_schema,
    };
    match peer.create_elicitation_with_timeout(params, timeout).await {
        Ok(result) => match result.action {
            ElicitationAction::Accept => match result.content {
                Some(serde_json::Value::Object(content)) => FormAnswer::Accept(content),
                _ => FormAnswer::Accept(serde_json::Map::new()),
            },
            ElicitationAction::Decline => FormAnswer::Decline,
            _ => FormAnswer::Cancel,
        },
        Err(_) => FormAnswer::Cancel,
    }
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
    let serde_json::Value::Object(schema) = schema else {
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
    let timeout = Duration::from_secs(request.ctx.profile().config().approvals.timeout.value);
    match elicit(peer, message, schema, Some(timeout)).await {
        FormAnswer::Accept(content) => content
            .get("answer")
            .and_then(serde_json::Value::as_str)
            .and_then(ApprovalAnswer::parse)
            .unwrap_or(ApprovalAnswer::Deny),
        FormAnswer::Decline | FormAnswer::Cancel => ApprovalAnswer::Deny,
    }
}
