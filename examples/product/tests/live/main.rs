//! The product's live suite: `cargo test -p product-example --test live`. The product (this
//! crate's library, and the Node script in `node/`) talks to real OpenCode through the
//! harness's forwarder; the scenarios pause it on the wire and in its own code.

harness_runtime::main!();

mod acp_client;
mod explore;
mod node;
mod points;
mod policy;
mod races;
mod stream;
mod support;
