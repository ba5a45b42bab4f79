//! A small product that drives OpenCode through its own client: it runs a coding task in a
//! workspace, approves the agent's reads, allows edits inside the workspace only, aborts the
//! session after a deadline (or when cancelled), survives its event stream dropping, and
//! reports how the task ended.
//!
//! It stands in for a user's product: nothing here knows the test harness. Its live tests
//! (`tests/live/`) run it against real OpenCode through the harness's forwarder, pausing it on
//! the wire and at its own [`Point`]s through [`Hooks`].
//!
//! ```no_run
//! # async fn demo() -> Result<(), product_example::ProductError> {
//! use product_example::{Cancel, OpenCode, Product, Task};
//! use std::time::Duration;
//!
//! let client = OpenCode::new("http://127.0.0.1:4096", "/path/to/workspace")?;
//! let task = Task::new("Summarise README.md").deadline(Duration::from_secs(60));
//! let report = Product::new(client).run(&task, &Cancel::new()).await?;
//! println!("{:?}", report.outcome);
//! # Ok(())
//! # }
//! ```

#![warn(missing_docs)]

mod client;
mod error;
mod events;
mod hooks;
mod policy;
mod task;

pub use client::{Message, OpenCode, Reply};
pub use error::ProductError;
pub use events::{AgentEvent, Events, PermissionAsk};
pub use hooks::{Hooks, NoHooks, Point};
pub use policy::{Verdict, judge};
pub use task::{AbortCause, AskRecord, Cancel, Delivery, Outcome, Product, Task, TaskReport};
