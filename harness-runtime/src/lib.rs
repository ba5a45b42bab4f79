//! Live tests of AI coding agents, run by Cargo.
//!
//! A scenario is an `async fn(&mut Live)` marked [`#[live_agent_test]`](live_agent_test), in a
//! test target declared with `harness = false` whose `main` is [`main!`]. The runner turns every
//! scenario into a libtest trial with its own tokio runtime and ceiling, and [`Live`] gives it a
//! real, isolated OpenCode agent, a scripted model, gates, and redacted evidence snapshotted with
//! insta.
//!
//! # A first scenario
//!
//! `Cargo.toml` of your crate (the crates are not on crates.io yet: with this repository cloned
//! next to your crate as `../harness`):
//!
//! ```toml
//! [dev-dependencies]
//! harness-runtime = { path = "../harness/harness-runtime" }
//! anyhow = "1"
//!
//! [[test]]
//! name = "live"
//! path = "tests/live/main.rs"
//! harness = false
//! ```
//!
//! `tests/live/main.rs`, here with its one scenario inline:
//!
//! ```no_run
//! use harness_runtime::prelude::*;
//!
//! harness_runtime::main!();
//!
//! #[live_agent_test(timeout = "60s")]
//! async fn bash_tool_writes_the_file(live: &mut Live) -> anyhow::Result<()> {
//!     // What the model will answer: a tool call, then text after the tool's result.
//!     live.model().reply(Reply::tool_call(
//!         "bash",
//!         json!({"command": "echo hi > out.txt", "description": "write"}),
//!     ));
//!     live.model().reply(Reply::text("Done."));
//!
//!     let agent = live.opencode().await?; // a real `opencode serve`, isolated
//!     let session = agent.create_session().await?;
//!     let turn = session.prompt("write the file").await?; // subscribes first, waits for idle
//!
//!     assert_eq!(std::fs::read_to_string(agent.workspace().join("out.txt"))?, "hi\n");
//!     live.evidence().record_turn(&turn);
//!     live.assert_evidence(); // snapshots/bash_tool_writes_the_file.snap, redacted
//!     Ok(())
//! }
//! ```
//!
//! Then `npm i opencode-ai` (the server the scenario provisions) and `cargo test --test live`;
//! accept the new snapshot with `cargo insta review`.
//!
//! # Where things are
//!
//! - [`prelude`]: what a scenario file imports.
//! - [`Live`]: the scenario's context, the one entry point to everything below.
//! - [`opencode`]: provisioning; the [`Agent`](opencode::Agent) a scenario holds and its options.
//! - [`client`]: the typed HTTP + SSE client of the OpenCode API, usable on its own.
//! - [`model`]: the embedded scripted model (replies, rules, recorded requests).
//! - [`gates`]: pause an operation at a named point to force an interleaving.
//! - [`fixture`]: the fixture agent's faults.
//! - [`forward`]: the forwarder a product reaches an agent through; wire faults and the
//!   product's request log.
//! - [`product`]: products that are programs, started by the scenario against an agent.
//! - [`evidence`]: what a scenario records and snapshots.
//! - [`redact`]: the redactor every message and snapshot passes through.
//! - [`runner`]: the runner, for a test binary with a `main` of its own.
//!
//! The user's guide is the repository's `docs/` folder; `docs/api.md` lists this surface.
//!
//! # Limitations
//!
//! Unix only, because process ownership rests on process groups and signals. Linux has every
//! guarantee; macOS builds and runs without the sweep of detached descendants, the reaper's
//! cleanup after the runner is SIGKILLed (both read `/proc`) and the Landlock sandbox. Other
//! targets fail to compile, saying so.

// Three narrow, commented exceptions: signal dispositions (nix has no safe API for them) and one
// `pre_exec(setsid)` for a fault of the fixture agent.
#![deny(unsafe_code)]
#![warn(missing_docs)]

#[cfg(windows)]
compile_error!(
    "harness-runtime does not support Windows: it owns its processes through Unix process groups \
     and signals. Supported: Linux (every guarantee) and macOS (without the /proc-based cleanup \
     of detached processes)"
);
#[cfg(not(any(unix, windows)))]
compile_error!(
    "harness-runtime does not support this target, which is not Unix: it owns its processes \
     through Unix process groups and signals. Supported: Linux (every guarantee) and macOS \
     (without the /proc-based cleanup of detached processes)"
);

pub mod acp;
pub mod any_agent;
mod budget;
mod cassette;
mod chat_body;
pub mod client;
pub mod evidence;
mod explore;
pub mod fixture;
pub mod forward;
pub mod gates;
mod live;
pub mod model;
pub mod opencode;
mod process;
pub mod product;
mod progress;
pub mod redact;
mod report;
mod requirements;
pub mod runner;
mod sandbox;
mod scenario;
mod settings;
mod sse;
mod stream_output;
mod test_target;
#[cfg(feature = "testing")]
pub mod testing;
mod timeline;

pub use harness_macros::live_agent_test;
pub use live::{Live, Skipped};
pub use scenario::{AgentKind, DeclaredOptions, ModelApi};
pub use settings::Isolation;
/// Scales a scenario's own ceilings by `LIVE_TIMEOUT_SCALE`, as the framework scales its own.
pub use settings::scaled;

/// What a scenario body needs: `use harness_runtime::prelude::*;`.
///
/// The attribute and its context, what nearly every body writes (replies, agent options,
/// prompts, sessions, ask policies) and what it matches a turn's outcome on (tool statuses, the
/// client's and the turn's errors). Every name is specific to a scenario; the rest, generic
/// names such as `Session`, `Agent`, `Product`, `Rule` or `Counter` among them, is reached by
/// its module path (`harness_runtime::client::Session`). `docs/api.md` says why each is here.
pub mod prelude {
    pub use crate::client::{
        AskPolicy, ClientError, CreateSession, MessageError, PermissionPolicy, PermissionReply,
        Prompt, QuestionPolicy, ToolStatus,
    };
    pub use crate::model::Reply;
    pub use crate::opencode::AgentOptions;
    pub use crate::{Live, Skipped, live_agent_test, scaled};
    pub use serde_json::json;
}

/// The runner's entry point for a test target declared with `harness = false`.
///
/// Expands to `fn main() -> std::process::ExitCode { harness_runtime::runner::run() }`.
#[macro_export]
macro_rules! main {
    () => {
        fn main() -> ::std::process::ExitCode {
            $crate::runner::run()
        }
    };
}

/// What the expansion of `#[live_agent_test]` refers to. Not a stable API.
#[doc(hidden)]
pub mod __private {
    pub use crate::__snapshot_assertion as snapshot_assertion;
    pub use crate::evidence::snapshot::SnapshotAssertion;
    pub use crate::fixture::cli::run_agent;
    pub use crate::runner::descriptor::{
        IntoOutcome, Outcome, Scenario, ScenarioFailed, ScenarioFuture,
    };
    pub use crate::scenario::{Budget, ExploreOptions, Passes, ScenarioOptions};
    pub use insta;
    pub use inventory;
}
