//! One model turn's tool calls, run together where what the tools declare
//! allows it ([`Registry::dispatch_batch`]).
//!
//! Each call is dispatched as [`Registry::dispatch_json`] would (hooks,
//! approval, timeout and cap per call); what changes is when it starts.
//! A call's [`ToolEffects::concurrency`](crate::ToolEffects) places it:
//!
//! - `Exclusive` (and a tool that declared nothing, an unknown tool, and
//!   arguments that are not a JSON object) is a barrier: it starts when
//!   every earlier call has ended, and no later call starts before it ends.
//!   `clarify` is one (it asks the user).
//! - `Safe` starts once the last barrier before it has ended.
//! - `PerPath(param)` starts once the last barrier has ended and every
//!   earlier path-scoped call whose path overlaps its own (one is the
//!   other or inside it, each resolved as the file tools resolve it:
//!   [`crate::paths::real_path_from`]) has ended: two writes to one
//!   file run in the order the model wrote them, a read after a write
//!   reads what was written, writes to two paths run together. Two reads
//!   of one file are ordered too, as the reference orders them: a file
//!   tool keeps per-session state about the files it read (a second read
//!   of an unchanged page says so instead of repeating it). A call with no
//!   usable path is a barrier.
//!
//! So a later call never overtakes an earlier one it could disturb, and the
//! results come back in call order. At most
//! [`DispatchConfig::max_parallel_calls`](crate::DispatchConfig::max_parallel_calls) run at once.
//!
//! **Cancelling.** The batch runs under its context's [`Cancellation`]
//! (`ToolContext::with_cancellation`): once it is cancelled no further
//! call starts (each is answered an error saying so), and the running ones
//! get the signal as any call does (`terminal` ends its command's
//! processes) and are awaited. Dropping the batch's future drops the calls
//! in flight, with the same effect.
//!
//! **The turn's budget.** When the results together are longer than
//! [`DispatchConfig::max_turn_chars`](crate::DispatchConfig::max_turn_chars) (lowered by the profile's
//! `tool_output.max_turn_chars`), the longest are saved whole under the
//! profile's home and replaced by a preview and the path (as a result over
//! its own cap is, `cap.rs`), the longest first, until the rest fit.
//!
//! [`Cancellation`]: crate::Cancellation

use std::future::{poll_fn, Future};
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::task::Poll;

use serde_json::Value;

use crate::cap::spill_for_turn;
use crate::content::{is_content_result, ToolContent};
use crate::effects::Concurrency;
use crate::paths::real_path_from;
use crate::registry::{DEFAULT_MAX_PARALLEL_CALLS, DEFAULT_MAX_TURN_CHARS};
use crate::{error_json, Registry, ToolContext};

/// One tool call of a model's turn, as the model sent it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatchCall {
    /// The call's id (`tool_call_id`), given to its context; empty: none.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments, as the JSON text the model wrote.
    pub arguments: String,
}

impl BatchCall {
    pub fn new(
        id: impl Into<String>,
        name: impl Into<String>,
        arguments: impl Into<String>,
    ) -> Self {
        BatchCall {
            id: id.into(),
            name: name.into(),
            arguments: arguments.into(),
        }
    }
}

/// The results of one batch, one per call, in call order: a slice of
/// strings (`results[i]`, `.iter()`, `.len()`) that also iterates by
/// value. A batch of one call keeps its result inline, with no
/// allocation beyond the result's own text, so a turn of one call costs
/// what [`Registry::dispatch_json`] costs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatchResults(Results);

#[derive(Debug, Clone, PartialEq, Eq)]
enum Results {
    One(String),
    Many(Vec<String>),
}

impl BatchResults {
    /// The results as a `Vec`.
    pub fn into_vec(self) -> Vec<String> {
        match self.0 {
            Results::One(result) => vec![result],
            Results::Many(results) => results,
        }
    }
}

impl std::ops::Deref for BatchResults {
    type Target = [String];

    fn deref(&self) -> &[String] {
        match &self.0 {
            Results::One(result) => std::slice::from_ref(result),
            Results::Many(results) => results,
        }
    }
}

impl std::ops::DerefMut for BatchResults {
    fn deref_mut(&mut self) -> &mut [String] {
        match &mut self.0 {
            Results::One(result) => std::slice::from_mut(result),
            Results::Many(results) => results,
        }
    }
}

