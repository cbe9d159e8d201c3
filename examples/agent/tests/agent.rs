//! The `agent` binary against a scripted chat-completions server on
//! 127.0.0.1: canned answers with tool calls (one of this crate's tools, a
//! built-in, malformed arguments, an unknown tool, `clarify` answered on
//! stdin), then a final answer; every request the agent sent is checked.
//! And the library's conversation in this process: when it is over, its
//! session has ended.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{json, Value};

/// The scripted chat-completions server of `hermes-model`'s tests.
#[path = "../../../model/tests/support/mod.rs"]
mod support;

use support::{Reply, Seen};

/// Serves `answers` in order (each with 200), one per request, and
/// reports each request.
fn scripted_server(answers: Vec<Value>) -> (String, mpsc::Receiver<Seen>) {
    support::scripted(
        answers
            .into_iter()
            .map(|a| Reply::Http(200, "", a.to_string()))
            .collect(),
    )
}

fn tool_call(id: &str, name: &str, arguments: &str) -> Value {
    json!({"id": id, "type": "function", "function": {"name": name, "arguments": arguments}})
}

fn answer_with_calls(calls: Vec<Value>) -> Value {
    json!({"choices": [{"index": 0, "finish_reason": "tool_calls",
        "message": {"role": "assistant", "content": null, "tool_calls": calls}}]})
}

fn final_answer(text: &str) -> Value {
    json!({"choices": [{"index": 0, "finish_reason": "stop",
        "message": {"role": "assistant", "content": text}}]})
}

/// Runs `agent` with `args` in `cwd`, `stdin` fed in; (exit code, stdout, stderr).
fn agent(cwd: &Path, args: &[&str], stdin: &str) -> (i32, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_agent"))
        .args(args)
        .current_dir(cwd)
        .env_remove("HERMES_HOME")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    // Bounded: the agent makes a few local requests.
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("agent did not finish in 120 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A profile whose `.env` holds the key, and a working directory.
fn setup() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("home")).unwrap();
    std::fs::write(dir.path().join("home/.env"), "OPENAI_API_KEY=sk-test-123\n").unwrap();
    std::fs::write(dir.path().join("notes.txt"), "one two three\nfour\n").unwrap();
    dir
}

fn tool_results(body: &Value) -> Vec<(String, Value)> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| {
            let content = m["content"].as_str().unwrap();
            (
                m["tool_call_id"].as_str().unwrap().to_string(),
                serde_json::from_str(content).unwrap_or(Value::String(content.into())),
            )
        })
        .collect()
}

