//! The profile's `tools.tool_search` decides progressive disclosure, per
//! profile and at call time (the built-in tools are all core, so this is
//! shown on the test tools, which have deferrable ones).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use hermes_runtime::disclosure::DisclosureConfig;
use hermes_runtime::{Profile, Registry};

fn registry() -> Registry {
    Registry::new(&hermes_tests::generated::TABLES)
}

fn profile_with(yaml: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("config.yaml"), yaml).unwrap();
    dir
}

fn bridged(reg: &Registry, profile: &Profile) -> bool {
    let defs = reg.get_tool_definitions(None, &[], profile);
    let names = defs.names();
    assert_eq!(
        names.contains(&"tool_search"),
        !defs.deferred.is_empty(),
        "{names:?}"
    );
    names.contains(&"tool_search")
}

#[test]
fn on_defers_without_the_programs_setting_and_off_never_does() {
    let reg = registry();
    let on = profile_with("tools:\n  tool_search:\n    enabled: on\n");
    let off = profile_with("tools:\n  tool_search:\n    enabled: off\n");
    let auto = tempfile::tempdir().unwrap();
    // The program did not turn disclosure on: only `on` defers.
    assert!(bridged(&reg, &Profile::new(on.path())));
    assert!(!bridged(&reg, &Profile::new(off.path())));
    assert!(!bridged(&reg, &Profile::new(auto.path())));
    // The program asks for it with a tiny window: `off` still never defers.
    reg.set_progressive_disclosure(Some(
        DisclosureConfig::default().with_context_window_tokens(1_000),
    ));
    assert!(bridged(&reg, &Profile::new(auto.path())));
    assert!(!bridged(&reg, &Profile::new(off.path())));
}

#[test]
fn auto_uses_the_profiles_threshold_over_the_programs_window() {
    let reg = registry();
    // The program defers anything; the profile's threshold replaces its share.
    reg.set_progressive_disclosure(Some(
        DisclosureConfig::default()
            .with_context_window_tokens(1_000_000)
            .with_max_share(0.0),
    ));
    let plain = tempfile::tempdir().unwrap();
    let plain = Profile::new(plain.path());
    assert!(bridged(&reg, &plain));
    // 100% of a million tokens holds every test tool; 0% holds none.
    let roomy = profile_with("tools:\n  tool_search:\n    threshold_pct: 100\n");
    assert!(!bridged(&reg, &Profile::new(roomy.path())));
    let tight = profile_with("tools:\n  tool_search:\n    threshold_pct: 0\n");
    assert!(bridged(&reg, &Profile::new(tight.path())));
}

/// Whether `bridged` turns `want` within five seconds: the configuration
/// is looked at again at most every quarter second, so an edit is seen
/// soon, not at once.
fn becomes(reg: &Registry, profile: &Profile, want: bool) -> bool {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    for _ in 0..500 {
        if bridged(reg, profile) == want {
            return true;
        }
        if std::time::Instant::now() > deadline {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    false
}

/// The definitions are memoised; a changed file is seen on a later call
/// and not served stale after that.
#[test]
fn a_changed_file_changes_the_next_definitions() {
    let reg = registry();
    let dir = tempfile::tempdir().unwrap();
    let profile = Profile::new(dir.path());
    assert!(!bridged(&reg, &profile));
    std::fs::write(
        dir.path().join("config.yaml"),
        "tools:\n  tool_search:\n    enabled: on\n",
    )
    .unwrap();
    assert!(becomes(&reg, &profile, true));
    std::fs::write(
        dir.path().join("config.yaml"),
        "tools:\n  tool_search:\n    enabled: off\n",
    )
    .unwrap();
    assert!(becomes(&reg, &profile, false));
    // Settled: it stays so on the memo's fast path.
    for _ in 0..3 {
        assert!(!bridged(&reg, &profile));
    }
}
