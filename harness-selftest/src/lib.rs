//! What the harness's own tests share: running a scenario binary in a sandbox and watching what
//! it leaves (`sandbox`, `run`, `procs`), and the scratch dir its scenarios record pids in
//! (`scratch`).

pub mod procs;
pub mod run;
pub mod sandbox;
pub mod scratch;
