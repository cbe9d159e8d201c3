//! Approval as a runtime capability, through dispatch with real commands:
//! `terminal`'s dangerous commands asking the installed callback (once,
//! session, always, deny), the refusal without a callback (nothing runs),
//! hard lines that hold even with the operator's switch, a context's own
//! callback before the process-wide one, and a pre-call hook of another
//! tool asking the same way.
//!
//! Each test's callback and operator switch are its context's own
//! (`ToolContext::with_approval_callback`, `with_yolo`), so the tests run
//! in parallel; the process-wide ones are tested in
//! `approval_process_wide.rs`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::cell::{Cell, RefCell};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use hermes_runtime::approval::{self, ApprovalNeed};
use hermes_runtime::context::{ApprovalAnswer, ApprovalCallback, ApprovalRequest};
use hermes_runtime::hooks::{
    CallInfo, CallStatus, PostCallEvent, PostCallHook, PreCallDecision, PreCallHook,
};
use hermes_runtime::{Profile, Registry, ToolContext};
use serde_json::{json, Value};

/// A callback that answers `answer` and records what it was asked.
fn answering(answer: ApprovalAnswer) -> (ApprovalCallback, Arc<Mutex<Vec<ApprovalRequest>>>) {
    let asked = Arc::new(Mutex::new(Vec::new()));
    let log = asked.clone();
    let cb: ApprovalCallback = Arc::new(move |req: ApprovalRequest| {
        log.lock().unwrap().push(req);
        Box::pin(async move { answer })
    });
    (cb, asked)
}

/// A profile and a working folder, and what its calls' context carries:
/// the approval callback and the operator's switch are the context's own,
/// so tests running at once never see each other's.
struct Sandbox {
    dir: tempfile::TempDir,
    home: PathBuf,
    callback: RefCell<Option<ApprovalCallback>>,
    yolo: Cell<bool>,
}

impl Sandbox {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("profile");
        std::fs::create_dir_all(&home).unwrap();
        Sandbox {
            dir,
            home,
            callback: RefCell::new(None),
            yolo: Cell::new(false),
        }
    }

    fn set_callback(&self, callback: ApprovalCallback) {
        *self.callback.borrow_mut() = Some(callback);
    }

    fn set_yolo(&self, on: bool) {
        self.yolo.set(on);
    }

    fn ctx(&self, task: &str) -> ToolContext {
        let ctx = ToolContext::new(Profile::new(&self.home), self.dir.path())
            .with_task_id(task)
            .with_yolo(self.yolo.get());
        match self.callback.borrow().clone() {
            Some(cb) => ctx.with_approval_callback(cb),
            None => ctx,
        }
    }

    /// A fresh folder that `rm -r` (a dangerous pattern) would remove.
    fn victim(&self, name: &str) -> PathBuf {
        let p = self.dir.path().join(name);
        std::fs::create_dir_all(&p).unwrap();
        p
    }
}

fn rm(path: &Path) -> Value {
    json!({ "command": format!("rm -r {}", path.display()) })
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

fn call(ctx: &ToolContext, tool: &str, args: Value) -> Value {
    let out = runtime().block_on(hermes_tools::registry().dispatch(tool, args, ctx));
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("not JSON ({e}): {out}"))
}

#[test]
fn without_a_callback_a_dangerous_command_is_refused_and_never_runs() {
    let sb = Sandbox::new();
    let victim = sb.victim("v");
    let v = call(&sb.ctx("t1"), "terminal", rm(&victim));
    let error = v["error"].as_str().unwrap_or_else(|| panic!("{v}"));
    assert!(
        error.contains("BLOCKED") && error.contains("approval"),
        "{v}"
    );
    assert!(
        error.contains("recursive delete") || error.contains("delete under"),
        "{v}"
    );
    assert!(victim.exists(), "nothing ran");
    // A harmless command runs as before.
    let v = call(&sb.ctx("t1"), "terminal", json!({"command": "echo fine"}));
    assert_eq!(v["output"].as_str().unwrap().trim(), "fine", "{v}");
}

