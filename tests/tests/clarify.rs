//! `clarify` through dispatch: unavailable (check fails, left out of the
//! definitions, refused) until the agent registers a callback; then it asks
//! through it. One test: the callback is process-wide.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Mutex};

use hermes_runtime::{Profile, ToolContext};
use serde_json::{json, Value};

/// What the callback saw: question, choices, session id.
type Asked = (String, Option<Vec<String>>, Option<String>);

#[tokio::test]
async fn clarify_asks_through_the_registered_callback_only() {
    let registry = hermes_tools::registry();
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new(Profile::new(dir.path()), dir.path()).with_session_id("chat-7");
    let call = |args: Value| {
        let ctx = ctx.clone();
        async move {
            let out = registry.dispatch("clarify", args, &ctx).await;
            serde_json::from_str::<Value>(&out).unwrap()
        }
    };
    let offered = |profile: &Profile| {
        registry
            .get_tool_definitions(None, &[], profile)
            .names()
            .contains(&"clarify")
    };

    // No callback: not offered, reported unavailable, refused if called.
    assert!(!offered(ctx.profile()));
    let report = registry.check_tool_availability(ctx.profile());
    assert!(report.unavailable.iter().any(|u| u.name == "clarify"));
    let v = call(json!({"question": "Which target?"})).await;
    assert!(
        v["error"].as_str().unwrap().contains("not available"),
        "{v}"
    );

    // With a callback: offered at once, and it is asked.
    let seen: Arc<Mutex<Vec<Asked>>> = Arc::default();
    let log = seen.clone();
    hermes_tools::tools::clarify::set_clarify_callback(
        registry,
        Arc::new(move |req: hermes_tools::tools::clarify::ClarifyRequest| {
            log.lock().unwrap().push((
                req.question.clone(),
                req.choices.clone(),
                req.ctx.session_id().map(str::to_string),
            ));
            Box::pin(async move {
                match req.choices {
                    Some(c) if c.iter().any(|x| x == "fail") => Err("the user left".to_string()),
                    Some(c) => Ok(format!(" {} ", c[1])),
                    None => Ok("whatever you think".to_string()),
                }
            })
        }),
    );
    assert!(offered(ctx.profile()));
    let v = call(json!({
        "question": "  Which target? ",
        "choices": ["staging", {"label": "prod"}, "", "dev", "qa", "extra"],
    }))
    .await;
    assert_eq!(
        v,
        json!({
            "question": "Which target?",
            "choices_offered": ["staging", "prod", "dev", "qa"],
            "user_response": "prod",
        })
    );
    let v = call(json!({"question": "Anything else?"})).await;
    assert_eq!(v["user_response"], "whatever you think");
    assert_eq!(v["choices_offered"], Value::Null);
    let v = call(json!({"question": "Go?", "choices": ["fail"]})).await;
    assert_eq!(v["error"], "Failed to get user input: the user left");
    let v = call(json!({"question": " "})).await;
    assert!(v["error"].as_str().unwrap().contains("required"), "{v}");
    assert_eq!(seen.lock().unwrap()[0].2.as_deref(), Some("chat-7"));
    // An empty question never reaches the user.
    let asked: Vec<String> = seen.lock().unwrap().iter().map(|a| a.0.clone()).collect();
    assert_eq!(asked, ["Which target?", "Anything else?", "Go?"]);

    // Cleared: unavailable again.
    hermes_tools::tools::clarify::clear_clarify_callback(registry);
    assert!(!offered(ctx.profile()));
    let v = call(json!({"question": "Still there?"})).await;
    assert!(
        v["error"].as_str().unwrap().contains("not available"),
        "{v}"
    );
}
