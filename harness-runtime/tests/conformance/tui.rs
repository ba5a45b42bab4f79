//! The TUI's start-up routes: what `opencode attach` reads before it draws.

use crate::differences::Deliberate;

/// Why the `/api` routes' locations differ.
const SHARED_SERVER: &str = "the /api routes read no ?directory= (they take a `location` of \
    their own, which the TUI does not send), so they answer for the server's own directory: the \
    references come from a shared real server, whose directory is not the scenario's workspace \
    (nor its project), while the fixture agent runs a server of its own in the workspace";

/// Where the fixture differs from real OpenCode here on purpose.
pub(crate) const DELIBERATE: &[Deliberate] = &[
    Deliberate {
        interaction: "tui::location",
        field: "/steps/3/answer/directory",
        fixture: None,
        why: SHARED_SERVER,
    },
    Deliberate {
        interaction: "tui::location",
        field: "/steps/3/answer/project",
        fixture: None,
        why: SHARED_SERVER,
    },
    Deliberate {
        interaction: "tui::agents",
        field: "/steps/1/answer/location",
        fixture: None,
        why: SHARED_SERVER,
    },
    Deliberate {
        interaction: "tui::commands",
        field: "/steps/1/answer/location",
        fixture: None,
        why: SHARED_SERVER,
    },
    Deliberate {
        interaction: "tui::commands",
        field: "/steps/1/answer/data/0/template",
        fixture: None,
        why: SHARED_SERVER,
    },
    Deliberate {
        interaction: "tui::the_rest",
        field: "/steps/9/answer/location",
        fixture: None,
        why: SHARED_SERVER,
    },
    Deliberate {
        interaction: "tui::the_rest",
        field: "/steps/10/answer/location",
        fixture: None,
        why: SHARED_SERVER,
    },
    Deliberate {
        interaction: "tui::the_rest",
        field: "/steps/11/answer/location",
        fixture: None,
        why: SHARED_SERVER,
    },
    Deliberate {
        interaction: "tui::the_rest",
        field: "/steps/12/answer/location",
        fixture: None,
        why: SHARED_SERVER,
    },
    Deliberate {
        interaction: "tui::the_rest",
        field: "/steps/13/answer/location",
        fixture: None,
        why: SHARED_SERVER,
    },
];

interaction!(
    /// Where the TUI is: `GET /path`, `/project/current`, `/vcs`, `/api/location`.
    location(talk) {
        for route in ["/path", "/project/current", "/vcs", "/api/location"] {
            talk.get(route).await?;
        }
    }
);

interaction!(
    /// The configuration and the providers: `GET /config`, `/config/providers`, `/provider`,
    /// `/provider/auth`.
    config_and_providers(talk) {
        for route in ["/config", "/config/providers", "/provider", "/provider/auth"] {
            talk.get(route).await?;
        }
    }
);

interaction!(
    /// The agents: `GET /agent` and `/api/agent`.
    agents(talk) {
        for route in ["/agent", "/api/agent"] {
            talk.get(route).await?;
        }
    }
);

interaction!(
    /// The commands: `GET /command` and `/api/command`.
    commands(talk) {
        for route in ["/command", "/api/command"] {
            talk.get(route).await?;
        }
    }
);

interaction!(
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