#[test]
fn once_runs_this_call_and_asks_again_next_time() {
    let sb = Sandbox::new();
    let (cb, asked) = answering(ApprovalAnswer::Once);
    sb.set_callback(cb);
    let first = sb.victim("a");
    let v = call(&sb.ctx("t1"), "terminal", rm(&first));
    assert_eq!(v["exit_code"], 0, "{v}");
    assert!(!first.exists(), "approved once: it ran");
    let second = sb.victim("b");
    call(&sb.ctx("t1"), "terminal", rm(&second));
    assert!(!second.exists());
    let asked = asked.lock().unwrap();
    assert_eq!(asked.len(), 2, "once is for one call");
    assert_eq!(asked[0].tool, "terminal");
    assert!(asked[0].detail.contains("rm -r"), "{:?}", asked[0].detail);
    assert_eq!(asked[0].key, asked[0].reason);
}

#[test]
fn session_covers_the_same_pattern_in_the_same_session_only() {
    let sb = Sandbox::new();
    let (cb, asked) = answering(ApprovalAnswer::Session);
    sb.set_callback(cb);
    for name in ["a", "b", "c"] {
        let victim = sb.victim(name);
        call(&sb.ctx("t-session"), "terminal", rm(&victim));
        assert!(!victim.exists());
    }
    assert_eq!(asked.lock().unwrap().len(), 1, "asked once for the session");
    // Another session is asked again.
    let victim = sb.victim("d");
    call(&sb.ctx("t-other"), "terminal", rm(&victim));
    assert_eq!(asked.lock().unwrap().len(), 2);
    // Another pattern in the first session is asked too.
    call(
        &sb.ctx("t-session"),
        "terminal",
        json!({"command": "git reset --hard 2>/dev/null; true"}),
    );
    assert_eq!(asked.lock().unwrap().len(), 3);
    approval::forget_session(&sb.ctx("t-session"));
    call(&sb.ctx("t-session"), "terminal", rm(&sb.victim("e")));
    assert_eq!(
        asked.lock().unwrap().len(),
        4,
        "forgotten session asks again"
    );
}

#[test]
fn always_is_remembered_per_profile_in_a_file() {
    let sb = Sandbox::new();
    let (cb, asked) = answering(ApprovalAnswer::Always);
    sb.set_callback(cb);
    call(&sb.ctx("t1"), "terminal", rm(&sb.victim("a")));
    let file = sb.home.join(approval::ALWAYS_FILE);
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let key = asked.lock().unwrap()[0].key.clone();
    assert_eq!(saved["always"], json!([key]), "{saved}");

    // Another session of the same profile, with a callback that would deny:
    // not asked.
    let (deny, denied) = answering(ApprovalAnswer::Deny);
    sb.set_callback(deny.clone());
    let victim = sb.victim("b");
    call(&sb.ctx("t-later"), "terminal", rm(&victim));
    assert!(!victim.exists());
    assert!(denied.lock().unwrap().is_empty());

    // Another profile is asked (and denied).
    let other = Sandbox::new();
    other.set_callback(deny);
    let victim = other.victim("c");
    let v = call(&other.ctx("t1"), "terminal", rm(&victim));
    assert!(victim.exists(), "{v}");
    assert_eq!(denied.lock().unwrap().len(), 1);
}

#[test]
fn deny_blocks_with_a_message_the_model_can_follow() {
    let sb = Sandbox::new();
    let (cb, asked) = answering(ApprovalAnswer::Deny);
    sb.set_callback(cb);
    let victim = sb.victim("a");
    let v = call(&sb.ctx("t1"), "terminal", rm(&victim));
    let error = v["error"].as_str().unwrap_or_else(|| panic!("{v}"));
    assert!(
        error.contains("denied") && error.contains("Do not retry"),
        "{v}"
    );
    assert!(victim.exists());
    assert_eq!(asked.lock().unwrap().len(), 1);
}

