//! Cancellation of a call: the signal a tool watches to stop what it
//! started when its call is over before it is.
//!
//! A call is over early when dispatch's timeout fires, when the caller
//! drops the dispatch future (an MCP client's `notifications/cancelled`,
//! an embedder's own interrupt or timeout), or when an embedder cancels
//! the [`Cancellation`] it put in the call's context
//! ([`ToolContext::with_cancellation`](crate::ToolContext::with_cancellation)).
//!
//! An async handler is stopped by being dropped: what its future owns is
//! dropped with it. A blocking handler cannot be stopped from outside (a
//! thread cannot be cancelled), so dispatch gives each blocking call a
//! [`Cancellation`] of its own, a child of the context's, and cancels it
//! when the call is abandoned ([`crate::blocking`]). A tool that waits
//! (`terminal` on its command, `process` wait) watches it with
//! [`Cancellation::wait`] and stops: `terminal` tears the command's
//! processes down at once.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, Weak};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

/// A cancellation signal, cheap to clone (clones share it). Cancelling is
/// final; children created with [`Cancellation::child`] are cancelled with
/// their parent, never the other way round.
#[derive(Debug, Clone, Default)]
pub struct Cancellation {
    inner: Arc<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    fired: AtomicBool,
    state: Mutex<Waiters>,
    changed: Condvar,
}

#[derive(Debug, Default)]
struct Waiters {
    wakers: Vec<Waker>,
    children: Vec<Weak<Inner>>,
}

/// Children a signal keeps at most before dropping those already gone.
const PRUNE_AT: usize = 64;

impl Cancellation {
    /// A signal nobody has cancelled yet.
    pub fn new() -> Self {
        Cancellation::default()
    }

    /// Cancels this signal and every child of it. Idempotent.
    pub fn cancel(&self) {
        cancel_inner(&self.inner);
    }

    /// Whether [`Cancellation::cancel`] was called on this signal or an
    /// ancestor.
    pub fn is_cancelled(&self) -> bool {
        self.inner.fired.load(Ordering::Acquire)
    }

    /// A new signal cancelled when this one is (at once if it already was),
    /// and that can be cancelled alone.
    pub fn child(&self) -> Cancellation {
        let child = Cancellation::new();
        {
            let mut state = lock(&self.inner.state);
            if !self.is_cancelled() {
                if state.children.len() >= PRUNE_AT {
                    state.children.retain(|c| c.strong_count() > 0);
                }
                state.children.push(Arc::downgrade(&child.inner));
                return child;
            }
        }
        child.cancel();
        child
    }

    /// Blocks the calling thread until the signal is cancelled or `limit`
    /// passes; whether it was cancelled.
    pub fn wait(&self, limit: Duration) -> bool {
        let deadline = Instant::now().checked_add(limit);
        let mut state = lock(&self.inner.state);
        loop {
            if self.is_cancelled() {
                return true;
            }
            let left = match deadline {
                Some(d) => d.saturating_duration_since(Instant::now()),
                None => Duration::from_secs(3600),
            };
            if left.is_zero() {
                return false;
            }
            state = self
                .inner
                .changed
                .wait_timeout(state, left)
                .map_or_else(|e| e.into_inner().0, |(s, _)| s);
        }
    }

    /// A future that completes once the signal is cancelled.
    pub fn cancelled(&self) -> Cancelled {
        Cancelled {
            inner: self.inner.clone(),
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn cancel_inner(inner: &Arc<Inner>) {
    // Children are cancelled outside the lock, one level at a time, so a
    // deep chain needs no recursion under a held mutex.
    let mut pending = vec![inner.clone()];
    while let Some(node) = pending.pop() {
        if node.fired.swap(true, Ordering::AcqRel) {
            continue;
        }
        let (wakers, children) = {
            let mut state = lock(&node.state);
            (
                std::mem::take(&mut state.wakers),
                std::mem::take(&mut state.children),
            )
        };
        node.changed.notify_all();
        wakers.into_iter().for_each(Waker::wake);
        pending.extend(children.iter().filter_map(Weak::upgrade));
    }
}

/// The future of [`Cancellation::cancelled`].
#[derive(Debug)]
pub struct Cancelled {
    inner: Arc<Inner>,
}

impl Future for Cancelled {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.inner.fired.load(Ordering::Acquire) {
            return Poll::Ready(());
        }
        let mut state = lock(&self.inner.state);
        // Checked again under the lock: `cancel` takes the wakers under it.
        if self.inner.fired.load(Ordering::Acquire) {
            return Poll::Ready(());
        }
        if !state.wakers.iter().any(|w| w.will_wake(cx.waker())) {
            state.wakers.push(cx.waker().clone());
        }
        Poll::Pending
    }
}

/// Cancels its signal when dropped, unless [`CancelOnDrop::disarm`]ed
/// first: what ties a call's signal to the life of the call's future.
#[derive(Debug)]
pub struct CancelOnDrop(Option<Cancellation>);

impl CancelOnDrop {
    pub fn new(signal: Cancellation) -> Self {
        CancelOnDrop(Some(signal))
    }

    /// The call finished: dropping this cancels nothing.
    pub fn disarm(&mut self) {
        self.0 = None;
    }
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if let Some(signal) = self.0.take() {
            signal.cancel();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn children_follow_their_parent_only() {
        let parent = Cancellation::new();
        let (a, b) = (parent.child(), parent.child());
        a.cancel();
        assert!(a.is_cancelled() && !b.is_cancelled() && !parent.is_cancelled());
        let grandchild = b.child();
        parent.cancel();
        assert!(b.is_cancelled() && grandchild.is_cancelled());
        assert!(parent.child().is_cancelled());
    }

    #[test]
    fn a_waiting_thread_wakes_on_cancel() {
        let signal = Cancellation::new();
        let waiter = {
            let signal = signal.clone();
            std::thread::spawn(move || signal.wait(Duration::from_secs(30)))
        };
        std::thread::sleep(Duration::from_millis(20));
        signal.cancel();
        assert_eq!(waiter.join().ok(), Some(true));
        assert!(!Cancellation::new().wait(Duration::from_millis(5)));
    }

    #[test]
    fn the_future_completes_on_cancel() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        let signal = Cancellation::new();
        let fired = signal.clone();
        rt.block_on(async move {
            let waiting = tokio::spawn(async move { signal.cancelled().await });
            tokio::task::yield_now().await;
            fired.cancel();
            assert!(waiting.await.is_ok());
        });
    }

    #[test]
    fn drop_guard_cancels_unless_disarmed() {
        let signal = Cancellation::new();
        drop(CancelOnDrop::new(signal.clone()));
        assert!(signal.is_cancelled());
        let kept = Cancellation::new();
        let mut guard = CancelOnDrop::new(kept.clone());
        guard.disarm();
        drop(guard);
        assert!(!kept.is_cancelled());
    }
}
