//! The product's live suite: `cargo test -p product-example --test live`.

harness_runtime::main!();
