//! Structured output: a prompt with a `json_schema` format, and what the message carries.

use crate::differences::Deliberate;

/// Where the fixture differs from real OpenCode here on purpose.
pub(crate) const DELIBERATE: &[Deliberate] = &[];
