//! The scripted model against recorded real upstreams: stream framing, usage fields, error bodies, `finish_reason`s.

use crate::differences::Deliberate;

/// Where the fixture differs from real OpenCode here on purpose.
pub(crate) const DELIBERATE: &[Deliberate] = &[];
