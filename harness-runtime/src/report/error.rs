//! What can go wrong writing the report. The runner prints it and carries on: a report that
//! could not be written never fails a scenario.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub(crate) enum ReportError {
    #[error("could not {what} {}: {source}; set LIVE_REPORT to a writable folder, or LIVE_REPORT=off", path.display())]
    Io {
        what: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("could not lock {} within {seconds}s: another test process holds it; set LIVE_REPORT=off if this persists", path.display())]
    Locked { path: PathBuf, seconds: u64 },
    #[error(
        "the report record of `{scenario}` still held a secret after redaction: it was not written (a bug: please report it)"
    )]
    SecretLeft { scenario: String },
}

impl ReportError {
    pub(crate) fn io(
        what: &'static str,
        path: &std::path::Path,
    ) -> impl FnOnce(std::io::Error) -> Self {
        let path = path.to_path_buf();
        move |source| ReportError::Io { what, path, source }
    }
}
