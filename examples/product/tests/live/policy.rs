//! The product's own rules against real OpenCode, with the observer's record of what the agent
//! did snapshotted: reads approved, edits inside the workspace approved, a write outside it
//! rejected, and a stalled turn aborted at the product's deadline.

use std::time::Duration;

use harness_runtime::prelude::*;
use product_example::{AbortCause, Cancel, Delivery, Outcome, Task, Verdict};

use crate::support::{self, arm_wire, entered};

const ANSWER: &str = "Summary written; I may not write outside.";

/// The model reads the notes, writes a summary into the workspace, then tries to write outside
/// it: the product approves the first two and rejects the third. The write fails, nothing is
/// written outside, and the model is told and answers.
#[live_agent_test(timeout = "150s")]
async fn reads_and_inside_edits_approved_outside_write_rejected(
    live: &mut Live,
) -> anyhow::Result<()> {
    let agent = support::agent_with_notes(live).await?;
    let inside = agent.workspace().join("summary.txt");
    let outside = agent.root().join("outside.txt");
    let write = |path: &std::path::Path, content: &str| {
        Reply::tool_call(
            "write",
            json!({"filePath": path.display().to_string(), "content": content}),
        )
    };
    live.model()
        .reply(support::read_notes(&agent))
        .reply(write(&inside, "milk\n"))
        .reply(write(&outside, "escaped\n"))
        .reply(Reply::text(ANSWER));
    let product = support::product(live, &agent)?;

    let task = Task::new("Summarise my notes");
    let report = product.run(&task, &Cancel::new()).await?;

    let answered = Outcome::Completed {
        text: ANSWER.into(),
    };
    support::ensure_outcome(&report, &answered)?;

    let verdicts: Vec<(&str, bool)> = report
        .asks
        .iter()
        .map(|a| (a.permission.as_str(), a.verdict == Verdict::Approve))
        .collect();
    anyhow::ensure!(
        verdicts
            == [
                ("read", true),
                ("edit", true),
                ("external_directory", false)
            ],
        "{:?}",
        report.asks
    );
    anyhow::ensure!(
        report.asks.iter().all(|a| a.delivery == Delivery::Replied),
        "{:?}",
        report.asks
    );
    anyhow::ensure!(std::fs::read_to_string(&inside)? == "milk\n");
    anyhow::ensure!(
        !outside.exists(),
        "the write outside the workspace happened"
    );
    let tools = support::tool_calls(&agent, &report.session_id).await?;
    anyhow::ensure!(
        tools == ["read completed", "write completed", "write error"],
        "tool calls: {tools:?}"
    );

    let sections = vec![("product", support::report_json(&report))];
    support::snapshot(live, &agent, sections).await;
    Ok(())
}

/// The model never answers: the product aborts the session at its deadline and reports the
/// turn aborted for it.
#[live_agent_test(timeout = "120s")]
async fn deadline_aborts_a_stalled_turn(live: &mut Live) -> anyhow::Result<()> {
    let (stall, held) = Reply::stall();
    live.model().reply(stall);
    let agent = live.opencode_with(support::asking_the_product()).await?;
    let product = support::product(live, &agent)?;
    let mut agent_events = support::agent_events(&agent).await?;

    // The deadline runs from the prompt's answer: hold that answer until the model holds the
    // turn's request and its answer has begun, so the abort provably meets a turn in progress.
    let prompted = arm_wire(live, "response POST /session/{id}/prompt_async")?;
    let task = Task::new("Think hard").deadline(scaled(Duration::from_secs(1)));
    let report = support::run_forced(&product, &task, &Cancel::new(), [&prompted], async {
        entered(&prompted).await?;
        held.reached().await?;
        support::part_appeared(&mut agent_events, "step-start", 1).await
    })
    .await?;

    let at_deadline = Outcome::Aborted {
        cause: AbortCause::Deadline,
    };
    support::ensure_outcome(&report, &at_deadline)?;

    let sections = vec![("product", support::report_json(&report))];
    support::snapshot(live, &agent, sections).await;
    Ok(())
}
