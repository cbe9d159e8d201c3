//! The profile's `config.yaml`, through the public surface: the real
//! `hermes-tools` binary (`config show|check|path`, `schema`, `serve`,
//! `call`) and dispatch through the registry, on temporary profiles only.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

use hermes_runtime::config::{ApprovalMode, CronMode, McpTransport, Source, ToolSearchMode};
use hermes_runtime::{Profile, ToolContext};
use serde_json::{json, Value};

const BIN: &str = env!("CARGO_BIN_EXE_hermes-tools");
/// Every child finishes well within this, or fails.
const LIMIT: Duration = Duration::from_secs(60);

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

/// `hermes-tools --profile PROFILE ARGS...` in `cwd` with `env` added.
fn run_in(profile: &Path, cwd: &Path, args: &[&str], env: &[(&str, &str)]) -> Run {
    let mut cmd = Command::new(BIN);
    cmd.arg("--profile")
        .arg(profile)
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("start hermes-tools");
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let out = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stdout.read_to_string(&mut s);
        s
    });
    let err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s);
        s
    });
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            panic!("hermes-tools {args:?} still running after {LIMIT:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    Run {
        code: status.code().unwrap_or(-1),
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
    }
}

fn run(profile: &Path, args: &[&str]) -> Run {
    run_in(profile, profile, args, &[])
}

fn profile_with(yaml: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("config.yaml"), yaml).unwrap();
    dir
}

/// `call NAME ARGS` through the binary, parsed.
fn call(profile: &Path, cwd: &Path, name: &str, args: Value, env: &[(&str, &str)]) -> Value {
    let out = run_in(profile, cwd, &["call", name, &args.to_string()], env);
    assert_eq!(out.code, 0, "{}", out.stderr);
    serde_json::from_str(out.stdout.trim())
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", out.stdout))
}

/// The line of `config show` for `key`: `(value, source)`.
fn shown(show: &str, key: &str) -> (String, String) {
    let line = show
        .lines()
        .find(|l| {
            l.strip_prefix(key)
                .is_some_and(|rest| rest.starts_with("  "))
        })
        .unwrap_or_else(|| panic!("no `{key}` in:\n{show}"));
    let rest = line[key.len()..].trim();
    let open = rest.rfind("  (").expect("a source");
    (
        rest[..open].trim().to_string(),
        rest[open + 3..rest.len() - 1].to_string(),
    )
}

/// The tool names `schema` prints.
fn schema_names(profile: &Path, args: &[&str]) -> Vec<String> {
    let mut all = vec!["schema"];
    all.extend_from_slice(args);
    let out = run(profile, &all);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let defs: Vec<Value> = serde_json::from_str(&out.stdout).unwrap();
    let mut names: Vec<String> = defs
        .iter()
        .map(|d| d["function"]["name"].as_str().unwrap().to_string())
        .collect();
    names.sort();
    names
}

const EVERY_KEY: &str = "\
toolsets: [file]
platform_toolsets:
  cli: [terminal, web]
tool_output:
  max_bytes: 20_000
  max_lines: 300
  max_line_length: 500
  max_result_chars: 9000
tools:
  tool_search:
    enabled: on
    threshold_pct: 25
    search_default_limit: 3
    max_search_limit: 7
terminal:
  timeout: 90
  cwd: /tmp
  daemon_term_grace_seconds: 0.5
  env_passthrough: [LANGUAGE, SSH_AUTH_SOCK]
security:
  allow_private_urls: true
  redact_secrets: false
  website_blocklist:
    enabled: true
    domains: [example.com, '*.ads.test']
    shared_files: [blocklist.txt]
approvals:
  mode: manual
  timeout: 30
  cron_mode: approve
  deny: ['git push --force*']
command_allowlist: ['rm -rf build']
mcp_servers:
  files:
    command: npx
    args: [-y, some-server]
    env: {ROOT: /srv}
    tools:
      include: [read]
  remote:
    url: https://mcp.example.com/mcp
    headers: {Authorization: Bearer x}
    enabled: false
    timeout: 30
";

