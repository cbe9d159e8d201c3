//! One model turn's calls through `Registry::dispatch_batch`: what runs
//! together, what waits, the order of the results, cancelling, and the
//! turn's budget. Overlap is shown by each call's own start and end, never
//! by a wall-clock bound.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hermes_runtime::tool::DynHandler;
use hermes_runtime::{
    BatchCall, Cancellation, Concurrency, DispatchConfig, HandlerFuture, Profile, Registry,
    RuntimeToolSpec, ToolContext, ToolEffects,
};
use hermes_tools::Session;
use serde_json::{json, Value};

/// (call label, start, end) of every probe call.
type Log = Arc<Mutex<Vec<(String, Instant, Instant)>>>;

/// A run-time tool that sleeps `ms` (its `ms` argument wins), logs its
/// span under its `label` argument and answers the label.
fn probe(name: &str, concurrency: Concurrency, read_only: bool, log: &Log) -> RuntimeToolSpec {
    let log = Arc::clone(log);
    let handler: DynHandler = Arc::new(move |_ctx: ToolContext, args: Value| {
        let log = Arc::clone(&log);
        Box::pin(async move {
            let label = args["label"].as_str().unwrap_or("").to_string();
            let ms = args["ms"].as_u64().unwrap_or(200);
            let start = Instant::now();
            tokio::time::sleep(Duration::from_millis(ms)).await;
            log.lock()
                .unwrap()
                .push((label.clone(), start, Instant::now()));
            json!({ "label": label }).to_string()
        }) as HandlerFuture
    });
    let mut spec = RuntimeToolSpec::new(
        name,
        "batch-probe",
        "A probe of the batch tests.",
        json!({"type": "object", "properties": {
            "label": {"type": "string"}, "ms": {"type": "integer"}, "path": {"type": "string"}}}),
        handler,
    );
    spec.effects = ToolEffects {
        read_only,
        destructive: !read_only,
        idempotent: read_only,
        open_world: false,
        concurrency,
    };
    spec
}

