//! The MCP client against real servers: the official Python SDK's (stdio
//! and streamable HTTP) and `hermes-tools serve --mcp`, all started here.
//! Every wait is bounded; no assertion is about speed.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod mcp_client_support;

use std::process::{Command, Stdio};
use std::time::Duration;

use hermes_mcp_client::{naming, McpClients, State};
use mcp_client_support::{
    alive, eventually, free_port, python, server_script, stdio_entry, Fixture,
};
use serde_json::{json, Value};

const CONNECT: Duration = Duration::from_secs(40);

fn start(f: &Fixture) -> McpClients {
    let clients = McpClients::start(f.registry, &f.profile).unwrap();
    clients.wait_ready(CONNECT);
    clients
}

fn status_of(c: &McpClients, name: &str) -> hermes_mcp_client::ServerStatus {
    c.status().into_iter().find(|s| s.name == name).unwrap()
}

#[test]
fn stdio_server_tools_are_registered_and_called_through_dispatch() {
    let f = Fixture::new(
        &stdio_entry(
            "my-srv",
            "    env:\n      FROM_SECRET: \"${MY_SECRET}\"\n    timeout: 5\n    connect_timeout: 30\n    tools:\n      exclude: [flood]\n",
        ),
        "MY_SECRET=s3cret\n",
    );
    let clients = start(&f);
    let s = status_of(&clients, "my-srv");
    assert_eq!(s.state, State::Connected, "{s:?}");
    assert!(s.tools.contains(&"mcp__my_srv__echo".to_string()), "{s:?}");
    assert!(
        !s.tools.iter().any(|t| t.ends_with("__flood")),
        "excluded: {s:?}"
    );
    assert!(s.warnings.iter().any(|w| w.contains("sneaky")), "{s:?}");

    // Definitions: the toolset, its alias, the normalized schema.
    let defs = f
        .registry
        .get_tool_definitions(Some(&["my-srv"]), &[], &f.profile);
    let names: Vec<&str> = defs.names();
    assert!(names.contains(&"mcp__my_srv__add"), "{names:?}");
    let add = defs
        .tools
        .iter()
        .find(|d| d["function"]["name"] == "mcp__my_srv__add")
        .unwrap();
    let params = &add["function"]["parameters"];
    assert!(!params.to_string().contains("$ref"), "{params}");
    assert_eq!(
        params["properties"]["a"]["properties"]["x"]["type"],
        "integer"
    );

    // Calls, with coercion: "3" becomes 3 by the compiled plan.
    let r = f.call("mcp__my_srv__echo", json!({"text": "hi"}));
    assert_eq!(r["result"], "hi", "{r}");
    let r = f.call(
        "mcp__my_srv__add",
        json!({"a": {"x": 1, "y": 2}, "b": {"x": "3", "y": 4}}),
    );
    assert_eq!(r["result"], "4,6", "{r}");
    // isError → {"error": ...}, credentials stripped.
    let r = f.call(
        "mcp__my_srv__fail",
        json!({"message": "denied, password=hunter2"}),
    );
    let e = r["error"].as_str().unwrap();
    assert!(e.contains("denied") && !e.contains("hunter2"), "{r}");
    // Structured content beside the text.
    let r = f.call("mcp__my_srv__structured", json!({"n": 4}));
    assert!(r["result"].is_string() || r["result"].is_object(), "{r}");
    // An image becomes MEDIA:<path> holding its bytes.
    let r = f.call("mcp__my_srv__image", json!({}));
    let text = r["result"].as_str().unwrap();
    let path = text.lines().find_map(|l| l.strip_prefix("MEDIA:")).unwrap();
    assert!(
        std::fs::read(path).unwrap().starts_with(b"\x89PNG"),
        "{text}"
    );
    // The environment: the entry's env with ${VAR} from the profile's
    // secrets, nothing of this process's own.
    let r = f.call("mcp__my_srv__env", json!({"name": "FROM_SECRET"}));
    assert_eq!(r["result"], "s3cret", "{r}");
    let r = f.call("mcp__my_srv__env", json!({"name": "CARGO_MANIFEST_DIR"}));
    assert_eq!(r["result"], "<unset>", "{r}");
    // Resources and prompts through the utility tools.
    let r = f.call("mcp__my_srv__read_resource", json!({"uri": "test://hello"}));
    assert_eq!(r["result"], "hello resource", "{r}");
    let r = f.call("mcp__my_srv__list_resources", json!({}));
    assert_eq!(r["resources"][0]["uri"], "test://hello", "{r}");
    let r = f.call(
        "mcp__my_srv__get_prompt",
        json!({"name": "greet", "arguments": {"who": "Bob"}}),
    );
    assert_eq!(r["messages"][0]["content"], "Hello, Bob!", "{r}");
    let r = f.call("mcp__my_srv__list_prompts", json!({}));
    assert_eq!(r["prompts"][0]["name"], "greet", "{r}");
    let r = f.call("mcp__my_srv__read_resource", json!({}));
    assert!(r["error"].is_string(), "{r}");

    // Dropped: the tools go, the server is torn down.
    let pid: i32 = f.call("mcp__my_srv__pid", json!({}))["result"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(alive(pid));
    drop(clients);
    assert!(f.registry.tool("mcp__my_srv__echo").is_none());
    assert!(
        eventually(Duration::from_secs(15), || !alive(pid)),
        "pid {pid} still runs"
    );
}

/// What a server says its tools do is kept: annotations and title on the
/// registered tool; parallel only when read-only, or every tool of a
/// server the profile opts in with `supports_parallel_tool_calls`.
#[test]
fn a_server_s_annotations_are_kept() {
    let f = Fixture::new(
        &format!(
            "{}{}",
            stdio_entry("plain", ""),
            stdio_entry("opted", "    supports_parallel_tool_calls: true\n")
        ),
        "",
    );
    let clients = start(&f);
    assert_eq!(status_of(&clients, "plain").state, State::Connected);
    assert_eq!(status_of(&clients, "opted").state, State::Connected);
    let tool = |name: &str| f.registry.tool(name).unwrap();

    let echo = tool("mcp__plain__echo");
    let e = echo.effects();
    assert!(
        e.read_only && !e.destructive && e.idempotent && !e.open_world,
        "{e:?}"
    );
    assert!(e.parallel_safe(), "read-only: {e:?}");
    assert_eq!(echo.title(), "Echo back");

    // Stated: writing but not destructive; still exclusive.
    let fail = tool("mcp__plain__fail").effects().clone();
    assert!(
        !fail.read_only && !fail.destructive && !fail.parallel_safe(),
        "{fail:?}"
    );

    // Nothing stated: MCP's defaults, writing and exclusive.
    let add = tool("mcp__plain__add").effects().clone();
    assert_eq!(add, hermes_runtime::ToolEffects::UNDECLARED);
    // The same tool of a server the profile opts in runs in parallel.
    let opted = tool("mcp__opted__add").effects().clone();
    assert!(!opted.read_only && opted.parallel_safe(), "{opted:?}");

    // Reading resources changes nothing.
    assert!(tool("mcp__plain__read_resource").effects().read_only);
}

/// A name over 64 characters and two names that sanitize alike
/// (`get-item`, `get.item`) are registered under stable shortened names,
/// reported by `mcp list`, and each reaches its own tool on the server;
/// another process (the binary) gives them the same names.
#[test]
fn long_and_colliding_names_are_renamed_not_dropped() {
    const BIN: &str = env!("CARGO_BIN_EXE_hermes-tools");
    const LONG: &str = "a_tool_whose_name_is_far_longer_than_the_sixty_four_characters_allowed";
    let f = Fixture::new(&stdio_entry("nm", "    connect_timeout: 30\n"), "");
    let clients = start(&f);
    let s = status_of(&clients, "nm");
    assert_eq!(s.state, State::Connected, "{s:?}");
    assert!(
        !s.warnings.iter().any(|w| w.contains("not registered")),
        "{s:?}"
    );
    // The name a listed tool is registered under.
    let given = |tool: &str| {
        s.renamed
            .iter()
            .find(|r| r.tool == tool)
            .map_or_else(|| naming::tool_name("nm", tool), |r| r.name.clone())
    };
    let long = given(LONG);
    assert!(
        long.len() <= naming::MAX_NAME_LEN && long.starts_with("mcp__nm__a_tool_whose"),
        "{long}"
    );
    assert!(s.tools.contains(&long), "{s:?}");
    assert_eq!(f.call(&long, json!({}))["result"], "long");

    let (dash, dot) = (given("get-item"), given("get.item"));
    assert_ne!(dash, dot);
    // One keeps the plain name, the other is renamed: neither is lost.
    assert!(
        [&dash, &dot].contains(&&"mcp__nm__get_item".to_string()),
        "{dash} {dot}"
    );
    assert!(s.tools.contains(&dash) && s.tools.contains(&dot), "{s:?}");
    assert_eq!(f.call(&dash, json!({}))["result"], "dash");
    assert_eq!(f.call(&dot, json!({}))["result"], "dot");
    drop(clients);

    // The binary: `mcp list` names each renamed tool, `call` reaches it.
    let profile = f.dir.path().to_path_buf();
    let run = |args: &[&str]| {
        let out = Command::new(BIN)
            .arg("--profile")
            .arg(&profile)
            .args(args)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).to_string()
    };
    let list = run(&["mcp", "list"]);
    assert!(
        list.contains(&format!("renamed: {LONG} → {long}")),
        "{list}"
    );
    let renamed = if dash == "mcp__nm__get_item" {
        format!("renamed: get.item → {dot}")
    } else {
        format!("renamed: get-item → {dash}")
    };
    assert!(list.contains(&renamed), "{list}");
    let out = run(&["call", &long, "{}"]);
    assert_eq!(
        serde_json::from_str::<Value>(&out).unwrap()["result"],
        "long",
        "{out}"
    );
}

