//! Reliability at scale, measured: every test prints its figures (`-- --nocapture`).
//! The fast part runs in CI; `-- --include-ignored` adds the heavy part.

mod io_support;
mod ports;
mod redaction;
mod streams;