#[test]
fn a_panicking_callback_counts_as_deny() {
    let sb = Sandbox::new();
    sb.set_callback(Arc::new(|_req: ApprovalRequest| {
        panic!("the approval UI crashed")
    }));
    let victim = sb.victim("a");
    let v = call(&sb.ctx("t1"), "terminal", rm(&victim));
    assert!(v["error"].as_str().unwrap().contains("denied"), "{v}");
    assert!(victim.exists());
}

#[test]
fn the_operator_switch_skips_approval_but_not_the_hard_line() {
    let sb = Sandbox::new();
    let (cb, asked) = answering(ApprovalAnswer::Deny);
    sb.set_callback(cb);
    sb.set_yolo(true);
    let victim = sb.victim("a");
    call(&sb.ctx("t1"), "terminal", rm(&victim));
    assert!(!victim.exists(), "ran without asking");
    for command in [
        "rm -rf /",
        "true || { :(){ :|:& };: ; }",
        "r''m -rf ~",
        "mkfs.ext4 /dev/sdz9",
        "bash -c 'reboot'",
    ] {
        let v = call(&sb.ctx("t1"), "terminal", json!({ "command": command }));
        let error = v["error"]
            .as_str()
            .unwrap_or_else(|| panic!("{command}: {v}"));
        assert!(error.contains("hard line"), "{command}: {v}");
    }
    assert!(asked.lock().unwrap().is_empty());
}

/// Asks for approval of every `write_file` call.
struct AskForWrites;

impl PreCallHook for AskForWrites {
    fn pre_call(&self, call: &CallInfo<'_>) -> PreCallDecision {
        if call.tool == "write_file" {
            PreCallDecision::NeedsApproval(
                ApprovalNeed::new("file writes", "writing a file")
                    .with_detail(call.args["path"].as_str().unwrap_or_default()),
            )
        } else {
            PreCallDecision::Continue
        }
    }
}

#[derive(Default)]
struct Statuses(Mutex<Vec<CallStatus>>);

impl PostCallHook for Statuses {
    fn post_call(&self, event: &PostCallEvent<'_>) {
        self.0.lock().unwrap().push(event.status);
    }
}

#[test]
fn a_hook_asks_for_approval_the_same_way() {
    let sb = Sandbox::new();
    let registry = Registry::new(&hermes_tools::generated::TABLES);
    registry.add_pre_call_hook(Arc::new(AskForWrites));
    let statuses = Arc::new(Statuses::default());
    registry.add_post_call_hook(statuses.clone());
    let target = sb.dir.path().join("out.txt");
    let args = json!({"path": target.display().to_string(), "content": "hi"});
    let rt = runtime();

    // No callback: refused, nothing written, the call reported as blocked.
    let out = rt.block_on(registry.dispatch("write_file", args.clone(), &sb.ctx("t1")));
    assert!(
        out.contains("BLOCKED") && out.contains("writing a file"),
        "{out}"
    );
    assert!(!target.exists());

    let (cb, asked) = answering(ApprovalAnswer::Session);
    sb.set_callback(cb);
    for _ in 0..2 {
        let out = rt.block_on(registry.dispatch("write_file", args.clone(), &sb.ctx("t1")));
        assert!(!out.contains("error"), "{out}");
    }
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "hi");
    let asked = asked.lock().unwrap();
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].tool, "write_file");
    assert_eq!(asked[0].detail, target.display().to_string());
    // Other tools are not asked about.
    let out = rt.block_on(registry.dispatch(
        "read_file",
        json!({"path": target.display().to_string()}),
        &sb.ctx("t1"),
    ));
    assert!(out.contains("hi"), "{out}");
    assert_eq!(asked.len(), 1);
    assert_eq!(
        *statuses.0.lock().unwrap(),
        vec![
            CallStatus::Blocked,
            CallStatus::Ok,
            CallStatus::Ok,
            CallStatus::Ok
        ]
    );
}

