//! Availability checks: is a tool reachable / opted in for the profile it
//! runs under? Answers are cached per (check, profile) for 30 s; a check that
//! panics counts as unavailable; a failure within 60 s of that check's last
//! success is served as available and not cached (flake grace), so the next
//! call probes again. The clock is injectable so all of this is testable
//! without sleeping.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::Profile;

/// An availability check, as `check = path` names it.
pub type CheckFn = fn(&Profile) -> bool;

/// How long an answer is reused.
pub const CHECK_TTL: Duration = Duration::from_secs(30);
/// How long after a success a failure is treated as a flake.
pub const FLAKE_GRACE: Duration = Duration::from_secs(60);

/// Where "now" comes from.
pub trait Clock: Send + Sync + std::fmt::Debug {
    fn now(&self) -> Instant;
}

/// The monotonic system clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Instant {
        Instant::now()
    }
}

/// A clock that only moves when told to (for tests).
#[derive(Debug)]
pub struct ManualClock {
    base: Instant,
    offset: Mutex<Duration>,
}

impl ManualClock {
    pub fn new() -> Self {
        ManualClock {
            base: Instant::now(),
            offset: Mutex::new(Duration::ZERO),
        }
    }

    pub fn advance(&self, by: Duration) {
        *lock(&self.offset) += by;
    }
}

impl Default for ManualClock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Instant {
        self.base + *lock(&self.offset)
    }
}

/// A poisoned lock only means another thread panicked mid-update of plain
/// data; the data is still usable.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

#[derive(Debug, Default, Clone, Copy)]
struct CheckState {
    cached: Option<(bool, Instant)>,
    last_success: Option<Instant>,
}

/// The process-wide answers of availability checks, per (check, profile).
#[derive(Debug)]
pub struct Availability {
    clock: Arc<dyn Clock>,
    state: Mutex<HashMap<(usize, PathBuf), CheckState>>,
}

impl Default for Availability {
    fn default() -> Self {
        Availability::new(Arc::new(SystemClock))
    }
}

impl Availability {
    pub fn new(clock: Arc<dyn Clock>) -> Self {
        Availability {
            clock,
            state: Mutex::new(HashMap::new()),
        }
    }

    /// "Now", on this cache's clock.
    pub fn now(&self) -> Instant {
        self.clock.now()
    }

    /// Answers `check` for `profile`, from the cache when fresh.
    pub fn is_available(&self, check: CheckFn, profile: &Profile) -> bool {
        let key = (check as usize, profile.home().to_path_buf());
        let now = self.clock.now();
        if let Some(state) = lock(&self.state).get(&key) {
            if let Some((answer, at)) = state.cached {
                if now.saturating_duration_since(at) < CHECK_TTL {
                    return answer;
                }
            }
        }
        // Run the check without holding the lock: checks may be slow.
        let ok = std::panic::catch_unwind(|| check(profile)).unwrap_or(false);
        let mut states = lock(&self.state);
        let state = states.entry(key).or_default();
        if ok {
            state.cached = Some((true, now));
            state.last_success = Some(now);
            return true;
        }
        let in_grace = state
            .last_success
            .is_some_and(|t| now.saturating_duration_since(t) < FLAKE_GRACE);
        if in_grace {
            state.cached = None;
            true
        } else {
            state.cached = Some((false, now));
            false
        }
    }

    /// Forgets every cached answer (the flake-grace history too).
    pub fn invalidate(&self) {
        lock(&self.state).clear();
    }

    /// Forgets the cached answers of one profile.
    pub fn invalidate_profile(&self, profile: &Profile) {
        lock(&self.state).retain(|(_, home), _| home != profile.home());
    }

    /// A memo for one definitions pass: a check shared by several tools
    /// runs (or hits the cache) once.
    pub fn pass<'a>(&'a self, profile: &'a Profile) -> CheckPass<'a> {
        CheckPass {
            availability: self,
            profile,
            seen: HashMap::new(),
        }
    }
}

/// Answers within one definitions pass.
#[derive(Debug)]
pub struct CheckPass<'a> {
    availability: &'a Availability,
    profile: &'a Profile,
    seen: HashMap<usize, bool>,
}

impl CheckPass<'_> {
    /// `None` (no check) is available.
    pub fn is_available(&mut self, check: Option<CheckFn>) -> bool {
        let Some(check) = check else { return true };
        let (availability, profile) = (self.availability, self.profile);
        *self
            .seen
            .entry(check as usize)
            .or_insert_with(|| availability.is_available(check, profile))
    }
}
