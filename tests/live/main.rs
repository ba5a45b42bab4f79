//! The live suite: scenarios that exercise real OpenCode through every part of the framework.
//! Each `<topic>.rs` module is a group; scenario names read `<topic>::<fn>`.

harness_runtime::main!();

mod abort;
mod agents;
mod explore;
mod faults;
mod gates;
mod isolation;
mod observer;
mod permissions;
mod probes;
mod product_config;
mod provider_packages;
mod provisioning;
mod questions;
mod sandbox;
mod structured;
mod support;
mod tools;
mod turns;
