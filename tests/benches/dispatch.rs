//! Dispatch overhead, in one process: `dispatch_json` of a trivial tool (two
//! typed arguments, echoes them) against a hand-written baseline that only
//! does `serde_json::from_str` of an args struct, the call and
//! `serde_json::to_string` of the result. Also: the same dispatch with a
//! no-op post-call hook registered, to show what hooks cost when present
//! (and that the no-hook path pays nothing for them).
//!
//! After divan's table, the dispatch/baseline ratio is measured paired
//! (`paired/mod.rs`): short alternating batches of the two, one ratio per
//! pair. That median ratio is the figure `FIGURES.md` reports. So is
//! `dispatch_batch` of one call over `dispatch_json` of it: what a turn of
//! one call pays for going through the batch entry point.
//!
//! Run: `cargo bench -p hermes-tests --bench dispatch`.

use std::future::Future;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use divan::{black_box, Bencher};
use hermes_runtime::hooks::{PostCallEvent, PostCallHook};
use hermes_runtime::{BatchCall, Profile, Registry, ToolContext};
use paired::{batch_ns, paired};
use serde::{Deserialize, Serialize};

mod paired;

fn main() {
    divan::main();
    paired_ratio();
}

const ARGS: &str = r#"{"text": "hello world", "count": 3}"#;

/// Polls a future that completes without waiting (the echo tool never waits).
fn run_ready<F: Future>(fut: F) -> F::Output {
    let mut fut = std::pin::pin!(fut);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(v) = fut.as_mut().poll(&mut cx) {
            return v;
        }
    }
}

fn ctx() -> ToolContext {
    ToolContext::new(Profile::new("/tmp/bench"), "/tmp")
}

#[derive(Deserialize)]
struct EchoArgs {
    text: String,
    count: Option<u32>,
}

#[derive(Serialize)]
struct EchoOutput {
    text: String,
    count: Option<u32>,
}

async fn echo(text: String, count: Option<u32>) -> EchoOutput {
    EchoOutput { text, count }
}

/// What the baseline does per call: one call of a function, as
/// `dispatch_json` is (never inlined into the benchmark's loop).
#[inline(never)]
fn baseline() -> String {
    let args: EchoArgs = serde_json::from_str(black_box(ARGS)).unwrap_or(EchoArgs {
        text: String::new(),
        count: None,
    });
    let out = run_ready(echo(args.text, args.count));
    serde_json::to_string(&out).unwrap_or_default()
}

#[divan::bench(sample_count = 1000, sample_size = 64)]
fn baseline_from_str_call_to_string(b: Bencher) {
    b.bench(baseline);
}

#[divan::bench(sample_count = 1000, sample_size = 64)]
fn dispatch_no_hooks(b: Bencher) {
    let registry = Registry::new(&hermes_tests::generated::TABLES);
    let ctx = ctx();
    b.bench(|| run_ready(registry.dispatch_json("echo", black_box(ARGS), &ctx)));
}

struct Noop;
impl PostCallHook for Noop {
    fn post_call(&self, event: &PostCallEvent<'_>) {
        black_box(event.duration_ms);
    }
}

#[divan::bench(sample_count = 1000, sample_size = 64)]
fn dispatch_one_post_call_hook(b: Bencher) {
    let registry = Registry::new(&hermes_tests::generated::TABLES);
    registry.add_post_call_hook(Arc::new(Noop));
    let ctx = ctx();
    b.bench(|| run_ready(registry.dispatch_json("echo", black_box(ARGS), &ctx)));
}

/// The floor of any schema-guided pipeline: the arguments parsed into a
/// `serde_json::Value` (coercion needs one), then decoded into the struct.
#[divan::bench(sample_count = 1000, sample_size = 64)]
fn floor_parse_value_then_decode(b: Bencher) {
    b.bench(|| {
        let v: serde_json::Value = serde_json::from_str(black_box(ARGS)).unwrap_or_default();
        let args: EchoArgs = serde_json::from_value(v).unwrap_or(EchoArgs {
            text: String::new(),
            count: None,
        });
        let out = run_ready(echo(args.text, args.count));
        serde_json::to_string(&out).unwrap_or_default()
    });
}

/// Prints medians of paired ratios (see the module docs): dispatch over
/// the baseline (the figure of `FIGURES.md`), and its two parts: the tool's own
/// direct entry (decode, boxed future, call, encode) over the baseline, and
/// dispatch over that entry (lookup, panic guard, timeout, result cap).
fn paired_ratio() {
    let registry = Registry::new(&hermes_tests::generated::TABLES);
    let ctx = ctx();
    let direct = hermes_tests::generated::TABLES
        .tools
        .get("echo")
        .and_then(|e| e.direct);
    let dispatch_once = || run_ready(registry.dispatch_json("echo", black_box(ARGS), &ctx));
    let entry_once = || {
        direct
            .and_then(|d| d(&ctx, black_box(ARGS)))
            .map(run_ready)
            .unwrap_or_default()
    };
    let mut dispatch = |n| batch_ns(n, || (), |()| dispatch_once());
    let mut entry = |n| batch_ns(n, || (), |()| entry_once());
    let mut base = |n| batch_ns(n, || (), |()| baseline());
    println!();
    paired("dispatch_json / baseline", CALLS, &mut dispatch, &mut base);
    paired("  direct entry / baseline", CALLS, &mut entry, &mut base);
    paired(
        "  dispatch_json / direct entry",
        CALLS,
        &mut dispatch,
        &mut entry,
    );
    let one = [BatchCall::new("", "echo", ARGS)];
    let batch_once = || run_ready(registry.dispatch_batch(black_box(&one), &ctx));
    let mut batch = |n| batch_ns(n, || (), |()| batch_once());
    paired(
        "dispatch_batch of one call / dispatch_json",
        CALLS,
        &mut batch,
        &mut dispatch,
    );
    // Two crates composed, the tool in the first one: the lookup tries the
    // later crate (a miss) before finding it, the worst order.
    let composed = Registry::compose(&[
        &hermes_tests::generated::TABLES,
        &hermes_tools::generated::TABLES,
    ])
    .unwrap_or_else(|e| panic!("{e}"));
    let composed_once = || run_ready(composed.dispatch_json("echo", black_box(ARGS), &ctx));
    let mut composed_batch = |n| batch_ns(n, || (), |()| composed_once());
    paired(
        "dispatch_json, two crates composed / one crate",
        CALLS,
        &mut composed_batch,
        &mut dispatch,
    );
}

/// Calls per batch of a pair.
const CALLS: u32 = 4000;
