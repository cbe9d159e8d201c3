//! `delegate_task` end to end: a parent conversation against a scripted
//! model on 127.0.0.1 whose children really call tools through dispatch,
//! each in a session of its own. Roles, the depth and concurrency caps,
//! the child timeout and the parent's interrupt reaching its children.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use hermes_model::{delegation, run, Endpoint, ModelClient, Outcome};
use hermes_runtime::{Cancellation, Profile, Registry, ToolContext};
use serde_json::{json, Value};
use support::{answer, call, offered, runtime, serve, Reply, Seen};

mod support;

/// The toolsets the top-level agent offers in these tests.
const TOOLSETS: [&str; 5] = ["file", "terminal", "delegation", "memory", "todo"];

/// A request's agent: its goal (a child's first user message after its
/// system prompt) or `parent`, and how many tool results it carries.
fn who(body: &Value) -> (String, usize) {
    let messages = body["messages"].as_array().unwrap();
    let results = messages.iter().filter(|m| m["role"] == "tool").count();
    if messages[0]["role"] == "system" {
        (
            messages[1]["content"].as_str().unwrap().to_string(),
            results,
        )
    } else {
        ("parent".to_string(), results)
    }
}

/// Every tool result a request carries, parsed, oldest first.
fn results(body: &Value) -> Vec<Value> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| serde_json::from_str(m["content"].as_str().unwrap()).unwrap())
        .collect()
}

/// Whether a process of this pid is alive (and not a zombie).
fn alive(pid: i64) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        !stat
            .rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z')
    })
}

/// The last tool result a request carries, parsed.
fn last_result(body: &Value) -> Value {
    let messages = body["messages"].as_array().unwrap();
    let m = messages.iter().rev().find(|m| m["role"] == "tool").unwrap();
    serde_json::from_str(m["content"].as_str().unwrap()).unwrap()
}

struct World {
    /// One runtime for the whole test: background children outlive a call.
    rt: tokio::runtime::Runtime,
    _home: tempfile::TempDir,
    work: tempfile::TempDir,
    profile: Profile,
    registry: &'static Registry,
    client: ModelClient,
}

/// A profile with `config`, a registry with the executor installed, and a
/// client of `url`.
fn world(config: &str, url: &str) -> World {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    std::fs::write(home.path().join("config.yaml"), config).unwrap();
    let profile = Profile::new(home.path());
    let registry: &'static Registry =
        Box::leak(Box::new(Registry::new(&hermes_tools::generated::TABLES)));
    let mut endpoint = Endpoint::new(url, "test-model");
    endpoint.backoff = Duration::from_millis(20);
    endpoint.max_retries = 0;
    let client = ModelClient::new(endpoint);
    delegation::install(
        registry,
        client.clone(),
        TOOLSETS.iter().map(|s| s.to_string()).collect(),
    );
    World {
        rt: runtime(),
        _home: home,
        work,
        profile,
        registry,
        client,
    }
}

impl World {
    fn ctx(&self) -> ToolContext {
        ToolContext::new(self.profile.clone(), self.work.path())
    }

    /// The top-level conversation from `prompt`.
    fn converse(&self, prompt: &str, ctx: &ToolContext) -> Outcome {
        let definitions = self
            .registry
            .get_tool_definitions(Some(&TOOLSETS), &[], &self.profile)
            .to_vec();
        let (tools, _) = self.client.tools_for(&definitions);
        let mut messages = vec![json!({"role": "user", "content": prompt})];
        self.rt
            .block_on(run(
                &self.client,
                self.registry,
                ctx,
                &tools,
                &mut messages,
                6,
                |_, _| {},
            ))
            .unwrap()
    }
}

