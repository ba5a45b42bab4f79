//! Typed requests and answers of the OpenCode HTTP API (1.18.33). Every struct keeps fields it
//! does not know in `extra`, so a newer server never makes decoding fail on an addition.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// `GET /global/health`.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[non_exhaustive]
pub struct Health {
    /// Whether the server says it is healthy.
    pub healthy: bool,
    /// The server's version, e.g. `1.18.33`.
    pub version: String,
    /// Unknown fields.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A session as returned by create/get/list.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[non_exhaustive]
pub struct SessionInfo {
    /// `ses_…`.
    pub id: String,
    /// The session's title.
    #[serde(default)]
    pub title: String,
    /// The workspace directory it runs in.
    #[serde(default)]
    pub directory: String,
    /// The parent session, for sub-agent sessions.
    #[serde(rename = "parentID", default, skip_serializing_if = "Option::is_none")]
    pub parent_id: Option<String>,
    /// Unknown and less used fields (slug, projectID, version, time, cost, tokens, …).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// What a permission rule does.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum PermissionAction {
    /// Allowed without asking.
    Allow,
    /// Denied without asking.
    Deny,
    /// Asked through `permission.asked`.
    Ask,
}

/// One rule of a session's permission ruleset, e.g. `{permission:"bash", pattern:"*", action:"ask"}`.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[non_exhaustive]
pub struct PermissionRule {
    /// The permission (`bash`, `edit`, `webfetch`, …).
    pub permission: String,
    /// The pattern it applies to (`*` for all).
    pub pattern: String,
    /// What to do.
    pub action: PermissionAction,
}

/// `POST /session` body. Always give a title: without one OpenCode makes an extra
/// title-generation request to the model on the first prompt.
#[derive(Clone, Debug, Default, Serialize)]
pub struct CreateSession {
    /// The title (avoids the title-generation request).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) title: Option<String>,
    /// A parent session.
    #[serde(rename = "parentID", skip_serializing_if = "Option::is_none")]
    pub(crate) parent_id: Option<String>,
    /// The agent (`build`, `plan`, …).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) agent: Option<String>,
    /// Session-level permission rules.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) permission: Option<Vec<PermissionRule>>,
}

impl CreateSession {
    /// A session titled `title`.
    pub fn titled(title: impl Into<String>) -> Self {
        Self {
            title: Some(title.into()),
            ..Self::default()
        }
    }

    /// Makes the session a child of `parent_id`.
    pub fn parent(mut self, parent_id: impl Into<String>) -> Self {
        self.parent_id = Some(parent_id.into());
        self
    }

    /// Runs the session with the agent `agent` (`build`, `plan`, …).
    pub fn agent(mut self, agent: impl Into<String>) -> Self {
        self.agent = Some(agent.into());
        self
    }

    /// Adds a permission rule.
    pub fn rule(mut self, permission: &str, pattern: &str, action: PermissionAction) -> Self {
        self.permission
            .get_or_insert_with(Vec::new)
            .push(PermissionRule {
                permission: permission.to_string(),
                pattern: pattern.to_string(),
                action,
            });
        self
    }
}

/// One entry of a session's todo list (`GET /session/{id}/todo`): the plan its `todowrite`
/// tool keeps.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[non_exhaustive]
pub struct Todo {
    /// What the step is.
    pub content: String,
    /// `pending`, `in_progress`, `completed` or `cancelled`.
    pub status: String,
    /// `high`, `medium` or `low`.
    #[serde(default)]
    pub priority: String,
}

/// A session's run status (`session.status` events, `GET /session/status`).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum SessionStatus {
    /// Nothing running.
    Idle,
    /// A turn is running.
    Busy,
    /// The model call failed and will be retried.
    Retry {
        /// The attempt number, from 1.
        #[serde(default)]
        attempt: u64,
        /// Why it is retrying.
        #[serde(default)]
        message: String,
        /// When the next attempt starts (ms since the epoch).
        #[serde(default)]
        next: u64,
    },
}

/// A message's timestamps (ms since the epoch).
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[non_exhaustive]
pub struct MessageTime {
    /// Creation.
    #[serde(default)]
    pub created: u64,
    /// Completion; absent while an assistant message is being produced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completed: Option<u64>,
}

/// A message's info (`message.updated`, `GET /session/{id}/message`).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[non_exhaustive]
pub struct MessageInfo {
    /// `msg_…`.
    pub id: String,
    /// The session.
    #[serde(rename = "sessionID", default)]
    pub session_id: String,
    /// `user` or `assistant`.
    pub role: String,
    /// For an assistant message: the user message it answers.
    #[serde(rename = "parentID", default, skip_serializing_if = "Option::is_none")]
    pub parent_id: Option<String>,
    /// Timestamps.
    #[serde(default)]
    pub time: MessageTime,
    /// The assistant message's error, if it ended with one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<super::MessageError>,
    /// The structured output of a `json_schema` prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured: Option<Value>,
    /// Why the model stopped (`stop`, `tool-calls`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finish: Option<String>,
    /// Unknown and less used fields (agent, modelID, providerID, tokens, cost, …).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl MessageInfo {
    /// Whether this is an assistant message.
    pub fn is_assistant(&self) -> bool {
        self.role == "assistant"
    }
}

