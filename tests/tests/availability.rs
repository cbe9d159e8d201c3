//! Availability checks: TTL, flake grace, panics, per-profile answers and
//! secrets, on an injected clock (no sleeping).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use hermes_runtime::availability::{Availability, ManualClock};
use hermes_runtime::Profile;

fn setup() -> (Arc<ManualClock>, Availability) {
    let clock = Arc::new(ManualClock::new());
    (clock.clone(), Availability::new(clock))
}

static FLIP_CALLS: AtomicUsize = AtomicUsize::new(0);
static FLIP_OK: AtomicBool = AtomicBool::new(true);
fn flip(_: &Profile) -> bool {
    FLIP_CALLS.fetch_add(1, Ordering::SeqCst);
    FLIP_OK.load(Ordering::SeqCst)
}

#[test]
fn answers_are_cached_for_30s_and_failures_within_60s_of_a_success_are_grace() {
    let (clock, av) = setup();
    let p = Profile::new("/profiles/a");
    let calls = || FLIP_CALLS.load(Ordering::SeqCst);

    assert!(av.is_available(flip, &p));
    assert_eq!(calls(), 1);
    clock.advance(Duration::from_secs(29));
    assert!(av.is_available(flip, &p));
    assert_eq!(calls(), 1, "served from the cache within the TTL");

    // The check starts failing: after the TTL it runs again, but 31 s after
    // the last success is within the flake grace: available, not cached.
    FLIP_OK.store(false, Ordering::SeqCst);
    clock.advance(Duration::from_secs(2));
    assert!(av.is_available(flip, &p));
    assert_eq!(calls(), 2);
    assert!(av.is_available(flip, &p));
    assert_eq!(calls(), 3, "a grace answer is not cached: it probes again");

    // 60 s after the last success the failure is honoured and cached.
    clock.advance(Duration::from_secs(30));
    assert!(!av.is_available(flip, &p));
    assert_eq!(calls(), 4);
    assert!(!av.is_available(flip, &p));
    assert_eq!(calls(), 4, "an honoured failure is cached");

    // Recovery is seen once the failure's TTL ran out; invalidate forgets all.
    FLIP_OK.store(true, Ordering::SeqCst);
    av.invalidate();
    assert!(av.is_available(flip, &p));
    assert_eq!(calls(), 5);
}

fn panics(_: &Profile) -> bool {
    panic!("check exploded")
}

#[test]
fn a_panicking_check_is_unavailable() {
    let (_, av) = setup();
    assert!(!av.is_available(panics, &Profile::new("/profiles/p")));
}

fn has_key(p: &Profile) -> bool {
    p.secret("SEARCH_API_KEY").is_some()
}

#[test]
fn each_profile_gets_its_own_answer_from_its_own_env_file() {
    let (_, av) = setup();
    let with = tempfile::tempdir().unwrap();
    let without = tempfile::tempdir().unwrap();
    std::fs::write(with.path().join(".env"), "# keys\nSEARCH_API_KEY=\"abc\"\n").unwrap();
    // The process environment is never consulted.
    std::env::set_var("SEARCH_API_KEY", "from-process-env");

    let with = Profile::new(with.path());
    let without = Profile::new(without.path());
    assert_eq!(with.secret("SEARCH_API_KEY").as_deref(), Some("abc"));
    assert_eq!(without.secret("SEARCH_API_KEY"), None);
    assert!(av.is_available(has_key, &with));
    assert!(!av.is_available(has_key, &without));
}

static SHARED_CALLS: AtomicUsize = AtomicUsize::new(0);
fn shared(_: &Profile) -> bool {
    SHARED_CALLS.fetch_add(1, Ordering::SeqCst);
    true
}

#[test]
fn a_check_shared_by_several_tools_runs_once_per_pass() {
    let (_, av) = setup();
    let p = Profile::new("/profiles/s");
    let mut pass = av.pass(&p);
    for _ in 0..5 {
        assert!(pass.is_available(Some(shared)));
    }
    assert!(pass.is_available(None));
    assert_eq!(SHARED_CALLS.load(Ordering::SeqCst), 1);
}
