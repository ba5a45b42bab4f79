//! The product as an ACP client (`src/bin/acp_ask.rs`: an editor extension's or an
//! orchestrator's shape): it runs the agent command the harness gives it, and every line
//! between it and the real agent (`opencode acp`) passes the scenario's gates. Held at the
//! agent's permission request, the product's approval has not happened and the command has not
//! run; released, both do.

use std::time::Duration;

use harness_runtime::acp::AcpAgentKind;
use harness_runtime::gates::AcpPoint;
use harness_runtime::prelude::*;
use harness_runtime::product::ProductCommand;

/// How long the agent may take to ask, and the product to finish.
const WITHIN: Duration = Duration::from_secs(60);

#[live_agent_test(timeout = "120s", gate = "acp before session/request_permission")]
async fn gated_on_a_permission_request(live: &mut Live) -> anyhow::Result<()> {
    live.model()
        .reply(Reply::tool_call(
            "bash",
            json!({"command": "echo ran > ran.txt", "description": "Write ran.txt"}),
        ))
        .reply(Reply::text("Wrote it."));
    let asking = AgentOptions::default().permission(json!({"*": "allow", "bash": "ask"}));
    let relay = live
        .acp_agent_for_product(AcpAgentKind::OpenCode, asking)
        .await?;
    let point = AcpPoint::parse("acp before session/request_permission")?;
    let gate = live
        .gates()
        .gate(point)
        .ok_or_else(|| anyhow::anyhow!("the attribute did not arm `{point}`"))?;
    let product = live
        .start_acp_product(
            &relay,
            ProductCommand::new(env!("CARGO_BIN_EXE_acp_ask")).arg("Write ran.txt"),
        )
        .await?;

    gate.wait_until_entered_within(scaled(WITHIN)).await?;
    let ran = relay.workspace().join("ran.txt");
    anyhow::ensure!(
        !ran.exists(),
        "the command ran before its permission was answered"
    );
    anyhow::ensure!(
        !product.output().contains("permission asked"),
        "the product saw the held request: {}",
        product.output()
    );
    gate.release();

    let exit = product.wait_within(scaled(WITHIN)).await?;
    anyhow::ensure!(exit.success(), "the product failed: {}", product.tail(20));
    anyhow::ensure!(ran.exists(), "the approved command did not run");
    let stdout = product.stdout();
    anyhow::ensure!(
        stdout.contains("permission asked: approved once") && stdout.contains("stop: end_turn"),
        "the product said: {stdout}"
    );
    live.evidence()
        .record("product_said", stdout.lines().collect::<Vec<_>>());
    live.evidence().record("traffic", relay.traffic());
    live.assert_evidence();
    Ok(())
}
