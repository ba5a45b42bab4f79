//! Reliability at scale (issue #11): process hygiene over a hundred mixed scenarios, also when the
//! runner is interrupted (`processes`), and clear errors for bad input (`bad_input`).
//!
//! `cargo test --release --test reliability` runs the fast part (CI);
//! `cargo test --release --test reliability -- --include-ignored` adds the heavy part (real
//! OpenCode). Each test prints its figures (`-- --nocapture` shows them).

mod bad_input;
mod processes;
mod support;
