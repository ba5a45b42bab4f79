//! Live tests of AI coding agents, run by Cargo.
//!
//! A scenario is an `async fn(&mut Live)` marked `#[live_agent_test]`. The runner (`main!()`) turns
//! every registered scenario into a libtest-mimic trial with its own tokio runtime and ceiling; the
//! [`Live`] context provisions agents (real `opencode serve` or the fixture agent), scripts the
//! embedded model, gates operations, and records redacted evidence for insta snapshots.
//!
//! Platforms, stated plainly: Unix only, because process ownership rests on process groups and
//! signals. Linux has every guarantee; macOS builds and runs without the sweep of detached
//! descendants and the reaper's cleanup after the runner is SIGKILLed (both read `/proc`), so
//! there only an agent's process group is killed. Other targets fail to compile, saying so.

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

mod cassette;
mod chat_body;
pub mod client;
pub mod evidence;
pub mod fixture;
pub mod gates;
mod live;
pub mod model;
pub mod opencode;
mod process;
mod progress;
pub mod redact;
mod report;
mod requirements;
pub mod runner;
mod sandbox;
mod scenario;
mod settings;
mod test_target;
pub mod testing;
mod timeline;

pub use harness_macros::live_agent_test;
pub use live::{Live, Skipped};
pub use runner::descriptor::Scenario;
pub use scenario::{AgentKind, ScenarioOptions};
pub use settings::Isolation;
/// Scales a scenario's own ceilings by `LIVE_TIMEOUT_SCALE`, as the framework scales its own.
pub use settings::scaled;

/// Everything a scenario file usually needs: `use harness_runtime::prelude::*;`.
///
/// What a scenario writes (the attribute, `Live`, replies, rules, prompts, options, faults, gate
/// points) and what it matches on (the errors of the client and of provisioning, the errors a
/// turn carries, tool and session statuses, how asks were answered).
pub mod prelude {
    pub use crate::client::{
        Ask, AskAnswer, AskOutcome, AskPolicy, ClientError, CreateSession, Interaction,
        MessageError, PermissionPolicy, PermissionReply, Prompt, QuestionPolicy, Session,
        SessionStatus, ToolStatus, Turn,
    };
    pub use crate::fixture::Fault;
    pub use crate::gates::{Counter, GatePoint};
    pub use crate::model::{Matcher, Reply, Rule};
    pub use crate::opencode::{Agent, AgentOptions, ProvisionError};
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
    pub use crate::runner::descriptor::{IntoOutcome, Outcome, ScenarioFuture};
    pub use insta;
    pub use inventory;
}