#[test]
fn every_key_is_shown_with_its_value_and_position() {
    let p = profile_with(EVERY_KEY);
    let check = run(p.path(), &["config", "check"]);
    assert_eq!(check.code, 0, "{}{}", check.stdout, check.stderr);
    assert!(
        check.stdout.contains("0 error(s), 0 warning(s)"),
        "{}",
        check.stdout
    );
    let show = run(p.path(), &["config", "show"]);
    assert_eq!(show.code, 0, "{}", show.stderr);
    let s = &show.stdout;
    let expect = [
        ("toolsets", "[file]", "config.yaml:1:11"),
        (
            "platform_toolsets.cli",
            "[terminal, web]",
            "config.yaml:3:8",
        ),
        ("tool_output.max_bytes", "20000", "config.yaml:5:14"),
        ("tool_output.max_lines", "300", "config.yaml:6:14"),
        ("tool_output.max_line_length", "500", "config.yaml:7:20"),
        ("tool_output.max_result_chars", "9000", "config.yaml:8:21"),
        ("tools.tool_search.enabled", "on", "config.yaml:11:14"),
        ("tools.tool_search.threshold_pct", "25", "config.yaml:12:20"),
        (
            "tools.tool_search.search_default_limit",
            "3",
            "config.yaml:13:27",
        ),
        (
            "tools.tool_search.max_search_limit",
            "7",
            "config.yaml:14:23",
        ),
        ("terminal.timeout", "90", "config.yaml:16:12"),
        ("terminal.cwd", "/tmp", "config.yaml:17:8"),
        (
            "terminal.daemon_term_grace_seconds",
            "0.5",
            "config.yaml:18:30",
        ),
        (
            "terminal.env_passthrough",
            "[LANGUAGE, SSH_AUTH_SOCK]",
            "config.yaml:19:20",
        ),
        ("security.allow_private_urls", "true", "config.yaml:21:23"),
        ("security.redact_secrets", "false", "config.yaml:22:19"),
        (
            "security.website_blocklist.enabled",
            "true",
            "config.yaml:24:14",
        ),
        (
            "security.website_blocklist.domains",
            "[example.com, *.ads.test]",
            "config.yaml:25:14",
        ),
        ("approvals.mode", "manual", "config.yaml:28:9"),
        ("approvals.timeout", "30", "config.yaml:29:12"),
        ("approvals.cron_mode", "approve", "config.yaml:30:14"),
        ("approvals.deny", "[git push --force*]", "config.yaml:31:9"),
        ("command_allowlist", "[rm -rf build]", "config.yaml:32:20"),
        (
            "mcp_servers.files",
            "command npx -y some-server",
            "config.yaml:34:3",
        ),
        (
            "mcp_servers.remote",
            "url https://mcp.example.com/mcp (disabled)",
            "config.yaml:40:3",
        ),
    ];
    for (key, value, source) in expect {
        assert_eq!(
            shown(s, key),
            (value.to_string(), source.to_string()),
            "{key}"
        );
    }
    let (files, _) = shown(s, "security.website_blocklist.shared_files");
    assert_eq!(
        files,
        format!("[{}]", p.path().join("blocklist.txt").display())
    );

    // The typed values the features consume, through the runtime's API.
    let config = Profile::new(p.path()).config();
    assert_eq!(config.approvals.mode.value, ApprovalMode::Manual);
    assert_eq!(config.approvals.cron_mode.value, CronMode::Approve);
    assert_eq!(config.tool_search.enabled.value, ToolSearchMode::On);
    assert!(!config.security.redact_secrets.value);
    let files = &config.mcp_servers["files"];
    assert!(files.enabled);
    assert_eq!(files.include, ["read"]);
    match &files.transport {
        McpTransport::Stdio { command, args, env } => {
            assert_eq!(command, "npx");
            assert_eq!(args, &["-y", "some-server"]);
            assert_eq!(env["ROOT"], "/srv");
        }
        other => panic!("{other:?}"),
    }
    let remote = &config.mcp_servers["remote"];
    assert!(!remote.enabled);
    assert_eq!(remote.timeout, Some(30.0));
    assert!(
        matches!(&remote.transport, McpTransport::Http { headers, .. }
        if headers["Authorization"] == "Bearer x")
    );
}

/// YAML as the reference's parser reads it: 1.1 booleans, `_` in numbers,
/// anchors and merge keys.
#[test]
fn yaml_is_read_as_the_reference_reads_it() {
    let p = profile_with(
        "\
approvals:
  mode: off
  cron_mode: yes
tools:
  tool_search:
    enabled: off
tool_output:
  max_bytes: 12_500
x-common: &common
  command: srv
  args: [--base]
  env: {A: '1'}
mcp_servers:
  first:
    <<: *common
    args: [--own]
  second:
    <<: *common
",
    );
    let config = Profile::new(p.path()).config();
    assert_eq!(config.approvals.mode.value, ApprovalMode::Off);
    assert_eq!(config.approvals.cron_mode.value, CronMode::Approve);
    assert_eq!(config.tool_search.enabled.value, ToolSearchMode::Off);
    assert_eq!(config.tool_output.max_bytes.value, 12_500);
    let args = |name: &str| match &config.mcp_servers[name].transport {
        McpTransport::Stdio { command, args, env } => {
            assert_eq!(command, "srv");
            assert_eq!(env["A"], "1");
            args.clone()
        }
        other => panic!("{other:?}"),
    };
    assert_eq!(args("first"), ["--own"]);
    assert_eq!(args("second"), ["--base"]);
    // The anchor's own key is one neither knows: a warning, nothing more.
    let warnings: Vec<_> = config.diagnostics.iter().map(|d| d.key.as_str()).collect();
    assert_eq!(warnings, ["x-common"]);
}

#[test]
fn without_a_file_every_setting_is_its_default() {
    let p = tempfile::tempdir().unwrap();
    let path = run(p.path(), &["config", "path"]);
    assert_eq!(
        path.stdout,
        format!("{}\n", p.path().join("config.yaml").display())
    );
    let check = run(p.path(), &["config", "check"]);
    assert_eq!(check.code, 0);
    assert!(
        check.stdout.contains("absent: the defaults apply"),
        "{}",
        check.stdout
    );
    let show = run(p.path(), &["config", "show"]);
    for line in show.stdout.lines().skip(1) {
        assert!(line.ends_with("(default)"), "{line}");
    }
    assert_eq!(shown(&show.stdout, "terminal.timeout").0, "180");
    assert_eq!(shown(&show.stdout, "tool_output.max_bytes").0, "50000");
    assert_eq!(shown(&show.stdout, "tools.tool_search.enabled").0, "auto");
    assert_eq!(shown(&show.stdout, "approvals.mode").0, "smart");
}

