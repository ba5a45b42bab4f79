//! Interleavings that only gates make deterministic, against real OpenCode and the scripted
//! model: an abort meeting a delivered prompt, a permission reply racing an abort (both orders),
//! a server stopped under a delivered turn, and two sessions' prompts delivered in a forced order.
//!
//! Every scenario has the same shape: arm a gate, run the operation that pauses at it next to a
//! "meanwhile" that waits until it is provably paused, acts, and releases it. The meanwhile
//! releases its gate on every path, so a failed step fails the scenario at once instead of
//! leaving the paused operation to the scenario's timeout.

use std::time::Duration;

use harness_runtime::client::Turn;
use harness_runtime::client::{ClientError, Event, EventStream, SessionStatus, ToolStatus};
use harness_runtime::gates::Gate;
use harness_runtime::gates::{Counter, GatePoint};
use harness_runtime::model::{Matcher, Rule};
use harness_runtime::prelude::*;

use crate::support;

/// How long a meanwhile waits for the paused operation to reach its gate (scaled).
const ENTER_CEILING: Duration = Duration::from_secs(60);

/// The facts of a turn that do not depend on timing: typed errors, tool calls and their final
/// status, asks and their answers. (The event trace is left out: after an abort OpenCode sends
/// `session.idle`/`session.status` a varying number of times.)
fn outcome(turn: &Turn) -> serde_json::Value {
    let names = |errors: &[harness_runtime::client::MessageError]| {
        errors
            .iter()
            .map(|e| e.name().to_owned())
            .collect::<Vec<_>>()
    };
    json!({
        "errors": names(&turn.errors),
        "session_errors": names(&turn.session_errors),
        "tool_calls": turn
            .tool_calls
            .iter()
            .map(|c| format!("{} {}", c.tool, c.status))
            .collect::<Vec<_>>(),
        "asks_answered": turn
            .interactions
            .iter()
            .map(|i| i.answer.as_ref().map(|a| format!("{a:?}")))
            .collect::<Vec<_>>(),
    })
}

/// Runs `meanwhile` once `gate` is entered, then releases the gate whatever `meanwhile` did.
async fn while_paused<T>(
    gate: &Gate,
    meanwhile: impl std::future::Future<Output = anyhow::Result<T>>,
) -> anyhow::Result<T> {
    let result = async {
        gate.wait_until_entered_within(ENTER_CEILING).await?;
        meanwhile.await
    }
    .await;
    gate.release();
    result
}

/// Waits until `tool` in `session` runs and its streamed output contains `needle`: the command
/// provably started.
async fn tool_output_seen(
    events: &mut EventStream,
    session: &str,
    tool: &str,
    needle: &str,
) -> anyhow::Result<()> {
    let ceiling = harness_runtime::scaled(ENTER_CEILING);
    let seen = async {
        while let Some(event) = events.next_event().await? {
            let Event::MessagePartUpdated { session_id, part } = event else {
                continue;
            };
            let running_output = part
                .state
                .as_ref()
                .filter(|state| state.status == ToolStatus::Running)
                .and_then(|state| state.extra.get("metadata"))
                .and_then(|metadata| metadata.get("output"))
                .and_then(|output| output.as_str())
                .is_some_and(|output| output.contains(needle));
            if session_id == session && part.tool.as_deref() == Some(tool) && running_output {
                return Ok(());
            }
        }
        anyhow::bail!("the event stream ended before `{tool}` printed {needle:?}")
    };
    tokio::time::timeout(ceiling, seen)
        .await
        .map_err(|_| anyhow::anyhow!("`{tool}` did not print {needle:?} within {ceiling:?}"))?
}

/// Fails unless the abort was accepted (`aborted`) and ended `turn` as aborted.
fn ensure_aborted(aborted: bool, turn: &Turn) -> anyhow::Result<()> {
    anyhow::ensure!(aborted, "POST abort answered false");
    let aborted_error = turn
        .errors
        .iter()
        .chain(&turn.session_errors)
        .any(|e| e.name() == "MessageAbortedError");
    anyhow::ensure!(
        aborted_error,
        "the turn was not aborted: errors {:?}, session errors {:?}",
        turn.errors,
        turn.session_errors
    );
    Ok(())
}

