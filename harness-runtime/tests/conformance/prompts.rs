//! Prompts: async (`prompt_async`) and blocking (`POST /session/{id}/message`), with the events until idle, scoped by directory.

use crate::differences::Deliberate;

/// Where the fixture differs from real OpenCode here on purpose.
pub(crate) const DELIBERATE: &[Deliberate] = &[];
