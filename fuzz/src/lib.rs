//! What the fuzz targets share: one current-thread runtime, a sandbox (a
//! working folder and a profile home under the temp folder, laid anew for
//! every input), and the checks every dispatched result must pass.
//!
//! The targets run real tools on the real machine, so the sandbox is the
//! safety line: only tools that touch nothing but their working folder and
//! profile are dispatched, and only with arguments that cannot name a path
//! outside them (see [`confined`]).

use std::fs;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

use hermes_runtime::Registry;
use serde_json::Value;

/// The registry with the agent-loop executors installed (`todo`, `memory`).
pub fn registry() -> &'static Registry {
    static INSTALLED: OnceLock<()> = OnceLock::new();
    let registry = hermes_tools::registry();
    INSTALLED.get_or_init(|| hermes_tools::install_agent_loop_executors(registry));
    registry
}

/// Runs `fut` to completion on a current-thread runtime with timers (blocking
/// tools still get tokio's blocking pool).
pub fn block_on<F: std::future::Future>(fut: F) -> F::Output {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME
        .get_or_init(|| {
            tokio::runtime::Builder::new_current_thread()
                .enable_time()
                .build()
                .unwrap_or_else(|e| panic!("cannot build the tokio runtime: {e}"))
        })
        .block_on(fut)
}

/// The folders one input runs in: `cwd` (the working folder) and `home`
/// (the profile), both emptied and laid anew by [`Sandbox::reset`].
#[derive(Debug)]
pub struct Sandbox {
    pub root: PathBuf,
    pub cwd: PathBuf,
    pub home: PathBuf,
    /// Whether the folders may differ from the last [`Sandbox::reset`].
    dirty: AtomicBool,
}

impl Sandbox {
    /// The process's sandbox, under `$TMPDIR` (one per process: libFuzzer
    /// workers run as separate processes).
    pub fn get() -> &'static Sandbox {
        static SANDBOX: OnceLock<Sandbox> = OnceLock::new();
        SANDBOX.get_or_init(|| {
            let root = std::env::temp_dir().join(format!("hermes-fuzz-{}", std::process::id()));
            Sandbox {
                cwd: root.join("cwd"),
                home: root.join("home"),
                root,
                dirty: AtomicBool::new(true),
            }
        })
    }

    /// Empties the sandbox and lays `files` (relative path, content) into
    /// the working folder; the profile home gets one skill.
    pub fn reset(&self, files: &[(&str, &[u8])]) {
        self.dirty.store(true, Ordering::Relaxed);
        if self.root.exists() {
            must(fs::remove_dir_all(&self.root), "clear the sandbox");
        }
        must(fs::create_dir_all(&self.cwd), "create the working folder");
        must(
            fs::create_dir_all(self.home.join("skills/demo")),
            "create the profile",
        );
        must(
            fs::write(
                self.home.join("skills/demo/SKILL.md"),
                "---\nname: demo\ndescription: A demo skill\n---\n# Demo\nSteps.\n",
            ),
            "write the demo skill",
        );
        for (rel, content) in files {
            let path = self.cwd.join(rel);
            if let Some(parent) = path.parent() {
                must(fs::create_dir_all(parent), "create a fixture folder");
            }
            must(fs::write(&path, content), "write a fixture");
        }
        self.dirty.store(false, Ordering::Relaxed);
    }

    /// Lays the sandbox anew unless nothing can have changed it since it
    /// was last laid (only tools that write nothing ran); `writes`: whether
    /// the coming call may change it. Saves most of the cost of an input
    /// to a read-only tool.
    pub fn prepare(&self, files: &[(&str, &[u8])], writes: bool) {
        if self.dirty.load(Ordering::Relaxed) {
            self.reset(files);
        }
        if writes {
            self.dirty.store(true, Ordering::Relaxed);
        }
    }

    /// A session for one input: the sandbox's folders. Dropped after the
    /// input, it forgets what the calls left (`todo`'s list, read state),
    /// so nothing grows across runs.
    pub fn session(&self) -> hermes_tools::Session {
        hermes_tools::Session::new(hermes_runtime::Profile::new(&self.home), &self.cwd)
    }

    /// The bytes of a file of the working folder, if it is there.
    pub fn read(&self, rel: &str) -> Option<Vec<u8>> {
        fs::read(self.cwd.join(rel)).ok()
    }
}

fn must<T>(result: std::io::Result<T>, what: &str) -> T {
    result.unwrap_or_else(|e| panic!("fuzz harness: cannot {what}: {e}"))
}

/// Whether a parsed argument value stays inside the sandbox: no string in it
/// (keys and values, at any depth, including strings that coercion would
/// parse as JSON) can name another folder. `/` and `\` are refused (so no
/// absolute path, no subfolder and no escape sequence in a nested JSON
/// string), and so is `..`; a bare name or `.` resolves in the working
/// folder. Inputs that fail this are skipped, never dispatched.
pub fn confined(value: &Value) -> bool {
    fn text_ok(s: &str) -> bool {
        !s.contains(['/', '\\']) && !s.contains("..")
    }
    match value {
        Value::String(s) => text_ok(s),
        Value::Array(items) => items.iter().all(confined),
        Value::Object(map) => map.iter().all(|(k, v)| text_ok(k) && confined(v)),
        Value::Null | Value::Bool(_) | Value::Number(_) => true,
    }
}

/// The contract of every dispatch: the answer is one JSON document, an
/// object. Returns it parsed.
pub fn check_result(tool: &str, raw_args: &str, result: &str) -> Value {
    match serde_json::from_str::<Value>(result) {
        Ok(v @ Value::Object(_)) => v,
        Ok(other) => panic!("{tool}({raw_args:?}) answered JSON that is not an object: {other}"),
        Err(e) => panic!("{tool}({raw_args:?}) answered text that is not JSON ({e}): {result:?}"),
    }
}

/// Whether a parsed result is an error result (`{"error": ...}`).
pub fn is_error(result: &Value) -> bool {
    result.get("error").is_some()
}