/// A registry of its own with the probes: `reader` (read-only, safe),
/// `writer` (scoped by `path`), `lone` (exclusive).
fn registry(log: &Log, config: DispatchConfig) -> Registry {
    let registry = Registry::new(&hermes_tools::generated::TABLES);
    registry
        .register_tool(probe("reader", Concurrency::Safe, true, log))
        .unwrap();
    registry
        .register_tool(probe(
            "writer",
            Concurrency::PerPath("path".into()),
            false,
            log,
        ))
        .unwrap();
    registry
        .register_tool(probe("lone", Concurrency::Exclusive, false, log))
        .unwrap();
    registry.set_dispatch_config(config);
    registry
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

fn call(id: &str, name: &str, args: Value) -> BatchCall {
    BatchCall::new(id, name, args.to_string())
}

fn span(log: &Log, label: &str) -> (Instant, Instant) {
    let log = log.lock().unwrap();
    let (_, start, end) = log
        .iter()
        .find(|(l, _, _)| l == label)
        .unwrap_or_else(|| panic!("{label} did not run: {log:?}"));
    (*start, *end)
}

fn overlap(a: (Instant, Instant), b: (Instant, Instant)) -> bool {
    a.0 < b.1 && b.0 < a.1
}

fn labels(results: &[String]) -> Vec<String> {
    results
        .iter()
        .map(|r| {
            let v: Value = serde_json::from_str(r).unwrap();
            v["label"]
                .as_str()
                .unwrap_or_else(|| panic!("{r}"))
                .to_string()
        })
        .collect()
}

#[test]
fn read_only_calls_run_together_and_answer_in_call_order() {
    let log = Log::default();
    let registry = registry(&log, DispatchConfig::default());
    let work = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new(Profile::new(work.path()), work.path());
    // The first is the slowest: its result still comes first.
    let calls: Vec<BatchCall> = (0..4)
        .map(|i| {
            call(
                &format!("c{i}"),
                "reader",
                json!({"label": format!("r{i}"), "ms": 400 - 50 * i}),
            )
        })
        .collect();
    let results = runtime().block_on(registry.dispatch_batch(&calls, &ctx));
    assert_eq!(labels(&results), ["r0", "r1", "r2", "r3"]);
    // All four were running at one moment.
    let spans: Vec<_> = (0..4).map(|i| span(&log, &format!("r{i}"))).collect();
    let latest_start = spans.iter().map(|s| s.0).max().unwrap();
    let earliest_end = spans.iter().map(|s| s.1).min().unwrap();
    assert!(latest_start < earliest_end, "{spans:?}");
}

#[test]
fn writes_to_one_path_keep_their_order_and_writes_to_two_run_together() {
    let log = Log::default();
    let registry = registry(&log, DispatchConfig::default());
    let work = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new(Profile::new(work.path()), work.path());
    let calls = [
        // The first write to a.txt is the slower one: the second still waits.
        call(
            "1",
            "writer",
            json!({"label": "a1", "path": "a.txt", "ms": 300}),
        ),
        call(
            "2",
            "writer",
            json!({"label": "b", "path": "b.txt", "ms": 300}),
        ),
        // The same file, named another way.
        call(
            "3",
            "writer",
            json!({"label": "a2", "path": "./x/../a.txt", "ms": 50}),
        ),
    ];
    let results = runtime().block_on(registry.dispatch_batch(&calls, &ctx));
    assert_eq!(labels(&results), ["a1", "b", "a2"]);
    let (a1, b, a2) = (span(&log, "a1"), span(&log, "b"), span(&log, "a2"));
    assert!(a2.0 >= a1.1, "the second write to a.txt overtook the first");
    assert!(overlap(a1, b), "writes to two paths did not run together");
}

#[test]
fn an_exclusive_call_is_a_barrier() {
    let log = Log::default();
    let registry = registry(&log, DispatchConfig::default());
    let work = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new(Profile::new(work.path()), work.path());
    let calls = [
        call("1", "reader", json!({"label": "before", "ms": 200})),
        call("2", "lone", json!({"label": "barrier", "ms": 100})),
        call("3", "reader", json!({"label": "after", "ms": 50})),
        // Arguments that are no object: run alone too.
        BatchCall::new("4", "reader", "[1, 2]"),
    ];
    let results = runtime().block_on(registry.dispatch_batch(&calls, &ctx));
    assert_eq!(labels(&results[..3]), ["before", "barrier", "after"]);
    let (before, barrier, after) = (
        span(&log, "before"),
        span(&log, "barrier"),
        span(&log, "after"),
    );
    assert!(
        barrier.0 >= before.1,
        "the barrier started before an earlier call ended"
    );
    assert!(
        after.0 >= barrier.1,
        "a later call started before the barrier ended"
    );
}

#[test]
fn at_most_the_configured_number_run_at_once() {
    let log = Log::default();
    let registry = registry(&log, DispatchConfig::default().with_max_parallel_calls(2));
    let work = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new(Profile::new(work.path()), work.path());
    let calls: Vec<BatchCall> = (0..5)
        .map(|i| {
            call(
                &i.to_string(),
                "reader",
                json!({"label": format!("r{i}"), "ms": 100}),
            )
        })
        .collect();
    runtime().block_on(registry.dispatch_batch(&calls, &ctx));
    let spans: Vec<_> = (0..5).map(|i| span(&log, &format!("r{i}"))).collect();
    // The most running at one instant: the calls running when each starts
    // (two calls may each overlap a third without overlapping each other).
    for (i, s) in spans.iter().enumerate() {
        let running = spans.iter().filter(|o| o.0 <= s.0 && s.0 < o.1).count();
        assert!(
            running <= 2,
            "{running} calls ran when call {i} started: {spans:?}"
        );
    }
}

#[test]
fn a_read_after_a_write_of_the_same_file_reads_what_was_written() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let session = Session::new(Profile::new(home.path()), work.path());
    let ctx = session.context();
    let registry = hermes_tools::registry();
    let calls = [
        call(
            "w",
            "write_file",
            json!({"path": "notes.txt", "content": "first\n"}),
        ),
        call(
            "w2",
            "write_file",
            json!({"path": "other.txt", "content": "other\n"}),
        ),
        call("r", "read_file", json!({"path": "notes.txt"})),
    ];
    let results = runtime().block_on(registry.dispatch_batch(&calls, &ctx));
    let read: Value = serde_json::from_str(&results[2]).unwrap();
    assert!(
        read["content"].as_str().unwrap_or("").contains("first"),
        "{}",
        results[2]
    );
    assert_eq!(
        std::fs::read_to_string(work.path().join("other.txt")).unwrap(),
        "other\n"
    );
}

