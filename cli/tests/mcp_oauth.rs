//! OAuth end to end (`auth: oauth`): an MCP server of the official Python
//! SDK that is also its own authorization server (`mcp.server.auth`,
//! `mcp_client_support/oauth_server.py`) on 127.0.0.1, and the binary:
//! `mcp list` / `call` / `mcp test` before a login (they say how to log in
//! and wait on nothing; `mcp test` exits 3), `mcp login` with the browser
//! step played here (the printed authorization URL followed with an HTTP
//! client to the loopback redirect), the tools called with the stored
//! token and again after it expired (refreshed), then `mcp logout` (the
//! token file gone, a login needed again). No token or secret is in any output. Every wait is
//! bounded.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod mcp_client_support;

use std::io::{BufRead, BufReader, Read};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use mcp_client_support::{eventually, free_port, python};
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_hermes-tools");
/// The longest any one command of the binary may take here.
const COMMAND_LIMIT: Duration = Duration::from_secs(60);

/// The OAuth test server, killed when dropped.
struct Server {
    child: Child,
    port: u16,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn oauth_server(token_seconds: u32) -> Server {
    let port = free_port();
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp_client_support/oauth_server.py");
    let child = Command::new(python())
        .arg(script)
        .args([port.to_string(), token_seconds.to_string()])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let server = Server { child, port };
    assert!(
        eventually(Duration::from_secs(30), || {
            std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
        }),
        "the OAuth test server did not start"
    );
    server
}

/// A profile whose `web` server is the test server with `auth: oauth`
/// (`oauth` its extra `oauth:` lines).
fn profile(port: u16, oauth: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("config.yaml"),
        format!(
            "mcp_servers:\n  web:\n    url: http://127.0.0.1:{port}/mcp\n    auth: oauth\n    connect_timeout: 10\n{oauth}"
        ),
    )
    .unwrap();
    dir
}

/// The binary's command, without a browser or a display.
fn hermes(profile: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(BIN);
    c.arg("--profile")
        .arg(profile)
        .args(args)
        .env_remove("BROWSER")
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

/// Waits for `child` at most [`COMMAND_LIMIT`] (killed after), its output
/// read on the side.
fn finish(mut child: Child, stderr_so_far: Option<mpsc::Receiver<String>>) -> Run {
    let mut out = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        s
    });
    let err_reader = child.stderr.take().map(|mut err| {
        std::thread::spawn(move || {
            let mut s = String::new();
            let _ = err.read_to_string(&mut s);
            s
        })
    });
    let start = Instant::now();
    let code = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status.code();
        }
        if start.elapsed() > COMMAND_LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut stderr = String::new();
    if let Some(lines) = stderr_so_far {
        // The reader ends with the process's stderr.
        let deadline = Instant::now() + Duration::from_secs(5);
        while let Ok(line) = lines.recv_timeout(deadline.saturating_duration_since(Instant::now()))
        {
            stderr += &line;
        }
    }
    if let Some(t) = err_reader {
        stderr += &t.join().unwrap();
    }
    Run {
        code,
        stdout: reader.join().unwrap(),
        stderr,
    }
}

fn run(profile: &Path, args: &[&str]) -> Run {
    finish(hermes(profile, args).spawn().unwrap(), None)
}

/// `mcp login web` with the browser step played here: the URL it prints
/// is followed to the authorization endpoint, whose redirect is followed to
/// the login's loopback listener. Its output, and the URL.
fn login(profile: &Path) -> (Run, reqwest::Url) {
    let mut child = hermes(profile, &["mcp", "login", "web"]).spawn().unwrap();
    let err = child.stderr.take().unwrap();
    let (lines_tx, lines_rx) = mpsc::channel();
    let (url_tx, url_rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(err).lines().map_while(Result::ok) {
            if line.contains("/authorize?") {
                let _ = url_tx.send(line.trim().to_string());
            }
            let _ = lines_tx.send(format!("{line}\n"));
        }
    });
    let url = url_rx
        .recv_timeout(Duration::from_secs(30))
        .expect("mcp login printed no authorization URL");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    hermes_mcp_client::install_tls_provider();
    let page = runtime.block_on(async {
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(Duration::from_secs(10))
            .build()
            .unwrap();
        let approved = client.get(&url).send().await.unwrap();
        assert!(approved.status().is_redirection(), "{}", approved.status());
        let location = approved.headers()["location"].to_str().unwrap().to_string();
        assert!(location.starts_with("http://127.0.0.1:"), "{location}");
        client
            .get(&location)
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap()
    });
    assert!(page.contains("Logged in"), "{page}");
    (
        finish(child, Some(lines_rx)),
        reqwest::Url::parse(&url).unwrap(),
    )
}

/// The scopes an authorization URL asks for.
fn asked(url: &reqwest::Url) -> Vec<String> {
    url.query_pairs()
        .find(|(k, _)| k == "scope")
        .map(|(_, v)| v.split(' ').map(str::to_string).collect())
        .unwrap_or_default()
}

