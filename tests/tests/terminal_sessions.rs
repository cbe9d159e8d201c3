//! Terminal sessions through the real registry's dispatch, with real
//! shells: what one call of a session leaves for the next (the working
//! directory, exported variables, unset ones) and what it does not (plain
//! variables, functions, aliases, shell options), as the reference's local
//! terminal does; sessions scoped by task id and profile; the bounds (live
//! sessions, idle expiry, the size of a session's state) and the private
//! state folder.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use hermes_runtime::{Profile, ToolContext};
use hermes_tools::tools::terminal::session;
use serde_json::{json, Value};

fn profile(dir: &std::path::Path, env: &str) -> Profile {
    let home = dir.join(".hermes");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(home.join(".env"), env).unwrap();
    Profile::new(home)
}

async fn run(ctx: &ToolContext, command: &str) -> Value {
    let out = hermes_tools::registry()
        .dispatch("terminal", json!({ "command": command }), ctx)
        .await;
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("not JSON ({e}): {out}"))
}

fn output(v: &Value) -> String {
    v["output"]
        .as_str()
        .unwrap_or_else(|| panic!("no output: {v}"))
        .trim_end()
        .to_string()
}

#[tokio::test]
async fn a_session_keeps_the_directory_and_exported_variables_only() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir_all(work.join("sub")).unwrap();
    let ctx = ToolContext::new(profile(dir.path(), ""), &work).with_task_id("t-keep");

    let v = run(
        &ctx,
        "cd sub && export FOO=1 && BAR=2 && f() { echo fn; } && alias ll='echo aliased' \
         && set -e && shopt -s nullglob && echo done",
    )
    .await;
    assert_eq!(output(&v), "done", "{v}");
    let v = run(
        &ctx,
        "pwd; echo \"FOO=$FOO BAR=$BAR\"; type f >/dev/null 2>&1 || echo no-function; \
         alias ll >/dev/null 2>&1 || echo no-alias; shopt -q nullglob || echo no-nullglob; \
         false; echo survived-false",
    )
    .await;
    let sub = std::fs::canonicalize(work.join("sub")).unwrap();
    assert_eq!(
        output(&v),
        format!(
            "{}\nFOO=1 BAR=\nno-function\nno-alias\nno-nullglob\nsurvived-false",
            sub.display()
        ),
        "{v}"
    );

    // `unset` persists; so does a variable of the profile's base changed.
    run(&ctx, "unset FOO; export LANG=C; export MULTI=\"a b\nc\"").await;
    let v = run(
        &ctx,
        "echo \"[${FOO-unset}] $LANG\"; printf '%s' \"$MULTI\"",
    )
    .await;
    assert_eq!(output(&v), "[unset] C\na b\nc", "{v}");

    // A relative workdir is relative to the session's directory, and the
    // session follows it.
    let v = run(&ctx, "pwd").await;
    assert_eq!(output(&v), sub.display().to_string());
    let out = hermes_tools::registry()
        .dispatch(
            "terminal",
            json!({"command": "mkdir -p deeper && cd deeper && pwd", "workdir": "."}),
            &ctx,
        )
        .await;
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(output(&v), sub.join("deeper").display().to_string());
    assert_eq!(
        output(&run(&ctx, "pwd").await),
        sub.join("deeper").display().to_string()
    );
}

#[tokio::test]
async fn a_command_that_ends_its_shell_leaves_the_session_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new(profile(dir.path(), ""), dir.path()).with_task_id("t-exit");
    run(&ctx, "export KEEP=1; cd /").await;
    let v = run(&ctx, "export KEEP=2; cd /tmp; exit 3").await;
    assert_eq!(v["exit_code"], 3, "{v}");
    let v = run(&ctx, "echo $KEEP; pwd").await;
    assert_eq!(output(&v), "1\n/", "{v}");
    // A timeout kills the shell: nothing it did is kept either.
    let out = hermes_tools::registry()
        .dispatch(
            "terminal",
            json!({"command": "export KEEP=3; sleep 30", "timeout": 1}),
            &ctx,
        )
        .await;
    assert!(out.contains("timed out"), "{out}");
    assert_eq!(output(&run(&ctx, "echo $KEEP").await), "1");
}

#[tokio::test]
async fn sessions_are_scoped_by_task_and_by_profile() {
    let dir = tempfile::tempdir().unwrap();
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    let pa = profile(a.path(), "");
    let pb = profile(b.path(), "");
    let held = hermes_tools::Session::new(pa.clone(), dir.path());
    let one = held.context();
    let other_task = ToolContext::new(pa, dir.path()).with_task_id("t-scope-2");
    let other_profile = ToolContext::new(pb, dir.path())
        .with_task_id(held.id())
        .with_session_id(held.id());

    run(&one, "cd / && export SCOPED=yes").await;
    assert_eq!(output(&run(&one, "echo $SCOPED; pwd").await), "yes\n/");
    let here = std::fs::canonicalize(dir.path()).unwrap();
    for ctx in [&other_task, &other_profile] {
        let v = run(ctx, "echo \"[$SCOPED]\"; pwd -P").await;
        assert_eq!(output(&v), format!("[]\n{}", here.display()), "{v}");
    }
    // A background command starts from the session too.
    let out = hermes_tools::registry()
        .dispatch(
            "terminal",
            json!({"command": "echo \"$SCOPED in $(pwd)\"", "background": true}),
            &one,
        )
        .await;
    let v: Value = serde_json::from_str(&out).unwrap();
    let id = v["session_id"].as_str().unwrap();
    let out = hermes_tools::registry()
        .dispatch(
            "process",
            json!({"action": "wait", "session_id": id, "timeout": 20}),
            &one,
        )
        .await;
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["output"].as_str().unwrap().trim(), "yes in /", "{v}");

    // Ending the session forgets it.
    held.end();
    let v = run(&one, "echo \"[$SCOPED]\"").await;
    assert_eq!(output(&v), "[]");
}

