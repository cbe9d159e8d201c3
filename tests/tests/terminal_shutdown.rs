//! `shutdown_background_processes` tears down every background process the
//! tools started. A binary of its own: it would kill other tests' processes.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use hermes_procs::scan;
use hermes_runtime::{Profile, ToolContext};
use serde_json::json;

fn marked(marker: &str) -> Vec<i32> {
    scan::all()
        .into_iter()
        .filter(|p| p.is_live())
        .filter(|p| {
            std::fs::read(format!("/proc/{}/cmdline", p.pid))
                .map(|c| String::from_utf8_lossy(&c).contains(marker))
                .unwrap_or(false)
        })
        .map(|p| p.pid)
        .collect()
}

#[tokio::test]
async fn shutdown_tears_down_every_background_process() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new(Profile::new(dir.path()), dir.path());
    let marker = format!("3000.{}7", std::process::id());
    for script in [
        format!("sleep {marker}"),
        format!("trap '' TERM; sleep {marker} & sleep {marker}"),
    ] {
        let out = hermes_tools::registry()
            .dispatch(
                "terminal",
                json!({"command": script, "background": true}),
                &ctx,
            )
            .await;
        assert!(out.contains("proc_"), "{out}");
    }
    let deadline = Instant::now() + Duration::from_secs(5);
    while marked(&marker).len() < 3 {
        assert!(Instant::now() < deadline, "processes did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    let running = hermes_tools::shutdown_background_processes(Duration::from_millis(200));
    assert_eq!(running, 2);
    assert!(marked(&marker).is_empty(), "{:?}", marked(&marker));
}