/// Two servers whose names sanitize alike (`tw-in`, `tw.in`) list the
/// same tools: every tool of both is registered (the second server's
/// under hashed names, reported by its status), and each name reaches its
/// own server's process.
#[test]
fn two_servers_names_that_collide_are_renamed_not_replaced() {
    let entries = format!(
        "{}{}",
        stdio_entry("tw-in", "    connect_timeout: 30\n"),
        stdio_entry("tw.in", "    connect_timeout: 30\n")
    );
    let f = Fixture::new(&entries, "");
    let clients = start(&f);
    let (a, b) = (status_of(&clients, "tw-in"), status_of(&clients, "tw.in"));
    assert_eq!((a.state, b.state), (State::Connected, State::Connected));
    let plain = naming::tool_name("tw-in", "pid");
    assert_eq!(plain, naming::tool_name("tw.in", "pid"));
    let name_in = |s: &hermes_mcp_client::ServerStatus| {
        s.renamed
            .iter()
            .find(|r| r.tool == "pid")
            .map_or_else(|| plain.clone(), |r| r.name.clone())
    };
    let (pid_a, pid_b) = (name_in(&a), name_in(&b));
    // One server keeps the plain name, the other's tool is renamed.
    assert_ne!(pid_a, pid_b, "{a:?} {b:?}");
    assert!([&pid_a, &pid_b].contains(&&plain), "{pid_a} {pid_b}");
    assert!(a.tools.contains(&pid_a) && b.tools.contains(&pid_b));
    // Neither server lost a tool to the other.
    assert_eq!(a.tools.len(), b.tools.len(), "{a:?} {b:?}");
    for s in [&a, &b] {
        assert!(
            !s.warnings.iter().any(|w| w.contains("not registered")),
            "{s:?}"
        );
    }
    // Each name reaches its own server: two processes, two ids.
    let (ra, rb) = (f.call(&pid_a, json!({})), f.call(&pid_b, json!({})));
    let (ra, rb) = (
        ra["result"].as_str().unwrap(),
        rb["result"].as_str().unwrap(),
    );
    assert_ne!(ra, rb);
    assert!(
        ra.parse::<u32>().is_ok() && rb.parse::<u32>().is_ok(),
        "{ra} {rb}"
    );
}

