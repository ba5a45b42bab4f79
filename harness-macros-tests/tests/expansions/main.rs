//! Expansions that must compile: every option of `#[live_agent_test]`, in each accepted form,
//! expanded against the runtime. One module per group; each module compiling is the main test,
//! and its `#[test]` checks the user's functions stay callable by their own names.
//!
//! They were trybuild pass cases: as an ordinary test target they build with the other targets
//! (trybuild built and ran each one as a crate of its own), and `tests/ui.rs` keeps only the
//! compile-fail cases, which trybuild checks without building.

mod all_options;
mod explore;
mod needs_peer;
mod passes_and_budgets;
mod wire_and_product_gates;
