//! Nothing: the crate is its tests (`tests/ui.rs`, the attribute's compile errors;
//! `tests/expansions`, its accepted forms), kept apart from `harness-macros` so the runtime is
//! not a host dependency of the workspace (see `Cargo.toml`).

#![forbid(unsafe_code)]
