//! A typed client of the OpenCode HTTP API, with event streaming and whole-turn collection.
