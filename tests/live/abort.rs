//! Aborting a running turn of real OpenCode: while the model is thinking (a stalled reply), and
//! while a permission request waits for an answer.

use std::time::Duration;

use harness_runtime::client::{Event, EventStream, MessageError, SessionStatus, ToolStatus};
use harness_runtime::prelude::*;

use crate::support;

/// How long a scenario waits for the agent to ask for the bash permission before saying so.
const ASK_CEILING: Duration = Duration::from_secs(90);

#[live_agent_test(timeout = "120s")]
async fn during_stalled_reply(live: &mut Live) -> anyhow::Result<()> {
    let (reply, stall) = Reply::stall();
    live.model().reply(reply);
    let agent = live.opencode().await?;
    let session = agent.create_session().await?;
    let mut events = agent.client().subscribe().await?;
    let (turn, aborted) = tokio::join!(session.prompt("Think about it"), async {
        // The model has the request and sent only its role chunk: the turn is mid-reply.
        stall.reached().await?;
        // OpenCode opens the step once the response starts; aborting before or after that is a
        // race, so wait for the step's part and abort a turn in one known state.
        wait_for_step_start(&mut events, session.id()).await?;
        anyhow::Ok(session.abort().await?)
    });
    let (turn, aborted) = (turn?, aborted?);

    anyhow::ensure!(aborted, "POST /session/{{id}}/abort answered false");
    anyhow::ensure!(
        matches!(turn.error(), Some(MessageError::MessageAbortedError { .. })),
        "turn error was {:?}",
        turn.error()
    );
    anyhow::ensure!(turn.text.is_empty(), "text was {:?}", turn.text);
    // Aborting does not make OpenCode ask the model again.
    let requests = live.model().requests();
    anyhow::ensure!(requests.len() == 1, "{} model requests", requests.len());
    let statuses = session.client().statuses().await?;
    anyhow::ensure!(
        statuses
            .get(session.id())
            .is_none_or(|s| *s == SessionStatus::Idle),
        "session status after the abort: {statuses:?}"
    );

    live.evidence().record_turn(&turn);
    live.evidence()
        .record("model_requests", live.model().summaries());
    live.assert_evidence();
    Ok(())
}

/// Waits for the `step-start` part of `session`'s reply, within [`ASK_CEILING`].
pub(crate) async fn wait_for_step_start(
    events: &mut EventStream,
    session: &str,
) -> anyhow::Result<()> {
    let wait = async {
        while let Some(event) = events.next_event().await? {
            if let Event::MessagePartUpdated { session_id, part } = &event {
                if session_id == session && part.kind == "step-start" {
                    return anyhow::Ok(());
                }
            }
        }
        anyhow::bail!("the event stream ended before the reply's step started")
    };
    tokio::time::timeout(ASK_CEILING, wait)
        .await
        .map_err(|_| anyhow::anyhow!("the reply's step did not start within {ASK_CEILING:?}"))?
}

#[live_agent_test(timeout = "120s")]
async fn while_permission_pending(live: &mut Live) -> anyhow::Result<()> {
    let (agent, session) =
        support::session_asking_to_run(live, "echo ran > marker.txt", "Write a marker file")
            .await?;
    let client = session.client().clone();

    // The policy leaves the permission request pending and says which one it was.
    let (policy, mut pending) = support::leave_permission_pending();
    let (turn, asked) = tokio::join!(
        session.prompt_with(Prompt::new("Write the marker").asks(policy)),
        async {
            let id = pending.id_within(ASK_CEILING).await?;
            // `permission.asked` is published once the request is registered: it is listed.
            let listed = client.permissions().await?;
            anyhow::ensure!(
                listed.iter().any(|p| p.id == id),
                "the asked permission is not listed by GET /permission: {listed:?}"
            );
            anyhow::ensure!(client.abort(session.id()).await?, "abort answered false");
            anyhow::Ok(id)
        }
    );
    let (turn, permission_id) = (turn?, asked?);

    anyhow::ensure!(
        matches!(turn.error(), Some(MessageError::MessageAbortedError { .. })),
        "turn error was {:?}",
        turn.error()
    );
    let call = turn
        .tool_call("bash")
        .ok_or_else(|| anyhow::anyhow!("no bash tool call in {:?}", turn.tool_calls))?;
    anyhow::ensure!(
        call.status == ToolStatus::Error,
        "bash call ended {:?} ({:?})",
        call.status,
        call.error
    );
    anyhow::ensure!(
        !agent.workspace().join("marker.txt").exists(),
        "the command ran although its permission was never granted"
    );
    let requests = live.model().requests();
    anyhow::ensure!(requests.len() == 1, "{} model requests", requests.len());
    // OpenCode does not clear the request on abort: it stays listed, unanswered.
    let after = client.permissions().await?;
    let still_listed = after.iter().any(|p| p.id == permission_id);
    anyhow::ensure!(
        still_listed,
        "the permission request is no longer listed after the abort: {after:?}"
    );

    live.evidence().record_turn(&turn);
    live.evidence().record(
        "after_abort",
        json!({
            "permission_still_listed": still_listed,
            "bash_call_error": call.error,
        }),
    );
    live.evidence()
        .record("model_requests", live.model().summaries());
    live.assert_evidence();
    Ok(())
}
