//! `#[hermes_tool]` UI tests: `pass/` must compile (and run), `fail/` must
//! fail with exactly the checked-in `.stderr`. Refresh deliberately with
//! `TRYBUILD=overwrite cargo test -p hermes-ui-tests`.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.pass("pass/*.rs");
    t.compile_fail("fail/*.rs");
}
