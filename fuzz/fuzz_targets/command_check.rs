//! The approval check (`hermes_tools::tools::terminal::check_command`: the bash parser of
//! `terminal/syntax.rs`, the walk, the rules and the whole-text pass) on
//! arbitrary text, as a model may send it.
//!
//! Checked:
//! - it answers (no panic, no hang: libFuzzer's timeout), and answers the
//!   same twice;
//! - a hard line on its own first line stays one whatever follows: bash
//!   runs the first line before it reads the rest, so no later text can
//!   change what it does.
#![no_main]

use std::sync::OnceLock;

use hermes_runtime::Profile;
use hermes_tools::tools::terminal::{check_command, Verdict as CommandVerdict};
use libfuzzer_sys::fuzz_target;

fn profile() -> &'static Profile {
    static PROFILE: OnceLock<Profile> = OnceLock::new();
    PROFILE.get_or_init(|| Profile::new(std::env::temp_dir().join("hermes-fuzz-command-check")))
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let first = check_command(&text, profile());
    assert_eq!(first, check_command(&text, profile()), "{text:?}");
    let prefixed = format!("rm -rf /\n{text}");
    assert!(
        matches!(
            check_command(&prefixed, profile()),
            CommandVerdict::HardLine(_)
        ),
        "{prefixed:?}"
    );
});
