//! The product's own OpenCode configuration: settings layered over the harness's model config
//! (`AgentOptions::product_config`), and a project `opencode.json` the product puts in the
//! workspace, on a server of the scenario's own and on a shared one.
//!
//! Each setting is checked by what it changes: an instructions file reaches the model's
//! system prompt, a `permission` rule makes the agent ask before it runs bash. The turn itself
//! is the scripted model's, so the model wiring stayed the harness's.
//!
//! OpenCode reads a directory's config once, when its instance for that directory starts (the
//! first request naming it): the files are written before the first request, as a product's
//! repository has them before the product talks to OpenCode.

use harness_runtime::client::Ask;
use harness_runtime::opencode::{Agent, ProvisionError};
use harness_runtime::prelude::*;

/// The bash command the model runs: asked for, then run once approved.
const COMMAND: &str = "echo layered > layered.txt";
/// The product's instructions file (`product_config`), and the line the model must receive.
const RULES: (&str, &str) = (
    "RULES.md",
    "PRODUCT-RULE: answer as the product's reviewer.",
);
/// The project's instructions file (its `opencode.json`), and its line.
const PROJECT_RULES: (&str, &str) = ("PROJECT.md", "PROJECT-RULE: keep the changelog tidy.");

/// The model asks to run [`COMMAND`], then ends the turn.
fn script(live: &Live) {
    live.model()
        .reply(Reply::tool_call(
            "bash",
            json!({"command": COMMAND, "description": "Write the marker"}),
        ))
        .reply(Reply::text("Done."));
}

/// Runs the scripted turn, approving each ask once, and checks what the settings changed: bash
/// was asked for (and ran once approved), and each of `instructions` reached the model. Records
/// the turn and those facts as evidence.
async fn turn_shows_the_settings(
    live: &mut Live,
    agent: &Agent,
    instructions: &[(&str, &str)],
) -> anyhow::Result<()> {
    let session = agent.create_session().await?;
    let turn = session
        .prompt_with(
            Prompt::new("Write the marker file.")
                .asks(AskPolicy::leave_pending().permissions(PermissionPolicy::Once)),
        )
        .await?;
    anyhow::ensure!(turn.error().is_none(), "turn failed: {:?}", turn.error());
    let asked: Vec<&str> = turn
        .interactions
        .iter()
        .filter_map(|i| match &i.ask {
            Ask::Permission(request) => Some(request.permission.as_str()),
            _ => None,
        })
        .collect();
    anyhow::ensure!(
        asked == ["bash"],
        "expected one bash ask from the configured `permission`, got {asked:?} (the rule did \
         not reach OpenCode, or was outranked)"
    );
    let marker = agent.workspace().join("layered.txt");
    anyhow::ensure!(
        std::fs::read_to_string(&marker).is_ok_and(|text| text.trim() == "layered"),
        "the approved command did not write {}",
        marker.display()
    );
    let requests = live.model().requests();
    let first = requests
        .first()
        .ok_or_else(|| anyhow::anyhow!("the scripted model got no request"))?;
    let sent = first.raw.to_string();
    let mut seen = serde_json::Map::new();
    for (file, line) in instructions {
        anyhow::ensure!(
            sent.contains(line),
            "the model's request does not carry {file} ({line:?}): the instructions setting \
             was not read (was the workspace's OpenCode instance started before the file was \
             written?)"
        );
        seen.insert((*file).to_string(), json!(true));
    }
    live.evidence().record_turn(&turn);
    live.evidence().record(
        "settings",
        json!({"asked": asked, "instructions_reached_the_model": seen}),
    );
    live.assert_evidence();
    Ok(())
}

/// The product's settings go over the harness's config: its permission rule over the default
/// allow-everything policy, its instructions beside the harness's (none), while the model stays
/// the scripted one.
#[live_agent_test(timeout = "180s")]
async fn layered_settings_change_what_happens(live: &mut Live) -> anyhow::Result<()> {
    script(live);
    let agent = live
        .opencode_with(AgentOptions::default().product_config(json!({
            "instructions": [RULES.0],
            "permission": {"bash": "ask"},
        })))
        .await?;
    std::fs::write(agent.workspace().join(RULES.0), RULES.1)?;
    turn_shows_the_settings(live, &agent, &[RULES]).await
}

/// A setting that would take the scenario's model away is refused before anything starts,
/// naming the key.
#[live_agent_test(timeout = "60s")]
async fn a_setting_breaking_the_model_wiring_is_refused(live: &mut Live) -> anyhow::Result<()> {
    let refused = live
        .opencode_with(AgentOptions::default().product_config(json!({
            "agent": {"build": {"model": "anthropic/claude-sonnet-4"}},
        })))
        .await;
    match refused {
        Err(ProvisionError::ProductConfig { key, reason }) => {
            anyhow::ensure!(key == "agent.build.model", "named {key:?}: {reason}");
            live.evidence()
                .record("refused", json!({"key": key, "reason": reason}));
            live.assert_evidence();
            Ok(())
        }
        Err(other) => anyhow::bail!("refused, but not as a product setting: {other}"),
        Ok(agent) => anyhow::bail!("provisioned {} despite the setting", agent.endpoint()),
    }
}

/// The product writes its project `opencode.json` into the workspace: OpenCode merges it
/// beneath the harness's config and the product's settings, as it would beneath the product's
/// own `OPENCODE_CONFIG_CONTENT`. Its `permission` decides because the scenario clears the
/// harness's policy, whose `"*"` rule would otherwise outrank it.
async fn project_config_is_honoured(live: &mut Live) -> anyhow::Result<()> {
    script(live);
    let agent = live
        .opencode_with(
            AgentOptions::default()
                .permission(json!({}))
                .product_config(json!({"instructions": [RULES.0]})),
        )
        .await?;
    let workspace = agent.workspace();
    std::fs::write(workspace.join(RULES.0), RULES.1)?;
    std::fs::write(workspace.join(PROJECT_RULES.0), PROJECT_RULES.1)?;
    let project = json!({"instructions": [PROJECT_RULES.0], "permission": {"bash": "ask"}});
    std::fs::write(workspace.join("opencode.json"), project.to_string())?;
    turn_shows_the_settings(live, &agent, &[RULES, PROJECT_RULES]).await?;
    // The product's file is its own: the harness's config lives elsewhere.
    let kept: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(workspace.join("opencode.json"))?)?;
    anyhow::ensure!(
        kept["instructions"] == project["instructions"] && kept.get("provider").is_none(),
        "the project's opencode.json was changed: {kept}"
    );
    Ok(())
}

#[live_agent_test(timeout = "180s", isolation = "shared")]
async fn project_config_is_honoured_on_a_shared_server(live: &mut Live) -> anyhow::Result<()> {
    project_config_is_honoured(live).await
}

#[live_agent_test(timeout = "180s", isolation = "server")]
async fn project_config_is_honoured_on_a_server_of_its_own(live: &mut Live) -> anyhow::Result<()> {
    project_config_is_honoured(live).await
}