impl Sandbox {
    /// Replaces the profile's `config.yaml` (a new file: the next call
    /// reads it).
    fn config(&self, text: &str) {
        let tmp = self.home.join(".config.yaml.new");
        std::fs::write(&tmp, text).unwrap();
        std::fs::rename(&tmp, self.home.join("config.yaml")).unwrap();
    }
}

/// The refusals of the policy never tell the model what would approve.
fn names_no_switch(error: &str) {
    for hint in [
        "approvals.json",
        "command_allowlist",
        "approvals.mode",
        "cron_mode",
        "yolo",
        "config.yaml",
    ] {
        assert!(!error.contains(hint), "{hint}: {error}");
    }
}

#[test]
fn the_users_deny_rules_come_before_every_bypass() {
    let sb = Sandbox::new();
    let (cb, asked) = answering(ApprovalAnswer::Once);
    sb.set_callback(cb);
    sb.config("approvals:\n  deny: [\"touch*\", \"rm -r *\"]\n  mode: \"off\"\ncommand_allowlist: [\"rm -r *\", \"touch *\"]\n");
    sb.set_yolo(true);
    let marker = sb.dir.path().join("made");
    for command in [
        format!("touch {}", marker.display()),
        format!("echo a; touch {}", marker.display()),
        format!("TOUCH {}", marker.display()),
        format!("true && (touch {})", marker.display()),
    ] {
        let v = call(&sb.ctx("t1"), "terminal", json!({ "command": command }));
        let error = v["error"]
            .as_str()
            .unwrap_or_else(|| panic!("{command}: {v}"));
        assert!(error.contains("'touch*'"), "{command}: {v}");
        names_no_switch(error);
    }
    assert!(!marker.exists(), "a denied command ran");
    // An "always" answer does not lift a deny rule either.
    approval::remember_always(&sb.home, "recursive delete").unwrap();
    let victim = sb.victim("v");
    let v = call(&sb.ctx("t1"), "terminal", rm(&victim));
    assert!(
        v["error"].as_str().is_some_and(|e| e.contains("rm -r *")),
        "{v}"
    );
    assert!(victim.exists());
    assert!(asked.lock().unwrap().is_empty());
    // Without the rule, the same switches let it run: the next call reads
    // the edited file.
    sb.config("approvals:\n  mode: manual\n");
    let v = call(
        &sb.ctx("t1"),
        "terminal",
        json!({ "command": format!("touch {}", marker.display()) }),
    );
    assert!(v.get("error").is_none(), "{v}");
    assert!(marker.exists());
}

#[test]
fn a_plain_deny_rule_names_a_command_with_any_arguments() {
    // The issue's configuration: `deny: ["touch"]` with `mode: off`.
    let sb = Sandbox::new();
    sb.config("approvals:\n  deny: [\"touch\", \"git push\"]\n  mode: \"off\"\n");
    sb.set_yolo(true);
    let marker = sb.dir.path().join("made");
    for command in [
        format!("touch {}", marker.display()),
        format!("/usr/bin/touch {}", marker.display()),
        format!("echo a && touch {}", marker.display()),
        "git push origin main".to_string(),
    ] {
        let v = call(&sb.ctx("t1"), "terminal", json!({ "command": command }));
        let error = v["error"]
            .as_str()
            .unwrap_or_else(|| panic!("{command}: {v}"));
        assert!(error.contains("user's own rules"), "{command}: {v}");
    }
    assert!(!marker.exists(), "a denied command ran");
    // A word that only starts like the rule is another command.
    let v = call(
        &sb.ctx("t1"),
        "terminal",
        json!({ "command": "echo touchstone; git pushy 2>/dev/null; true" }),
    );
    assert!(v.get("error").is_none(), "{v}");
    sb.set_yolo(false);
}

