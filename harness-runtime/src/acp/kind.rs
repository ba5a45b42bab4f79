//! Which ACP agent a scenario asks for.

use std::fmt;

/// An agent that speaks the Agent Client Protocol over its stdio.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum AcpAgentKind {
    /// OpenCode's own ACP mode: `opencode acp`, the binary pinned in `package.json`.
    OpenCode,
    /// Qwen Code: `qwen --acp`, npm `@qwen-code/qwen-code` pinned in `package.json`, with the
    /// scripted model as its OpenAI-compatible endpoint.
    QwenCode,
    /// Gemini CLI: `gemini --acp`, npm `@google/gemini-cli` pinned in `package.json`, with the
    /// scripted model as its Gemini API endpoint.
    GeminiCli,
}

impl AcpAgentKind {
    /// The name the report and progress lines use.
    pub fn name(self) -> &'static str {
        match self {
            Self::OpenCode => "opencode-acp",
            Self::QwenCode => "qwen-code",
            Self::GeminiCli => "gemini-cli",
        }
    }
}

impl fmt::Display for AcpAgentKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