/// The prompt post returned (the agent has the prompt) and the model holds the turn's request;
/// the client is paused before collecting. An abort posted now must end that turn as aborted,
/// and the client, once released, must collect exactly that outcome from the buffered events.
#[live_agent_test(timeout = "120s")]
async fn abort_while_prompt_in_flight(live: &mut Live) -> anyhow::Result<()> {
    let (stall, held) = Reply::stall();
    live.model().reply(stall);
    let agent = live.opencode().await?;
    let session = agent.create_session().await?;

    let delivered = live.gates().arm(GatePoint::PromptDelivered);
    let prompt = session.prompt("Think about this for a long time");
    let meanwhile = while_paused(&delivered, async {
        anyhow::ensure!(live.gates().counted(Counter::Prompt) == 1);
        // The turn provably runs: its model request is held by the stall.
        held.reached().await?;
        anyhow::ensure!(live.gates().counted(Counter::Abort) == 0);
        Ok(session.abort().await?)
    });
    let (turn, aborted) = tokio::join!(prompt, meanwhile);
    let aborted = aborted?;
    let turn = turn?;

    ensure_aborted(aborted, &turn)?;
    anyhow::ensure!(turn.text.is_empty(), "text was {:?}", turn.text);
    anyhow::ensure!(live.model().requests().len() == 1);
    let counters = live.gates().counters();
    anyhow::ensure!(
        counters.prompts == 1 && counters.aborts == 1,
        "{counters:?}"
    );

    live.evidence().record("abort_answered", aborted);
    live.evidence().record("outcome", outcome(&turn));
    live.evidence()
        .record("model_requests", live.model().requests().len());
    live.evidence().record("counters", counters);
    live.assert_evidence();
    Ok(())
}

/// The agent asked to run a long bash command; the client replied `once` and is paused right
/// after the reply was posted. The abort is posted strictly after the reply, once the permitted
/// command provably runs (its first output line arrived): the command is killed, the turn ends
/// aborted, and no second model request is made.
///
/// Waiting for the output matters: an abort posted the instant the reply returns can reach
/// OpenCode before the command is spawned, and then the command is not killed and runs to
/// completion (observed with 1.18.33: `sleep 30` completed and the tool call ended `completed`).
#[live_agent_test(timeout = "120s")]
async fn abort_after_permission_reply(live: &mut Live) -> anyhow::Result<()> {
    let (agent, session) =
        support::session_asking_to_run(live, "echo started && sleep 30", "Wait a while").await?;
    // The meanwhile's own view of the session, subscribed before anything can happen.
    let mut events = agent.client().subscribe().await?;

    let replied = live.gates().arm(GatePoint::AfterPermissionReply);
    let prompt = session.prompt_with(support::prompt_answering(
        "Wait a while",
        PermissionPolicy::Once,
    ));
    let meanwhile = while_paused(&replied, async {
        anyhow::ensure!(live.gates().counted(Counter::PermissionReply) == 1);
        tool_output_seen(&mut events, session.id(), "bash", "started").await?;
        anyhow::ensure!(live.gates().counted(Counter::Abort) == 0);
        Ok(session.abort().await?)
    });
    let (turn, aborted) = tokio::join!(prompt, meanwhile);
    let aborted = aborted?;
    let turn = turn?;

    ensure_aborted(aborted, &turn)?;
    let bash = turn
        .tool_call("bash")
        .ok_or_else(|| anyhow::anyhow!("no bash call in {:?}", turn.tool_calls))?;
    // OpenCode's bash tool answers an abort by killing the command and completing the call with
    // the output so far and a note that it was aborted.
    let output = bash.output.as_deref().unwrap_or_default();
    anyhow::ensure!(
        bash.status == ToolStatus::Completed
            && output.contains("started")
            && output.contains("abort"),
        "the permitted command was not cut short by the abort: {:?} {:?} {:?}",
        bash.status,
        bash.output,
        bash.error
    );
    anyhow::ensure!(turn.interactions.len() == 1, "{:?}", turn.interactions);
    anyhow::ensure!(
        live.model().requests().len() == 1,
        "a tool result reached the model: {:?}",
        live.model().summaries()
    );
    let counters = live.gates().counters();
    anyhow::ensure!(
        counters.permission_replies == 1 && counters.aborts == 1,
        "{counters:?}"
    );

    live.evidence().record("outcome", outcome(&turn));
    live.evidence()
        .record("model_requests", live.model().requests().len());
    live.evidence().record("counters", counters);
    live.assert_evidence();
    Ok(())
}