#[test]
fn mode_off_runs_flagged_commands_and_smart_asks_the_user() {
    let sb = Sandbox::new();
    let (cb, asked) = answering(ApprovalAnswer::Deny);
    sb.set_callback(cb);
    sb.config("approvals:\n  mode: off\n");
    let victim = sb.victim("a");
    let v = call(&sb.ctx("t1"), "terminal", rm(&victim));
    assert!(!victim.exists(), "{v}");
    assert!(asked.lock().unwrap().is_empty());
    // The hard line holds under `off`.
    let v = call(&sb.ctx("t1"), "terminal", json!({"command": "rm -rf /"}));
    assert!(
        v["error"].as_str().is_some_and(|e| e.contains("hard line")),
        "{v}"
    );
    // `smart` (the default) and `manual` ask.
    for mode in ["smart", "manual"] {
        sb.config(&format!("approvals:\n  mode: {mode}\n"));
        let victim = sb.victim(mode);
        let v = call(&sb.ctx("t1"), "terminal", rm(&victim));
        assert!(victim.exists(), "{mode}: {v}");
        names_no_switch(v["error"].as_str().unwrap());
    }
    assert_eq!(asked.lock().unwrap().len(), 2);
    // `off` is for commands: a hook's own question is still asked.
    sb.config("approvals:\n  mode: off\n");
    let need = ApprovalNeed::new("file writes", "writing a file");
    let err = runtime().block_on(approval::request(&sb.ctx("t1"), "write_file", need));
    assert!(err.is_err());
    assert_eq!(asked.lock().unwrap().len(), 3);
}

#[test]
fn the_allowlist_approves_its_keys_and_plain_commands_it_matches() {
    let sb = Sandbox::new();
    let (cb, asked) = answering(ApprovalAnswer::Deny);
    sb.set_callback(cb);
    let a = sb.victim("keep-a");
    let b = sb.victim("keep-b");
    sb.config(&format!(
        "command_allowlist:\n  - \"rm -r {}\"\n  - \"rm -r {}/x*\"\n",
        a.display(),
        sb.dir.path().display()
    ));
    // The exact command, and a glob over the whole command.
    let v = call(&sb.ctx("t1"), "terminal", rm(&a));
    assert!(!a.exists(), "{v}");
    let x = sb.victim("x1");
    call(&sb.ctx("t1"), "terminal", rm(&x));
    assert!(!x.exists());
    assert!(asked.lock().unwrap().is_empty());
    // Not another command, and not a compound one the glob happens to match.
    call(&sb.ctx("t1"), "terminal", rm(&b));
    let x2 = sb.victim("x2");
    let v = call(
        &sb.ctx("t1"),
        "terminal",
        json!({"command": format!("rm -r {}; rm -r {}", x2.display(), b.display())}),
    );
    assert!(b.exists() && x2.exists(), "{v}");
    assert_eq!(asked.lock().unwrap().len(), 2);
    // An entry naming a rule's key approves that rule, as "always" does.
    let key = asked.lock().unwrap()[0].key.clone();
    sb.config(&format!("command_allowlist: [\"{key}\"]\n"));
    call(&sb.ctx("t1"), "terminal", rm(&b));
    assert!(!b.exists());
    assert_eq!(asked.lock().unwrap().len(), 2);
}

#[test]
fn no_answer_within_the_timeout_is_a_denial() {
    let sb = Sandbox::new();
    sb.config("approvals:\n  timeout: 1\n");
    // A user who never answers.
    sb.set_callback(Arc::new(|_req: ApprovalRequest| {
        Box::pin(std::future::pending::<ApprovalAnswer>())
    }));
    let victim = sb.victim("a");
    let started = std::time::Instant::now();
    let v = call(&sb.ctx("t1"), "terminal", rm(&victim));
    let took = started.elapsed();
    let error = v["error"].as_str().unwrap_or_else(|| panic!("{v}"));
    assert!(error.contains("did not answer within 1 s"), "{v}");
    names_no_switch(error);
    assert!(victim.exists());
    assert!(took < std::time::Duration::from_secs(10), "{took:?}");
}