/// A server's broken input schemas (`{"type": null}`, a recursive `$ref`,
/// a `$ref` to a missing definition) cost those tools only: what can be
/// repaired is, what cannot is left out with a note; the server's other
/// tools and the built-ins are listed (`schema`) and served (`serve
/// --mcp`). A listing longer than `max_tools` is cut there, with a note.
#[test]
fn a_broken_schema_costs_one_tool_and_a_long_listing_is_cut() {
    use rmcp::transport::TokioChildProcess;
    use rmcp::ServiceExt;

    const BIN: &str = env!("CARGO_BIN_EXE_hermes-tools");
    let raw = server_script().with_file_name("raw_server.py");
    let f = Fixture::new(
        &format!(
            "  raw:\n    command: {:?}\n    args: [{:?}, \"20\"]\n    max_tools: 12\n    connect_timeout: 30\n",
            python().display().to_string(),
            raw.display().to_string()
        ),
        "",
    );
    let clients = start(&f);
    let s = status_of(&clients, "raw");
    assert_eq!(s.state, State::Connected, "{s:?}");
    for kept in [
        "good",
        "null_type",
        "string_root",
        "nullable_list",
        "ref_default",
        "t0",
    ] {
        assert!(
            s.tools.contains(&format!("mcp__raw__{kept}")),
            "{kept}: {s:?}"
        );
    }
    for (dropped, why) in [("recursive", "recursive"), ("dangling", "does not resolve")] {
        assert!(
            !s.tools.contains(&format!("mcp__raw__{dropped}")),
            "{dropped}: {s:?}"
        );
        assert!(
            s.warnings
                .iter()
                .any(|w| w.contains(&format!("'{dropped}' not registered")) && w.contains(why)),
            "{dropped}: {s:?}"
        );
    }
    // Cut at max_tools: the first 12 listed, the rest named in a note.
    assert!(s.tools.len() <= 12, "{s:?}");
    assert!(!s.tools.contains(&"mcp__raw__t19".to_string()), "{s:?}");
    assert!(s.warnings.iter().any(|w| w.contains("max_tools")), "{s:?}");
    // The repairs: an object schema at the top, nullable, no default
    // beside the $ref.
    let params = |name: &str| f.registry.tool(name).unwrap().parameters().clone();
    assert_eq!(
        params("mcp__raw__null_type"),
        json!({"type": "object", "properties": {}})
    );
    let nullable = params("mcp__raw__nullable_list");
    assert_eq!(
        nullable["properties"]["x"],
        json!({"type": "string", "nullable": true}),
        "{nullable}"
    );
    let with_ref = params("mcp__raw__ref_default");
    assert!(
        with_ref["properties"]["p"].get("default").is_none()
            && with_ref["properties"]["p"]["properties"]["x"]["type"] == "integer",
        "{with_ref}"
    );
    assert_eq!(f.call("mcp__raw__good", json!({}))["result"], "good");
    assert_eq!(
        f.call("mcp__raw__null_type", json!({}))["result"],
        "null_type"
    );
    drop(clients);

    // The binary: `schema` answers (built-ins and the usable tools),
    // `mcp list` names the dropped ones, `serve --mcp` starts and serves.
    let profile = f.dir.path().to_path_buf();
    let out = Command::new(BIN)
        .arg("--profile")
        .arg(&profile)
        .args(["schema", "--toolsets", "file,raw"])
        .output()
        .unwrap();
    let schema = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{schema}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        schema.contains("\"read_file\"") && schema.contains("mcp__raw__good"),
        "{schema}"
    );
    assert!(!schema.contains("mcp__raw__recursive"), "{schema}");
    let out = Command::new(BIN)
        .arg("--profile")
        .arg(&profile)
        .args(["mcp", "list"])
        .output()
        .unwrap();
    let list = String::from_utf8_lossy(&out.stdout);
    assert!(
        list.contains("'recursive' not registered") && list.contains("max_tools"),
        "{list}"
    );

    let mut cmd = tokio::process::Command::new(BIN);
    cmd.arg("--profile")
        .arg(&profile)
        .args(["serve", "--mcp", "--toolsets", "file,mcp-raw"])
        .stderr(Stdio::null());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let tools = runtime.block_on(async {
        let client = tokio::time::timeout(CONNECT, ().serve(TokioChildProcess::new(cmd).unwrap()))
            .await
            .unwrap()
            .unwrap();
        let tools = client.list_all_tools().await.unwrap();
        let _ = client.cancel().await;
        tools
    });
    for name in ["read_file", "mcp__raw__good", "mcp__raw__null_type"] {
        assert!(tools.iter().any(|t| t.name == name), "{name}: {tools:?}");
    }
}