#[test]
fn one_task_runs_in_a_child_with_the_parent_s_tools_narrowed() {
    let (url, seen) = serve(|body| match who(body) {
        (p, 0) if p == "parent" => call(
            "d1",
            "delegate_task",
            json!({"goal": "write the greeting", "context": "into greeting.txt",
                   "role": "orchestrator"}),
        ),
        (p, _) if p == "parent" => answer("done"),
        (_, 0) => call(
            "w1",
            "write_file",
            json!({"path": "greeting.txt", "content": "hello\n"}),
        ),
        (_, 1) => call("m1", "memory", json!({"action": "add", "content": "x"})),
        _ => answer("wrote greeting.txt"),
    });
    let w = world("", &url);
    assert_eq!(
        w.converse("greet", &w.ctx()),
        Outcome::Answer("done".into())
    );
    assert_eq!(
        std::fs::read_to_string(w.work.path().join("greeting.txt")).unwrap(),
        "hello\n"
    );
    let seen: Vec<Seen> = seen.try_iter().collect();
    let parent_first = seen.iter().find(|s| who(&s.body) == ("parent".into(), 0));
    assert!(offered(&parent_first.unwrap().body).contains(&"delegate_task".to_string()));
    // The child: its goal, the context in its system prompt, the parent's
    // tools but none a leaf may not have (max_spawn_depth 1 makes the
    // asked-for orchestrator a leaf).
    let child = seen
        .iter()
        .find(|s| who(&s.body).0 == "write the greeting")
        .unwrap();
    let child_tools = offered(&child.body);
    assert!(
        child_tools.contains(&"write_file".to_string()),
        "{child_tools:?}"
    );
    for blocked in ["delegate_task", "memory", "clarify"] {
        assert!(
            !child_tools.contains(&blocked.to_string()),
            "{child_tools:?}"
        );
    }
    assert!(child.body["messages"][0]["content"]
        .as_str()
        .unwrap()
        .contains("into greeting.txt"));
    // The memory call it tried anyway was refused without running.
    let refused = seen
        .iter()
        .find(|s| who(&s.body) == ("write the greeting".into(), 2))
        .unwrap();
    let e = last_result(&refused.body);
    assert!(
        e["error"].as_str().unwrap().contains("not available"),
        "{e}"
    );
    assert!(!w._home.path().join("memories").exists());
    // What the parent got back.
    let parent_last = seen
        .iter()
        .find(|s| who(&s.body) == ("parent".into(), 1))
        .unwrap();
    let r = last_result(&parent_last.body);
    let first = &r["results"][0];
    assert_eq!(first["status"], "completed", "{r}");
    assert_eq!(first["summary"], "wrote greeting.txt");
    assert_eq!(first["role"], "leaf");
    assert_eq!(first["tool_trace"][0]["tool"], "write_file");
    assert_eq!(first["tool_trace"][0]["status"], "ok");
    assert_eq!(first["tool_trace"][1]["status"], "error");
}

#[test]
fn a_batch_runs_together_within_the_cap() {
    // Each child's first request waits for the other's: run one after the
    // other, neither would ever see its sibling and both would answer "alone".
    let arrived = Arc::new((Mutex::new(Vec::<String>::new()), Condvar::new()));
    let gate = Arc::clone(&arrived);
    let (url, seen) = serve(move |body| match who(body) {
        (p, 0) if p == "parent" => call(
            "d1",
            "delegate_task",
            json!({"tasks": [{"goal": "a"}, {"goal": "b"}, {"goal": "c"}]}),
        ),
        (p, 1) if p == "parent" => call(
            "d2",
            "delegate_task",
            json!({"tasks": [{"goal": "a"}, {"goal": "b"}]}),
        ),
        (p, _) if p == "parent" => answer("done"),
        (goal, _) => {
            let (lock, cvar) = &*gate;
            let mut seen = lock.lock().unwrap();
            seen.push(goal.clone());
            cvar.notify_all();
            let (seen, _) = cvar
                .wait_timeout_while(seen, Duration::from_secs(10), |s| s.len() < 2)
                .unwrap();
            answer(if seen.len() >= 2 { "together" } else { "alone" })
        }
    });
    let w = world("delegation:\n  max_concurrent_children: 2\n", &url);
    assert_eq!(
        w.converse("fan out", &w.ctx()),
        Outcome::Answer("done".into())
    );
    let seen: Vec<Seen> = seen.try_iter().collect();
    let after_first = seen
        .iter()
        .find(|s| who(&s.body) == ("parent".into(), 1))
        .unwrap();
    let e = last_result(&after_first.body);
    let e = e["error"].as_str().unwrap();
    assert!(
        e.contains("Too many tasks") && e.contains("max_concurrent_children"),
        "{e}"
    );
    let after_second = seen
        .iter()
        .find(|s| who(&s.body) == ("parent".into(), 2))
        .unwrap();
    let r = last_result(&after_second.body);
    let results = r["results"].as_array().unwrap();
    // In task order, each its own child.
    assert_eq!(results.len(), 2);
    for (i, entry) in results.iter().enumerate() {
        assert_eq!(entry["task_index"], i);
        assert_eq!(entry["summary"], "together", "{r}");
    }
}

