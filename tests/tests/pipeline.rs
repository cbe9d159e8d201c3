//! The dispatch pipeline: hooks, middleware, agent-loop tools, run-time
//! tools and their shadowing rules, timeouts, the result cap, unknown-tool
//! suggestions, and many concurrent calls while tools come and go.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hermes_runtime::hooks::{
    CallInfo, CallStatus, ExecutionMiddleware, Next, PostCallEvent, PostCallHook, PreCallDecision,
    PreCallHook, RequestMiddleware, ResultTransformHook,
};
use hermes_runtime::{
    DispatchConfig, HandlerFuture, Profile, RegisterError, Registry, RuntimeToolSpec, ToolContext,
    ToolSource,
};
use serde_json::{json, Value};

fn registry() -> Registry {
    Registry::new(&hermes_tests::generated::TABLES)
}

fn ctx() -> ToolContext {
    ToolContext::new(Profile::new("/tmp/hermes-pipeline"), "/tmp")
        .with_task_id("task-1")
        .with_session_id("sess-1")
        .with_tool_call_id("call-1")
}

fn parse(s: &str) -> Value {
    serde_json::from_str(s).unwrap_or_else(|e| panic!("not JSON ({e}): {s}"))
}

/// tool, original args, result, status, tool-call id.
type Event = (String, Value, String, CallStatus, Option<String>);

/// Records every post-call event.
#[derive(Default)]
struct Recorder(Mutex<Vec<Event>>);

impl PostCallHook for Recorder {
    fn post_call(&self, e: &PostCallEvent<'_>) {
        self.0.lock().unwrap().push((
            e.tool.to_string(),
            e.args.clone(),
            e.result.to_string(),
            e.status,
            e.tool_call_id.map(str::to_string),
        ));
    }
}

struct BlockEcho;
impl PreCallHook for BlockEcho {
    fn pre_call(&self, call: &CallInfo<'_>) -> PreCallDecision {
        if call.tool == "echo" && call.args["text"] == "forbidden" {
            PreCallDecision::Block("echo of that text is not allowed".into())
        } else {
            PreCallDecision::Continue
        }
    }
}

struct Panics;
impl PreCallHook for Panics {
    fn pre_call(&self, _: &CallInfo<'_>) -> PreCallDecision {
        panic!("pre-call hook bug")
    }
}
impl PostCallHook for Panics {
    fn post_call(&self, _: &PostCallEvent<'_>) {
        panic!("post-call hook bug")
    }
}
impl ResultTransformHook for Panics {
    fn transform(&self, _: &CallInfo<'_>, _: &str) -> Option<String> {
        panic!("transform bug")
    }
}
impl RequestMiddleware for Panics {
    fn rewrite(&self, _: &CallInfo<'_>, _: Value) -> Value {
        panic!("request middleware bug")
    }
}
impl ExecutionMiddleware for Panics {
    fn wrap(&self, _: &CallInfo<'_>, _: Next) -> HandlerFuture {
        panic!("execution middleware bug")
    }
}

struct Upper;
impl RequestMiddleware for Upper {
    fn rewrite(&self, _: &CallInfo<'_>, mut args: Value) -> Value {
        if let Some(t) = args["text"].as_str() {
            args["text"] = Value::String(t.to_uppercase());
        }
        args
    }
}

struct Counting(Arc<AtomicUsize>);
impl ExecutionMiddleware for Counting {
    fn wrap(&self, _: &CallInfo<'_>, next: Next) -> HandlerFuture {
        let count = self.0.clone();
        Box::pin(async move {
            count.fetch_add(1, Ordering::SeqCst);
            next().await
        })
    }
}

