//! Dispatch overhead, in one process: `dispatch_json` of a trivial tool (two
//! typed arguments, echoes them) against a hand-written baseline that only
//! does `serde_json::from_str` of an args struct, the call and
//! `serde_json::to_string` of the result. Also: the same dispatch with a
//! no-op post-call hook registered, to show what hooks cost when present
//! (and that the no-hook path pays nothing for them).
//!
//! After divan's table, the dispatch/baseline ratio is measured paired:
//! short alternating batches of the two, one ratio per pair, so a drift of
//! the machine's speed (large on a shared VM) moves both sides of a ratio
//! alike. That median ratio is the figure the README reports.
//!
//! Run: `cargo bench -p hermes-tests --bench dispatch`.

use std::future::Future;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use divan::{black_box, Bencher};
use hermes_runtime::hooks::{PostCallEvent, PostCallHook};
use hermes_runtime::{Profile, Registry, ToolContext};
use serde::{Deserialize, Serialize};

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

/// What the baseline does per call.
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

/// Nanoseconds per call of `f`, over one batch.
fn batch_ns(f: &mut dyn FnMut() -> String, calls: u32) -> f64 {
    let mut outs = Vec::with_capacity(calls as usize);
    let start = std::time::Instant::now();
    for _ in 0..calls {
        outs.push(black_box(f()));
    }
    let ns = start.elapsed().as_nanos() as f64 / f64::from(calls);
    drop(outs);
    ns
}

/// Prints medians of paired ratios (see the module docs): dispatch over
/// the baseline (the README's figure), and its two parts: the tool's own
/// direct entry (decode, boxed future, call, encode) over the baseline, and
/// dispatch over that entry (lookup, panic guard, timeout, result cap).
fn paired_ratio() {
    let registry = Registry::new(&hermes_tests::generated::TABLES);
    let ctx = ctx();
    let direct = hermes_tests::generated::TABLES
        .tools
        .get("echo")
        .and_then(|e| e.direct);
    let mut dispatch = || run_ready(registry.dispatch_json("echo", black_box(ARGS), &ctx));
    let mut entry = || {
        direct
            .and_then(|d| d(&ctx, black_box(ARGS)))
            .map(run_ready)
            .unwrap_or_default()
    };
    let mut base = baseline;
    println!();
    paired("dispatch_json / baseline", &mut dispatch, &mut base);
    paired("  direct entry / baseline", &mut entry, &mut base);
    paired("  dispatch_json / direct entry", &mut dispatch, &mut entry);
}

/// Measures `a` against `b` in alternating batches; prints the median
/// ratio with its 10th-90th percentiles and the median times.
fn paired(label: &str, a: &mut dyn FnMut() -> String, b: &mut dyn FnMut() -> String) {
    const PAIRS: usize = 300;
    const CALLS: u32 = 4000;
    batch_ns(a, CALLS * 5);
    batch_ns(b, CALLS * 5);
    let (mut ratios, mut a_ns, mut b_ns) = (Vec::new(), Vec::new(), Vec::new());
    for pair in 0..PAIRS {
        // Alternate which side runs first.
        let (ta, tb) = if pair % 2 == 0 {
            let ta = batch_ns(a, CALLS);
            (ta, batch_ns(b, CALLS))
        } else {
            let tb = batch_ns(b, CALLS);
            (batch_ns(a, CALLS), tb)
        };
        ratios.push(ta / tb);
        a_ns.push(ta);
        b_ns.push(tb);
    }
    let pct = |v: &mut Vec<f64>, p: usize| {
        v.sort_by(f64::total_cmp);
        v[(v.len() - 1) * p / 100]
    };
    println!(
        "{label}: {:.2}x (10th-90th percentile {:.2}-{:.2}x; {:.0} ns vs {:.0} ns)",
        pct(&mut ratios, 50),
        pct(&mut ratios, 10),
        pct(&mut ratios, 90),
        pct(&mut a_ns, 50),
        pct(&mut b_ns, 50),
    );
}