/// The reverse order: the permission is asked and left pending, the session is aborted, and only
/// then is the reply posted. The turn ends aborted with the tool never run; what the late reply
/// gets is recorded (OpenCode keeps the request listed after an abort).
#[live_agent_test(timeout = "120s")]
async fn permission_reply_after_abort(live: &mut Live) -> anyhow::Result<()> {
    let (_agent, session) =
        support::session_asking_to_run(live, "echo should-not-run", "Echo").await?;

    // The collector leaves the ask pending and tells the meanwhile which one it was.
    let (policy, mut asked) = support::leave_permission_pending();
    let prompt = session.prompt_with(Prompt::new("Echo something").asks(policy));
    let meanwhile = async {
        let id = asked.id_within(ENTER_CEILING).await?;
        let aborted = session.abort().await?;
        let late = session
            .client()
            .reply_permission(session.id(), &id, PermissionReply::Once, None)
            .await;
        anyhow::Ok((aborted, late))
    };
    let (turn, meanwhile) = tokio::join!(prompt, meanwhile);
    let (aborted, late) = meanwhile?;
    let turn = turn?;

    ensure_aborted(aborted, &turn)?;
    if let Some(bash) = turn.tool_call("bash") {
        anyhow::ensure!(
            bash.status != ToolStatus::Completed,
            "the command ran after the abort"
        );
    }
    anyhow::ensure!(
        live.model().requests().len() == 1,
        "a tool result reached the model: {:?}",
        live.model().summaries()
    );
    let late_reply = match &late {
        Ok(()) => "accepted".to_owned(),
        Err(e) => format!(
            "{} {}",
            e.status().unwrap_or(0),
            e.error_name().unwrap_or("?")
        ),
    };
    let counters = live.gates().counters();
    anyhow::ensure!(counters.aborts == 1, "{counters:?}");

    live.evidence().record("outcome", outcome(&turn));
    live.evidence().record("late_reply", late_reply);
    live.evidence()
        .record("model_requests", live.model().requests().len());
    live.evidence().record("counters", counters);
    live.assert_evidence();
    Ok(())
}

