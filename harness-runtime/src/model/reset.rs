//! A handler's way to reset its connection (TCP RST, no response): a scripted `Reply::reset`,
//! a replayed `dropped` interaction, an upstream the relay could not reach.

use std::convert::Infallible;
use std::sync::Arc;

use axum::response::Response;
use tokio::sync::Notify;

/// Lets a handler ask its connection to be reset (the connection task watches the `Notify`).
#[derive(Clone)]
pub(crate) struct ResetConnection(pub(crate) Arc<Notify>);

/// Resets the connection; never returns (the connection task drops the handler with it).
pub(crate) async fn reset_now(reset: &ResetConnection) -> Response {
    reset.0.notify_one();
    std::future::pending::<Infallible>().await;
    unreachable!("the connection is reset before this handler resumes")
}
