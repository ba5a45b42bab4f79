//! The bridge from a provisioned agent to the typed client: the scenario's redactor and gates
//! come along, so every call is redacted, gated and counted without the scenario wiring it.

use crate::client::{Client, ClientError, CreateSession, Session};

use super::Agent;

/// The title of sessions made by [`Agent::create_session`]: a titled session makes no
/// title-generation request to the model, so scripted replies are not consumed by one.
pub const DEFAULT_SESSION_TITLE: &str = "live scenario";

impl Agent {
    /// A typed client of this agent's current endpoint, with the scenario's redactor and gates.
    ///
    /// The endpoint is read now: after a [`restart`](Agent::restart) that had to take another
    /// port, make a new client.
    /// A shared agent's client sends `?directory=<workspace>` with every request: the scenario's
    /// sessions, events, permissions and config are those of its own directory.
    pub fn client(&self) -> Client {
        let client =
            Client::new(self.endpoint(), self.redactor().clone()).with_gates(self.gates().clone());
        match self.shared_directory() {
            Some(directory) => client.with_directory(directory),
            None => client,
        }
    }

    /// Creates a session titled [`DEFAULT_SESSION_TITLE`].
    pub async fn create_session(&self) -> Result<Session, ClientError> {
        self.client()
            .create_session(&CreateSession::titled(DEFAULT_SESSION_TITLE))
            .await
    }

    /// Creates a session from a full request (title, permission rules, agent).
    pub async fn create_session_with(
        &self,
        request: &CreateSession,
    ) -> Result<Session, ClientError> {
        self.client().create_session(request).await
    }
}
