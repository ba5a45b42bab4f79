//! The live suite: `cargo test --test live`. One module per topic.

harness_runtime::main!();

mod smoke;
