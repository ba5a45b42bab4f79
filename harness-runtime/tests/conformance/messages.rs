//! Messages: a session's messages and their query parameters (`limit`, paging), one message by id.

use crate::differences::Deliberate;

/// Where the fixture differs from real OpenCode here on purpose.
pub(crate) const DELIBERATE: &[Deliberate] = &[];