#[test]
fn an_orchestrator_delegates_within_the_depth_cap() {
    let (url, seen) = serve(|body| match who(body) {
        (p, 0) if p == "parent" => call(
            "d1",
            "delegate_task",
            json!({"goal": "orchestrate", "role": "orchestrator"}),
        ),
        (p, _) if p == "parent" => answer("done"),
        (g, 0) if g == "orchestrate" => call(
            "d2",
            "delegate_task",
            json!({"goal": "leaf work", "role": "orchestrator"}),
        ),
        (g, _) if g == "orchestrate" => answer("orchestrated"),
        // At the cap: an orchestrator asked for is a leaf, and its call of
        // delegate_task is refused.
        (_, 0) => call("d3", "delegate_task", json!({"goal": "deeper"})),
        _ => answer("leaf done"),
    });
    let w = world("delegation:\n  max_spawn_depth: 2\n", &url);
    assert_eq!(w.converse("plan", &w.ctx()), Outcome::Answer("done".into()));
    let seen: Vec<Seen> = seen.try_iter().collect();
    let by = |goal: &str, results: usize| {
        seen.iter()
            .find(|s| who(&s.body) == (goal.to_string(), results))
            .unwrap_or_else(|| panic!("no request of {goal} after {results} results"))
    };
    assert!(offered(&by("orchestrate", 0).body).contains(&"delegate_task".to_string()));
    assert!(!offered(&by("leaf work", 0).body).contains(&"delegate_task".to_string()));
    let refused = last_result(&by("leaf work", 1).body);
    assert!(refused["error"].as_str().unwrap().contains("not available"));
    assert!(!seen.iter().any(|s| who(&s.body).0 == "deeper"));
    let inner = last_result(&by("orchestrate", 1).body);
    assert_eq!(inner["results"][0]["summary"], "leaf done", "{inner}");
    assert_eq!(inner["results"][0]["role"], "leaf");
    let outer = last_result(&by("parent", 1).body);
    assert_eq!(outer["results"][0]["summary"], "orchestrated");
    assert_eq!(outer["results"][0]["role"], "orchestrator");
}

#[test]
fn a_child_past_its_timeout_is_stopped() {
    let (url, _seen) = serve(|body| match who(body) {
        (p, 0) if p == "parent" => call("d1", "delegate_task", json!({"goal": "slow"})),
        (p, _) if p == "parent" => answer("done"),
        _ => Reply::After(Duration::from_secs(4), Box::new(answer("too late"))),
    });
    let w = world("delegation:\n  child_timeout_seconds: 1\n", &url);
    let ctx = w.ctx();
    let result = w.rt.block_on(
        w.registry
            .dispatch("delegate_task", json!({"goal": "slow"}), &ctx),
    );
    let r: Value = serde_json::from_str(&result).unwrap();
    let entry = &r["results"][0];
    assert_eq!(entry["status"], "timeout", "{r}");
    assert!(entry["error"]
        .as_str()
        .unwrap()
        .contains("child_timeout_seconds"));
    assert!(entry["summary"].is_null());
}

#[test]
fn the_parent_s_interrupt_reaches_every_child() {
    let (url, seen) = serve(|_| Reply::After(Duration::from_secs(6), Box::new(answer("late"))));
    let w = world("", &url);
    let stop = Cancellation::new();
    let ctx = w.ctx().with_cancellation(stop.clone());
    // Cancel once both children have asked the model.
    let canceller = std::thread::spawn(move || {
        let mut asked = 0;
        while asked < 2 {
            if seen.recv_timeout(Duration::from_secs(20)).is_err() {
                break;
            }
            asked += 1;
        }
        stop.cancel();
        asked
    });
    let result = w.rt.block_on(w.registry.dispatch(
        "delegate_task",
        json!({"tasks": [{"goal": "one"}, {"goal": "two"}]}),
        &ctx,
    ));
    assert_eq!(canceller.join().unwrap(), 2);
    let r: Value = serde_json::from_str(&result).unwrap();
    for entry in r["results"].as_array().unwrap() {
        assert_eq!(entry["status"], "interrupted", "{r}");
    }
}