/// Sections and keys of the reference this project does not use load
/// without a word: an existing `~/.hermes/config.yaml` works as it is.
#[test]
fn the_references_other_keys_load_quietly() {
    let p = profile_with(
        "\
_config_version: 12
model:
  default: some/model
  provider: auto
agent:
  max_turns: 90
  disabled_toolsets: []
display:
  skin: default
  tool_progress: all
gateway:
  multiplex_profiles: false
web:
  backend: ''
terminal:
  backend: local
  docker_image: python:3.11
  container_memory: 5120
  persistent_shell: true
  timeout: 120
security:
  tirith_enabled: true
  acked_advisories: []
approvals:
  mode: smart
  mcp_reload_confirm: true
tools:
  tool_search:
    enabled: auto
mcp_servers:
  srv:
    command: srv
    ssl_verify: true
    sampling: {enabled: false}
    tools: {resources: false}
  remote:
    url: https://mcp.example.com/mcp
    auth: oauth
    oauth:
      client_id: pre-registered-id
      client_secret: ${REMOTE_SECRET}
      scope: read write
      redirect_port: 0
      redirect_host: localhost
      client_name: My Client
      timeout: 120
platforms: {}
signal: {}
",
    );
    let check = run(p.path(), &["config", "check"]);
    assert_eq!(check.code, 0, "{}", check.stdout);
    assert!(
        check.stdout.ends_with("0 error(s), 0 warning(s)\n"),
        "{}",
        check.stdout
    );
    let show = run(p.path(), &["config", "show"]);
    assert_eq!(shown(&show.stdout, "terminal.timeout").0, "120");
    assert_eq!(
        shown(&show.stdout, "mcp_servers.remote").0,
        "url https://mcp.example.com/mcp (auth: oauth)"
    );
}

/// Each kind of problem: where (file:line:col), which key (its path),
/// what; errors make `check` fail, warnings alone do not.
#[test]
fn every_problem_names_file_line_column_and_key() {
    let cases: &[(&str, &str, i32)] = &[
        (
            "platform_toolsets:\n  cli: [file, terminal, {x: 1}]\n",
            "config.yaml:2:25: error: platform_toolsets.cli[2]: expected a string, found a mapping",
            1,
        ),
        (
            "terminal:\n  timeout: soon\n",
            "config.yaml:2:12: error: terminal.timeout: expected a whole number, found a string",
            1,
        ),
        (
            "tools:\n  tool_search:\n    threshold_pct: 150\n",
            "config.yaml:3:20: error: tools.tool_search.threshold_pct: 150 is out of range (0 to 100)",
            1,
        ),
        (
            "security:\n  allow_private_urls: maybe\n",
            "config.yaml:2:23: error: security.allow_private_urls: expected true or false, found a string",
            1,
        ),
        (
            "tool_output: 5\n",
            "config.yaml:1:14: error: tool_output: expected a mapping, found an integer",
            1,
        ),
        (
            "approvals:\n  mode: sometimes\n",
            "config.yaml:2:9: error: approvals.mode: expected manual, smart or off, found a string",
            1,
        ),
        (
            "code_execution:\n  mode: Lax\n",
            "config.yaml:2:9: error: code_execution.mode: expected project or strict, found `Lax`",
            1,
        ),
        (
            "tool_output:\n  max_linse: 5\n",
            "config.yaml:2:3: warning: tool_output.max_linse: unknown key, ignored; did you mean max_lines?",
            0,
        ),
        (
            "termnal:\n  timeout: 5\n",
            "config.yaml:1:1: warning: termnal: unknown key, ignored; did you mean terminal?",
            0,
        ),
        (
            "terminal:\n  timeout: 5\n  timeout: 6\n",
            "config.yaml:3:3: warning: terminal.timeout: repeated key (first at line 2)",
            0,
        ),
        (
            "terminal:\n  cwd: !include other.yaml\n",
            "config.yaml:2:8: error: terminal.cwd: the tag `!include` is not supported",
            1,
        ),
        (
            "terminal:\n  timeout: [1\n",
            "config.yaml:3:1: error:",
            1,
        ),
        (
            "terminal: {}\n---\nterminal: {}\n",
            "error: the file holds more than one YAML document",
            1,
        ),
        (
            "mcp_servers:\n  both:\n    command: a\n    url: https://x\n",
            "config.yaml:3:5: error: mcp_servers.both: a server has either `command` or `url`, not both",
            1,
        ),
        (
            "mcp_servers:\n  none:\n    args: [x]\n",
            "config.yaml:3:5: error: mcp_servers.none: a server needs `command` (stdio) or `url` (HTTP)",
            1,
        ),
        (
            "mcp_servers:\n  x:\n    url: ftp://host\n",
            "config.yaml:3:10: error: mcp_servers.x.url: `ftp://host` is not an http(s) URL",
            1,
        ),
        (
            "mcp_servers:\n  x:\n    url: https://x\n    auth: oath\n",
            "config.yaml:4:11: error: mcp_servers.x.auth: expected `oauth` (or `none`), found a string",
            1,
        ),
        (
            "mcp_servers:\n  x:\n    command: a\n    auth: oauth\n",
            "config.yaml:4:11: error: mcp_servers.x.auth: `auth: oauth` is for an HTTP server (`url`), not a `command`",
            1,
        ),
        (
            "mcp_servers:\n  x:\n    url: https://x\n    auth: oauth\n    oauth:\n      redirect_port: 70000\n",
            "config.yaml:6:22: error: mcp_servers.x.oauth.redirect_port: 70000 is out of range (0 to 65535)",
            1,
        ),
        (
            "mcp_servers:\n  x:\n    url: https://x\n    auth: oauth\n    oauth:\n      client_secret: s\n",
            "error: mcp_servers.x.oauth.client_secret: `client_secret` needs the `client_id` it belongs to",
            1,
        ),
        (
            "mcp_servers:\n  x:\n    url: https://x\n    auth: oauth\n    oauth:\n      client_metadata_url: http://x/c.json\n",
            "config.yaml:6:28: error: mcp_servers.x.oauth.client_metadata_url: `http://x/c.json` is not an https URL",
            1,
        ),
        (
            "mcp_servers:\n  x:\n    url: https://x\n    auth: oauth\n    oauth:\n      client_idd: a\n",
            "config.yaml:6:7: warning: mcp_servers.x.oauth.client_idd: unknown key, ignored; did you mean client_id?",
            0,
        ),
        (
            "mcp_servers:\n  x:\n    url: https://x\n    oauth:\n      client_id: a\n",
            "config.yaml:5:7: warning: mcp_servers.x.oauth: ignored without `auth: oauth`",
            0,
        ),
        (
            "terminal:\n  env_passthrough: ['A=B']\n",
            "error: terminal.env_passthrough[0]: `A=B` is not an environment variable name",
            1,
        ),
        (
            "tools:\n  tool_search:\n    search_default_limit: 9\n    max_search_limit: 4\n",
            "config.yaml:3:27: error: tools.tool_search.search_default_limit: 9 is more than max_search_limit (4)",
            1,
        ),
    ];
    for (yaml, expected, code) in cases {
        let p = profile_with(yaml);
        let check = run(p.path(), &["config", "check"]);
        let file = p.path().join("config.yaml");
        let want = if expected.starts_with("config.yaml:") {
            format!(
                "{}{}",
                file.parent().unwrap().display(),
                &format!("/{expected}")
            )
        } else {
            expected.to_string()
        };
        assert!(
            check.stdout.contains(&want),
            "{yaml:?}: wanted {want:?} in\n{}",
            check.stdout
        );
        assert_eq!(check.code, *code, "{yaml:?}: {}", check.stdout);
    }
}

