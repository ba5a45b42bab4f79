//! The live suite: scenarios that exercise real OpenCode through every part of the framework.

harness_runtime::main!();
