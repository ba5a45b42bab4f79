//! Runs the scenario binaries as child processes in a sandbox and watches what they leave: a
//! private `TMPDIR` (the scenario roots), a scratch dir (the pids the scenarios recorded) and a
//! run mark in the environment that every process of the run inherits.

pub(crate) mod procs;
pub(crate) mod run;

pub(crate) use run::{Finished, Sandbox};
