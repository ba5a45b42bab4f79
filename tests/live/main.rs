//! The live suite: scenarios that exercise real OpenCode through every part of the framework.
//! Each `<topic>.rs` module is a group; scenario names read `<topic>::<fn>`.

harness_runtime::main!();

mod gates;
mod turns;
