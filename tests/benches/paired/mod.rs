//! Paired ratios, shared by the benches: two operations measured in short
//! alternating batches, one ratio per pair. A drift of the machine's speed
//! (large on a shared VM) moves both sides of each ratio alike, so the
//! median ratio is steady where divan's separate medians are not.

use divan::black_box;
use std::time::Instant;

/// Pairs measured per ratio.
const PAIRS: usize = 300;

/// One side of a pair: runs a batch of `calls` calls and returns the
/// nanoseconds per call.
pub type Batch<'a> = &'a mut dyn FnMut(u32) -> f64;

/// Nanoseconds per call of `f` over `calls` calls. Each call's input is made
/// by `input` before the clock starts; the outputs are dropped after it
/// stops.
pub fn batch_ns<I, O>(calls: u32, input: impl FnMut() -> I, mut f: impl FnMut(I) -> O) -> f64 {
    let inputs: Vec<I> = std::iter::repeat_with(input).take(calls as usize).collect();
    let mut outputs = Vec::with_capacity(inputs.len());
    let start = Instant::now();
    for input in inputs {
        outputs.push(black_box(f(black_box(input))));
    }
    let ns = start.elapsed().as_nanos() as f64 / f64::from(calls);
    drop(outputs);
    ns
}

/// Measures `a` against `b` in alternating batches of `calls` calls and
/// prints `label` with the median ratio, its 10th-90th percentiles and the
/// median times.
pub fn paired(label: &str, calls: u32, a: Batch<'_>, b: Batch<'_>) {
    paired_n(label, calls, PAIRS, a, b);
}

/// [`paired`] with `pairs` pairs, for operations too slow for the usual
/// count (a container's `exec`, a third of a second).
#[allow(dead_code)] // Not every bench that includes this module uses it.
pub fn paired_n(label: &str, calls: u32, pairs: usize, a: Batch<'_>, b: Batch<'_>) {
    a(calls * 5);
    b(calls * 5);
    let (mut ratios, mut a_ns, mut b_ns) = (Vec::new(), Vec::new(), Vec::new());
    for pair in 0..pairs.max(1) {
        // Alternate which side runs first.
        let (ta, tb) = if pair % 2 == 0 {
            let ta = a(calls);
            (ta, b(calls))
        } else {
            let tb = b(calls);
            (a(calls), tb)
        };
        ratios.push(ta / tb);
        a_ns.push(ta);
        b_ns.push(tb);
    }
    println!(
        "{label}: {:.2}x (10th-90th percentile {:.2}-{:.2}x; {:.0} ns vs {:.0} ns)",
        percentile(&mut ratios, 50),
        percentile(&mut ratios, 10),
        percentile(&mut ratios, 90),
        percentile(&mut a_ns, 50),
        percentile(&mut b_ns, 50),
    );
}

fn percentile(values: &mut [f64], p: usize) -> f64 {
    values.sort_by(f64::total_cmp);
    values[(values.len() - 1) * p / 100]
}