#[test]
fn a_failing_server_costs_the_call_not_the_agent() {
    let f = Fixture::new(
        &stdio_entry("bad", "    timeout: 2\n    connect_timeout: 30\n"),
        "",
    );
    let clients = start(&f);
    assert_eq!(status_of(&clients, "bad").state, State::Connected);

    // Hangs: an error at `timeout`.
    let r = f.call("mcp__bad__hang", json!({}));
    assert!(
        r["error"]
            .as_str()
            .unwrap()
            .contains("did not answer within 2s"),
        "{r}"
    );
    // Answers garbage to its own request: an error for that call.
    let r = f.call("mcp__bad__garbage", json!({}));
    assert!(r["error"].is_string(), "{r}");
    // Floods stdout with one line of 40 MiB: bounded, an error.
    let r = f.call("mcp__bad__flood", json!({"megabytes": 40}));
    assert!(r["error"].is_string(), "{r}");
    // Still serving.
    let r = f.call("mcp__bad__echo", json!({"text": "still"}));
    assert_eq!(r["result"], "still", "{r}");

    // Dies mid-call: an error, then a reconnection brings it back.
    let r = f.call("mcp__bad__die", json!({}));
    assert!(r["error"].is_string(), "{r}");
    let back = eventually(Duration::from_secs(40), || {
        f.call("mcp__bad__echo", json!({"text": "again"}))["result"] == "again"
    });
    assert!(back, "{:?}", status_of(&clients, "bad"));
    assert!(status_of(&clients, "bad").connections >= 2);
}

#[test]
fn list_changed_replaces_the_tools() {
    let f = Fixture::new(&stdio_entry("grow", "    connect_timeout: 30\n"), "");
    let clients = start(&f);
    assert!(f.registry.tool("mcp__grow__grown").is_none());
    let r = f.call("mcp__grow__grow", json!({}));
    assert_eq!(r["result"], "ok", "{r}");
    assert!(
        eventually(Duration::from_secs(15), || f
            .registry
            .tool("mcp__grow__grown")
            .is_some()),
        "{:?}",
        status_of(&clients, "grow")
    );
    let r = f.call("mcp__grow__grown", json!({}));
    assert_eq!(r["result"], "grown", "{r}");
    // The old tools are still there after the replace.
    assert!(f.registry.tool("mcp__grow__echo").is_some());
}

