//! Compile-fail cases: every misuse of `#[live_agent_test]` is an error on the offending token.
//! The expansions that must compile are an ordinary test target (`tests/expansions`), so
//! trybuild only checks these cases (`cargo check`), never builds or runs them.
//!
//! Regenerate the expected output with `TRYBUILD=overwrite cargo test -p harness-macros-tests --test ui`
//! and review the diff: compiler wording drifts between toolchains.

#[test]
fn ui() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui/*.rs");
}