/// Live processes whose command line holds `marker` (the sandbox gives a
/// command pids of its own namespace, so `$$` would not name it here).
fn running(marker: &str) -> usize {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return 0;
    };
    entries
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .bytes()
                .all(|b| b.is_ascii_digit())
        })
        .filter(|e| {
            let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
            // A zombie is no process: it only waits to be reaped.
            let zombie = stat
                .rsplit(')')
                .next()
                .unwrap_or("")
                .trim_start()
                .starts_with('Z');
            let cmdline = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
            !zombie && String::from_utf8_lossy(&cmdline).contains(marker)
        })
        .count()
}

fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    for _ in 0..200 {
        if done() {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("{what}: not within 10 s");
}

#[test]
fn cancelling_the_batch_ends_its_processes_and_starts_nothing_more() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let session = Session::new(Profile::new(home.path()), work.path());
    let cancel = Cancellation::new();
    let ctx = session.context().with_cancellation(cancel.clone());
    // A sleep no other test starts: this process's id in its length.
    let marker = format!("3000.{}17", std::process::id());
    let calls = [
        call(
            "t",
            "terminal",
            json!({"command": format!("sleep {marker}"), "timeout": 120}),
        ),
        call("after", "read_file", json!({"path": "anything.txt"})),
    ];
    let rt = runtime();
    let batch = rt.spawn({
        let ctx = ctx.clone();
        async move { hermes_tools::registry().dispatch_batch(&calls, &ctx).await }
    });
    for _ in 0..200 {
        if running(&marker) > 0 || batch.is_finished() {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    if batch.is_finished() {
        panic!("the batch ended first: {:?}", rt.block_on(batch));
    }
    assert!(
        running(&marker) > 0,
        "the command did not start within 10 s"
    );
    cancel.cancel();
    let results = rt.block_on(batch).unwrap();
    wait_for("the command's process ended", || running(&marker) == 0);
    let after: Value = serde_json::from_str(&results[1]).unwrap();
    assert!(
        after["error"].as_str().unwrap_or("").contains("cancelled"),
        "{}",
        results[1]
    );
}

#[test]
fn the_turn_budget_spills_the_longest_results() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    // 100 lines of 59 `x`: read_file keeps lines of this length whole.
    let big = format!("{}\n", "x".repeat(59)).repeat(100);
    for name in ["a.txt", "b.txt"] {
        std::fs::write(work.path().join(name), &big).unwrap();
    }
    std::fs::write(work.path().join("small.txt"), "small\n").unwrap();
    let registry = Registry::new(&hermes_tools::generated::TABLES);
    registry.set_dispatch_config(DispatchConfig::default().with_max_turn_chars(8_000));
    let session = Session::new(Profile::new(home.path()), work.path());
    let ctx = session.context();
    let calls = [
        call("1", "read_file", json!({"path": "a.txt"})),
        call("2", "read_file", json!({"path": "small.txt"})),
        call("3", "read_file", json!({"path": "b.txt"})),
    ];
    let results = runtime().block_on(registry.dispatch_batch(&calls, &ctx));
    let total: usize = results.iter().map(|r| r.chars().count()).sum();
    assert!(total <= 8_000, "{total} characters in all");
    // The small one is untouched; what was spilled can be read back whole.
    assert!(results[1].contains("small"), "{}", results[1]);
    let spilled: Vec<Value> = results
        .iter()
        .map(|r| serde_json::from_str::<Value>(r).unwrap())
        .filter(|v| v.get("full_result_path").is_some())
        .collect();
    assert!(!spilled.is_empty(), "{results:?}");
    for v in spilled {
        let path = v["full_result_path"].as_str().unwrap();
        assert!(Path::new(path).starts_with(home.path()), "{path}");
        let kept = std::fs::read_to_string(path).unwrap();
        assert!(kept.matches('x').count() >= 5_900, "{path}");
    }
}