#[test]
fn a_listing_is_read_again_when_its_caching_hint_runs_out() {
    // The server says its listing stays fresh for a second (`ttlMs`) and
    // announces nothing: the tool it adds is found once the hint has run
    // out (raised to the keepalive interval, so no re-listing loop).
    let extra = "    connect_timeout: 30\n    keepalive_interval: 5\n    env:\n      MCP_TEST_TTL_MS: \"1000\"\n";
    let f = Fixture::new(&stdio_entry("quiet", extra), "");
    let clients = start(&f);
    assert!(f.registry.tool("mcp__quiet__quiet").is_none());
    let r = f.call("mcp__quiet__grow_quietly", json!({}));
    assert_eq!(r["result"], "ok", "{r}");
    assert!(
        eventually(Duration::from_secs(30), || f
            .registry
            .tool("mcp__quiet__quiet")
            .is_some()),
        "{:?}",
        status_of(&clients, "quiet")
    );
    let r = f.call("mcp__quiet__quiet", json!({}));
    assert_eq!(r["result"], "quiet", "{r}");
}

#[test]
fn a_slow_or_broken_server_does_not_hold_the_others() {
    let entries = format!(
        "{}  slow:\n    command: sleep\n    args: [\"60\"]\n    connect_timeout: 45\n  missing:\n    command: /nonexistent/server\n  off:\n    command: sleep\n    enabled: false\n  wrong:\n    command: [not, a, string]\n",
        stdio_entry("ok", "    connect_timeout: 30\n")
    );
    let f = Fixture::new(&entries, "");
    let clients = McpClients::start(f.registry, &f.profile).unwrap();
    let connected = eventually(Duration::from_secs(35), || {
        status_of(&clients, "ok").state == State::Connected
    });
    assert!(connected, "{:?}", clients.status());
    // `ok` is up while `slow` is still starting.
    assert_eq!(status_of(&clients, "slow").state, State::Connecting);
    assert_eq!(f.call("mcp__ok__echo", json!({"text": "x"}))["result"], "x");
    let missing = status_of(&clients, "missing");
    assert_eq!(missing.state, State::Failed);
    assert!(missing.error.unwrap().contains("/nonexistent/server"));
    assert_eq!(status_of(&clients, "off").state, State::Disabled);
    let wrong = status_of(&clients, "wrong");
    assert_eq!(wrong.state, State::Invalid);
    assert!(wrong.error.unwrap().contains("mcp_servers.wrong"));
}

#[test]
fn streamable_http_server_with_headers() {
    let port = free_port();
    let mut server = Command::new(python())
        .arg(server_script())
        .args(["http", &port.to_string()])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let entry = format!(
        "  web:\n    url: http://127.0.0.1:{port}/mcp\n    headers:\n      X-Test: \"${{MY_SECRET}}\"\n    connect_timeout: 10\n"
    );
    let f = Fixture::new(&entry, "MY_SECRET=from-env\n");
    let clients = McpClients::start(f.registry, &f.profile).unwrap();
    // The server may still be starting: the client retries with backoff.
    let up = eventually(Duration::from_secs(45), || {
        status_of(&clients, "web").state == State::Connected
    });
    let echo = up.then(|| f.call("mcp__web__echo", json!({"text": "over http"})));
    let header = up.then(|| f.call("mcp__web__header", json!({"name": "x-test"})));
    let status = status_of(&clients, "web");
    drop(clients);
    let _ = server.kill();
    let _ = server.wait();
    assert!(up, "{status:?}");
    assert_eq!(echo.unwrap()["result"], "over http");
    assert_eq!(header.unwrap()["result"], "from-env");
}

