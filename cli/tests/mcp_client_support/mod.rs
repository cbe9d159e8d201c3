//! Shared by the MCP client tests: a Python with the official MCP SDK, the
//! test server, a profile whose `config.yaml` names it, a fresh registry.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use hermes_runtime::{Profile, Registry, ToolContext};

/// The SDK version the tests are written against.
pub const MCP_SDK: &str = "mcp==1.26.0";

/// The test server's script.
pub fn server_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp_client_support/server.py")
}

/// A Python that imports `mcp`: `$HERMES_MCP_PYTHON`, else the virtualenv
/// `target/mcp-venv` (made here with `pip install mcp` when missing, as
/// `.ci/run` does).
pub fn python() -> PathBuf {
    static MADE: Mutex<Option<PathBuf>> = Mutex::new(None);
    let mut made = MADE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(p) = made.as_ref() {
        return p.clone();
    }
    let imports = |py: &Path| {
        Command::new(py)
            .args(["-c", "import mcp.server.fastmcp"])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if let Some(p) = std::env::var_os("HERMES_MCP_PYTHON") {
        let p = PathBuf::from(p);
        assert!(
            imports(&p),
            "HERMES_MCP_PYTHON={} cannot import mcp",
            p.display()
        );
        *made = Some(p.clone());
        return p;
    }
    let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/mcp-venv");
    let py = venv.join("bin/python");
    if !imports(&py) {
        let ok = Command::new("python3")
            .args(["-m", "venv"])
            .arg(&venv)
            .status()
            .is_ok_and(|s| s.success())
            && Command::new(venv.join("bin/pip"))
                .args(["install", "-q", MCP_SDK])
                .status()
                .is_ok_and(|s| s.success());
        assert!(
            ok && imports(&py),
            "the MCP client tests need Python with the MCP SDK: set HERMES_MCP_PYTHON, or let \
             `python3 -m venv target/mcp-venv && target/mcp-venv/bin/pip install {MCP_SDK}` work"
        );
    }
    *made = Some(py.clone());
    py
}

/// YAML for a stdio entry running the test server.
pub fn stdio_entry(name: &str, extra: &str) -> String {
    format!(
        "  {name}:\n    command: {:?}\n    args: [{:?}]\n{extra}",
        python().display().to_string(),
        server_script().display().to_string()
    )
}

/// A temporary profile with `config.yaml` = `mcp_servers:\n` + `entries`
/// and `.env` = `env`.
pub struct Fixture {
    pub dir: tempfile::TempDir,
    pub profile: Profile,
    pub registry: &'static Registry,
}

impl Fixture {
    pub fn new(entries: &str, env: &str) -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("config.yaml"),
            format!("mcp_servers:\n{entries}"),
        )
        .unwrap();
        std::fs::write(dir.path().join(".env"), env).unwrap();
        let profile = Profile::new(dir.path());
        // Each test its own registry: tools of one never meet another's.
        let registry: &'static Registry =
            Box::leak(Box::new(Registry::new(&hermes_tools::generated::TABLES)));
        Fixture {
            dir,
            profile,
            registry,
        }
    }

    /// Dispatches `name` with `args` (through the registry, like an agent).
    pub fn call(&self, name: &str, args: serde_json::Value) -> serde_json::Value {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let ctx = ToolContext::new(self.profile.clone(), self.dir.path());
        let text = runtime.block_on(self.registry.dispatch(name, args, &ctx));
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"))
    }
}

/// Polls `check` every 100 ms until it holds or `limit` passes.
pub fn eventually(limit: Duration, mut check: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < limit {
        if check() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    check()
}

/// Whether a process runs (not a zombie).
pub fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        let state = s
            .rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .chars()
            .next();
        !matches!(state, Some('Z' | 'X'))
    })
}

/// A free port on 127.0.0.1 (bound and released).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}
