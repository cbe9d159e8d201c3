//! Blocking handlers, and what happens to them when their call is over.
//!
//! A thread cannot be cancelled: a blocking handler whose call timed out
//! (or whose caller went away) keeps its thread until it returns. Such a
//! handler is *abandoned*: its call has been answered, its result will be
//! dropped. Abandoned handlers are counted; once [`BlockingWork::limit`] of
//! them are still running, new blocking calls are refused with an error
//! that says so, instead of queueing behind them or growing the pool for
//! good. A handler that finishes after all gives its slot back.
//!
//! A call started with [`BlockingWork::run_with`] has a [`Cancellation`]:
//! abandoning the call cancels it, so a handler that watches it (as
//! `terminal` does while its command runs) stops what it started and
//! returns, giving its thread back soon after its call is over.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};

use crate::cancel::Cancellation;
use crate::error_json;

/// Abandoned blocking handlers allowed to run on before new blocking
/// calls are refused.
pub const DEFAULT_MAX_ABANDONED: usize = 16;

/// The accounting of blocking handlers: one per registry, cheap to clone.
#[derive(Debug, Clone)]
pub struct BlockingWork {
    inner: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    abandoned: AtomicUsize,
    limit: AtomicUsize,
}

/// States of one blocking call.
const RUNNING: u8 = 0;
const DONE: u8 = 1;
const ABANDONED: u8 = 2;

impl Default for BlockingWork {
    fn default() -> Self {
        BlockingWork {
            inner: Arc::new(Shared {
                abandoned: AtomicUsize::new(0),
                limit: AtomicUsize::new(DEFAULT_MAX_ABANDONED),
            }),
        }
    }
}

impl BlockingWork {
    /// Blocking handlers whose call is over but which are still running.
    pub fn abandoned(&self) -> usize {
        self.inner.abandoned.load(Ordering::Acquire)
    }

    /// How many abandoned handlers may run on before blocking calls are refused.
    pub fn limit(&self) -> usize {
        self.inner.limit.load(Ordering::Acquire)
    }

    pub(crate) fn set_limit(&self, limit: usize) {
        self.inner.limit.store(limit, Ordering::Release);
    }

    /// Runs `work` on tokio's blocking pool (inline outside a runtime) and
    /// answers its result. A panic in `work` is resumed in the caller's
    /// poll, for the caller's panic guard to contain. Dropping the future
    /// before `work` finished abandons it (see the module docs); a call
    /// made while too many are abandoned answers an error without running.
    pub fn run<F>(&self, tool: &str, work: F) -> BlockingCall
    where
        F: FnOnce() -> String + Send + 'static,
    {
        self.start(tool, None, work)
    }

    /// [`BlockingWork::run`], and `signal` is cancelled when the call is
    /// abandoned (timed out or dropped before `work` returned).
    pub fn run_with<F>(&self, tool: &str, signal: Cancellation, work: F) -> BlockingCall
    where
        F: FnOnce() -> String + Send + 'static,
    {
        self.start(tool, Some(signal), work)
    }

    fn start<F>(&self, tool: &str, signal: Option<Cancellation>, work: F) -> BlockingCall
    where
        F: FnOnce() -> String + Send + 'static,
    {
        let Ok(handle) = tokio::runtime::Handle::try_current() else {
            return BlockingCall::ready(work());
        };
        let abandoned = self.abandoned();
        if abandoned >= self.limit() {
            return BlockingCall::ready(error_json(format!(
                "Tool '{tool}' was not started: {abandoned} earlier blocking calls timed out \
                 and are still running. Try again once they finish, or use another tool"
            )));
        }
        let state = Arc::new(AtomicU8::new(RUNNING));
        let tool: Arc<str> = Arc::from(tool);
        let done = Finished {
            state: state.clone(),
            shared: self.inner.clone(),
            tool: tool.clone(),
        };
        let task = handle.spawn_blocking(move || {
            let done = done;
            let result = work();
            drop(done);
            result
        });
        BlockingCall {
            inner: Call::Running {
                task,
                state,
                shared: self.inner.clone(),
                tool,
                signal,
            },
        }
    }
}

/// Marks a call finished when the blocking closure ends (returns, panics,
/// or is dropped unrun because its task was aborted before it started).
struct Finished {
    state: Arc<AtomicU8>,
    shared: Arc<Shared>,
    tool: Arc<str>,
}

impl Drop for Finished {
    fn drop(&mut self) {
        if self.state.swap(DONE, Ordering::AcqRel) == ABANDONED {
            let left = self.shared.abandoned.fetch_sub(1, Ordering::AcqRel) - 1;
            tracing::info!(
                tool = %self.tool,
                still_running = left,
                "an abandoned blocking call has finished"
            );
        }
    }
}

/// The future of [`BlockingWork::run`]: the handler's result.
#[derive(Debug)]
pub struct BlockingCall {
    inner: Call,
}

#[derive(Debug)]
enum Call {
    /// Answered without the pool (no runtime, or refused), or already taken.
    Ready(Option<String>),
    Running {
        task: tokio::task::JoinHandle<String>,
        state: Arc<AtomicU8>,
        shared: Arc<Shared>,
        tool: Arc<str>,
        /// Cancelled when the call is abandoned.
        signal: Option<Cancellation>,
    },
}

impl BlockingCall {
    fn ready(result: String) -> Self {
        BlockingCall {
            inner: Call::Ready(Some(result)),
        }
    }
}

impl Future for BlockingCall {
    type Output = String;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<String> {
        let this = self.get_mut();
        let outcome = match &mut this.inner {
            Call::Ready(result) => return Poll::Ready(result.take().unwrap_or_default()),
            Call::Running { task, .. } => match Pin::new(task).poll(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(outcome) => outcome,
            },
        };
        // Finished: dropping this future now abandons nothing.
        this.inner = Call::Ready(None);
        match outcome {
            Ok(result) => Poll::Ready(result),
            Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
            Err(e) => Poll::Ready(error_json(format!("the blocking task did not finish: {e}"))),
        }
    }
}

impl Drop for BlockingCall {
    fn drop(&mut self) {
        let Call::Running {
            task,
            state,
            shared,
            tool,
            signal,
        } = &self.inner
        else {
            return;
        };
        // Counted first, so the closure's decrement can never come before it.
        shared.abandoned.fetch_add(1, Ordering::AcqRel);
        if state
            .compare_exchange(RUNNING, ABANDONED, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            // It had finished: nothing was abandoned.
            shared.abandoned.fetch_sub(1, Ordering::AcqRel);
            return;
        }
        let now = shared.abandoned.load(Ordering::Acquire);
        tracing::warn!(
            tool = %tool,
            abandoned = now,
            limit = shared.limit.load(Ordering::Acquire),
            "a blocking call is over (timed out or dropped) but its thread runs on"
        );
        // Not started yet: it never will be (its `Finished` gives the slot back).
        task.abort();
        // Running: a handler that watches its signal stops now.
        if let Some(signal) = signal {
            signal.cancel();
        }
    }
}
