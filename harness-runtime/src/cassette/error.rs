//! What can go wrong with a cassette: finding it, reading, checking, serving, writing it, and
//! finding its upstream.
//!
//! Every message names the file (relative to the crate when below it) and what to do; none
//! shows a provider option's value (those are the user's secrets).

use crate::model::ModelError;
use crate::redact::Redactor;

/// A cassette error.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum CassetteError {
    /// `LIVE_CASSETTE` or `LIVE_CASSETTE_DIR` has a value the harness cannot use; the
    /// settings' own error names the variable and a valid value.
    #[error(transparent)]
    Setting(Box<dyn std::error::Error + Send + Sync>),
    /// Whether the cassette exists could not be told (its folder cannot be read).
    #[error(
        "could not check for the cassette at {path}: {source}; check that its folder can be read"
    )]
    Check {
        /// The file, as shown.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// `LIVE_CASSETTE=replay` or `verify`, and the scenario has no cassette.
    #[error(
        "{var}={mode}, but there is no cassette at {path}: record one with `{command}`, or unset \
         {var} to run the real model when the cassette is missing",
        var = crate::settings::CASSETTE
    )]
    Missing {
        /// `replay` or `verify`.
        mode: &'static str,
        /// The file, as shown.
        path: String,
        /// The command that records it.
        command: String,
    },
    /// The file could not be read.
    #[error("cassette {path}: could not read it: {source}; record it with `{command}`")]
    Read {
        /// The file, as shown.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
        /// The command that records it.
        command: String,
    },
    /// The file is not a valid cassette.
    #[error("cassette {path}: {what}; fix the file or record it again with `{command}`")]
    Invalid {
        /// The file, as shown.
        path: String,
        /// What is wrong, with the field's path, line and column.
        what: String,
        /// The command that records it again.
        command: String,
    },
    /// The file was not written: it would have held a secret.
    #[error(
        "cassette {path}: not written: a secret of the scenario (a provider option or header, \
         an API key, a secret variable's value) would be in {location}; when that secret is a \
         common word (an apiKey such as \"ollama\"), give it a value that occurs nowhere else"
    )]
    Secret {
        /// The file, as shown.
        path: String,
        /// Where in the cassette (`recorded.npm`, `interactions[2].response`).
        location: String,
    },
    /// The file could not be written.
    #[error("cassette {path}: could not write it: {source}")]
    Write {
        /// The file, as shown.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The user's config names no upstream the relay can record from.
    #[error("cassette record: {0}")]
    Upstream(String),
    /// The scenario's model server, which serves the cassette or relays the recording, did not
    /// start, or the script it also checks went wrong.
    #[error(transparent)]
    Model(#[from] ModelError),
    /// `LIVE_CASSETTE=verify` under `LIVE_STRICT=1`: the live run differs from the cassette.
    #[error(
        "cassette {path}: the real model drifted from it: {drift}; record it again with \
         `{command}` ({strict}=1 makes drift a failure)",
        strict = crate::settings::STRICT
    )]
    Drift {
        /// The file, as shown.
        path: String,
        /// Each difference, `; `-separated.
        drift: String,
        /// The command that records it again.
        command: String,
    },
    /// Requests of a replay matched no recorded interaction (each was answered with HTTP 400).
    #[error(
        "cassette {path}: {} request(s) matched no recorded interaction (answered with HTTP \
         400):{}\n  the model traffic changed; record the cassette again with `{command}`",
        .misses.len(),
        list(.misses)
    )]
    Misses {
        /// The file, as shown.
        path: String,
        /// Each request, with the recorded one nearest to it.
        misses: Vec<Miss>,
        /// The command that records it again.
        command: String,
    },
}

/// A request a replay found no recorded interaction for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Miss {
    /// The request as the model's log shows it.
    pub(crate) request: String,
    /// The nearest recorded request and the first field that differs.
    pub(crate) nearest: String,
}

fn list(misses: &[Miss]) -> String {
    misses
        .iter()
        .map(|miss| format!("\n  - {}\n    {}", miss.request, miss.nearest))
        .collect()
}

impl CassetteError {
    /// The error with every text it holds redacted (a cause's own message aside): for messages
    /// that name requests or files of a scenario.
    pub(crate) fn redacted(self, redactor: &Redactor) -> Self {
        let redact = |text: String| redactor.redact(&text);
        match self {
            Self::Check { path, source } => Self::Check {
                path: redact(path),
                source,
            },
            Self::Missing {
                mode,
                path,
                command,
            } => Self::Missing {
                mode,
                path: redact(path),
                command: redact(command),
            },
            Self::Read {
                path,
                source,
                command,
            } => Self::Read {
                path: redact(path),
                source,
                command: redact(command),
            },
            Self::Invalid {
                path,
                what,
                command,
            } => Self::Invalid {
                path: redact(path),
                what: redact(what),
                command: redact(command),
            },
            Self::Secret { path, location } => Self::Secret {
                path: redact(path),
                location,
            },
            Self::Write { path, source } => Self::Write {
                path: redact(path),
                source,
            },
            Self::Upstream(what) => Self::Upstream(redact(what)),
            Self::Misses {
                path,
                misses,
                command,
            } => Self::Misses {
                path: redact(path),
                misses: misses
                    .into_iter()
                    .map(|miss| Miss {
                        request: redact(miss.request),
                        nearest: redact(miss.nearest),
                    })
                    .collect(),
                command: redact(command),
            },
            Self::Drift {
                path,
                drift,
                command,
            } => Self::Drift {
                path: redact(path),
                drift: redact(drift),
                command: redact(command),
            },
            other @ (Self::Setting(_) | Self::Model(_)) => other,
        }
    }
}
