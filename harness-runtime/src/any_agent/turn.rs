//! A turn of any agent: the evidence shape every agent shares, and the turn underneath.

use crate::acp::AcpTurn;
use crate::client::{MessageError, Turn};
use crate::evidence::TurnSummary;

/// One turn, ended: summarised alike for every agent ([`summary`](Self::summary)), with the
/// surface's own turn reachable for what only it has.
#[derive(Clone, Debug)]
pub struct AnyTurn {
    summary: TurnSummary,
    text: String,
    stop_reason: Option<String>,
    detail: Detail,
}

#[derive(Clone, Debug)]
enum Detail {
    OpenCode(Box<Turn>),
    Acp(AcpTurn),
}

impl AnyTurn {
    /// An OpenCode turn; `plan` is the session's todo list after it, as `status: content` lines.
    pub(crate) fn opencode(turn: Turn, plan: Vec<String>) -> Self {
        let mut summary = TurnSummary::from_turn(&turn);
        summary.plan = plan;
        // OpenCode's HTTP API has no stop reason; say it in ACP's words where it is unambiguous,
        // as `opencode acp` does for the same server: aborted is `cancelled`, no error `end_turn`.
        let stop_reason = match turn.error() {
            None => Some("end_turn".to_string()),
            Some(MessageError::MessageAbortedError { .. }) => Some("cancelled".to_string()),
            Some(_) => None,
        };
        Self {
            text: turn.text.clone(),
            summary,
            stop_reason,
            detail: Detail::OpenCode(Box::new(turn)),
        }
    }

    pub(crate) fn acp(turn: AcpTurn) -> Self {
        Self {
            summary: turn.summary(),
            text: turn.text(),
            stop_reason: Some(turn.stop_reason().to_string()),
            detail: Detail::Acp(turn),
        }
    }

    /// What the agent did, in the evidence shape every agent shares: record it with
    /// [`Evidence::record_turn_summary`](crate::evidence::Evidence::record_turn_summary).
    /// OpenCode over HTTP fills `plan` from the session's todo list; its `stop_reason` is left
    /// out, as its API has none.
    pub fn summary(&self) -> &TurnSummary {
        &self.summary
    }

    /// The reply's text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// How the turn stopped, in ACP's words (`end_turn`, `cancelled`, `refusal`, …). Over HTTP:
    /// `end_turn` without an error, `cancelled` when aborted, `None` for any other error.
    pub fn stop_reason(&self) -> Option<&str> {
        self.stop_reason.as_deref()
    }

    /// The OpenCode turn, when the agent is OpenCode over HTTP.
    pub fn as_opencode(&self) -> Option<&Turn> {
        match &self.detail {
            Detail::OpenCode(turn) => Some(turn),
            Detail::Acp(_) => None,
        }
    }

    /// The ACP turn, when the agent speaks ACP.
    pub fn as_acp(&self) -> Option<&AcpTurn> {
        match &self.detail {
            Detail::Acp(turn) => Some(turn),
            Detail::OpenCode(_) => None,
        }
    }
}