#[test]
fn an_unreadable_file_is_an_error_and_the_defaults_apply() {
    // Not UTF-8.
    let p = tempfile::tempdir().unwrap();
    std::fs::write(
        p.path().join("config.yaml"),
        b"terminal:\n  cwd: \xff\xfe\n",
    )
    .unwrap();
    let check = run(p.path(), &["config", "check"]);
    assert_eq!(check.code, 1);
    assert!(check.stdout.contains("not UTF-8"), "{}", check.stdout);
    // A directory where the file should be.
    let p = tempfile::tempdir().unwrap();
    std::fs::create_dir(p.path().join("config.yaml")).unwrap();
    let check = run(p.path(), &["config", "check"]);
    assert_eq!(check.code, 1);
    assert!(
        check.stdout.contains("not a regular file"),
        "{}",
        check.stdout
    );
    // The tools still answer, with the defaults.
    let show = run(p.path(), &["config", "show"]);
    assert_eq!(show.code, 0);
    assert_eq!(
        shown(&show.stdout, "terminal.timeout"),
        ("180".into(), "default".into())
    );
}

/// A wrong value keeps its default; the rest of its section and the other
/// sections load. A syntax error keeps the sections before it.
#[test]
fn a_bad_section_does_not_take_the_others_down() {
    let p = profile_with("terminal:\n  timeout: soon\n  cwd: /tmp\ntool_output:\n  max_lines: 5\n");
    let show = run(p.path(), &["config", "show"]);
    assert_eq!(
        shown(&show.stdout, "terminal.timeout"),
        ("180".into(), "default".into())
    );
    assert_eq!(shown(&show.stdout, "terminal.cwd").1, "config.yaml:3:8");
    assert_eq!(shown(&show.stdout, "tool_output.max_lines").0, "5");
    assert!(show.stderr.contains("terminal.timeout"), "{}", show.stderr);

    let p = profile_with(
        "tool_output:\n  max_lines: 5\nterminal:\n  timeout: [1, 2\nsecurity:\n  allow_private_urls: true\n",
    );
    let check = run(p.path(), &["config", "check"]);
    assert_eq!(check.code, 1);
    assert!(
        check
            .stdout
            .contains("the sections after this point are not read"),
        "{}",
        check.stdout
    );
    let show = run(p.path(), &["config", "show"]);
    assert_eq!(shown(&show.stdout, "tool_output.max_lines").0, "5");
    assert_eq!(shown(&show.stdout, "terminal.timeout").1, "default");
    // `schema` still works and says the file has errors.
    let schema = run(p.path(), &["schema", "--toolsets", "file"]);
    assert_eq!(schema.code, 0);
    assert!(
        schema.stderr.contains("has 1 error(s)"),
        "{}",
        schema.stderr
    );
}

/// flag > `.env` > `config.yaml` > default.
#[test]
fn precedence_is_flag_then_env_then_file_then_default() {
    let p = tempfile::tempdir().unwrap();
    let grace = |p: &Path| {
        shown(
            &run(p, &["config", "show"]).stdout,
            "terminal.daemon_term_grace_seconds",
        )
    };
    assert_eq!(grace(p.path()), ("2".into(), "default".into()));
    std::fs::write(
        p.path().join("config.yaml"),
        "terminal:\n  daemon_term_grace_seconds: 3\nsecurity:\n  allow_private_urls: true\n",
    )
    .unwrap();
    assert_eq!(grace(p.path()), ("3".into(), "config.yaml:2:30".into()));
    std::fs::write(
        p.path().join(".env"),
        "TERMINAL_KILL_GRACE_SECONDS=5\nHERMES_ALLOW_PRIVATE_URLS=0\n",
    )
    .unwrap();
    assert_eq!(
        grace(p.path()),
        ("5".into(), ".env TERMINAL_KILL_GRACE_SECONDS".into())
    );
    let show = run(p.path(), &["config", "show"]).stdout;
    assert_eq!(
        shown(&show, "security.allow_private_urls"),
        ("false".into(), ".env HERMES_ALLOW_PRIVATE_URLS".into())
    );

    // Toolsets: the flag, else the platform's, else `toolsets`, else all.
    let p = profile_with("toolsets: [web]\nplatform_toolsets:\n  cli: [terminal]\n");
    let all = schema_names(tempfile::tempdir().unwrap().path(), &[]);
    assert!(all.len() > 8, "{all:?}");
    // (web_search needs a key the profile does not have.)
    assert_eq!(schema_names(p.path(), &[]), ["web_extract"]);
    assert_eq!(
        schema_names(p.path(), &["--platform", "cli"]),
        ["process", "terminal"]
    );
    assert_eq!(
        schema_names(p.path(), &["--platform", "cli", "--toolsets", "file"]),
        ["patch", "read_file", "search_files", "write_file"]
    );
    let selected = |args: &[&str]| {
        let mut all = vec!["config", "show"];
        all.extend_from_slice(args);
        shown(&run(p.path(), &all).stdout, "(selected toolsets)")
    };
    assert_eq!(
        selected(&["--platform", "cli"]),
        ("[terminal]".into(), "config.yaml:3:8".into())
    );
    assert_eq!(
        selected(&["--platform", "cli", "--toolsets", "file"]),
        ("[file]".into(), "flag --toolsets".into())
    );
    assert_eq!(
        selected(&["--platform", "slack"]),
        ("[hermes-slack]".into(), "default".into())
    );
}