#[test]
fn a_registry_without_the_executor_refuses_the_call() {
    // The availability check is process-wide (as `clarify`'s callback is):
    // once any agent of the process installs an executor the tool is
    // offered; a registry without one still never runs a child.
    let registry = Registry::new(&hermes_tools::generated::TABLES);
    let home = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new(Profile::new(home.path()), home.path());
    let result = runtime().block_on(registry.dispatch("delegate_task", json!({"goal": "x"}), &ctx));
    let r: Value = serde_json::from_str(&result).unwrap();
    assert!(r["error"].as_str().unwrap().contains("agent loop"), "{r}");
}

#[test]
fn a_background_delegation_comes_back_as_a_message() {
    let (url, seen) = serve(|body| {
        let messages = body["messages"].as_array().unwrap();
        let last = messages.last().unwrap();
        match who(body) {
            (p, 0) if p == "parent" && last["role"] == "user" && messages.len() == 1 => call(
                "d1",
                "delegate_task",
                json!({"goal": "in the background", "background": true}),
            ),
            (p, _) if p == "parent" => {
                let text = last["content"].as_str().unwrap_or_default();
                if text.contains("Background delegation") {
                    answer("got the results")
                } else {
                    answer("carrying on")
                }
            }
            _ => answer("background work done"),
        }
    });
    let w = world("", &url);
    let session = hermes_tools::Session::new(w.profile.clone(), w.work.path());
    let ctx = session.context();
    // The call answers at once; the parent goes on.
    assert_eq!(
        w.converse("start", &ctx),
        Outcome::Answer("carrying on".into())
    );
    let seen_first: Vec<Seen> = seen.try_iter().collect();
    let dispatched = seen_first
        .iter()
        .find(|s| who(&s.body) == ("parent".into(), 1))
        .unwrap();
    let d = last_result(&dispatched.body);
    assert_eq!(d["status"], "dispatched", "{d}");
    let id = d["delegation_id"].as_str().unwrap().to_string();
    // Its completion waits for the session's next turn.
    let mut waited = 0;
    while delegation::queued(&ctx) == 0 && waited < 200 {
        std::thread::sleep(Duration::from_millis(50));
        waited += 1;
    }
    assert_eq!(delegation::queued(&ctx), 1);
    assert_eq!(
        w.converse("anything new?", &ctx),
        Outcome::Answer("got the results".into())
    );
    let next: Vec<Seen> = seen.try_iter().collect();
    let parent = next.iter().find(|s| who(&s.body).0 == "parent").unwrap();
    let text = parent.body["messages"].as_array().unwrap().last().unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        text.contains(&id) && text.contains("background work done"),
        "{text}"
    );
    assert_eq!(delegation::queued(&ctx), 0);
}

#[test]
fn an_output_schema_is_checked_with_one_retry() {
    let schema = r#"{"type": "object", "properties": {"count": {"type": "integer"}}, "required": ["count"]}"#;
    let (url, seen) = serve(|body| {
        let messages = body["messages"].as_array().unwrap();
        let asked_again = messages
            .last()
            .is_some_and(|m| m["role"] == "user" && messages.len() > 2);
        match who(body).0.as_str() {
            // Right on the second try.
            "count the files" if asked_again => answer("```json\n{\"count\": 3}\n```"),
            "count the files" => answer("three files"),
            // Wrong both times.
            _ if asked_again => answer("{\"count\": \"three\"}"),
            _ => answer("3"),
        }
    });
    let w = world("", &url);
    let ctx = w.ctx();
    let dispatch = |args: Value| -> Value {
        let text =
            w.rt.block_on(w.registry.dispatch("delegate_task", args, &ctx));
        serde_json::from_str(&text).unwrap()
    };
    let r = dispatch(json!({"goal": "count the files", "output_schema": schema}));
    let entry = &r["results"][0];
    assert_eq!(entry["schema_valid"], true, "{r}");
    assert_eq!(entry["output"], json!({"count": 3}));
    assert_eq!(entry["api_calls"], 2);

    let r = dispatch(json!({"tasks": [{"goal": "count again", "output_schema": schema}]}));
    let entry = &r["results"][0];
    assert_eq!(entry["schema_valid"], false, "{r}");
    assert_eq!(entry["summary"], "{\"count\": \"three\"}");
    let errors = entry["schema_errors"].as_array().unwrap();
    assert!(
        errors
            .iter()
            .any(|e| e.as_str().unwrap().contains("/count")),
        "{r}"
    );
    // The retry told the child what was wrong.
    let retry = seen
        .try_iter()
        .find(|s| {
            who(&s.body).0 == "count again" && s.body["messages"].as_array().unwrap().len() > 3
        })
        .unwrap();
    let text = retry.body["messages"].as_array().unwrap().last().unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string();
    // "3" is JSON, but not the object the schema asks for.
    assert!(text.contains("\"object\""), "{text}");

    // A schema that is no JSON is refused before any child starts.
    let r = dispatch(json!({"goal": "x", "output_schema": "{not json"}));
    assert!(
        r["error"].as_str().unwrap().contains("output_schema"),
        "{r}"
    );
}