impl From<BatchResults> for Vec<String> {
    fn from(results: BatchResults) -> Self {
        results.into_vec()
    }
}

impl IntoIterator for BatchResults {
    type Item = String;
    type IntoIter = BatchResultsIter;

    fn into_iter(self) -> BatchResultsIter {
        BatchResultsIter(match self.0 {
            Results::One(result) => Iter::One(Some(result)),
            Results::Many(results) => Iter::Many(results.into_iter()),
        })
    }
}

impl<'a> IntoIterator for &'a BatchResults {
    type Item = &'a String;
    type IntoIter = std::slice::Iter<'a, String>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

/// [`BatchResults`] by value, in call order.
#[derive(Debug)]
pub struct BatchResultsIter(Iter);

#[derive(Debug)]
enum Iter {
    One(Option<String>),
    Many(std::vec::IntoIter<String>),
}

impl Iterator for BatchResultsIter {
    type Item = String;

    fn next(&mut self) -> Option<String> {
        match &mut self.0 {
            Iter::One(result) => result.take(),
            Iter::Many(results) => results.next(),
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = match &self.0 {
            Iter::One(result) => usize::from(result.is_some()),
            Iter::Many(results) => results.len(),
        };
        (n, Some(n))
    }
}

impl ExactSizeIterator for BatchResultsIter {}

/// What a batch answers for each call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Form {
    /// Text: media named in a note.
    Text,
    /// The result as dispatch has it: a content envelope for media.
    Content,
}

/// Where a call may run, from its tool's declaration and its arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Access {
    /// Alone.
    Barrier,
    /// Beside anything but a barrier.
    Shared,
    /// Beside anything but a barrier and overlapping paths.
    Path(PathBuf),
}

/// The calls each call waits for (indices of earlier calls).
fn plan(access: &[Access]) -> Vec<Vec<usize>> {
    let mut waits = Vec::with_capacity(access.len());
    let mut last_barrier: Option<usize> = None;
    for (i, a) in access.iter().enumerate() {
        let since = last_barrier.map_or(0, |b| b + 1);
        let mut deps: Vec<usize> = last_barrier.into_iter().collect();
        match a {
            Access::Barrier => {
                deps.extend(since..i);
                last_barrier = Some(i);
            }
            Access::Shared => {}
            Access::Path(path) => {
                for (j, earlier) in access.iter().enumerate().take(i).skip(since) {
                    if let Access::Path(other) = earlier {
                        if overlap(path, other) {
                            deps.push(j);
                        }
                    }
                }
            }
        }
        waits.push(deps);
    }
    waits
}

/// Whether one path is the other or inside it.
fn overlap(a: &Path, b: &Path) -> bool {
    a.starts_with(b) || b.starts_with(a)
}

/// A call's place, from its tool and its arguments.
fn access_of(registry: &Registry, call: &BatchCall, ctx: &ToolContext) -> Access {
    let Some(tool) = registry.tool(&call.name) else {
        return Access::Barrier;
    };
    match &tool.effects().concurrency {
        Concurrency::Exclusive => Access::Barrier,
        Concurrency::Safe => match serde_json::from_str::<Value>(&call.arguments) {
            Ok(Value::Object(_)) => Access::Shared,
            _ if call.arguments.trim().is_empty() => Access::Shared,
            _ => Access::Barrier,
        },
        Concurrency::PerPath(param) => {
            let path = match serde_json::from_str::<Value>(&call.arguments) {
                Ok(Value::Object(args)) => args
                    .get(param.as_ref())
                    .and_then(Value::as_str)
                    .and_then(|raw| real_path_from(ctx.cwd(), raw)),
                _ => None,
            };
            path.map_or(Access::Barrier, Access::Path)
        }
    }
}

type CallFuture<'a> = Pin<Box<dyn Future<Output = String> + Send + 'a>>;