#[test]
fn disabled_toolsets_are_withheld_everywhere() {
    let p = profile_with("agent:\n  max_turns: 60\n  disabled_toolsets: [terminal]\nplatform_toolsets:\n  cli: [terminal, file]\n");
    assert_eq!(
        schema_names(p.path(), &["--platform", "cli"]),
        ["patch", "read_file", "search_files", "write_file"]
    );
    assert_eq!(
        schema_names(p.path(), &["--toolsets", "terminal"]),
        Vec::<String>::new()
    );
    let show = run(p.path(), &["config", "show"]);
    assert_eq!(
        shown(&show.stdout, "agent.disabled_toolsets"),
        ("[terminal]".into(), "config.yaml:3:22".into())
    );
}

#[test]
fn a_platform_without_an_entry_gets_its_bundle() {
    let p = profile_with("platform_toolsets:\n  cli: [terminal, my-mcp, no_mcp]\nmcp_servers:\n  my-mcp:\n    command: x\n");
    // MCP server names and `no_mcp` are not toolsets here: left out quietly.
    let cli = run(p.path(), &["schema", "--platform", "cli"]);
    assert!(!cli.stderr.contains("unknown toolset"), "{}", cli.stderr);
    let bundle = schema_names(p.path(), &["--platform", "telegram"]);
    let direct = schema_names(p.path(), &["--toolsets", "hermes-telegram"]);
    assert_eq!(bundle, direct);
    assert!(!bundle.is_empty());
}

/// `LINE:COL` of the first `word` in `text`, as the diagnostics count them.
fn position_of(text: &str, word: &str) -> String {
    for (i, line) in text.lines().enumerate() {
        if let Some(at) = line.find(word) {
            return format!("{}:{}", i + 1, line[..at].chars().count() + 1);
        }
    }
    panic!("{word:?} not in {text:?}");
}

#[test]
fn config_check_refuses_the_toolset_names_serve_refuses() {
    let yaml = "toolsets: [file, wbe]\nplatform_toolsets:\n  cli: [file, termnial]\n\
                agent:\n  disabled_toolsets: [brwoser]\n";
    let p = profile_with(yaml);
    let file = p.path().join("config.yaml");
    let check = run(p.path(), &["config", "check"]);
    assert_eq!(check.code, 1, "{}", check.stdout);
    for (key, name, near) in [
        ("toolsets[1]", "wbe", "web"),
        ("platform_toolsets.cli[1]", "termnial", "terminal"),
        ("agent.disabled_toolsets[0]", "brwoser", "browser"),
    ] {
        let want = format!(
            "{}:{}: error: {key}: unknown toolset `{name}`",
            file.display(),
            position_of(yaml, name)
        );
        let line = check
            .stdout
            .lines()
            .find(|l| l.starts_with(&want))
            .unwrap_or_else(|| panic!("wanted {want:?} in\n{}", check.stdout));
        assert!(line.contains(near), "{line}");
    }
    // The name `config check` refuses is the one `serve` refuses.
    let serve = run(p.path(), &["serve", "--mcp", "--platform", "cli"]);
    assert_ne!(serve.code, 0, "{}", serve.stderr);
    assert!(
        serve.stderr.contains("unknown toolset: termnial"),
        "{}",
        serve.stderr
    );
    // `no_mcp` is left out of a platform's list only.
    let p = profile_with("toolsets: [file, no_mcp]\n");
    let check = run(p.path(), &["config", "check"]);
    assert_eq!(check.code, 1, "{}", check.stdout);
    assert!(
        check
            .stdout
            .contains("toolsets[1]: unknown toolset `no_mcp`"),
        "{}",
        check.stdout
    );
    let serve = run(p.path(), &["serve", "--mcp"]);
    assert!(
        serve.stderr.contains("unknown toolset: no_mcp"),
        "{}",
        serve.stderr
    );
}

#[test]
fn config_check_accepts_every_name_schema_accepts() {
    // A toolset, a bundle, a legacy name,
    // `all`, an MCP server by name and by toolset, and `no_mcp`.
    let p = profile_with(
        "platform_toolsets:\n  cli: [file, hermes-cli, web_tools, all, srv, mcp-srv, no_mcp]\n\
         mcp_servers:\n  srv:\n    command: x\n    enabled: false\n",
    );
    let check = run(p.path(), &["config", "check"]);
    assert!(
        !check.stdout.contains("unknown toolset"),
        "{}",
        check.stdout
    );
    assert_eq!(check.code, 0, "{}", check.stdout);
    let without_mcp =
        profile_with("platform_toolsets:\n  cli: [file, hermes-cli, web_tools, all]\n");
    let schema = run(without_mcp.path(), &["schema", "--platform", "cli"]);
    assert_eq!(schema.code, 0, "{}", schema.stderr);
    assert!(
        !schema.stderr.contains("unknown toolset"),
        "{}",
        schema.stderr
    );
}

