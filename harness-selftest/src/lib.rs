//! What the harness's own tests share: running a scenario binary in a sandbox and watching what
//! it leaves (`sandbox`, `run`, `procs`), the scratch dir its scenarios record pids in
//! (`scratch`), and the harness of the test binaries that run, skip or fail a test by what the
//! machine has (`prerequisites`, used by harness-runtime's tests too).

pub mod prerequisites;
pub mod procs;
pub mod run;
pub mod sandbox;
pub mod scratch;