/// `hermes-tools serve --mcp` re-serves a configured server's tools: one
/// `hermes-tools` as a gateway; and `call` reaches them from the command line.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_binary_lists_calls_and_reserves_mcp_tools() {
    use rmcp::model::CallToolRequestParams;
    use rmcp::transport::TokioChildProcess;
    use rmcp::ServiceExt;

    const BIN: &str = env!("CARGO_BIN_EXE_hermes-tools");
    let f = Fixture::new(&stdio_entry("up", "    connect_timeout: 30\n"), "");
    let profile = f.dir.path().to_path_buf();
    let run = |args: &[&str]| {
        let out = std::process::Command::new(BIN)
            .arg("--profile")
            .arg(&profile)
            .args(args)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).to_string(),
        )
    };
    let (code, list) = run(&["mcp", "list"]);
    assert_eq!(code, Some(0), "{list}");
    assert!(list.contains("up") && list.contains("connected"), "{list}");
    let (code, test) = run(&["mcp", "test", "up"]);
    assert_eq!(code, Some(0), "{test}");
    assert!(
        test.contains("mcp__up__echo") && test.contains("connect"),
        "{test}"
    );
    let (_, out) = run(&["call", "mcp__up__echo", r#"{"text": "cli"}"#]);
    assert_eq!(
        serde_json::from_str::<Value>(&out).unwrap()["result"],
        "cli",
        "{out}"
    );
    let (_, tools) = run(&["list"]);
    assert!(tools.contains("mcp__up__echo  mcp-up"), "{tools}");
    let (_, schema) = run(&["schema", "--toolsets", "up"]);
    assert!(schema.contains("mcp__up__add"), "{schema}");

    let mut cmd = tokio::process::Command::new(BIN);
    cmd.arg("--profile")
        .arg(&profile)
        .args(["serve", "--mcp", "--toolsets", "mcp-up"])
        .stderr(Stdio::null());
    let client = tokio::time::timeout(CONNECT, ().serve(TokioChildProcess::new(cmd).unwrap()))
        .await
        .unwrap()
        .unwrap();
    let tools = client.list_all_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name == "mcp__up__echo"), "{tools:?}");
    let echo = client
        .call_tool(
            CallToolRequestParams::new("mcp__up__echo")
                .with_arguments(json!({"text": "via gateway"}).as_object().unwrap().clone()),
        )
        .await
        .unwrap();
    let text = serde_json::to_value(&echo.content).unwrap().to_string();
    assert!(text.contains("via gateway"), "{text}");
    let failed = client
        .call_tool(
            CallToolRequestParams::new("mcp__up__fail")
                .with_arguments(json!({"message": "boom"}).as_object().unwrap().clone()),
        )
        .await
        .unwrap();
    assert_eq!(failed.is_error, Some(true));
    let text = failed.content[0].as_text().unwrap().text.clone();
    // The message itself, not a JSON document holding it.
    assert!(
        text.contains("boom") && !text.trim_start().starts_with('{'),
        "{text}"
    );
    // A gateway passes an upstream image on as an image block, not as a
    // file path on its own machine.
    let image = client
        .call_tool(CallToolRequestParams::new("mcp__up__image"))
        .await
        .unwrap();
    let blocks = serde_json::to_value(&image.content).unwrap();
    assert_eq!(blocks[1]["type"], "image", "{blocks}");
    assert_eq!(blocks[1]["mimeType"], "image/png", "{blocks}");
    assert!(!blocks.to_string().contains("MEDIA:"), "{blocks}");
    let _ = client.cancel().await;
}

#[test]
fn keepalive_replaces_a_server_that_stopped_answering() {
    let f = Fixture::new(
        &stdio_entry(
            "ka",
            "    connect_timeout: 15\n    keepalive_interval: 5\n    cwd: /tmp\n",
        ),
        "",
    );
    let clients = McpClients::start(f.registry, &f.profile).unwrap();
    let up = eventually(Duration::from_secs(60), || {
        status_of(&clients, "ka").state == State::Connected
    });
    assert!(up, "{:?}", status_of(&clients, "ka"));
    // The entry's cwd.
    let r = f.call("mcp__ka__cwd", json!({}));
    assert_eq!(r["result"], "/tmp", "{r}");
    let pid: i32 = f.call("mcp__ka__pid", json!({}))["result"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    // Frozen: alive, but it answers nothing, pings included.
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid),
        nix::sys::signal::Signal::SIGSTOP,
    )
    .unwrap();
    // Found within keepalive_interval + connect_timeout, then restarted.
    let replaced = eventually(Duration::from_secs(90), || {
        let s = status_of(&clients, "ka");
        s.connections >= 2 && s.state == State::Connected
    });
    assert!(replaced, "{:?}", status_of(&clients, "ka"));
    let new_pid = f.call("mcp__ka__pid", json!({}));
    assert_ne!(new_pid["result"], pid.to_string(), "{new_pid}");
    // The frozen one was torn down (SIGKILL reaches a stopped process).
    assert!(
        eventually(Duration::from_secs(15), || !alive(pid)),
        "pid {pid} still runs"
    );
}

/// A server that dies and cannot come back at once: its tools leave the
/// definitions (and a call says the server is not connected), then return
/// with the reconnection.
#[test]
fn a_down_server_s_tools_are_hidden_until_it_reconnects() {
    let hold_dir = tempfile::tempdir().unwrap();
    let hold = hold_dir.path().join("hold");
    let f = Fixture::new(
        &stdio_entry(
            "flaky",
            &format!(
                "    connect_timeout: 20\n    env:\n      MCP_TEST_HOLD: {:?}\n",
                hold.display().to_string()
            ),
        ),
        "",
    );
    let clients = start(&f);
    assert_eq!(status_of(&clients, "flaky").state, State::Connected);
    let listed = |f: &Fixture| {
        f.registry
            .get_tool_definitions(Some(&["flaky"]), &[], &f.profile)
            .names()
            .contains(&"mcp__flaky__echo")
    };
    assert!(listed(&f));

    // Down, and held down: restarts exit at once.
    std::fs::write(&hold, "").unwrap();
    let r = f.call("mcp__flaky__die", json!({}));
    assert!(r["error"].is_string(), "{r}");
    let hidden = eventually(Duration::from_secs(20), || !listed(&f));
    assert!(hidden, "{:?}", status_of(&clients, "flaky"));
    let r = f.call("mcp__flaky__echo", json!({"text": "x"}));
    let e = r["error"].as_str().unwrap();
    assert!(e.contains("MCP server 'flaky' is not connected"), "{r}");
    assert_ne!(status_of(&clients, "flaky").state, State::Connected);

    // Allowed back: the reconnection (1, 2, 4 s backoff) lists them again.
    std::fs::remove_file(&hold).unwrap();
    let back = eventually(Duration::from_secs(40), || listed(&f));
    assert!(back, "{:?}", status_of(&clients, "flaky"));
    assert_eq!(
        f.call("mcp__flaky__echo", json!({"text": "again"}))["result"],
        "again"
    );
    assert!(status_of(&clients, "flaky").connections >= 2);
}