#[test]
fn serve_offers_the_platforms_toolsets() {
    use rmcp::transport::TokioChildProcess;
    use rmcp::ServiceExt;
    let p = profile_with("platform_toolsets:\n  cli: [file]\n");
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        tokio::time::timeout(LIMIT, async {
            let mut command = tokio::process::Command::new(BIN);
            command
                .arg("--profile")
                .arg(p.path())
                .args(["serve", "--mcp", "--platform", "cli"])
                .current_dir(p.path());
            let client = ().serve(TokioChildProcess::new(command).unwrap()).await.unwrap();
            let mut names: Vec<String> = client
                .list_all_tools()
                .await
                .unwrap()
                .into_iter()
                .map(|t| t.name.to_string())
                .collect();
            names.sort();
            assert_eq!(names, ["patch", "read_file", "search_files", "write_file"]);
            client.cancel().await.unwrap();
        })
        .await
        .expect("serve answered in time");
    });
}

#[test]
fn tool_output_limits_reach_the_tools() {
    let cwd = tempfile::tempdir().unwrap();
    let text: String = (1..=100).map(|i| format!("line {i}\n")).collect();
    std::fs::write(cwd.path().join("f.txt"), text).unwrap();
    let p =
        profile_with("tool_output:\n  max_lines: 7\n  max_bytes: 1000\n  max_result_chars: 2000\n");
    // read_file pages at most max_lines.
    let page = call(
        p.path(),
        cwd.path(),
        "read_file",
        json!({"path": "f.txt", "limit": 50}),
        &[],
    );
    assert_eq!(
        page["content"].as_str().unwrap().lines().count(),
        7,
        "{page}"
    );
    // read_file cuts lines at max_line_length.
    std::fs::write(
        cwd.path().join("long.txt"),
        format!("{}\n", "x".repeat(500)),
    )
    .unwrap();
    let p_long = profile_with("tool_output:\n  max_line_length: 40\n");
    let page = call(
        p_long.path(),
        cwd.path(),
        "read_file",
        json!({"path": "long.txt"}),
        &[],
    );
    let line = page["content"].as_str().unwrap();
    assert!(line.contains(&"x".repeat(40)), "{page}");
    assert!(!line.contains(&"x".repeat(41)), "{page}");
    // terminal keeps max_bytes of the output (head and tail).
    let out = call(
        p.path(),
        cwd.path(),
        "terminal",
        json!({"command": "i=0; while [ $i -lt 400 ]; do echo line$i; i=$((i+1)); done"}),
        &[],
    );
    let output = out["output"].as_str().unwrap();
    assert!(
        output.contains("line0") && output.contains("line399"),
        "{output}"
    );
    assert!(output.len() < 1_300, "{}", output.len());
    // Every result is cut at max_result_chars.
    let p = profile_with("tool_output:\n  max_result_chars: 1500\n  max_bytes: 50000\n");
    let out = call(
        p.path(),
        cwd.path(),
        "terminal",
        json!({"command": "head -c 6000 /dev/zero | tr '\\0' x"}),
        &[],
    );
    assert!(out.to_string().chars().count() <= 1_600, "{out}");
    assert!(
        out.get(hermes_runtime::CUT_KEY).is_some() || out.get("truncated").is_some(),
        "{out}"
    );
    // Without the file the same call is whole.
    let plain = tempfile::tempdir().unwrap();
    let out = call(
        plain.path(),
        cwd.path(),
        "terminal",
        json!({"command": "head -c 6000 /dev/zero | tr '\\0' x"}),
        &[],
    );
    assert_eq!(out["output"].as_str().unwrap().trim().len(), 6000);
}

/// The search limits (every built-in tool is core, so disclosure itself is
/// tested on the test tools: `tests/tests/config_disclosure.rs`).
#[test]
fn tool_search_limits_reach_the_search() {
    let p = profile_with(
        "tools:\n  tool_search:\n    enabled: on\n    search_default_limit: 2\n    max_search_limit: 3\n",
    );
    let cwd = tempfile::tempdir().unwrap();
    let found = call(
        p.path(),
        cwd.path(),
        "tool_search",
        json!({"query": ""}),
        &[],
    );
    assert_eq!(found["tools"].as_array().unwrap().len(), 2, "{found}");
    let found = call(
        p.path(),
        cwd.path(),
        "tool_search",
        json!({"query": "", "limit": 40}),
        &[],
    );
    assert_eq!(found["tools"].as_array().unwrap().len(), 3, "{found}");
    // The defaults: 5, and at most 20.
    let plain = tempfile::tempdir().unwrap();
    let found = call(
        plain.path(),
        cwd.path(),
        "tool_search",
        json!({"query": ""}),
        &[],
    );
    assert_eq!(found["tools"].as_array().unwrap().len(), 5, "{found}");
    let found = call(
        plain.path(),
        cwd.path(),
        "tool_search",
        json!({"query": "", "limit": 8}),
        &[],
    );
    assert_eq!(found["tools"].as_array().unwrap().len(), 8, "{found}");
}