struct Redact(&'static str);
impl ResultTransformHook for Redact {
    fn transform(&self, _: &CallInfo<'_>, result: &str) -> Option<String> {
        result
            .contains(self.0)
            .then(|| result.replace(self.0, "[redacted]"))
    }
}

#[tokio::test]
async fn request_middleware_rewrites_but_hooks_see_the_original() {
    let reg = registry();
    let rec = Arc::new(Recorder::default());
    reg.add_request_middleware(Arc::new(Upper));
    reg.add_post_call_hook(rec.clone());
    let out = reg
        .dispatch("echo", json!({"text": "hi", "count": "2"}), &ctx())
        .await;
    assert_eq!(parse(&out), json!({"text": "HI", "count": 2}));
    let events = rec.0.lock().unwrap();
    let (tool, args, result, status, call_id) = &events[0];
    assert_eq!(tool, "echo");
    assert_eq!(
        args,
        &json!({"text": "hi", "count": 2}),
        "original args, coerced"
    );
    assert_eq!(result, &out);
    assert_eq!(*status, CallStatus::Ok);
    assert_eq!(call_id.as_deref(), Some("call-1"));
}

#[tokio::test]
async fn a_pre_call_hook_blocks_and_post_call_sees_blocked() {
    let reg = registry();
    let rec = Arc::new(Recorder::default());
    reg.add_pre_call_hook(Arc::new(BlockEcho));
    reg.add_post_call_hook(rec.clone());
    let out = reg
        .dispatch("echo", json!({"text": "forbidden"}), &ctx())
        .await;
    assert_eq!(
        parse(&out),
        json!({"error": "echo of that text is not allowed"})
    );
    let out = reg
        .dispatch("maybe_fail", json!({"fail": true}), &ctx())
        .await;
    assert!(parse(&out)["error"].is_string());
    let events = rec.0.lock().unwrap();
    assert_eq!(events[0].3, CallStatus::Blocked);
    assert_eq!(
        events[1].3,
        CallStatus::Error,
        "status derived from the result"
    );
}

#[tokio::test]
async fn the_first_transform_that_answers_wins() {
    let reg = registry();
    reg.add_result_transform(Arc::new(Redact("secret")));
    reg.add_result_transform(Arc::new(Redact("redacted")));
    let out = reg
        .dispatch("echo", json!({"text": "my secret"}), &ctx())
        .await;
    assert_eq!(parse(&out)["text"], "my [redacted]");
}

#[tokio::test]
async fn execution_middleware_wraps_the_handler() {
    let reg = registry();
    let count = Arc::new(AtomicUsize::new(0));
    reg.add_execution_middleware(Arc::new(Counting(count.clone())));
    reg.add_execution_middleware(Arc::new(Counting(count.clone())));
    let out = reg.dispatch("echo", json!({"text": "x"}), &ctx()).await;
    assert_eq!(parse(&out)["text"], "x");
    assert_eq!(count.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn panicking_hooks_and_middleware_are_skipped() {
    let reg = registry();
    let p = Arc::new(Panics);
    reg.add_request_middleware(p.clone());
    reg.add_pre_call_hook(p.clone());
    reg.add_execution_middleware(p.clone());
    reg.add_post_call_hook(p.clone());
    reg.add_result_transform(p);
    let out = reg.dispatch("echo", json!({"text": "fine"}), &ctx()).await;
    assert_eq!(parse(&out), json!({"text": "fine", "count": null}));
}

#[tokio::test]
async fn a_suppression_guard_silences_post_call_hooks_across_awaits() {
    let reg = registry();
    let rec = Arc::new(Recorder::default());
    reg.add_post_call_hook(rec.clone());
    let ctx = ctx();
    {
        let _quiet = ctx.suppress_hooks();
        tokio::task::yield_now().await;
        reg.dispatch("echo", json!({"text": "internal"}), &ctx.clone())
            .await;
        tokio::time::sleep(Duration::from_millis(1)).await;
        reg.dispatch("echo", json!({"text": "internal 2"}), &ctx)
            .await;
    }
    reg.dispatch("echo", json!({"text": "visible"}), &ctx).await;
    let events = rec.0.lock().unwrap();
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].1["text"], "visible");
}

#[tokio::test]
async fn agent_loop_tools_need_the_agents_executor() {
    let reg = registry();
    let out = reg.dispatch("todo", json!({"items": []}), &ctx()).await;
    assert_eq!(
        parse(&out),
        json!({"error": "todo must be handled by the agent loop"})
    );

    reg.set_agent_loop_executor(
        "todo",
        Arc::new(|ctx: ToolContext, args: Value| {
            Box::pin(
                async move { json!({"task": ctx.task_id(), "items": args["items"]}).to_string() },
            ) as HandlerFuture
        }),
    );
    let out = reg.dispatch("todo", json!({"items": [1]}), &ctx()).await;
    assert_eq!(parse(&out), json!({"task": "task-1", "items": [1]}));
    let out = reg.dispatch("memory", json!({}), &ctx()).await;
    assert_eq!(
        parse(&out),
        json!({"error": "memory must be handled by the agent loop"})
    );
}

#[tokio::test]
async fn unknown_tools_get_up_to_three_suggestions_from_the_session_scope() {
    let reg = registry();
    let out = reg.dispatch("echoo", json!({}), &ctx()).await;
    let e = parse(&out)["error"].as_str().unwrap().to_string();
    assert!(
        e.starts_with("Unknown tool: echoo. Did you mean: echo"),
        "{e}"
    );

    let scoped = ctx().with_enabled_tools(vec!["notes_read".into(), "notes_write".into()]);
    let out = reg.dispatch("notes_raed", json!({}), &scoped).await;
    let e = parse(&out)["error"].as_str().unwrap().to_string();
    assert!(e.contains("notes_read"), "{e}");
    assert!(
        !e.contains("echo"),
        "only tools in the session's scope: {e}"
    );

    let out = reg.dispatch("zzzzzzzz", json!({}), &ctx()).await;
    assert_eq!(parse(&out), json!({"error": "Unknown tool: zzzzzzzz"}));
}

#[tokio::test]
async fn a_slow_handler_is_cancelled_at_its_timeout() {
    let reg = registry();
    let mut config = DispatchConfig::default();
    config
        .tool_timeouts
        .insert("sleepy".into(), Duration::from_millis(50));
    reg.set_dispatch_config(config);
    let out = reg.dispatch("sleepy", json!({"ms": 5_000}), &ctx()).await;
    let e = parse(&out)["error"].as_str().unwrap().to_string();
    assert!(e.contains("timed out after 50 ms"), "{e}");
    let out = reg.dispatch("sleepy", json!({"ms": 1}), &ctx()).await;
    assert!(
        parse(&out)["result"]
            .as_str()
            .unwrap()
            .starts_with("\"slept 1"),
        "{out}"
    );
}

#[tokio::test]
async fn the_per_tool_cap_cuts_on_a_character_boundary() {
    let reg = registry();
    // `sleepy` caps its result at 10 characters; its result is 14.
    let out = reg.dispatch("sleepy", json!({"ms": 100}), &ctx()).await;
    let v = parse(&out);
    assert_eq!(v["result"], "\"slept 100");
    assert!(v["truncated"].as_str().unwrap().contains("14"), "{v}");

    reg.set_dispatch_config(DispatchConfig::default().with_default_max_result_chars(7));
    let out = reg
        .dispatch("raw_string", json!({"text": "ééééééééé"}), &ctx())
        .await;
    assert_eq!(parse(&out)["result"], "\"éééééé");
}

fn plugin(name: &str, toolset: &str, answer: &'static str) -> RuntimeToolSpec {
    RuntimeToolSpec::new(
        name,
        toolset,
        format!("Plugin tool {name}."),
        json!({"type": "object", "properties": {"n": {"type": "integer", "description": "A number."}}, "required": []}),
        Arc::new(move |_ctx: ToolContext, args: Value| {
            Box::pin(async move { json!({"answer": answer, "n": args["n"]}).to_string() })
                as HandlerFuture
        }),
    )
}

#[tokio::test]
async fn run_time_tools_dispatch_coerce_and_show_in_definitions() {
    let reg = registry();
    let before = reg.generation();
    reg.register_tool(plugin("weather", "plugin-weather", "sunny"))
        .unwrap();
    assert!(reg.generation() > before);
    let out = reg.dispatch("weather", json!({"n": "3"}), &ctx()).await;
    assert_eq!(
        parse(&out),
        json!({"answer": "sunny", "n": 3}),
        "coerced by the plan compiled at registration"
    );
    let defs = reg.get_tool_definitions(Some(&["plugin-weather"]), &[], &Profile::new("/tmp/p"));
    assert_eq!(defs.names(), ["weather"]);
    assert!(reg.toolsets().validate_toolset("plugin-weather"));

    reg.deregister_tool("weather", "plugin-weather").unwrap();
    let out = reg.dispatch("weather", json!({}), &ctx()).await;
    assert!(parse(&out)["error"]
        .as_str()
        .unwrap()
        .starts_with("Unknown tool: weather"));
    assert!(
        !reg.toolsets().validate_toolset("plugin-weather"),
        "the last tool took its toolset along"
    );
}

#[tokio::test]
async fn shadowing_rules() {
    let reg = registry();
    reg.register_tool(plugin("lookup", "plugin-a", "a"))
        .unwrap();
    // Another toolset may not take the name without `override`.
    let err = reg
        .register_tool(plugin("lookup", "plugin-b", "b"))
        .unwrap_err();
    assert!(matches!(err, RegisterError::Shadowing { .. }), "{err}");
    let mut over = plugin("lookup", "plugin-b", "b");
    over.override_existing = true;
    reg.register_tool(over).unwrap();
    assert_eq!(
        parse(&reg.dispatch("lookup", json!({}), &ctx()).await)["answer"],
        "b"
    );

    // Two mcp-* toolsets replace each other (a server refresh).
    let mut m1 = plugin("fetch_page", "mcp-one", "one");
    m1.source = ToolSource::Mcp;
    reg.register_tool(m1).unwrap();
    let mut m2 = plugin("fetch_page", "mcp-two", "two");
    m2.source = ToolSource::Mcp;
    reg.register_tool(m2).unwrap();
    assert_eq!(
        parse(&reg.dispatch("fetch_page", json!({}), &ctx()).await)["answer"],
        "two"
    );

    // A plugin replacing a built-in tool needs override and the operator's opt-in.
    let mut builtin = plugin("echo", "plugin-echo", "plugin echo");
    builtin.override_existing = true;
    let err = reg.register_tool(builtin.clone()).unwrap_err();
    assert!(
        matches!(err, RegisterError::BuiltinOverrideNotAllowed { .. }),
        "{err}"
    );
    reg.allow_plugin_overrides(true);
    reg.register_tool(builtin).unwrap();
    assert_eq!(
        parse(&reg.dispatch("echo", json!({}), &ctx()).await)["answer"],
        "plugin echo"
    );
    // Removing the override exposes the built-in again.
    reg.deregister_tool("echo", "plugin-echo").unwrap();
    assert_eq!(
        parse(&reg.dispatch("echo", json!({"text": "t"}), &ctx()).await)["text"],
        "t"
    );

    // Removal is gated by the owning toolset.
    let err = reg.deregister_tool("lookup", "plugin-a").unwrap_err();
    assert!(matches!(err, RegisterError::WrongToolset { .. }), "{err}");
    assert!(matches!(
        reg.register_tool(plugin("bad name!", "p", "x")),
        Err(RegisterError::InvalidName(_))
    ));
}

#[tokio::test]
async fn deregistering_the_last_tool_drops_the_toolsets_aliases() {
    let reg = registry();
    reg.register_tool(plugin("srv_tool", "mcp-srv", "x"))
        .unwrap();
    reg.toolsets().register_toolset_alias("srv", "mcp-srv");
    assert_eq!(reg.toolsets().resolve_toolset("srv"), ["srv_tool"]);
    reg.deregister_tool("srv_tool", "mcp-srv").unwrap();
    assert!(reg.toolsets().resolve_toolset("srv").is_empty());
    assert!(!reg.toolsets().validate_toolset("srv"));
}

#[test]
fn sub_agent_contexts_are_distinguishable() {
    let top = ctx();
    let sub = top.subagent("task-2");
    assert!(!top.is_subagent());
    assert!(sub.is_subagent());
    assert_eq!(sub.parent_task_id(), Some("task-1"));
    assert_eq!(sub.task_id(), Some("task-2"));
    assert_eq!(sub.profile(), top.profile());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thousands_of_concurrent_calls_while_tools_come_and_go() {
    let reg = Arc::new(registry());
    let churn = {
        let reg = reg.clone();
        tokio::spawn(async move {
            for round in 0..200u32 {
                let specs = (0..5)
                    .map(|i| {
                        let mut s = plugin(&format!("mcp_tool_{i}"), "mcp-churn", "churn");
                        s.source = ToolSource::Mcp;
                        s
                    })
                    .collect();
                assert!(reg.replace_toolset_tools("mcp-churn", specs).is_empty());
                if round % 2 == 0 {
                    for i in 0..5 {
                        reg.deregister_tool(&format!("mcp_tool_{i}"), "mcp-churn")
                            .unwrap();
                    }
                }
                let _ = reg.get_tool_definitions(None, &[], &Profile::new("/tmp/c"));
                tokio::task::yield_now().await;
            }
        })
    };
    let mut calls = Vec::new();
    for i in 0..4_000u32 {
        let reg = reg.clone();
        calls.push(tokio::spawn(async move {
            let (name, args) = match i % 4 {
                0 => ("echo", json!({"text": format!("m{i}")})),
                1 => ("mcp_tool_3", json!({"n": i})),
                2 => ("panic_async", json!({"message": "boom"})),
                _ => ("range", json!({"start": 0, "end": 3})),
            };
            (i, parse(&reg.dispatch(name, args, &ctx()).await))
        }));
    }
    for call in calls {
        let (i, v) = tokio::time::timeout(Duration::from_secs(60), call)
            .await
            .expect("no call hangs")
            .unwrap();
        match i % 4 {
            0 => assert_eq!(v["text"], format!("m{i}")),
            // Registered or not at that instant: an answer either way.
            1 => assert!(
                v["answer"] == "churn" || v["error"].as_str().unwrap().starts_with("Unknown tool")
            ),
            2 => assert!(v["error"].as_str().unwrap().contains("panic: boom")),
            _ => assert_eq!(v, json!([0, 1, 2])),
        }
    }
    churn.await.unwrap();
}

/// `dispatch_json` takes a shortcut for well-typed calls when nothing is
/// registered that could see or change them; once something is, the
/// raw-text entry runs the same pipeline as `dispatch`.
#[tokio::test]
async fn the_raw_text_entry_runs_the_whole_pipeline() {
    let reg = registry();
    let raw = r#"{"text": "hello", "count": 2}"#;
    let plain = reg.dispatch_json("echo", raw, &ctx()).await;
    assert_eq!(parse(&plain), json!({"text": "hello", "count": 2}));

    // A post-call hook sees raw-text calls.
    let recorder = Arc::new(Recorder::default());
    reg.add_post_call_hook(recorder.clone());
    assert_eq!(reg.dispatch_json("echo", raw, &ctx()).await, plain);
    let events = recorder.0.lock().unwrap().clone();
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].1, json!({"text": "hello", "count": 2}));
    reg.clear_hooks();

    // Settings apply: the global result cap and a per-tool timeout.
    reg.set_dispatch_config(DispatchConfig::default().with_default_max_result_chars(7));
    let out = parse(&reg.dispatch_json("echo", raw, &ctx()).await);
    assert!(out["truncated"].is_string(), "{out}");
    let mut config = DispatchConfig::default();
    config
        .tool_timeouts
        .insert("sleepy".into(), Duration::from_millis(50));
    reg.set_dispatch_config(config);
    let out = parse(&reg.dispatch_json("sleepy", r#"{"ms": 5000}"#, &ctx()).await);
    assert!(
        out["error"]
            .as_str()
            .unwrap()
            .contains("timed out after 50 ms"),
        "{out}"
    );
    reg.set_dispatch_config(DispatchConfig::default());
    assert_eq!(reg.dispatch_json("echo", raw, &ctx()).await, plain);

    // A run-time tool that replaces a built-in one answers its raw-text calls.
    reg.allow_plugin_overrides(true);
    let mut over = plugin("echo", "plugin-echo", "plugin echo");
    over.override_existing = true;
    reg.register_tool(over).unwrap();
    let out = parse(&reg.dispatch_json("echo", raw, &ctx()).await);
    assert_eq!(out["answer"], "plugin echo");
    reg.deregister_tool("echo", "plugin-echo").unwrap();
    assert_eq!(reg.dispatch_json("echo", raw, &ctx()).await, plain);
}

/// Waits (bounded) until `reg` has `n` abandoned blocking calls.
async fn abandoned_becomes(reg: &Registry, n: usize) {
    for _ in 0..500 {
        if reg.blocking_work().abandoned() == n {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!(
        "abandoned blocking calls: {}, expected {n}",
        reg.blocking_work().abandoned()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn timed_out_blocking_calls_are_counted_bounded_and_released() {
    let reg = registry();
    let mut config = DispatchConfig::default().with_max_abandoned_blocking(2);
    config
        .tool_timeouts
        .insert("block_thread".into(), Duration::from_millis(50));
    reg.set_dispatch_config(config);
    assert_eq!(reg.blocking_work().limit(), 2);

    // Two calls time out while their threads block on: both are counted.
    for _ in 0..2 {
        let out = parse(
            &reg.dispatch("block_thread", json!({"ms": 600}), &ctx())
                .await,
        );
        assert!(
            out["error"]
                .as_str()
                .unwrap()
                .contains("timed out after 50 ms"),
            "{out}"
        );
    }
    assert_eq!(reg.blocking_work().abandoned(), 2);

    // At the limit a blocking call is refused without running; others run.
    let out = parse(&reg.dispatch("block_thread", json!({"ms": 1}), &ctx()).await);
    let error = out["error"].as_str().unwrap();
    assert!(error.contains("was not started"), "{out}");
    assert!(error.contains("2 earlier blocking calls"), "{out}");
    let echo = parse(&reg.dispatch("echo", json!({"text": "hi"}), &ctx()).await);
    assert_eq!(echo["text"], "hi");

    // Once the abandoned threads return, their slots are free again.
    abandoned_becomes(&reg, 0).await;
    let out = reg.dispatch("block_thread", json!({"ms": 1}), &ctx()).await;
    assert_eq!(out, "\"blocked 1 ms\"");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_blocking_call_whose_caller_goes_away_is_abandoned() {
    let reg = registry();
    let call_ctx = ctx();
    let call = reg.dispatch("block_thread", json!({"ms": 400}), &call_ctx);
    // The caller stops waiting (a client cancelled, an outer timeout).
    let gone = tokio::time::timeout(Duration::from_millis(50), call).await;
    assert!(gone.is_err());
    assert_eq!(reg.blocking_work().abandoned(), 1);
    abandoned_becomes(&reg, 0).await;
    // A finished call abandons nothing.
    let out = reg.dispatch("block_thread", json!({"ms": 1}), &ctx()).await;
    assert_eq!(out, "\"blocked 1 ms\"");
    assert_eq!(reg.blocking_work().abandoned(), 0);
}

#[tokio::test]
async fn the_result_cap_keeps_the_document_and_its_small_fields() {
    let reg = registry();
    reg.set_dispatch_config(DispatchConfig::default().with_default_max_result_chars(2_000));
    // Text whose JSON escaping is longer than the text itself.
    let text = "say \"hi\"\n".repeat(1_000);
    let out = reg
        .dispatch("echo", json!({"text": text, "count": 7}), &ctx())
        .await;
    assert!(out.chars().count() <= 2_000, "{}", out.chars().count());
    let v = parse(&out);
    assert_eq!(v["count"], 7);
    let kept = v["text"].as_str().unwrap();
    assert!(kept.starts_with("say \"hi\"\n"));
    assert!(kept.ends_with(hermes_runtime::CUT_MARKER));
    let note = v[hermes_runtime::CUT_KEY].as_str().unwrap();
    assert!(note.contains("text: "), "{note}");
}