#[test]
fn a_child_s_processes_end_with_it_unless_handed_off() {
    let (url, seen) = serve(|body| match who(body) {
        (p, 0) if p == "parent" => {
            call("d1", "delegate_task", json!({"goal": "start the servers"}))
        }
        (p, _) if p == "parent" => answer("done"),
        (_, 0) => call(
            "t1",
            "terminal",
            json!({"command": "sleep 300", "background": true}),
        ),
        (_, 1) => call(
            "t2",
            "terminal",
            json!({"command": "sleep 301", "background": true}),
        ),
        (_, 2) => call(
            "t3",
            "terminal",
            json!({"command": "echo never-read", "background": true}),
        ),
        (_, 3) => {
            let kept = results(body)[1]["session_id"].clone();
            call(
                "p1",
                "process",
                json!({"action": "handoff", "session_id": kept}),
            )
        }
        (_, 4) => {
            // A process of its own it already handed off is no longer its own.
            let kept = results(body)[1]["session_id"].clone();
            call(
                "p2",
                "process",
                json!({"action": "handoff", "session_id": kept}),
            )
        }
        (_, 5) => {
            // The child answers once the echo has exited on its own (bounded:
            // 20 s), so it ends as never read, not as killed.
            let echo = results(body)[2]["pid"].as_i64().unwrap();
            for _ in 0..200 {
                if !alive(echo) {
                    break;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            answer("servers started")
        }
        _ => answer("unexpected"),
    });
    let w = world("", &url);
    let parent = hermes_tools::Session::new(w.profile.clone(), w.work.path());
    let ctx = parent.context();
    assert_eq!(w.converse("start", &ctx), Outcome::Answer("done".into()));
    let seen: Vec<Seen> = seen.try_iter().collect();
    let child_last = seen
        .iter()
        .find(|s| who(&s.body) == ("start the servers".into(), 5))
        .unwrap();
    let orphan_pid = results(&child_last.body)[0]["pid"].as_i64().unwrap();
    // The child's calls, as the parent's result reports them.
    let parent_last = seen
        .iter()
        .find(|s| who(&s.body) == ("parent".into(), 1))
        .unwrap();
    let reported = last_result(&parent_last.body);
    let r = &reported["results"][0];
    assert_eq!(r["status"], "completed", "{r}");
    let trace = r["tool_trace"].as_array().unwrap();
    assert_eq!(trace[3]["status"], "ok", "{r}");
    assert_eq!(trace[4]["status"], "error", "{r}");
    let orphaned = r["orphaned_processes"].as_array().unwrap();
    let unread = r["unread_processes"].as_array().unwrap();
    assert_eq!(orphaned.len(), 1, "{r}");
    assert_eq!(orphaned[0]["command"], "sleep 300");
    assert_eq!(unread.len(), 1, "{r}");
    assert_eq!(unread[0]["command"], "echo never-read");
    // The orphan was killed with the child; the handed-off one runs on,
    // owned by the parent's session, and ends with it.
    assert!(!alive(orphan_pid));
    let listed = w.rt.block_on(
        w.registry
            .dispatch_json("process", r#"{"action": "list"}"#, &ctx),
    );
    let listed: Value = serde_json::from_str(&listed).unwrap();
    let processes = listed["processes"].as_array().unwrap();
    let kept = processes
        .iter()
        .find(|p| p["command"] == "sleep 301")
        .unwrap_or_else(|| panic!("{listed}"));
    assert_eq!(kept["status"], "running");
    assert!(
        !processes.iter().any(|p| p["command"] == "sleep 300"),
        "{listed}"
    );
    let kept_pid = kept["pid"].as_i64().unwrap();
    assert!(alive(kept_pid));
    let ended = parent.end();
    assert!(
        ended
            .iter()
            .any(|e| e.command == "sleep 301" && e.was_running),
        "{ended:?}"
    );
    assert!(!alive(kept_pid));
}