#[test]
fn terminal_settings_reach_the_terminal() {
    let cwd = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let yaml = format!(
        "terminal:\n  timeout: 1\n  cwd: {}\n  env_passthrough: [HERMES_TEST_PASS]\n",
        home.path().display()
    );
    let p = profile_with(&yaml);
    let env = [
        ("HERMES_TEST_PASS", "through"),
        ("HERMES_TEST_OTHER", "kept-out"),
    ];
    let out = call(
        p.path(),
        cwd.path(),
        "terminal",
        json!({"command": "pwd; echo \"[$HERMES_TEST_PASS][$HERMES_TEST_OTHER]\""}),
        &env,
    );
    let output = out["output"].as_str().unwrap();
    let real = std::fs::canonicalize(home.path()).unwrap();
    assert!(output.contains(&real.display().to_string()), "{output}");
    assert!(output.contains("[through][]"), "{output}");
    // The call's own timeout wins over the file's.
    let slow = call(
        p.path(),
        cwd.path(),
        "terminal",
        json!({"command": "sleep 3"}),
        &[],
    );
    assert_eq!(slow["exit_code"], 124, "{slow}");
    let waited = call(
        p.path(),
        cwd.path(),
        "terminal",
        json!({"command": "sleep 2; echo done", "timeout": 20}),
        &[],
    );
    assert_eq!(waited["exit_code"], 0, "{waited}");
    // Without the file: the session's directory, no passthrough.
    let plain = tempfile::tempdir().unwrap();
    let out = call(
        plain.path(),
        cwd.path(),
        "terminal",
        json!({"command": "pwd; echo \"[$HERMES_TEST_PASS]\""}),
        &env,
    );
    let output = out["output"].as_str().unwrap();
    let real = std::fs::canonicalize(cwd.path()).unwrap();
    assert!(
        output.contains(&real.display().to_string()) && output.contains("[]"),
        "{output}"
    );
}

