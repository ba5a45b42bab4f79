//! Stands in for the adopting project's own code; the live suite is in `tests/live/`.