/// A tool call's status.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum ToolStatus {
    /// Announced, input still streaming.
    Pending,
    /// Running (possibly waiting on a permission).
    Running,
    /// Finished with output.
    Completed,
    /// Finished with an error (also a rejected permission).
    Error,
    /// A status this client does not know.
    #[serde(other)]
    Other,
}

impl std::fmt::Display for ToolStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ToolStatus::Pending => "pending",
            ToolStatus::Running => "running",
            ToolStatus::Completed => "completed",
            ToolStatus::Error => "error",
            ToolStatus::Other => "other",
        })
    }
}

/// A tool part's state.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[non_exhaustive]
pub struct ToolState {
    /// The status.
    pub status: ToolStatus,
    /// The tool's input.
    #[serde(default)]
    pub input: Value,
    /// The output, when completed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
    /// The error, when failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Unknown and less used fields (title, metadata, time, raw, …).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A message part. Typed by `kind` (`text`, `tool`, `step-start`, `step-finish`, `reasoning`,
/// …); the fields of kinds this client does not model stay in `extra`.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[non_exhaustive]
pub struct Part {
    /// `prt_…`.
    pub id: String,
    /// The message it belongs to.
    #[serde(rename = "messageID")]
    pub message_id: String,
    /// The session.
    #[serde(rename = "sessionID", default)]
    pub session_id: String,
    /// The part's type.
    #[serde(rename = "type")]
    pub kind: String,
    /// Text of `text` and `reasoning` parts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Tool name of `tool` parts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// Call id of `tool` parts.
    #[serde(rename = "callID", default, skip_serializing_if = "Option::is_none")]
    pub call_id: Option<String>,
    /// State of `tool` parts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<ToolState>,
    /// Unknown and kind-specific fields.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A message with its parts (`GET /session/{id}/message`, blocking prompt).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[non_exhaustive]
pub struct MessageWithParts {
    /// The message.
    pub info: MessageInfo,
    /// Its parts, in order.
    #[serde(default)]
    pub parts: Vec<Part>,
}

/// The tool call an ask belongs to.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[non_exhaustive]
pub struct ToolRef {
    /// The assistant message.
    #[serde(rename = "messageID")]
    pub message_id: String,
    /// The call id.
    #[serde(rename = "callID")]
    pub call_id: String,
}

/// A pending permission request (`permission.asked`, `GET /permission`).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[non_exhaustive]
pub struct PermissionRequest {
    /// `per_…`.
    pub id: String,
    /// The session.
    #[serde(rename = "sessionID")]
    pub session_id: String,
    /// The permission (`bash`, `edit`, …).
    pub permission: String,
    /// What it applies to (e.g. the command).
    #[serde(default)]
    pub patterns: Vec<String>,
    /// The patterns an `always` reply would approve.
    #[serde(default)]
    pub always: Vec<String>,
    /// Tool-specific details.
    #[serde(default)]
    pub metadata: Value,
    /// The tool call asking.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<ToolRef>,
    /// Unknown fields.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A reply to a permission request.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum PermissionReply {
    /// Allow this call.
    Once,
    /// Allow this and matching later calls (also other sessions' pending matching requests).
    Always,
    /// Deny.
    Reject,
}

impl PermissionReply {
    /// The wire string.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Once => "once",
            Self::Always => "always",
            Self::Reject => "reject",
        }
    }
}

/// One option of a question.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[non_exhaustive]
pub struct QuestionOption {
    /// The label (what a reply sends back).
    pub label: String,
    /// Its description.
    #[serde(default)]
    pub description: String,
}

/// One question of a question request.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[non_exhaustive]
pub struct QuestionInfo {
    /// The full question.
    pub question: String,
    /// A short label.
    #[serde(default)]
    pub header: String,
    /// The choices.
    #[serde(default)]
    pub options: Vec<QuestionOption>,
    /// Whether several options may be chosen.
    #[serde(default)]
    pub multiple: bool,
    /// Unknown fields.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A pending question (`question.asked`, `GET /question`).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[non_exhaustive]
pub struct QuestionRequest {
    /// `que_…`.
    pub id: String,
    /// The session.
    #[serde(rename = "sessionID")]
    pub session_id: String,
    /// The questions, answered in order.
    #[serde(default)]
    pub questions: Vec<QuestionInfo>,
    /// The tool call asking.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<ToolRef>,
    /// Unknown fields.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The model a prompt should use.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[non_exhaustive]
pub struct ModelRef {
    /// Provider id, e.g. `ollama`.
    #[serde(rename = "providerID")]
    pub provider_id: String,
    /// Model id, e.g. `gemma3:270m`.
    #[serde(rename = "modelID")]
    pub model_id: String,
}

impl ModelRef {
    /// The model `model_id` of the provider `provider_id`.
    pub fn new(provider_id: impl Into<String>, model_id: impl Into<String>) -> Self {
        Self {
            provider_id: provider_id.into(),
            model_id: model_id.into(),
        }
    }
}