impl Registry {
    /// Runs one model turn's calls, together where their tools allow it
    /// (see [`crate::batch`]), and answers their results in call order.
    /// A result with media comes back as text with a note naming the media
    /// (as from [`Registry::dispatch_json`]); [`Registry::dispatch_batch_content`]
    /// answers the media too.
    pub async fn dispatch_batch(&self, calls: &[BatchCall], ctx: &ToolContext) -> BatchResults {
        // Written out, not shared with `dispatch_batch_content`: a batch
        // of one must cost what `dispatch_json` costs, and every `async`
        // layer between them is a future more to build and poll.
        let (max_parallel, max_turn_chars) = self.batch_limits();
        let mut results = BatchResults(match calls {
            // One call: nothing to plan.
            [only] if ctx.cancellation().is_cancelled() => Results::One(not_run(only)),
            [only] if only.id.is_empty() => {
                Results::One(self.dispatch_json(&only.name, &only.arguments, ctx).await)
            }
            [only] => {
                let ctx = context_of(only, ctx);
                Results::One(self.dispatch_json(&only.name, &only.arguments, &ctx).await)
            }
            // Boxed: its state would otherwise be copied with every batch,
            // the one-call batches included.
            _ => Results::Many(
                Box::pin(self.run_planned(calls, ctx, max_parallel, Form::Text)).await,
            ),
        });
        keep_within(&mut results, max_turn_chars, calls, ctx);
        results
    }

    /// [`Registry::dispatch_batch`] answering each result whole, text and
    /// media ([`crate::content`]), for a loop that sends images to a model
    /// that takes them ([`ToolContent::to_message_content`]). The turn's
    /// budget counts the results' text; media has its own caps.
    pub async fn dispatch_batch_content(
        &self,
        calls: &[BatchCall],
        ctx: &ToolContext,
    ) -> Vec<ToolContent> {
        let (max_parallel, max_turn_chars) = self.batch_limits();
        let mut results = match calls {
            [only] if ctx.cancellation().is_cancelled() => vec![not_run(only)],
            [only] => {
                let ctx = context_of(only, ctx);
                vec![self.one(only, &ctx, Form::Content).await]
            }
            _ => Box::pin(self.run_planned(calls, ctx, max_parallel, Form::Content)).await,
        };
        keep_within(&mut results, max_turn_chars, calls, ctx);
        results.into_iter().map(ToolContent::from_result).collect()
    }

    /// One call, its result in `form`.
    async fn one(&self, call: &BatchCall, ctx: &ToolContext, form: Form) -> String {
        match form {
            Form::Text => self.dispatch_json(&call.name, &call.arguments, ctx).await,
            Form::Content => {
                self.dispatch_json_any(&call.name, &call.arguments, ctx)
                    .await
            }
        }
    }

    /// [`DispatchConfig::max_parallel_calls`] and
    /// [`DispatchConfig::max_turn_chars`], without copying the config.
    ///
    /// [`DispatchConfig::max_parallel_calls`]: crate::DispatchConfig::max_parallel_calls
    /// [`DispatchConfig::max_turn_chars`]: crate::DispatchConfig::max_turn_chars
    fn batch_limits(&self) -> (usize, usize) {
        if self.default_config() {
            return (DEFAULT_MAX_PARALLEL_CALLS, DEFAULT_MAX_TURN_CHARS);
        }
        let config = self.dispatch_state().config();
        (config.max_parallel_calls, config.max_turn_chars)
    }