#[tokio::test]
async fn an_idle_session_expires() {
    let dir = tempfile::tempdir().unwrap();
    let p = profile(dir.path(), &format!("{}=1\n", session::IDLE_SETTING));
    let ctx = ToolContext::new(p, dir.path()).with_task_id("t-idle");
    run(&ctx, "export IDLE=here").await;
    assert_eq!(output(&run(&ctx, "echo $IDLE").await), "here");
    std::thread::sleep(Duration::from_millis(1300));
    assert_eq!(output(&run(&ctx, "echo \"[$IDLE]\"").await), "[]");
}

#[tokio::test]
async fn a_state_too_large_is_not_kept_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new(profile(dir.path(), ""), dir.path()).with_task_id("t-big");
    run(&ctx, "export SMALL=1").await;
    // Over the cap in three variables; then one variable under the cap but
    // larger than a program can be passed (the next command could not start).
    for command in [
        "for v in A B C; do export $v=$(head -c 100000 /dev/zero | tr '\\0' a); done; echo set",
        "export HUGE=$(head -c 140000 /dev/zero | tr '\\0' a); echo set",
    ] {
        let v = run(&ctx, command).await;
        assert_eq!(output(&v), "set");
        assert!(
            v["note"].as_str().unwrap_or_default().contains("not kept"),
            "{v}"
        );
        assert_eq!(
            output(&run(&ctx, "echo \"${#A}${#HUGE} $SMALL\"").await),
            "00 1"
        );
    }
}

#[tokio::test]
async fn live_sessions_are_capped_and_the_state_folder_is_private() {
    let dir = tempfile::tempdir().unwrap();
    let p = profile(dir.path(), "");
    let started = Instant::now();
    let total = session::MAX_SESSIONS + 8;
    for i in 0..total {
        let ctx = ToolContext::new(p.clone(), dir.path()).with_task_id(format!("t-cap-{i}"));
        run(&ctx, &format!("export N={i}")).await;
        assert!(started.elapsed() < Duration::from_secs(120), "bounded");
    }
    assert!(
        session::live() <= session::MAX_SESSIONS,
        "{}",
        session::live()
    );
    // The least recently used went first; the newest is there.
    let session_of =
        |i: usize| ToolContext::new(p.clone(), dir.path()).with_task_id(format!("t-cap-{i}"));
    assert_eq!(
        output(&run(&session_of(total - 1), "echo $N").await),
        (total - 1).to_string()
    );
    assert_eq!(output(&run(&session_of(0), "echo \"[$N]\"").await), "[]");
    // The profile's handle, dropped, ends every session left of it.
    drop(hermes_tools::ProfileSessions::new(p.clone()));
    assert_eq!(
        output(&run(&session_of(total - 1), "echo \"[$N]\"").await),
        "[]"
    );

    let folder = session::state_folder().expect("a state folder");
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&folder).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o700, "{}", folder.display());
}

#[tokio::test]
async fn exported_values_of_every_kind_reach_the_next_call_unchanged() {
    // bash lists them with three kinds of quoting: plain `"..."` (quotes,
    // backslashes, `$` and backquotes escaped), `$'...'` for values with
    // a newline or a control character, and arrays (never exported to a
    // program, so not kept).
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new(profile(dir.path(), ""), dir.path()).with_task_id("t-quote");
    let v = run(
        &ctx,
        r#"export A=$'one\ntwo' B='q"uo\te $x `y` \' C=é D=$'\x01\x7f\e' E='' F=$'tab\there'; declare -ax ARR=(1 2); echo set"#,
    )
    .await;
    assert_eq!(output(&v), "set", "{v}");
    let v = run(
        &ctx,
        r#"for n in A B C D E F; do printf '%s=%q\n' "$n" "${!n}"; done; echo "ARR=${ARR-unset}""#,
    )
    .await;
    assert_eq!(
        output(&v),
        "A=$'one\\ntwo'\nB=q\\\"uo\\\\te\\ \\$x\\ \\`y\\`\\ \\\\\nC=é\nD=$'\\001\\177\\E'\nE=''\nF=$'tab\\there'\nARR=unset",
        "{v}"
    );
}

proptest::proptest! {
    #![proptest_config(proptest::test_runner::Config {
        cases: 40,
        failure_persistence: None,
        ..proptest::test_runner::Config::default()
    })]

    /// Whatever an exported value holds (any character but NUL, which no
    /// variable can), the next call of the session sees it unchanged.
    #[test]
    fn any_exported_value_reaches_the_next_call(value in "[^\u{0}]{0,24}") {
        let quoted = format!("'{}'", value.replace('\'', r"'\''"));
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let ctx = ToolContext::new(profile(dir.path(), ""), dir.path()).with_task_id("t-any");
        let set = runtime.block_on(run(&ctx, &format!("export V={quoted} && echo set")));
        proptest::prop_assert_eq!(output(&set), "set", "{}", set);
        let check = runtime.block_on(run(
            &ctx,
            &format!("[ \"${{V-unset}}\" = {quoted} ] && echo same || echo differs"),
        ));
        proptest::prop_assert_eq!(output(&check), "same", "{}", check);
    }
}
