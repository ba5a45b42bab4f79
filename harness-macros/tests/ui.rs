//! Compile-fail cases: every misuse of `#[live_agent_test]` is an error on the offending token.
//!
//! Regenerate the expected output with `TRYBUILD=overwrite cargo test -p harness-macros --test ui`
//! and review the diff: compiler wording drifts between toolchains.

#[test]
fn ui() {
    let cases = trybuild::TestCases::new();
    cases.pass("tests/ui-pass/*.rs");
    cases.compile_fail("tests/ui/*.rs");
}