/// The profile's handle, given the servers' ender, ends them when it drops
/// (tools removed, children torn down), not another profile's; dropping
/// its `McpClients` afterwards is harmless.
#[test]
fn ending_the_profile_tears_its_servers_down() {
    let gone = Fixture::new(&stdio_entry("p1", "    connect_timeout: 30\n"), "");
    let kept = Fixture::new(&stdio_entry("p2", "    connect_timeout: 30\n"), "");
    let gone_clients = McpClients::start(gone.registry, &gone.profile).unwrap();
    let kept_clients = McpClients::start(kept.registry, &kept.profile).unwrap();
    gone_clients.wait_ready(CONNECT);
    kept_clients.wait_ready(CONNECT);
    let pid_of = |f: &Fixture, tool: &str| -> i32 {
        f.call(tool, json!({}))["result"]
            .as_str()
            .unwrap()
            .parse()
            .unwrap()
    };
    let gone_pid = pid_of(&gone, "mcp__p1__pid");
    let kept_pid = pid_of(&kept, "mcp__p2__pid");
    assert!(alive(gone_pid) && alive(kept_pid));

    // The profile's handle, dropped, ends its servers.
    let mut profile = hermes_tools::ProfileSessions::new(gone.profile.clone());
    profile.end_with(gone_clients.ender());
    drop(profile);
    assert!(gone.registry.tool("mcp__p1__echo").is_none());
    let status = gone_clients.status();
    assert!(
        status
            .iter()
            .all(|s| s.state == State::Ended && s.tools.is_empty()),
        "{status:?}"
    );
    assert!(
        eventually(Duration::from_secs(15), || !alive(gone_pid)),
        "pid {gone_pid} still runs"
    );
    // Not restarted by its supervisor.
    std::thread::sleep(Duration::from_secs(3));
    assert!(gone.registry.tool("mcp__p1__echo").is_none());
    // The other profile's server is untouched.
    assert!(alive(kept_pid));
    assert_eq!(
        kept.call("mcp__p2__echo", json!({"text": "still"}))["result"],
        "still"
    );
    // Ended once: a second end touches nothing else.
    assert_eq!(gone_clients.ender()(), 0);
    assert!(alive(kept_pid));
    drop(gone_clients);
    drop(kept_clients);
    assert!(
        eventually(Duration::from_secs(15), || !alive(kept_pid)),
        "pid {kept_pid} still runs"
    );
}

