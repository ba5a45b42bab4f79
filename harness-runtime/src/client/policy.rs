//! How a turn answers the permission requests and questions raised while it runs.

use std::sync::Arc;

use serde::Serialize;

use super::types::{PermissionReply, PermissionRequest, QuestionRequest};

/// Something the agent asks while a turn runs.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Ask {
    /// A `permission.asked` request.
    Permission(PermissionRequest),
    /// A `question.asked` request.
    Question(QuestionRequest),
}

impl Ask {
    /// The request id (`per_…` or `que_…`).
    pub fn id(&self) -> &str {
        match self {
            Self::Permission(p) => &p.id,
            Self::Question(q) => &q.id,
        }
    }
}

/// How to answer one ask.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AskAnswer {
    /// Reply to a permission request.
    Permission(PermissionReply),
    /// Answer a question: one list of chosen labels per question.
    Answers(Vec<Vec<String>>),
    /// Reject a question.
    RejectQuestion,
    /// Do not answer: the request stays pending (someone else answers, or the turn times out
    /// naming it).
    LeavePending,
}

/// What to do with permission requests.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PermissionPolicy {
    /// Reply `once`.
    Once,
    /// Reply `always` (note: OpenCode then also approves other sessions' matching requests).
    Always,
    /// Reply `reject`.
    Reject,
    /// Leave them pending.
    #[default]
    LeavePending,
}

/// What to do with questions.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum QuestionPolicy {
    /// Answer every question with this label.
    Label(String),
    /// Answer every question with its first option.
    FirstOption,
    /// Reject the question.
    Reject,
    /// Leave it pending.
    #[default]
    LeavePending,
}

/// A callback deciding every ask itself.
pub type AskCallback = Arc<dyn Fn(&Ask) -> AskAnswer + Send + Sync>;

/// The per-turn policy for asks. The default leaves everything pending, so an unexpected ask
/// shows up as a [`super::ClientError::TurnTimeout`] naming it rather than being silently
/// answered.
#[derive(Clone, Default)]
pub struct AskPolicy {
    permissions: PermissionPolicy,
    questions: QuestionPolicy,
    callback: Option<AskCallback>,
}

impl std::fmt::Debug for AskPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AskPolicy")
            .field("permissions", &self.permissions)
            .field("questions", &self.questions)
            .field("callback", &self.callback.as_ref().map(|_| "<fn>"))
            .finish()
    }
}

impl AskPolicy {
    /// Leaves every ask pending (the default).
    pub fn leave_pending() -> Self {
        Self::default()
    }

    /// Sets the permission policy.
    pub fn permissions(mut self, policy: PermissionPolicy) -> Self {
        self.permissions = policy;
        self
    }

    /// Sets the question policy.
    pub fn questions(mut self, policy: QuestionPolicy) -> Self {
        self.questions = policy;
        self
    }

    /// Decides every ask with `f` (overrides the other settings).
    pub fn callback(mut self, f: impl Fn(&Ask) -> AskAnswer + Send + Sync + 'static) -> Self {
        self.callback = Some(Arc::new(f));
        self
    }

    /// The answer for `ask`.
    pub fn decide(&self, ask: &Ask) -> AskAnswer {
        if let Some(f) = &self.callback {
            return f(ask);
        }
        match ask {
            Ask::Permission(_) => match self.permissions {
                PermissionPolicy::Once => AskAnswer::Permission(PermissionReply::Once),
                PermissionPolicy::Always => AskAnswer::Permission(PermissionReply::Always),
                PermissionPolicy::Reject => AskAnswer::Permission(PermissionReply::Reject),
                PermissionPolicy::LeavePending => AskAnswer::LeavePending,
            },
            Ask::Question(q) => match &self.questions {
                QuestionPolicy::Label(label) => {
                    AskAnswer::Answers(q.questions.iter().map(|_| vec![label.clone()]).collect())
                }
                QuestionPolicy::FirstOption => AskAnswer::Answers(
                    q.questions
                        .iter()
                        .map(|qi| qi.options.iter().take(1).map(|o| o.label.clone()).collect())
                        .collect(),
                ),
                QuestionPolicy::Reject => AskAnswer::RejectQuestion,
                QuestionPolicy::LeavePending => AskAnswer::LeavePending,
            },
        }
    }
}
