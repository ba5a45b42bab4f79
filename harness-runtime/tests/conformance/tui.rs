//! The TUI's start-up routes: what `opencode attach` reads before it draws. Real OpenCode runs on
//! a server of its own here, as a user's does and the fixture always does: the `/api` routes read
//! no `?directory=` and answer for the server's own directory, and `/config` shows the config
//! the server was started with.

use crate::differences::Deliberate;

/// Where the fixture differs from real OpenCode here on purpose (besides the version mark every
/// group shares: `differences::EVERYWHERE`).
pub(crate) const DELIBERATE: &[Deliberate] = &[];

interaction!(own_server:
    /// Where the TUI is: `GET /path`, `/project/current`, `/vcs`, `/api/location`.
    location(talk) {
        for route in ["/path", "/project/current", "/vcs", "/api/location"] {
            talk.get(route).await?;
        }
    }
);

interaction!(own_server:
    /// The configuration and the providers: `GET /config`, `/config/providers`, `/provider`,
    /// `/provider/auth`.
    config_and_providers(talk) {
        for route in ["/config", "/config/providers", "/provider", "/provider/auth"] {
            talk.get(route).await?;
        }
    }
);

interaction!(own_server:
    /// The agents: `GET /agent` and `/api/agent`.
    agents(talk) {
        for route in ["/agent", "/api/agent"] {
            talk.get(route).await?;
        }
    }
);

interaction!(own_server:
    /// The commands: `GET /command` and `/api/command`.
    commands(talk) {
        for route in ["/command", "/api/command"] {
            talk.get(route).await?;
        }
    }
);

interaction!(own_server:
    /// What the TUI reads besides, all empty with nothing configured: statuses, workspaces,
    /// capabilities, console, resources, LSP, formatters, MCP, skills, models, references,
    /// integrations.
    the_rest(talk) {
        for route in [
            "/session/status",
            "/experimental/workspace/status",
            "/experimental/workspace",
            "/experimental/capabilities",
            "/experimental/console",
            "/experimental/resource",
            "/lsp",
            "/formatter",
            "/mcp",
            "/api/skill",
            "/api/model",
            "/api/provider",
            "/api/reference",
            "/api/integration",
        ] {
            talk.get(route).await?;
        }
    }
);