    /// The calls of a batch of two or more, each started once what it
    /// waits for has ended, at most `limit` at once.
    async fn run_planned(
        &self,
        calls: &[BatchCall],
        ctx: &ToolContext,
        limit: usize,
        form: Form,
    ) -> Vec<String> {
        let access: Vec<Access> = calls.iter().map(|c| access_of(self, c, ctx)).collect();
        let waits = plan(&access);
        let limit = limit.max(1);
        let contexts: Vec<ToolContext> = calls.iter().map(|c| context_of(c, ctx)).collect();
        let mut results: Vec<Option<String>> = vec![None; calls.len()];
        let mut running: Vec<(usize, CallFuture<'_>)> = Vec::new();
        let mut started = vec![false; calls.len()];
        let mut cancelled = Box::pin(ctx.cancellation().cancelled());
        let mut stopped = false;
        poll_fn(|cx| loop {
            if !stopped && cancelled.as_mut().poll(cx).is_ready() {
                stopped = true;
                // Nothing more starts; what runs got the signal and ends.
                for (i, call) in calls.iter().enumerate() {
                    if !started[i] {
                        started[i] = true;
                        results[i] = Some(not_run(call));
                    }
                }
            }
            // Start what may start, in call order.
            for i in 0..calls.len() {
                if running.len() >= limit {
                    break;
                }
                if started[i] || !waits[i].iter().all(|&j| results[j].is_some()) {
                    continue;
                }
                started[i] = true;
                let call = &calls[i];
                running.push((i, Box::pin(self.one(call, &contexts[i], form))));
            }
            let mut ended = false;
            let mut k = 0;
            while k < running.len() {
                if let Poll::Ready(result) = running[k].1.as_mut().poll(cx) {
                    let (i, _) = running.swap_remove(k);
                    results[i] = Some(result);
                    ended = true;
                } else {
                    k += 1;
                }
            }
            if results.iter().all(Option::is_some) {
                return Poll::Ready(());
            }
            if !ended {
                return Poll::Pending;
            }
        })
        .await;
        results.into_iter().map(Option::unwrap_or_default).collect()
    }
}

/// The context of one call: the batch's, with the call's id.
fn context_of(call: &BatchCall, ctx: &ToolContext) -> ToolContext {
    if call.id.is_empty() {
        ctx.clone()
    } else {
        ctx.clone().with_tool_call_id(call.id.clone())
    }
}

/// The answer of a call the cancelled batch never started.
fn not_run(call: &BatchCall) -> String {
    error_json(format!(
        "The call of '{}' did not run: its turn was cancelled first.",
        call.name
    ))
}

/// Spills the longest results until all of them fit the turn's budget:
/// `budget` characters, or fewer if the profile's
/// `tool_output.max_turn_chars` says so.
fn keep_within(results: &mut [String], budget: usize, calls: &[BatchCall], ctx: &ToolContext) {
    // Bytes are never fewer than characters, and the profile cannot lower
    // the budget below `MIN_RESULT_CHARS`: most turns stop here, without
    // a look at the profile or at what each result holds.
    let all: usize = results.iter().map(String::len).sum();
    if all <= budget.min(crate::config::MIN_RESULT_CHARS) {
        return;
    }
    // A result with media is not spilled: its text is short beside its
    // media, which has caps of its own (`crate::content`).
    let bytes: usize = results
        .iter()
        .filter(|r| !is_content_result(r))
        .map(String::len)
        .sum();
    let budget = match ctx.profile().config().tool_output.max_turn_chars.value {
        Some(profile) => profile.min(budget),
        None => budget,
    };
    if bytes <= budget {
        return;
    }
    let mut total: usize = results
        .iter()
        .filter(|r| !is_content_result(r))
        .map(|r| r.chars().count())
        .sum();
    let mut longest: Vec<usize> = (0..results.len())
        .filter(|&i| !is_content_result(&results[i]))
        .collect();
    longest.sort_by_key(|&i| std::cmp::Reverse(results[i].len()));
    for i in longest {
        if total <= budget {
            break;
        }
        let before = results[i].chars().count();
        let call_ctx = context_of(&calls[i], ctx);
        if let Some(spilled) = spill_for_turn(&results[i], budget, &calls[i].name, &call_ctx) {
            let after = spilled.chars().count();
            if after < before {
                total = total - before + after;
                results[i] = spilled;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(p: &str) -> Access {
        Access::Path(PathBuf::from(p))
    }

    #[test]
    fn barriers_split_and_paths_order() {
        let access = [
            Access::Shared,
            path("/w/a"),
            path("/w/a"),
            path("/w/b"),
            path("/w/a/x"),
            Access::Barrier,
            Access::Shared,
            path("/w/a"),
            path("/w/a"),
        ];
        let waits = plan(&access);
        assert_eq!(waits[0], Vec::<usize>::new());
        assert_eq!(waits[1], Vec::<usize>::new());
        // The second write to /w/a after the first; /w/b beside both.
        assert_eq!(waits[2], vec![1]);
        assert_eq!(waits[3], Vec::<usize>::new());
        // A call inside /w/a after both calls on it.
        assert_eq!(waits[4], vec![1, 2]);
        // The barrier after everything before it; what follows after it.
        assert_eq!(waits[5], vec![0, 1, 2, 3, 4]);
        assert_eq!(waits[6], vec![5]);
        // Two reads of one path in order too.
        assert_eq!(waits[7], vec![5]);
        assert_eq!(waits[8], vec![5, 7]);
    }

    #[test]
    fn paths_overlap_when_one_holds_the_other() {
        assert!(overlap(Path::new("/a/b"), Path::new("/a")));
        assert!(overlap(Path::new("/a"), Path::new("/a")));
        assert!(!overlap(Path::new("/a/bc"), Path::new("/a/b")));
    }
}