/// The agent has the prompt and the model holds its request; the client is paused before
/// collecting. The server is stopped now: the released client must fail with a typed error (not
/// hang), and after a restart on the same root the session is still there, idle, with the
/// interrupted exchange in its history.
// A server of its own: it stops and restarts its server.
#[live_agent_test(timeout = "180s", isolation = "server")]
async fn stop_while_turn_paused_then_restart(live: &mut Live) -> anyhow::Result<()> {
    let (stall, held) = Reply::stall();
    live.model().reply(stall);
    let agent = live.opencode().await?;
    let session = agent.create_session().await?;

    let delivered = live.gates().arm(GatePoint::PromptDelivered);
    let prompt = session.prompt("Think about this for a long time");
    let meanwhile = while_paused(&delivered, async {
        held.reached().await?;
        agent.stop().await?;
        anyhow::ensure!(!agent.is_running());
        Ok(())
    });
    let (turn, stopped) = tokio::join!(prompt, meanwhile);
    stopped?;
    let failure = match turn {
        Ok(turn) => anyhow::bail!("a turn was collected from a stopped server: {turn:?}"),
        // Which of the two the client sees depends on how the killed server's sockets close
        // (event stream first, or the next request first): both say "the server went away".
        Err(ClientError::StreamEnded { .. } | ClientError::Transport { .. }) => "server went away",
        Err(other) => anyhow::bail!("unexpected failure: {other}"),
    };
    let exits_after_stop = live.gates().counted(Counter::ProcessExit);

    agent.restart().await?;
    let client = agent.client();
    let info = client.get_session(session.id()).await?;
    anyhow::ensure!(info.id == session.id());
    let statuses = client.statuses().await?;
    let status = statuses.get(session.id()).cloned();
    anyhow::ensure!(
        matches!(status, None | Some(SessionStatus::Idle)),
        "the session is not idle after the restart: {status:?}"
    );
    let messages = client.messages(session.id()).await?;
    anyhow::ensure!(
        messages.first().is_some_and(|m| m.info.role == "user"),
        "the delivered prompt is not in the history"
    );
    anyhow::ensure!(
        live.model().requests().len() == 1,
        "the restarted server called the model again: {:?}",
        live.model().summaries()
    );
    let history: Vec<_> = messages
        .iter()
        .map(|m| {
            json!({
                "role": m.info.role,
                "completed": m.info.time.completed.is_some(),
                "error": m.info.error.as_ref().map(|e| e.name().to_owned()),
                // Whether OpenCode saved the interrupted step's `step-start` marker before it
                // was stopped is a race with the stop (seen in a loaded CI run); what the
                // history must show is that no content of the step survived.
                "parts": m
                    .parts
                    .iter()
                    .map(|p| p.kind.clone())
                    .filter(|kind| kind != "step-start")
                    .collect::<Vec<_>>(),
            })
        })
        .collect();

    live.evidence().record("client_failure", failure);
    live.evidence()
        .record("process_exits_after_stop", exits_after_stop);
    live.evidence()
        .record("session_status_after_restart", status);
    live.evidence().record("history_after_restart", history);
    live.evidence()
        .record("model_requests", live.model().requests().len());
    live.evidence().record("counters", live.gates().counters());
    live.assert_evidence();
    Ok(())
}

/// Two sessions on one agent. Session A's prompt is started first and paused before it is
/// posted; session B's whole turn runs meanwhile; then A goes. The model must see B's request
/// before A's, every time.
#[live_agent_test(timeout = "150s")]
async fn two_sessions_forced_order(live: &mut Live) -> anyhow::Result<()> {
    live.model()
        .rule(
            Rule::when(Matcher::last_user_text_contains("session alpha"))
                .reply(Reply::text("alpha answered"))
                .times(1),
        )
        .rule(
            Rule::when(Matcher::last_user_text_contains("session beta"))
                .reply(Reply::text("beta answered"))
                .times(1),
        );
    let agent = live.opencode().await?;
    let alpha = agent.create_session().await?;
    let beta = agent.create_session().await?;

    // The first prompt to reach `before_prompt` is alpha's: beta's starts only once alpha is
    // paused there.
    let alpha_held = live.gates().arm(GatePoint::BeforePrompt);
    let alpha_turn = alpha.prompt("This is session alpha");
    let beta_turn = while_paused(&alpha_held, async {
        anyhow::ensure!(live.gates().counted(Counter::Prompt) == 0);
        let turn = beta.prompt("This is session beta").await?;
        anyhow::ensure!(
            live.model().requests().len() == 1,
            "alpha reached the model while paused"
        );
        Ok(turn)
    });
    let (alpha_turn, beta_turn) = tokio::join!(alpha_turn, beta_turn);
    let beta_turn = beta_turn?;
    let alpha_turn = alpha_turn?;

    anyhow::ensure!(beta_turn.text == "beta answered", "{:?}", beta_turn.text);
    anyhow::ensure!(alpha_turn.text == "alpha answered", "{:?}", alpha_turn.text);
    let order: Vec<String> = live
        .model()
        .requests()
        .iter()
        .map(|r| r.last_user_text.clone().unwrap_or_default())
        .collect();
    anyhow::ensure!(
        order == ["This is session beta", "This is session alpha"],
        "the model saw {order:?}"
    );
    let counters = live.gates().counters();
    anyhow::ensure!(counters.prompts == 2, "{counters:?}");
    anyhow::ensure!(live.gates().passes(GatePoint::BeforePrompt) == 2);

    live.evidence().record("model_request_order", order);
    live.evidence().record("alpha", outcome(&alpha_turn));
    live.evidence().record("beta", outcome(&beta_turn));
    live.evidence().record("counters", counters);
    live.assert_evidence();
    Ok(())
}
