//! A product that is a program: a Node script on the official SDK (`node/app.mjs`), started by
//! the scenario against the agent's forwarder, with a wire gate on its prompt.

use std::path::{Path, PathBuf};
use std::time::Duration;

use harness_runtime::prelude::*;
use harness_runtime::product::ProductCommand;

use crate::support::{self, arm_wire, entered, meanwhile};

/// The script, and the SDK package it imports.
fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("node/app.mjs")
}

fn sdk_package() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../node_modules/@opencode-ai/sdk/package.json")
}

/// What is missing to run the Node product, naming what to install.
fn missing_node() -> Option<String> {
    let on_path = std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join("node").is_file()));
    if !on_path {
        return Some("node not found in PATH: install Node.js (20 or later)".into());
    }
    if !sdk_package().is_file() {
        return Some("@opencode-ai/sdk not installed: run `npm ci` at the workspace root".into());
    }
    None
}

/// The Node product asks its question through the forwarder; its prompt is held there until the
/// scenario has seen that the agent has not got it (the model was asked nothing) while the
/// product waits. Released, the product approves the agent's read, collects the answer and
/// exits 0 with one JSON line.
#[live_agent_test(timeout = "150s")]
async fn sdk_product_held_at_its_prompt(live: &mut Live) -> anyhow::Result<()> {
    if let Some(missing) = missing_node() {
        return Err(live.missing_prerequisite(missing).into());
    }
    let agent = support::agent_with_notes(live).await?;
    live.model()
        .reply(support::read_notes(&agent))
        .reply(Reply::text("Your notes say: remember the milk."));
    let ceiling = scaled(Duration::from_secs(60));

    let prompt = arm_wire(live, "request POST /session/{id}/prompt_async")?;
    let node = live
        .start_product(
            &agent,
            ProductCommand::new("node")
                .arg(script())
                .env("PRODUCT_CEILING_MS", ceiling.as_millis().to_string()),
        )
        .await?;
    meanwhile([&prompt], async {
        tokio::select! {
            entered = entered(&prompt) => entered?,
            exit = node.wait_within(ceiling) => anyhow::bail!(
                "the product ended ({exit:?}) before its prompt reached the forwarder: {}",
                node.tail(20)
            ),
        }
        anyhow::ensure!(node.is_running(), "the product exited: {}", node.tail(20));
        anyhow::ensure!(
            live.model().requests().is_empty(),
            "the agent got the held prompt: {:?}",
            live.model().summaries()
        );
        Ok(())
    })
    .await?;
    let exit = node.wait_within(ceiling).await?;
    anyhow::ensure!(exit.success(), "the product failed: {}", node.tail(20));
    let said: serde_json::Value = serde_json::from_str(node.stdout().trim_end())?;
    anyhow::ensure!(
        said == json!({
            "outcome": "completed",
            "text": "Your notes say: remember the milk.",
            "asks": [["read", "once"]],
        }),
        "the product said {said}"
    );

    support::snapshot(live, &agent, vec![("product_said", said)]).await;
    Ok(())
}
