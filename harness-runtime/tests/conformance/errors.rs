//! Error answers: bad ids, bad bodies, unknown routes, as a client meets them.

use crate::differences::Deliberate;

/// Where the fixture differs from real OpenCode here on purpose.
pub(crate) const DELIBERATE: &[Deliberate] = &[];
