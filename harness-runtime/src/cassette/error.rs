//! What can go wrong with a cassette: reading, checking, writing it, and finding its upstream.
//!
//! Every message names the file (relative to the crate when below it) and what to do; none
//! shows a provider option's value (those are the user's secrets).

/// A cassette error.
#[derive(Debug, thiserror::Error)]
pub enum CassetteError {
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
}
