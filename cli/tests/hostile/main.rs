//! The hostile-input suite: the cases of issue 11, replayed against the
//! real `hermes-tools` binary. Every child runs under an address-space limit
//! (a regression fails instead of taking the machine), one at a time, and
//! its peak resident memory is checked against [`harness::RSS_CEILING_KB`].
//! Each case asserts a clear answer (`{"error": ...}` or a bounded result)
//! and a process that lived to give it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod harness;

mod config;
mod file_reads;
mod files;
mod mcp_client;
mod patch;
mod procs;
mod runtime;
mod terminal;
mod web;
