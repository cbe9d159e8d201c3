//! The file tools' guards (issue 12, item 1), through the real binary with
//! a temporary `HOME`: a temp tree stands for the user's home (with its
//! `.ssh`), the profile (`~/.hermes`) and a project; nothing outside it is
//! touched. Each refused write is checked to have left the disk alone.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

const BIN: &str = env!("CARGO_BIN_EXE_hermes-tools");

/// `<tmp>/home` (the user's home, with `.ssh/` and `.hermes/`) and
/// `<tmp>/proj` (the working directory).
struct World {
    tmp: tempfile::TempDir,
}

impl World {
    fn new() -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let w = World { tmp };
        fs::create_dir_all(w.home().join(".ssh")).unwrap();
        fs::create_dir_all(w.profile()).unwrap();
        fs::create_dir_all(w.proj()).unwrap();
        fs::write(w.profile().join(".env"), "OPENAI_API_KEY=sk-test\n").unwrap();
        fs::write(w.profile().join("config.yaml"), "model: x\n").unwrap();
        w
    }
    fn home(&self) -> PathBuf {
        self.tmp.path().join("home")
    }
    fn profile(&self) -> PathBuf {
        self.home().join(".hermes")
    }
    fn proj(&self) -> PathBuf {
        self.tmp.path().join("proj")
    }

    /// Calls a tool with `HOME` = the temp home, in the project, under the
    /// profile, with `env` added; answers its JSON.
    fn call_env(&self, name: &str, args: Value, env: &[(&str, &str)]) -> Value {
        let mut cmd = Command::new(BIN);
        cmd.arg("--profile")
            .arg(self.profile())
            .args(["call", name, &args.to_string()])
            .current_dir(self.proj())
            .env("HOME", self.home())
            .env_remove("HERMES_WRITE_SAFE_ROOT")
            .env_remove("HERMES_HOME")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().unwrap();
        let end = Instant::now() + Duration::from_secs(30);
        while child.try_wait().unwrap().is_none() {
            if Instant::now() > end {
                child.kill().unwrap();
                panic!("{name} {args} hung");
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let out = child.wait_with_output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        serde_json::from_str(&text).unwrap_or_else(|e| {
            panic!(
                "not JSON ({e}): {text}\nstderr: {}",
                String::from_utf8_lossy(&out.stderr)
            )
        })
    }

    fn call(&self, name: &str, args: Value) -> Value {
        self.call_env(name, args, &[])
    }
}

/// The error of `v`, failing when it has none.
fn error(v: &Value) -> &str {
    v["error"]
        .as_str()
        .unwrap_or_else(|| panic!("expected an error, got {v}"))
}

/// Asserts a write was refused for being a credential file, and that
/// `file` was left as it was (`None`: not there).
fn refused_credential(v: &Value, file: &Path, before: Option<&str>) {
    let err = error(v);
    assert!(err.starts_with("Refused to "), "{err}");
    assert!(err.contains("protected credential"), "{err}");
    assert_eq!(fs::read_to_string(file).ok().as_deref(), before, "{file:?}");
}

#[test]
fn credential_files_are_not_written_by_any_path() {
    let w = World::new();
    let keys = w.home().join(".ssh/authorized_keys");
    fs::write(&keys, "ssh-ed25519 AAAA user\n").unwrap();
    let before = Some("ssh-ed25519 AAAA user\n");
    // By `~`, by `../`, and through a symlink to the folder.
    let v = w.call(
        "write_file",
        json!({"path": "~/.ssh/authorized_keys", "content": "evil"}),
    );
    refused_credential(&v, &keys, before);
    let v = w.call(
        "write_file",
        json!({"path": "../home/.ssh/authorized_keys", "content": "evil"}),
    );
    refused_credential(&v, &keys, before);
    symlink(w.home().join(".ssh"), w.proj().join("keys")).unwrap();
    let v = w.call(
        "write_file",
        json!({"path": "keys/authorized_keys", "content": "evil"}),
    );
    refused_credential(&v, &keys, before);
    // The error says where the path led.
    assert!(error(&v).contains(".ssh/authorized_keys"), "{v}");
    // A new file in a denied folder, whose parent is a symlink.
    let v = w.call("write_file", json!({"path": "keys/id_new", "content": "x"}));
    refused_credential(&v, &w.home().join(".ssh/id_new"), None);
    // A symlinked file.
    symlink(&keys, w.proj().join("innocent.txt")).unwrap();
    let v = w.call(
        "write_file",
        json!({"path": "innocent.txt", "content": "evil"}),
    );
    refused_credential(&v, &keys, before);
    // patch is held to the same rule.
    let v = w.call(
        "patch",
        json!({"path": "~/.ssh/authorized_keys", "old_string": "user", "new_string": "evil"}),
    );
    refused_credential(&v, &keys, before);
    // Other credential files in the home.
    for name in [
        ".netrc",
        ".pgpass",
        ".npmrc",
        ".pypirc",
        ".git-credentials",
        ".aws/credentials",
        ".config/gh/hosts.yml",
    ] {
        let v = w.call(
            "write_file",
            json!({"path": format!("~/{name}"), "content": "x"}),
        );
        refused_credential(&v, &w.home().join(name), None);
    }
}

#[test]
fn the_profiles_secrets_and_config_are_not_written() {
    let w = World::new();
    let env = w.profile().join(".env");
    // The SSRF guard's switch, written into the profile's .env: refused.
    let v = w.call(
        "write_file",
        json!({"path": "../home/.hermes/.env", "content": "HERMES_ALLOW_PRIVATE_URLS=true\n"}),
    );
    refused_credential(&v, &env, Some("OPENAI_API_KEY=sk-test\n"));
    let v = w.call(
        "patch",
        json!({"path": env, "old_string": "sk-test", "new_string": "x"}),
    );
    refused_credential(&v, &env, Some("OPENAI_API_KEY=sk-test\n"));
    // config.yaml holds the security settings.
    let v = w.call(
        "write_file",
        json!({"path": "~/.hermes/config.yaml", "content": "approvals: off\n"}),
    );
    let err = error(&v);
    assert!(err.contains("config file"), "{err}");
    assert_eq!(
        fs::read_to_string(w.profile().join("config.yaml")).unwrap(),
        "model: x\n"
    );
    // Session state and token stores.
    for rel in ["state.db", "sessions/s1.json", "mcp-tokens/srv.json"] {
        let v = w.call(
            "write_file",
            json!({"path": format!("~/.hermes/{rel}"), "content": "x"}),
        );
        assert!(error(&v).starts_with("Refused to write"), "{v}");
        assert!(!w.profile().join(rel).exists(), "{rel}");
    }
    // Elsewhere in the profile, writes go through.
    let v = w.call(
        "write_file",
        json!({"path": "~/.hermes/notes.md", "content": "ok"}),
    );
    assert!(v.get("error").is_none(), "{v}");
    assert_eq!(
        fs::read_to_string(w.profile().join("notes.md")).unwrap(),
        "ok"
    );
}

#[test]
fn a_named_profiles_root_is_guarded_too() {
    // HERMES_HOME = <root>/profiles/coder: the root's .env stays protected.
    let w = World::new();
    let root = w.tmp.path().join("data");
    let coder = root.join("profiles/coder");
    fs::create_dir_all(&coder).unwrap();
    fs::write(root.join(".env"), "K=v\n").unwrap();
    fs::write(root.join("auth.json"), "{}").unwrap();
    let mut cmd = Command::new(BIN);
    let out = cmd
        .arg("--profile")
        .arg(&coder)
        .args([
            "call",
            "write_file",
            &json!({"path": root.join(".env"), "content": "x"}).to_string(),
        ])
        .current_dir(w.proj())
        .env("HOME", w.home())
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    refused_credential(&v, &root.join(".env"), Some("K=v\n"));
    let out = Command::new(BIN)
        .arg("--profile")
        .arg(&coder)
        .args([
            "call",
            "read_file",
            &json!({"path": root.join("auth.json")}).to_string(),
        ])
        .current_dir(w.proj())
        .env("HOME", w.home())
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(error(&v).contains("credential store"), "{v}");
}

#[test]
fn system_locations_are_not_written() {
    let w = World::new();
    for path in [
        "/etc/passwd",
        "/etc/sudoers.d/x",
        "/etc/hermes-guard-test",
        "/boot/hermes-guard-test",
        "/var/run/docker.sock",
    ] {
        let v = w.call("write_file", json!({"path": path, "content": "x"}));
        let err = error(&v);
        assert!(err.contains("protected system location"), "{path}: {err}");
    }
    // Through `..` from the project.
    let up = "../".repeat(w.proj().components().count());
    let v = w.call(
        "write_file",
        json!({"path": format!("{up}etc/hermes-guard-test"), "content": "x"}),
    );
    assert!(error(&v).contains("protected system location"), "{v}");
    assert!(!Path::new("/etc/hermes-guard-test").exists());
}

#[test]
fn the_safe_root_keeps_writes_inside_it() {
    let w = World::new();
    let inside = w.proj().join("out");
    fs::create_dir_all(&inside).unwrap();
    let root = inside.to_str().unwrap();
    let env = [("HERMES_WRITE_SAFE_ROOT", root)];
    let v = w.call_env(
        "write_file",
        json!({"path": "out/a.txt", "content": "ok"}),
        &env,
    );
    assert!(v.get("error").is_none(), "{v}");
    let v = w.call_env("write_file", json!({"path": "b.txt", "content": "x"}), &env);
    let err = error(&v);
    assert!(err.contains("HERMES_WRITE_SAFE_ROOT"), "{err}");
    assert!(err.contains(root), "{err}");
    assert!(!w.proj().join("b.txt").exists());
    // Out of it by `..` from inside, or by a symlink inside it.
    let v = w.call_env(
        "write_file",
        json!({"path": "out/../c.txt", "content": "x"}),
        &env,
    );
    assert!(error(&v).contains("HERMES_WRITE_SAFE_ROOT"), "{v}");
    symlink(w.proj(), inside.join("up")).unwrap();
    let v = w.call_env(
        "write_file",
        json!({"path": "out/up/d.txt", "content": "x"}),
        &env,
    );
    assert!(error(&v).contains("HERMES_WRITE_SAFE_ROOT"), "{v}");
    assert!(!w.proj().join("d.txt").exists());
    // Several roots, separated by `:`; and the profile's .env may set it.
    let two = format!("{}:{root}", w.tmp.path().join("nowhere").display());
    let v = w.call_env(
        "write_file",
        json!({"path": "out/e.txt", "content": "ok"}),
        &[("HERMES_WRITE_SAFE_ROOT", &two)],
    );
    assert!(v.get("error").is_none(), "{v}");
    fs::write(
        w.profile().join(".env"),
        format!("HERMES_WRITE_SAFE_ROOT={root}\n"),
    )
    .unwrap();
    let v = w.call("write_file", json!({"path": "f.txt", "content": "x"}));
    assert!(error(&v).contains("HERMES_WRITE_SAFE_ROOT"), "{v}");
}

#[test]
fn secret_stores_and_env_files_are_not_read() {
    let w = World::new();
    fs::write(w.profile().join("auth.json"), "{\"token\": \"t\"}").unwrap();
    fs::create_dir_all(w.profile().join("mcp-tokens")).unwrap();
    fs::write(w.profile().join("mcp-tokens/srv.json"), "{}").unwrap();
    fs::create_dir_all(w.profile().join("skills/.hub")).unwrap();
    fs::write(w.profile().join("skills/.hub/index.json"), "{}").unwrap();
    fs::write(w.proj().join(".env"), "DB_PASSWORD=hunter2\n").unwrap();
    fs::write(w.proj().join(".env.local"), "X=1\n").unwrap();
    fs::write(w.proj().join(".env.example"), "DB_PASSWORD=\n").unwrap();

    for (path, says) in [
        ("~/.hermes/.env", "credential store"),
        ("../home/.hermes/auth.json", "credential store"),
        ("~/.hermes/mcp-tokens/srv.json", "MCP token"),
        ("~/.hermes/skills/.hub/index.json", "skills hub cache"),
        (".env", ".env.example"),
        (".ENV.local", "environment files"),
    ] {
        let v = w.call("read_file", json!({"path": path}));
        let err = error(&v);
        assert!(err.starts_with("Refused to read"), "{path}: {err}");
        assert!(err.contains(says), "{path}: {err}");
        assert!(
            !err.contains("sk-test") && !err.contains("hunter2"),
            "{err}"
        );
    }
    // Through a symlink with an innocent name.
    symlink(w.profile().join(".env"), w.proj().join("notes.txt")).unwrap();
    let v = w.call("read_file", json!({"path": "notes.txt"}));
    assert!(error(&v).contains("credential store"), "{v}");
    // The documented substitute reads fine.
    let v = w.call("read_file", json!({"path": ".env.example"}));
    assert_eq!(v["content"], "1|DB_PASSWORD=", "{v}");
}

#[test]
fn read_and_write_expand_the_home() {
    let w = World::new();
    let v = w.call(
        "write_file",
        json!({"path": "~/notes/a.md", "content": "hi\n"}),
    );
    assert!(v.get("error").is_none(), "{v}");
    assert_eq!(
        fs::read_to_string(w.home().join("notes/a.md")).unwrap(),
        "hi\n"
    );
    let v = w.call("read_file", json!({"path": "~/notes/a.md"}));
    assert_eq!(v["content"], "1|hi", "{v}");
    let v = w.call(
        "patch",
        json!({"path": "~/notes/a.md", "old_string": "hi", "new_string": "ho"}),
    );
    assert!(v.get("error").is_none(), "{v}");
    let v = w.call("search_files", json!({"pattern": "ho", "path": "~/notes"}));
    assert_eq!(v["matches"][0]["line"], 1, "{v}");
    // `~user` is not expanded: a name like any other.
    let v = w.call("read_file", json!({"path": "~nobody/x"}));
    assert!(error(&v).contains("not found"), "{v}");
}

#[test]
fn the_approvals_file_is_out_of_reach() {
    // The model cannot approve itself: `approvals.json` holds the user's
    // "always" answers, and no file tool writes it, by any path.
    let w = World::new();
    let file = w.profile().join("approvals.json");
    let forged = r#"{"always": ["recursive delete"]}"#;
    for path in [
        file.display().to_string(),
        "~/.hermes/approvals.json".to_string(),
        "../home/.hermes/./approvals.json".to_string(),
    ] {
        let v = w.call("write_file", json!({"path": path, "content": forged}));
        let err = error(&v);
        assert!(err.starts_with("Refused to write"), "{err}");
        // The refusal never says what would approve a command.
        for hint in ["\"always\"", "command_allowlist", "approvals.mode", "yolo"] {
            assert!(!err.contains(hint), "{hint}: {err}");
        }
        assert!(!file.exists(), "{path}");
    }
    fs::write(&file, r#"{"always": []}"#).unwrap();
    let v = w.call(
        "patch",
        json!({"path": "~/.hermes/approvals.json", "old_string": "[]", "new_string": "[\"recursive delete\"]"}),
    );
    assert!(error(&v).starts_with("Refused to patch"), "{v}");
    let v = w.call(
        "patch",
        json!({"mode": "patch", "patch": format!(
            "*** Begin Patch\n*** Add File: {}\n+{forged}\n*** End Patch\n",
            w.profile().join("approvals.json").display()
        )}),
    );
    assert!(error(&v).contains("Refused to patch"), "{v}");
    assert_eq!(fs::read_to_string(&file).unwrap(), r#"{"always": []}"#);
    // So the next recursive delete is still held for the user.
    let victim = w.proj().join("victim");
    fs::create_dir_all(victim.join("x")).unwrap();
    let v = w.call("terminal", json!({"command": "rm -rf victim"}));
    assert!(v.to_string().contains("BLOCKED"), "{v}");
    assert!(victim.join("x").exists());
}

#[test]
fn profiles_are_walled_off() {
    // HERMES_HOME = <root>/profiles/me: another profile's folder (existing
    // or not) and the root profile's own state are not written.
    let w = World::new();
    let root = w.tmp.path().join("data");
    let me = root.join("profiles/me");
    fs::create_dir_all(&me).unwrap();
    fs::create_dir_all(root.join("profiles/other/skills")).unwrap();
    symlink(root.join("profiles/other"), w.proj().join("elsewhere")).unwrap();
    let call = |profile: &Path, args: Value| -> Value {
        let out = Command::new(BIN)
            .arg("--profile")
            .arg(profile)
            .args(["call", "write_file", &args.to_string()])
            .current_dir(w.proj())
            .env("HOME", w.home())
            .env_remove("HERMES_HOME")
            .output()
            .unwrap();
        serde_json::from_slice(&out.stdout).unwrap()
    };
    for target in [
        root.join("profiles/other/skills/x/SKILL.md"),
        root.join("profiles/other/notes.md"),
        root.join("profiles/other/config.yaml"),
        root.join("profiles/newcomer/skills/x/SKILL.md"),
        root.join("skills/x/SKILL.md"),
        root.join("memories/MEMORY.md"),
        root.join("config.yaml"),
        root.join("approvals.json"),
        w.proj().join("elsewhere/memories/MEMORY.md"),
    ] {
        let v = call(&me, json!({"path": target, "content": "x"}));
        let err = error(&v);
        assert!(err.starts_with("Refused to write"), "{target:?}: {err}");
        assert!(!target.exists(), "{target:?}");
    }
    let v = call(
        &me,
        json!({"path": root.join("profiles/other/x"), "content": "x"}),
    );
    assert!(error(&v).contains("another Hermes profile (other)"), "{v}");
    // Its own profile's skills are its own.
    let own = me.join("skills/mine/SKILL.md");
    let v = call(&me, json!({"path": own, "content": "ok"}));
    assert!(v.get("error").is_none(), "{v}");
    // The root profile does not write into the named ones either.
    let v = call(
        &root,
        json!({"path": root.join("profiles/me/skills/y.md"), "content": "x"}),
    );
    assert!(error(&v).contains("another Hermes profile (me)"), "{v}");
    let v = call(
        &root,
        json!({"path": root.join("profiles/not-yet/skills/y.md"), "content": "x"}),
    );
    assert!(
        error(&v).contains("another Hermes profile (not-yet)"),
        "{v}"
    );
    assert!(!root.join("profiles/not-yet").exists());
}

/// The home of the current user id in the password database.
fn passwd_home() -> Option<PathBuf> {
    let out = Command::new("sh")
        .args(["-c", "getent passwd \"$(id -u)\" | cut -d: -f6"])
        .output()
        .ok()?;
    let home = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (!home.is_empty() && home != "/").then(|| PathBuf::from(home))
}

#[test]
fn the_password_databases_home_is_guarded_whatever_home_says() {
    // The agent's HOME is a scratch folder; the account's own home (as
    // root: /root, one folder deep) keeps its credentials all the same.
    // Run in a private mount namespace with a scratch folder over that
    // home, so a failing guard writes to scratch.
    let Some(home) = passwd_home() else {
        eprintln!("skipped: no home in the password database");
        return;
    };
    let probe = Command::new("unshare").args(["-m", "true"]).status();
    if !probe.is_ok_and(|s| s.success()) {
        eprintln!("skipped: no private mount namespace here");
        return;
    }
    let w = World::new();
    let scratch = w.tmp.path().join("account-home");
    fs::create_dir_all(scratch.join(".ssh")).unwrap();
    fs::write(scratch.join(".ssh/authorized_keys"), "key\n").unwrap();
    for (path, file) in [
        (
            home.join(".ssh/authorized_keys"),
            scratch.join(".ssh/authorized_keys"),
        ),
        (
            home.join(".aws/credentials"),
            scratch.join(".aws/credentials"),
        ),
        (home.join(".netrc"), scratch.join(".netrc")),
    ] {
        let before = fs::read_to_string(&file).ok();
        let args = json!({"path": path, "content": "evil"}).to_string();
        let out = Command::new("unshare")
            .args(["-m", "--propagation", "private", "sh", "-c"])
            .arg("mount --bind \"$1\" \"$2\" && shift 2 && exec \"$@\"")
            .arg("sh")
            .arg(&scratch)
            .arg(&home)
            .arg(BIN)
            .arg("--profile")
            .arg(w.profile())
            .args(["call", "write_file", &args])
            .current_dir(w.proj())
            .env("HOME", w.home())
            .env_remove("HERMES_HOME")
            .output()
            .unwrap();
        let v: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
        refused_credential(&v, &file, before.as_deref());
    }
}

#[test]
fn the_read_guard_says_why_and_guards_the_systems_secrets() {
    let w = World::new();
    // A live process of this test's own, ended below.
    let mut sleeper = Command::new("sleep").arg("30").spawn().unwrap();
    let pid = sleeper.id();
    let refused = [
        ("/etc/shadow".to_string(), "password hashes"),
        ("/etc/gshadow".to_string(), "password hashes"),
        ("/etc/shadow-".to_string(), "password hashes"),
        ("/etc/gshadow-".to_string(), "password hashes"),
        ("/etc/sudoers".to_string(), "sudo policy"),
        ("/etc/sudoers.d/README".to_string(), "sudo policy"),
        ("/etc/ssh/ssh_host_ed25519_key".to_string(), "SSH host key"),
        ("/etc/ssh/ssh_host_rsa_key".to_string(), "SSH host key"),
        ("/proc/self/environ".to_string(), "environment"),
        (format!("/proc/{pid}/environ"), "environment"),
        (format!("/proc/self/task/{pid}/environ"), "environment"),
        (format!("/proc/{pid}/task/{pid}/environ"), "environment"),
        ("/proc/4194303/environ".to_string(), "environment"),
        (format!("/proc/{pid}/mem"), "memory"),
        (format!("/proc/{pid}/maps"), "memory layout"),
        (format!("/proc/{pid}/cmdline"), "command line"),
        (format!("/proc/{pid}/fd/1"), "open files"),
        ("/proc/kcore".to_string(), "kernel's memory"),
        ("/dev/stdout".to_string(), "output stream"),
        ("/dev/fd/1".to_string(), "open files"),
        ("/dev/zero".to_string(), "never ends"),
        ("/dev/urandom".to_string(), "never ends"),
        ("/dev/tty".to_string(), "waits for input"),
    ];
    for (path, says) in &refused {
        let v = w.call("read_file", json!({ "path": path }));
        let err = error(&v);
        assert!(err.starts_with("Refused to read"), "{path}: {err}");
        assert!(err.contains(says), "{path}: {err}");
        assert!(!err.contains("not found"), "{path}: {err}");
    }
    // A search of /etc passes the secrets by (read-only, like the reads).
    let v = w.call(
        "search_files",
        json!({"pattern": "root:", "path": "/etc", "limit": 1000}),
    );
    let text = v.to_string();
    for secret in ["/etc/shadow", "/etc/gshadow", "ssh_host_"] {
        assert!(!text.contains(secret), "{secret}: {text}");
    }
    // Through a link with an innocent name, too.
    symlink(format!("/proc/{pid}/environ"), w.proj().join("notes.txt")).unwrap();
    let v = w.call("read_file", json!({"path": "notes.txt"}));
    assert!(error(&v).contains("environment"), "{v}");
    // The reference's harmless reads, read bounded though stat says 0 bytes.
    for path in [
        "/proc/cpuinfo",
        "/proc/meminfo",
        "/proc/version",
        "/proc/loadavg",
        "/proc/self/status",
    ] {
        let v = w.call("read_file", json!({ "path": path }));
        assert!(v.get("error").is_none(), "{path}: {v}");
        assert!(
            v["content"].as_str().unwrap().starts_with("1|"),
            "{path}: {v}"
        );
        assert!(v["file_size"].as_u64().unwrap() > 0, "{path}: {v}");
    }
    let v = w.call("read_file", json!({"path": format!("/proc/{pid}/status")}));
    assert!(v["content"].as_str().unwrap().contains("sleep"), "{v}");
    let v = w.call("read_file", json!({"path": "/dev/null"}));
    assert_eq!(v["content"], "", "{v}");
    assert_eq!(v["total_lines"], 0, "{v}");
    sleeper.kill().unwrap();
    sleeper.wait().unwrap();
}

#[test]
fn control_bytes_and_terminal_escapes_reach_the_model_escaped() {
    let w = World::new();
    fs::write(
        w.proj().join("log.txt"),
        "plain\n\x1b[31mred\x1b[0m and \x07bell\x08\nhidden\u{202e}txt.exe\u{9b}2J\r\nend\r\n",
    )
    .unwrap();
    let v = w.call("read_file", json!({"path": "log.txt"}));
    let content = v["content"].as_str().unwrap_or_else(|| panic!("{v}"));
    assert_eq!(
        content,
        "1|plain\n2|\\x1b[31mred\\x1b[0m and \\x07bell\\x08\n3|hidden\\u{202e}txt.exe\\u{009b}2J\r\n4|end\r",
        "{v}"
    );
    for raw in ['\x1b', '\x07', '\x08', '\u{202e}', '\u{9b}'] {
        assert!(!content.contains(raw), "{raw:?} in {content:?}");
    }
    let v = w.call("search_files", json!({"pattern": "red", "path": "."}));
    let line = v["matches"][0]["content"]
        .as_str()
        .unwrap_or_else(|| panic!("{v}"));
    assert!(
        line.contains("\\x1b[31mred") && !line.contains('\x1b'),
        "{v}"
    );
}