#[test]
fn a_conversation_with_tool_calls_reaches_an_answer() {
    let dir = setup();
    let (url, seen) = scripted_server(vec![
        answer_with_calls(vec![
            tool_call(
                "c1",
                "unit_convert",
                r#"{"value": 10, "from": "kilometer", "to": "mile"}"#,
            ),
            tool_call("c2", "word_count", r#"{"path": "notes.txt"}"#),
            tool_call("c3", "read_file", r#"{"path": "notes.txt", "limit": 1}"#),
            tool_call("c4", "unit_convert", r#"{"value": 10, "from": "#),
            tool_call("c5", "launch_rockets", r#"{}"#),
            tool_call(
                "c6",
                "unit_convert",
                r#"{"value": 1, "from": "meter", "to": "foot", "digits": 40}"#,
            ),
        ]),
        answer_with_calls(vec![tool_call(
            "c7",
            "clarify",
            r#"{"question": "Which colour?", "choices": ["red", "blue"]}"#,
        )]),
        final_answer("10 km is 6.214 miles; you chose blue."),
    ]);
    let home = dir.path().join("home");
    let (code, stdout, stderr) = agent(
        dir.path(),
        &[
            "--profile",
            home.to_str().unwrap(),
            "run",
            "--base-url",
            &url,
            "--model",
            "test-model",
            "How far is 10 km in miles?",
        ],
        "blue\n",
    );
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout.trim(), "10 km is 6.214 miles; you chose blue.");
    assert!(stderr.contains("? Which colour?"), "{stderr}");

    // First request: the prompt, the key from the profile's .env, and the
    // definitions of the built-ins and of this crate's tools.
    let first = seen.recv_timeout(Duration::from_secs(5)).unwrap();
    assert_eq!(first.path, "/v1/chat/completions");
    assert_eq!(first.authorization.as_deref(), Some("Bearer sk-test-123"));
    assert_eq!(first.body["model"], "test-model");
    assert_eq!(
        first.body["messages"][0]["content"],
        "How far is 10 km in miles?"
    );
    let names: Vec<&str> = first.body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    for name in [
        "unit_convert",
        "word_count",
        "read_file",
        "terminal",
        "clarify",
    ] {
        assert!(names.contains(&name), "{name} in {names:?}");
    }
    let digits = first.body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["function"]["name"] == "unit_convert")
        .map(|t| t["function"]["parameters"]["properties"]["digits"].clone())
        .unwrap();
    assert_eq!(digits["maximum"], 12);
    assert_eq!(digits["default"], 3);

    // Second request: every call answered, in order, errors as JSON.
    let second = seen.recv_timeout(Duration::from_secs(5)).unwrap();
    let results = tool_results(&second.body);
    let ids: Vec<&str> = results.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(ids, ["c1", "c2", "c3", "c4", "c5", "c6"]);
    assert_eq!(results[0].1, json!({"value": 6.214, "unit": "mile"}));
    assert_eq!(
        results[1].1,
        json!({"path": "notes.txt", "lines": 2, "words": 4, "chars": 19})
    );
    let read = results[2].1.to_string();
    assert!(
        read.contains("one two three") && !read.contains("four"),
        "{read}"
    );
    let malformed = results[3].1["error"].as_str().unwrap();
    assert!(
        malformed.contains("Invalid JSON in arguments for tool 'unit_convert'"),
        "{malformed}"
    );
    assert!(
        results[4].1["error"]
            .as_str()
            .unwrap()
            .starts_with("Unknown tool: launch_rockets"),
        "{:?}",
        results[4].1
    );
    let bound = results[5].1["error"].as_str().unwrap();
    assert!(
        bound.contains("'digits'") && bound.contains("above the maximum 12"),
        "{bound}"
    );

    // Third: clarify's answer, typed on stdin.
    let third = seen.recv_timeout(Duration::from_secs(5)).unwrap();
    let results = tool_results(&third.body);
    let (id, answer) = results.last().unwrap();
    assert_eq!(id, "c7");
    assert!(answer.to_string().contains("blue"), "{answer}");
}

#[test]
fn the_turn_limit_ends_a_loop_of_tool_calls() {
    let dir = setup();
    let call = || {
        answer_with_calls(vec![tool_call(
            "c",
            "unit_convert",
            r#"{"value": 1, "from": "meter", "to": "meter"}"#,
        )])
    };
    let (url, seen) = scripted_server(vec![call(), call(), call()]);
    let home = dir.path().join("home");
    let (code, _, stderr) = agent(
        dir.path(),
        &[
            "--profile",
            home.to_str().unwrap(),
            "run",
            "--base-url",
            &url,
            "--model",
            "m",
            "--max-turns",
            "2",
            "loop",
        ],
        "",
    );
    assert_eq!(code, 1);
    assert!(stderr.contains("no answer after 2 turns"), "{stderr}");
    assert_eq!(seen.try_iter().count(), 2, "two requests, not three");
}

#[test]
fn tools_lists_every_tool_name_first() {
    let dir = setup();
    let (code, stdout, stderr) = agent(dir.path(), &["tools"], "");
    assert_eq!(code, 0, "{stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    let row = |name: &str| {
        lines
            .iter()
            .find(|l| l.split('\t').next() == Some(name))
            .unwrap_or_else(|| panic!("{name} in {stdout}"))
            .split('\t')
            .collect::<Vec<_>>()
    };
    assert_eq!(row("unit_convert")[1], "units");
    assert_eq!(row("word_count")[1], "file", "joined the built-in toolset");
    assert_eq!(row("read_file")[1], "file");
    assert!(lines.len() >= 15, "{stdout}");
}

#[test]
fn call_runs_one_tool_without_a_model() {
    let dir = setup();
    std::fs::write(dir.path().join("notes.txt"), "one two three\n").unwrap();
    // A tool of this crate's own and a built-in one, as a user calls them.
    let (code, stdout, stderr) = agent(
        dir.path(),
        &["call", "word_count", r#"{"path": "notes.txt"}"#],
        "",
    );
    assert_eq!(code, 0, "{stderr}");
    let v: Value = serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    assert_eq!(v["words"], 3, "{v}");
    let (code, stdout, _) = agent(
        dir.path(),
        &["call", "read_file", r#"{"path": "notes.txt"}"#],
        "",
    );
    assert_eq!(code, 0);
    assert!(stdout.contains("one two three"), "{stdout}");
    // A bad call is an answer the model could read, not a crash.
    let (code, stdout, _) = agent(dir.path(), &["call", "no_such_tool", "{}"], "");
    assert_eq!(code, 0);
    let v: Value = serde_json::from_str(stdout.trim()).unwrap();
    assert!(
        v["error"]
            .as_str()
            .is_some_and(|e| e.contains("no_such_tool")),
        "{v}"
    );
}

/// `execute_code` in an agent with a registry of its own: the script's
/// calls come back through that registry, so a tool of this crate
/// (`word_count`, which `hermes_tools::registry()` does not have) answers.
#[test]
fn a_script_calls_the_agent_s_own_tools() {
    let dir = setup();
    std::fs::write(
        dir.path().join("home/config.yaml"),
        "code_execution:\n  allowed_tools: [word_count, read_file]\n",
    )
    .unwrap();
    let code = "from hermes_tools import call_tool, read_file\n\
                print(call_tool('word_count', path='notes.txt')['words'])\n\
                print(read_file(path='notes.txt')['total_lines'])\n";
    let args = json!({ "code": code }).to_string();
    let home = dir.path().join("home");
    let (status, stdout, stderr) = agent(
        dir.path(),
        &[
            "--profile",
            home.to_str().unwrap(),
            "call",
            "execute_code",
            &args,
        ],
        "",
    );
    assert_eq!(status, 0, "{stderr}");
    let v: Value = serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    assert_eq!(v["status"], "success", "{v}");
    assert_eq!(v["output"].as_str().map(str::trim), Some("4\n2"), "{v}");
    assert_eq!(v["tool_calls_made"], 2, "{v}");
}

/// Whether `pid` runs (a zombie only waits to be reaped).
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

/// The library's conversation, in this process: the model starts a
/// background command, reads a file twice and writes a todo list; when the
/// conversation is over its session has ended. The command is gone, and
/// calls with the session's ids find nothing of it: the file is read
/// whole again, the todo list is empty.
#[test]
fn a_conversation_ends_its_session() {
    // The sandbox's helper: the agent binary (its `main` starts with
    // `sandbox_helper()`), as this test binary's own `main` does not.
    let _ = hermes_procs::sandbox::set_helper_program(env!("CARGO_BIN_EXE_agent"));
    let dir = setup();
    let notes = dir.path().join("notes.txt");
    let read_notes = format!(r#"{{"path": "{}"}}"#, notes.display());
    let (url, seen) = scripted_server(vec![
        answer_with_calls(vec![
            tool_call(
                "c1",
                "terminal",
                r#"{"command": "exec sleep 300", "background": true}"#,
            ),
            tool_call("c2", "read_file", &read_notes),
            tool_call("c3", "read_file", &read_notes),
            tool_call(
                "c4",
                "todo",
                r#"{"todos": [{"id": "1", "content": "ship", "status": "pending"}]}"#,
            ),
        ]),
        final_answer("done"),
    ]);
    let registry = hermes_example_agent::registry().unwrap();
    hermes_tools::install_agent_loop_executors(&registry);
    let profile = hermes_runtime::Profile::new(dir.path().join("home"));
    let profiles = hermes_tools::ProfileSessions::new(profile);
    let session = profiles.session(dir.path());
    let ctx = session.context();
    let config = hermes_example_agent::ChatConfig {
        base_url: url,
        model: "test-model".into(),
        api_key: None,
        max_turns: 4,
    };
    let rt = tokio::runtime::Runtime::new().unwrap();
    let toolsets = ["terminal".to_string(), "file".into(), "todo".into()];
    let outcome = rt.block_on(hermes_example_agent::conversation(
        &registry,
        session,
        &config,
        &toolsets,
        "go",
        |_, _| {},
    ));
    assert!(
        matches!(outcome, Ok(hermes_example_agent::Outcome::Answer(ref a)) if a == "done"),
        "{outcome:?}"
    );

    // What the tools answered during the conversation.
    let _first = seen.recv_timeout(Duration::from_secs(5)).unwrap();
    let second = seen.recv_timeout(Duration::from_secs(5)).unwrap();
    let results = tool_results(&second.body);
    let pid = results[0].1["pid"]
        .as_i64()
        .unwrap_or_else(|| panic!("{:?}", results[0]));
    assert!(
        results[1].1["content"]
            .as_str()
            .is_some_and(|c| c.contains("four")),
        "{:?}",
        results[1]
    );
    assert!(results[2].1["content"].is_null(), "{:?}", results[2]);
    assert_eq!(results[3].1["summary"]["total"], 1, "{:?}", results[3]);

    // The conversation is over: its background command is gone ...
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while alive(pid) && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        !alive(pid),
        "the conversation's background command outlived it"
    );
    // ... and its session's ids find no read state and no todo list.
    let call = |name: &str, args: &str| -> Value {
        let out = rt.block_on(registry.dispatch_json(name, args, &ctx));
        serde_json::from_str(&out).unwrap()
    };
    let again = call("read_file", &read_notes);
    assert!(
        again["content"]
            .as_str()
            .is_some_and(|c| c.contains("four")),
        "{again}"
    );
    let todo = call("todo", "{}");
    assert_eq!(todo["summary"]["total"], 0, "{todo}");
    let listed = call("process", r#"{"action": "list"}"#);
    assert!(!listed.to_string().contains(&format!("{pid}")), "{listed}");
    drop(profiles);
}