/// An `https://` server on 127.0.0.1 with a self-signed certificate (made
/// here with the `openssl` CLI): trusted through `ssl_verify: <CA bundle>`
/// or `ssl_verify: false`, refused with the system's roots.
#[test]
fn https_server_with_its_own_ca() {
    // A CA, and the server's certificate for 127.0.0.1 signed by it.
    let certs = tempfile::tempdir().unwrap();
    let at = |name: &str| certs.path().join(name).display().to_string();
    let (ca, cert, key) = (at("ca.pem"), at("cert.pem"), at("key.pem"));
    std::fs::write(
        at("leaf.ext"),
        "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n",
    )
    .unwrap();
    let steps: [Vec<String>; 3] = [
        "req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=hermes-test-ca -keyout"
            .split(' ')
            .map(String::from)
            .chain([at("ca.key"), "-out".into(), ca.clone()])
            .collect(),
        "req -newkey rsa:2048 -nodes -subj /CN=127.0.0.1 -keyout"
            .split(' ')
            .map(String::from)
            .chain([key.clone(), "-out".into(), at("leaf.csr")])
            .collect(),
        "x509 -req -days 1 -CAcreateserial -in"
            .split(' ')
            .map(String::from)
            .chain([at("leaf.csr"), "-CA".into(), ca.clone(), "-CAkey".into()])
            .chain([at("ca.key"), "-extfile".into(), at("leaf.ext")])
            .chain(["-out".into(), cert.clone()])
            .collect(),
    ];
    for step in &steps {
        let made = Command::new("openssl")
            .args(step)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .unwrap();
        assert!(made.success(), "openssl {step:?} failed");
    }
    let port = free_port();
    let mut server = Command::new(python())
        .arg(server_script())
        .args(["https", &port.to_string()])
        .arg(&cert)
        .arg(&key)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let entries = format!(
        "  ca:\n    url: https://127.0.0.1:{port}/mcp\n    ssl_verify: {:?}\n    connect_timeout: 10\n  \
         off:\n    url: https://127.0.0.1:{port}/mcp\n    ssl_verify: false\n    connect_timeout: 10\n  \
         roots:\n    url: https://127.0.0.1:{port}/mcp\n    connect_timeout: 10\n",
        ca
    );
    let f = Fixture::new(&entries, "");
    let clients = McpClients::start(f.registry, &f.profile).unwrap();
    // The server may still be starting: the client retries with backoff.
    let up = eventually(Duration::from_secs(45), || {
        ["ca", "off"]
            .iter()
            .all(|n| status_of(&clients, n).state == State::Connected)
    });
    let via_ca = up.then(|| f.call("mcp__ca__echo", json!({"text": "over tls"})));
    let via_off = up.then(|| f.call("mcp__off__echo", json!({"text": "unchecked"})));
    // `roots` retries after 2 s, then 4 s: by then it has tried the running
    // server at least once.
    if up {
        std::thread::sleep(Duration::from_secs(7));
    }
    let roots = status_of(&clients, "roots");
    let status = clients.status();
    drop(clients);
    let _ = server.kill();
    let _ = server.wait();
    assert!(up, "{status:?}");
    assert_eq!(via_ca.unwrap()["result"], "over tls");
    assert_eq!(via_off.unwrap()["result"], "unchecked");
    // A self-signed certificate is no system root: never connected.
    assert_ne!(roots.state, State::Connected, "{roots:?}");
    assert_eq!(roots.connections, 0, "{roots:?}");
    let error = roots.error.as_deref().unwrap_or_default();
    assert!(
        error.contains("certificate"),
        "the cause is named: {roots:?}"
    );
}

/// Images reach the embedder as media when it asks (`pass_media`), not
/// files; `dispatch` answers a note naming them.
#[test]
fn media_pass_through() {
    use base64::Engine;
    let f = Fixture::new(&stdio_entry("media", ""), "");
    let clients = start(&f);
    assert_eq!(status_of(&clients, "media").state, State::Connected);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let ctx = hermes_runtime::ToolContext::new(f.profile.clone(), f.dir.path());

    clients.pass_media(true);
    let c = runtime.block_on(
        f.registry
            .dispatch_content("mcp__media__image", json!({}), &ctx),
    );
    assert_eq!(c.media.len(), 1, "{c:?}");
    let image = &c.media[0];
    assert_eq!(image.kind, hermes_runtime::MediaKind::Image);
    assert_eq!(image.mime_type, "image/png");
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(&image.data)
        .unwrap();
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    png.extend([0u8; 16]);
    assert_eq!(bytes, png);
    let text: Value = serde_json::from_str(&c.text).unwrap();
    assert_eq!(text["result"], "a picture", "{}", c.text);
    assert!(
        !f.dir.path().join("cache/images").exists(),
        "nothing cached"
    );
    // A caller of `dispatch` gets the text and a note.
    let r = f.call("mcp__media__image", json!({}));
    assert!(
        r["media_note"]
            .as_str()
            .unwrap()
            .contains("image/png, 24 bytes"),
        "{r}"
    );
}

/// A typed tool's `outputSchema` and title are kept and its
/// `structuredContent` checked; a structure that does not match its schema
/// is an error naming the mismatch.
#[test]
fn output_schemas_are_kept_and_checked() {
    let f = Fixture::new(&stdio_entry("typed", ""), "");
    let clients = start(&f);
    assert_eq!(status_of(&clients, "typed").state, State::Connected);
    // A typed result: schema and title kept, structuredContent checked.
    let point = f.registry.tool("mcp__typed__point").unwrap();
    assert_eq!(point.title(), "A point");
    let schema = point.output_schema().unwrap();
    assert_eq!(schema["properties"]["x"]["type"], "integer", "{schema}");
    let r = f.call("mcp__typed__point", json!({"x": 1, "y": 2}));
    assert_eq!(r["structuredContent"], json!({"x": 1, "y": 2}), "{r}");
    // `"x": "1"` is no integer: an error naming where and why.
    let r = f.call("mcp__typed__loose_point", json!({"x": 1, "y": 2}));
    let e = r["error"].as_str().unwrap_or_else(|| panic!("{r}"));
    assert!(
        e.contains("does not match its outputSchema")
            && e.contains("at /x")
            && e.contains("integer"),
        "{r}"
    );
}