#[test]
fn a_cron_job_follows_cron_mode() {
    let sb = Sandbox::new();
    // A callback is there, but a cron job has no user: never asked.
    let (cb, asked) = answering(ApprovalAnswer::Once);
    sb.set_callback(cb);
    let cron = sb.ctx("cron-1").for_cron_job();
    let victim = sb.victim("a");
    let v = call(&cron, "terminal", rm(&victim));
    let error = v["error"].as_str().unwrap_or_else(|| panic!("{v}"));
    assert!(error.contains("scheduled job"), "{v}");
    names_no_switch(error);
    assert!(victim.exists());
    sb.config("approvals:\n  cron_mode: approve\n");
    call(&cron, "terminal", rm(&victim));
    assert!(!victim.exists());
    // The hard line and the deny rules hold for cron jobs too.
    sb.config("approvals:\n  cron_mode: approve\n  deny: [\"rm -r *\"]\n");
    let victim = sb.victim("b");
    call(&cron, "terminal", rm(&victim));
    assert!(victim.exists());
    assert!(asked.lock().unwrap().is_empty());
}

#[test]
fn a_command_writing_the_approvals_file_needs_the_user() {
    let sb = Sandbox::new();
    let (cb, asked) = answering(ApprovalAnswer::Deny);
    sb.set_callback(cb);
    let file = sb.home.join(approval::ALWAYS_FILE);
    for command in [
        r#"echo '{"always": ["recursive delete"]}' > "$HERMES_HOME"/approvals.json"#.to_string(),
        format!("printf x | tee {}", file.display()),
        format!("cp /dev/null {}", file.display()),
    ] {
        let v = call(&sb.ctx("t1"), "terminal", json!({ "command": command }));
        let error = v["error"]
            .as_str()
            .unwrap_or_else(|| panic!("{command}: {v}"));
        assert!(error.contains("denied"), "{command}: {v}");
        names_no_switch(error);
        assert!(!file.exists(), "{command}");
    }
    assert_eq!(asked.lock().unwrap().len(), 3);
    // Reading it is no write.
    let v = call(
        &sb.ctx("t1"),
        "terminal",
        json!({"command": "cat \"$HERMES_HOME\"/approvals.json; true"}),
    );
    assert!(v.get("error").is_none(), "{v}");
}

/// The variable that makes this test binary a writer of "always" answers
/// (`HOME_DIR:PREFIX`) for `always_answers_of_processes_sharing_a_profile_all_stay`.
const ALWAYS_WRITER_ENV: &str = "HERMES_TEST_ALWAYS_WRITER";
const ANSWERS_PER_WRITER: usize = 15;

/// Several processes on one profile folder (hosts on a shared volume)
/// each saving "always" answers at the same time: every answer stays
/// (the read, change and rename run under the folder's lock).
#[test]
fn always_answers_of_processes_sharing_a_profile_all_stay() {
    if let Ok(job) = std::env::var(ALWAYS_WRITER_ENV) {
        let (home, prefix) = job.split_once(':').unwrap();
        for i in 0..ANSWERS_PER_WRITER {
            approval::remember_always(Path::new(home), &format!("{prefix}-{i}")).unwrap();
        }
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("profile");
    let exe = std::env::current_exe().unwrap();
    let writers: Vec<_> = (0..4)
        .map(|w| {
            std::process::Command::new(&exe)
                .args([
                    "--exact",
                    "always_answers_of_processes_sharing_a_profile_all_stay",
                    "--test-threads=1",
                ])
                .env(ALWAYS_WRITER_ENV, format!("{}:w{w}", home.display()))
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut writer in writers {
        assert!(writer.wait().unwrap().success());
    }
    let kept = approval::always_approved(&home);
    for w in 0..4 {
        for i in 0..ANSWERS_PER_WRITER {
            assert!(
                kept.contains(&format!("w{w}-{i}")),
                "w{w}-{i} lost: {kept:?}"
            );
        }
    }
}