fn token_file(profile: &Path) -> PathBuf {
    profile.join("mcp-tokens/hermes-tools/web.json")
}

fn stored(profile: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(token_file(profile)).unwrap()).unwrap()
}

/// The `grants` tool's answer (the scopes of the token it was called
/// with, and the refreshes the server answered).
fn grants(profile: &Path, all: &mut String) -> Value {
    let r = run(profile, &["call", "mcp__web__grants", "{}"]);
    *all += &r.stdout;
    *all += &r.stderr;
    assert_eq!(r.code, Some(0), "{}{}", r.stdout, r.stderr);
    let outer: Value = serde_json::from_str(&r.stdout).unwrap();
    serde_json::from_str(outer["result"].as_str().unwrap()).unwrap()
}

#[test]
fn login_then_calls_with_the_stored_token_refreshed_when_it_expires() {
    let server = oauth_server(3);
    let p = profile(server.port, "");
    let mut all = String::new();

    // Before a login: shown as needing one, with the command to run; the
    // call does not wait on a login.
    let list = run(p.path(), &["mcp", "list", "--json"]);
    all += &list.stdout;
    assert_ne!(list.code, Some(0), "{}", list.stdout);
    let status: Value = serde_json::from_str(&list.stdout).unwrap();
    assert_eq!(status[0]["state"], "needs_login", "{status}");
    assert!(
        status[0]["error"]
            .as_str()
            .unwrap()
            .contains("run `hermes-tools mcp login web`"),
        "{status}"
    );
    let call = run(p.path(), &["call", "mcp__web__echo", r#"{"text": "x"}"#]);
    all += &call.stdout;
    all += &call.stderr;
    assert!(
        call.stderr.contains("hermes-tools mcp login web"),
        "{}",
        call.stderr
    );
    // `call` exits 3 too when the tool's server needs a login.
    assert_eq!(call.code, Some(3), "{}{}", call.stdout, call.stderr);
    // `mcp test` exits with its "needs login" code (3), distinct from a
    // failure: a script logs in and runs it again.
    let test = run(p.path(), &["mcp", "test", "web"]);
    all += &test.stdout;
    all += &test.stderr;
    assert_eq!(test.code, Some(3), "{}{}", test.stdout, test.stderr);
    assert!(test.stdout.contains("needs login"), "{}", test.stdout);

    let (done, _) = login(p.path());
    all += &done.stdout;
    all += &done.stderr;
    assert_eq!(done.code, Some(0), "{}{}", done.stdout, done.stderr);
    assert!(
        done.stdout
            .contains("logged in to `web` (dynamic registration"),
        "{}",
        done.stdout
    );
    let file = token_file(p.path());
    let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let dir_mode = std::fs::metadata(file.parent().unwrap())
        .unwrap()
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(dir_mode, 0o700);
    let first = stored(p.path());
    let first_access = first["token_response"]["access_token"]
        .as_str()
        .unwrap()
        .to_string();
    let first_refresh = first["token_response"]["refresh_token"]
        .as_str()
        .unwrap()
        .to_string();

    let list = run(p.path(), &["mcp", "list", "--json"]);
    all += &list.stdout;
    all += &list.stderr;
    assert_eq!(list.code, Some(0), "{}{}", list.stdout, list.stderr);
    let status: Value = serde_json::from_str(&list.stdout).unwrap();
    assert_eq!(status[0]["state"], "connected", "{status}");
    let test = run(p.path(), &["mcp", "test", "web"]);
    all += &test.stdout;
    all += &test.stderr;
    assert_eq!(test.code, Some(0), "{}{}", test.stdout, test.stderr);

    let g = grants(p.path(), &mut all);
    assert_eq!(g["scopes"], serde_json::json!(["mcp:read"]), "{g}");
    let refreshes_before = g["refreshes"].as_u64().unwrap();

    // The access token lives 3 s: after it, the next call refreshes it.
    std::thread::sleep(Duration::from_secs(4));
    let g = grants(p.path(), &mut all);
    assert!(g["refreshes"].as_u64().unwrap() > refreshes_before, "{g}");
    let second = stored(p.path());
    let second_access = second["token_response"]["access_token"]
        .as_str()
        .unwrap()
        .to_string();
    assert_ne!(second_access, first_access);

    // The file tools do not read the token file.
    let read = run(
        p.path(),
        &[
            "call",
            "read_file",
            &serde_json::json!({"path": token_file(p.path())}).to_string(),
        ],
    );
    all += &read.stdout;
    all += &read.stderr;
    assert!(read.stdout.contains("\"error\""), "{}", read.stdout);

    // A step-up: `admin` needs `mcp:write`. The call says to log in; the
    // login asks for the scopes held and the one challenged; then it passes.
    let denied = run(p.path(), &["call", "mcp__web__admin", "{}"]);
    all += &denied.stdout;
    all += &denied.stderr;
    assert!(
        denied.stdout.contains(
            "needs login (the server asks for more scope: mcp:read mcp:write): run `hermes-tools mcp login web`"
        ),
        "{}",
        denied.stdout
    );
    assert_eq!(denied.code, Some(3), "{}{}", denied.stdout, denied.stderr);
    let (again, url) = login(p.path());
    all += &again.stdout;
    all += &again.stderr;
    assert_eq!(again.code, Some(0), "{}{}", again.stdout, again.stderr);
    let scopes = asked(&url);
    assert!(
        scopes.contains(&"mcp:read".to_string()) && scopes.contains(&"mcp:write".to_string()),
        "{url}"
    );
    let admin = run(p.path(), &["call", "mcp__web__admin", "{}"]);
    all += &admin.stdout;
    all += &admin.stderr;
    assert!(
        admin.stdout.contains("admin done"),
        "{}{}",
        admin.stdout,
        admin.stderr
    );

    // Three processes find the token expired at once: each refreshes
    // (the server rotates refresh tokens) one after the other, none is
    // refused.
    std::thread::sleep(Duration::from_secs(4));
    let children: Vec<Child> = (0..3)
        .map(|_| {
            hermes(
                p.path(),
                &["call", "mcp__web__echo", r#"{"text": "together"}"#],
            )
            .spawn()
            .unwrap()
        })
        .collect();
    for child in children {
        let r = finish(child, None);
        all += &r.stdout;
        all += &r.stderr;
        assert_eq!(r.code, Some(0), "{}{}", r.stdout, r.stderr);
        assert!(r.stdout.contains("together"), "{}{}", r.stdout, r.stderr);
    }
    let third = stored(p.path());

    // Never in a result or a log.
    let mut secrets = vec![
        first_access,
        first_refresh,
        second_access,
        second["token_response"]["refresh_token"]
            .as_str()
            .unwrap()
            .to_string(),
    ];
    for file in [&second, &third] {
        for key in ["access_token", "refresh_token"] {
            secrets.push(file["token_response"][key].as_str().unwrap().to_string());
        }
        if let Some(s) = file["registered_secret"].as_str() {
            secrets.push(s.to_string());
        }
    }
    for secret in &secrets {
        assert!(!all.contains(secret.as_str()), "a token is in the output");
    }

    // `mcp logout` forgets the tokens: the next use needs a login again.
    let out = run(p.path(), &["mcp", "logout", "web"]);
    assert_eq!(out.code, Some(0), "{}{}", out.stdout, out.stderr);
    assert!(out.stdout.contains("logged out of `web`"), "{}", out.stdout);
    assert!(!token_file(p.path()).exists());
    let test = run(p.path(), &["mcp", "test", "web"]);
    assert_eq!(test.code, Some(3), "{}{}", test.stdout, test.stderr);
    let again = run(p.path(), &["mcp", "logout", "web"]);
    assert_eq!(again.code, Some(0), "{}{}", again.stdout, again.stderr);
    assert!(again.stdout.contains("no tokens"), "{}", again.stdout);
    drop(server);
}

/// The URL goes to `$BROWSER` (and is printed); a login whose redirect
/// never comes ends at `oauth.timeout` with the reason, nothing stored.
#[test]
fn the_browser_gets_the_url_and_a_login_without_redirect_ends_at_its_timeout() {
    let server = oauth_server(60);
    let p = profile(
        server.port,
        "    oauth:\n      timeout: 2\n      scope: mcp:read\n",
    );
    let seen = p.path().join("browser-saw");
    let browser = p.path().join("browser.sh");
    std::fs::write(
        &browser,
        format!(
            "#!/bin/sh\nprintf '%s' \"$1\" > {:?}\n",
            seen.display().to_string()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&browser, std::fs::Permissions::from_mode(0o755)).unwrap();
    let started = Instant::now();
    let r = finish(
        hermes(p.path(), &["mcp", "login", "web"])
            .env("BROWSER", &browser)
            .spawn()
            .unwrap(),
        None,
    );
    assert!(started.elapsed() < COMMAND_LIMIT);
    assert_eq!(r.code, Some(1), "{}{}", r.stdout, r.stderr);
    assert!(
        r.stdout.contains("no redirect from the browser within 2s"),
        "{}",
        r.stdout
    );
    assert!(
        eventually(Duration::from_secs(5), || seen.exists()),
        "$BROWSER was not run"
    );
    let url = std::fs::read_to_string(&seen).unwrap();
    assert!(r.stderr.contains(&url), "{}", r.stderr);
    let parsed = reqwest::Url::parse(&url).unwrap();
    let q = |k: &str| {
        parsed
            .query_pairs()
            .find(|(name, _)| name == k)
            .map(|(_, v)| v.into_owned())
    };
    assert_eq!(q("code_challenge_method").as_deref(), Some("S256"));
    assert_eq!(q("scope").as_deref(), Some("mcp:read"));
    assert_eq!(
        q("resource"),
        Some(format!("http://127.0.0.1:{}/mcp", server.port))
    );
    assert!(!token_file(p.path()).exists());
    drop(server);
}
