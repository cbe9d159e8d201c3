//! `#[hermes_tool]` UI tests: `ui/pass` must compile, `ui/fail` must fail
//! with exactly the checked-in `.stderr`. Refresh deliberately with
//! `TRYBUILD=overwrite cargo test -p hermes-tests --test compiletest`.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.pass("ui/pass/*.rs");
    t.compile_fail("ui/fail/*.rs");
}
