//! Control: abort, fork, commands.

use crate::differences::Deliberate;

/// Where the fixture differs from real OpenCode here on purpose.
pub(crate) const DELIBERATE: &[Deliberate] = &[];
