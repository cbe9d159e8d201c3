//! The process-wide approval settings an embedding agent may install
//! (`approval::set_approval_callback`, `approval::set_yolo`), beneath a
//! context's own. One test, in a test binary of its own: these are
//! process-wide by nature, and no other test here touches them.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Mutex};

use hermes_runtime::approval;
use hermes_runtime::context::{ApprovalAnswer, ApprovalCallback, ApprovalRequest};
use hermes_runtime::{Profile, ToolContext};
use serde_json::{json, Value};

fn answering(answer: ApprovalAnswer) -> (ApprovalCallback, Arc<Mutex<usize>>) {
    let asked = Arc::new(Mutex::new(0));
    let count = asked.clone();
    let cb: ApprovalCallback = Arc::new(move |_req: ApprovalRequest| {
        *count.lock().unwrap() += 1;
        Box::pin(async move { answer })
    });
    (cb, asked)
}

fn call(ctx: &ToolContext, args: Value) -> Value {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let out = rt.block_on(hermes_tools::registry().dispatch("terminal", args, ctx));
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("not JSON ({e}): {out}"))
}

#[test]
fn a_contexts_own_settings_come_before_the_process_wide_ones() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("profile");
    std::fs::create_dir_all(&home).unwrap();
    let ctx = ToolContext::new(Profile::new(&home), dir.path()).with_task_id("t1");
    let victim = |name: &str| {
        let p = dir.path().join(name);
        std::fs::create_dir_all(&p).unwrap();
        p
    };
    let rm = |p: &std::path::Path| json!({ "command": format!("rm -r {}", p.display()) });

    // The process-wide callback answers when the context has none.
    let (global, global_asked) = answering(ApprovalAnswer::Deny);
    approval::set_approval_callback(global);
    let a = victim("a");
    let v = call(&ctx, rm(&a));
    assert!(a.exists(), "{v}");
    assert_eq!(*global_asked.lock().unwrap(), 1);

    // A context's own callback comes first.
    let (own, own_asked) = answering(ApprovalAnswer::Once);
    let b = victim("b");
    call(&ctx.clone().with_approval_callback(own), rm(&b));
    assert!(!b.exists());
    assert_eq!(*own_asked.lock().unwrap(), 1);
    assert_eq!(*global_asked.lock().unwrap(), 1);

    // The process-wide switch skips asking; a context that turns it off
    // for itself is asked.
    approval::set_yolo(true);
    let c = victim("c");
    call(&ctx, rm(&c));
    assert!(!c.exists(), "the switch ran it unasked");
    assert_eq!(*global_asked.lock().unwrap(), 1);
    let d = victim("d");
    call(&ctx.clone().with_yolo(false), rm(&d));
    assert!(d.exists());
    assert_eq!(*global_asked.lock().unwrap(), 2);

    approval::set_yolo(false);
    approval::clear_approval_callback();
}
