//! The TUI's start-up routes: what `opencode attach` reads before it draws.

use crate::differences::Deliberate;

/// Where the fixture differs from real OpenCode here on purpose.
pub(crate) const DELIBERATE: &[Deliberate] = &[];
