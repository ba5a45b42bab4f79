//! Which agent a cross-agent scenario runs on: `#[live_agent_test(agents = [...])]` registers one
//! scenario per kind listed, and [`Live::any_agent`](crate::Live::any_agent) starts that kind.
//! The kind itself is declared with the scenario's options (`scenario.rs`, a base module); what
//! it means in ACP's terms is said here, above `acp`.

pub use crate::scenario::AnyAgentKind;

use crate::acp::AcpAgentKind;

impl AnyAgentKind {
    /// The ACP agent this is, or `None` for OpenCode over HTTP.
    pub fn acp(self) -> Option<AcpAgentKind> {
        match self {
            Self::OpenCodeHttp => None,
            Self::OpenCodeAcp => Some(AcpAgentKind::OpenCode),
            Self::QwenCode => Some(AcpAgentKind::QwenCode),
            Self::GeminiCli => Some(AcpAgentKind::GeminiCli),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::AnyAgentKind;

    /// The ACP kinds name themselves alike whichever enum they are reached through.
    #[test]
    fn acp_kinds_share_their_names() {
        for kind in AnyAgentKind::ALL {
            if let Some(acp) = kind.acp() {
                assert_eq!(acp.name(), kind.name());
            }
        }
    }
}