/// A server on 127.0.0.1 answering `n` requests with a small page.
fn page_server(n: usize) -> (u16, std::thread::JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let handle = std::thread::spawn(move || {
        for _ in 0..n {
            let Ok((mut stream, _)) = listener.accept() else {
                return;
            };
            stream
                .set_read_timeout(Some(Duration::from_secs(5)))
                .unwrap();
            let mut buf = [0u8; 4096];
            let _ = stream.read(&mut buf);
            let body = "hello from the test server";
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    (port, handle)
}

#[test]
fn security_settings_reach_web_extract() {
    let cwd = tempfile::tempdir().unwrap();
    let (port, server) = page_server(1);
    let url = format!("http://127.0.0.1:{port}/");
    let extract = |p: &Path, url: &str| {
        let v = call(p, cwd.path(), "web_extract", json!({"urls": [url]}), &[]);
        v["results"][0].clone()
    };
    // Refused by default; allowed by the file.
    let plain = tempfile::tempdir().unwrap();
    let refused = extract(plain.path(), &url);
    assert!(refused["error"].as_str().is_some(), "{refused}");
    let allowing = profile_with("security:\n  allow_private_urls: true\n");
    let page = extract(allowing.path(), &url);
    assert!(
        page["content"]
            .as_str()
            .unwrap()
            .contains("hello from the test server"),
        "{page}"
    );
    server.join().unwrap();
    // The .env wins over the file.
    std::fs::write(
        allowing.path().join(".env"),
        "HERMES_ALLOW_PRIVATE_URLS=no\n",
    )
    .unwrap();
    let refused = extract(allowing.path(), &url);
    assert!(
        refused["error"].as_str().unwrap().contains("127.0.0.1"),
        "{refused}"
    );

    // The blocklist refuses by name, before any connection, from the file
    // and from a shared file.
    let blocking = profile_with(
        "security:\n  allow_private_urls: true\n  website_blocklist:\n    enabled: true\n    domains: ['https://www.Blocked.test/path']\n    shared_files: [list.txt]\n",
    );
    std::fs::write(blocking.path().join("list.txt"), "# mine\n127.0.0.1\n").unwrap();
    let hit = extract(blocking.path(), &url);
    let error = hit["error"].as_str().unwrap();
    assert!(
        error.contains("website blocklist") && error.contains("`127.0.0.1`"),
        "{error}"
    );
    assert!(error.contains("list.txt"), "{error}");
    let hit = extract(blocking.path(), "http://sub.blocked.test/");
    assert!(
        hit["error"]
            .as_str()
            .unwrap()
            .contains("rule `blocked.test` from config.yaml"),
        "{hit}"
    );
    // Disabled, the same lists block nothing.
    let (port, server) = page_server(1);
    std::fs::write(
        blocking.path().join("config.yaml"),
        "security:\n  allow_private_urls: true\n  website_blocklist:\n    enabled: false\n    shared_files: [list.txt]\n",
    )
    .unwrap();
    let page = extract(blocking.path(), &format!("http://127.0.0.1:{port}/"));
    assert!(page["error"].is_null(), "{page}");
    server.join().unwrap();
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

fn lines_read(rt: &tokio::runtime::Runtime, ctx: &ToolContext) -> usize {
    // A task of its own per read: read_file answers a page one task read
    // before, unchanged, with a note instead of the lines.
    static READS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = READS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let ctx = ctx.clone().with_task_id(format!("config-read-{n}"));
    let out = rt.block_on(hermes_tools::registry().dispatch_json(
        "read_file",
        r#"{"path": "f.txt", "limit": 50}"#,
        &ctx,
    ));
    let v: Value = serde_json::from_str(&out).unwrap();
    v["content"]
        .as_str()
        .unwrap_or_else(|| panic!("{v}"))
        .lines()
        .count()
}

/// One process: the file is read again when it changes (rewritten in
/// place with another size, replaced by a rename of the same size, or
/// rewritten with the same size and a new modification time).
#[test]
fn a_changed_file_is_read_again_by_the_next_call() {
    let rt = runtime();
    let cwd = tempfile::tempdir().unwrap();
    let text: String = (1..=100).map(|i| format!("line {i}\n")).collect();
    std::fs::write(cwd.path().join("f.txt"), text).unwrap();
    let p = tempfile::tempdir().unwrap();
    let file = p.path().join("config.yaml");
    let ctx = ToolContext::new(Profile::new(p.path()), cwd.path());
    assert_eq!(lines_read(&rt, &ctx), 50);

    std::fs::write(&file, "tool_output:\n  max_lines: 3\n").unwrap();
    assert_eq!(lines_read(&rt, &ctx), 3);
    std::fs::write(&file, "tool_output:\n  max_lines: 12\n").unwrap();
    assert_eq!(lines_read(&rt, &ctx), 12);

    // Same size, a new file put in place (another inode).
    let next = p.path().join("config.yaml.new");
    std::fs::write(&next, "tool_output:\n  max_lines: 21\n").unwrap();
    std::fs::rename(&next, &file).unwrap();
    assert_eq!(lines_read(&rt, &ctx), 21);

    // Same size, same inode: the modification time tells.
    let f = std::fs::OpenOptions::new().write(true).open(&file).unwrap();
    (&f).write_all(b"tool_output:\n  max_lines: 34\n").unwrap();
    f.set_modified(SystemTime::now() + Duration::from_secs(5))
        .unwrap();
    drop(f);
    assert_eq!(lines_read(&rt, &ctx), 34);

    // Removed: the defaults again.
    std::fs::remove_file(&file).unwrap();
    assert_eq!(lines_read(&rt, &ctx), 50);

    // The `.env` counts too: it overrides the file.
    std::fs::write(&file, "security:\n  allow_private_urls: true\n").unwrap();
    let profile = Profile::new(p.path());
    assert!(profile.config().security.allow_private_urls.value);
    std::fs::write(p.path().join(".env"), "HERMES_ALLOW_PRIVATE_URLS=0\n").unwrap();
    let config = profile.config();
    assert!(!config.security.allow_private_urls.value);
    assert_eq!(
        config.security.allow_private_urls.source,
        Source::Env("HERMES_ALLOW_PRIVATE_URLS")
    );
}

/// One process, two profiles: each call sees its own settings.
#[test]
fn two_profiles_in_one_process_keep_their_own_settings() {
    let rt = runtime();
    let cwd = tempfile::tempdir().unwrap();
    let text: String = (1..=100).map(|i| format!("line {i}\n")).collect();
    std::fs::write(cwd.path().join("f.txt"), text).unwrap();
    let (a_dir, b_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let a = profile_with(&format!(
        "tool_output:\n  max_lines: 4\nterminal:\n  cwd: {}\n",
        a_dir.path().display()
    ));
    let b = profile_with(&format!(
        "tool_output:\n  max_lines: 9\nterminal:\n  cwd: {}\n",
        b_dir.path().display()
    ));
    let ctx_a = ToolContext::new(Profile::new(a.path()), cwd.path());
    let ctx_b = ToolContext::new(Profile::new(b.path()), cwd.path());
    let pwd = |ctx: &ToolContext| {
        let out = rt.block_on(hermes_tools::registry().dispatch(
            "terminal",
            json!({"command": "pwd"}),
            ctx,
        ));
        let v: Value = serde_json::from_str(&out).unwrap();
        v["output"].as_str().unwrap().trim().to_string()
    };
    for _ in 0..3 {
        assert_eq!(lines_read(&rt, &ctx_a), 4);
        assert_eq!(lines_read(&rt, &ctx_b), 9);
    }
    let real = |d: &Path| std::fs::canonicalize(d).unwrap().display().to_string();
    assert_eq!(pwd(&ctx_a), real(a_dir.path()));
    assert_eq!(pwd(&ctx_b), real(b_dir.path()));
    // A change to one is not a change to the other.
    std::fs::write(
        a.path().join("config.yaml"),
        "tool_output:\n  max_lines: 11\n",
    )
    .unwrap();
    assert_eq!(lines_read(&rt, &ctx_a), 11);
    assert_eq!(lines_read(&rt, &ctx_b), 9);
}

/// `terminal.backend` is held to the tools' backend table and the
/// backends' keys to their types, each problem at its file:line:col.
#[test]
fn config_check_holds_the_backend_keys() {
    let yaml = "terminal:\n  backend: sssh\n  ssh_port: 70000\n  ssh_host: [a]\n  \
                docker_volumes: ['/a:/b', 'nocolon']\n  docker_network: maybe\n  \
                container_cpu: -1\n";
    let p = profile_with(yaml);
    let file = p.path().join("config.yaml");
    let check = run(p.path(), &["config", "check"]);
    assert_eq!(check.code, 1, "{}", check.stdout);
    for (key, word, says) in [
        ("terminal.backend", "sssh", "unknown backend `sssh`"),
        ("terminal.ssh_port", "70000", ""),
        ("terminal.ssh_host", "[a]", "expected a string"),
        ("terminal.docker_volumes[1]", "'nocolon'", "HOST:CONTAINER"),
        ("terminal.docker_network", "maybe", ""),
        ("terminal.container_cpu", "-1", ""),
    ] {
        let want = format!(
            "{}:{}: error: {key}: ",
            file.display(),
            position_of(yaml, word)
        );
        let line = check
            .stdout
            .lines()
            .find(|l| l.starts_with(&want))
            .unwrap_or_else(|| panic!("wanted {want:?} in\n{}", check.stdout));
        assert!(line.contains(says), "{line}");
    }
    assert!(
        check.stdout.contains("did you mean ssh"),
        "{}",
        check.stdout
    );
    // Every name of the table passes.
    for name in ["local", "ssh", "docker"] {
        let p = profile_with(&format!("terminal:\n  backend: {name}\n"));
        let check = run(p.path(), &["config", "check"]);
        assert_eq!(check.code, 0, "{name}: {}", check.stdout);
    }
}
