//! Every fault of the fixture agent, through the same provisioning and client as real OpenCode:
//! each scenario injects one fault and asserts its documented outcome (a typed error, a typed
//! message error, or a recovered state) within a ceiling, never a hang.

use std::path::Path;
use std::time::{Duration, Instant};

use harness_runtime::client::{ClientError, MessageError, SessionStatus, ToolStatus};
use harness_runtime::client::{Session, Turn};
use harness_runtime::fixture::Fault;
use harness_runtime::opencode::{Agent, ProvisionError};
use harness_runtime::prelude::*;
use harness_runtime::scaled;

use crate::support;

/// A decision schema: the fixture's decision faults act on schemas with a `decision` property.
fn decision_schema() -> serde_json::Value {
    json!({
        "type": "object",
        "properties": {
            "decision": {"type": "string", "enum": ["advance", "iterate", "blocked"]},
            "summary": {"type": "string"},
            "reason": {"type": "string"}
        },
        "required": ["decision"],
        "additionalProperties": false
    })
}

/// Why a structured output is not a decision the schema allows.
#[derive(Debug, PartialEq)]
enum InvalidDecision {
    NotAnObject(serde_json::Value),
    UnknownProperty(String),
    Missing,
    NotInEnum(String),
}

impl std::fmt::Display for InvalidDecision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NotAnObject(value) => write!(f, "not an object: {value}"),
            Self::UnknownProperty(key) => write!(f, "unknown property `{key}`"),
            Self::Missing => write!(f, "`decision` is missing"),
            Self::NotInEnum(decision) => {
                write!(f, "`decision` {decision:?} is not in the schema's enum")
            }
        }
    }
}

impl std::error::Error for InvalidDecision {}

/// The client-side validation the invalid-output faults exist for: the decision must be one of
/// the schema's enum values and no property may be unknown.
fn valid_decision(value: &serde_json::Value) -> Result<&str, InvalidDecision> {
    let schema = decision_schema();
    let object = value
        .as_object()
        .ok_or_else(|| InvalidDecision::NotAnObject(value.clone()))?;
    for key in object.keys() {
        if schema["properties"].get(key).is_none() {
            return Err(InvalidDecision::UnknownProperty(key.clone()));
        }
    }
    let decision = object
        .get("decision")
        .and_then(|d| d.as_str())
        .ok_or(InvalidDecision::Missing)?;
    let allowed = schema["properties"]["decision"]["enum"]
        .as_array()
        .expect("enum")
        .iter()
        .any(|v| v == decision);
    if allowed {
        Ok(decision)
    } else {
        Err(InvalidDecision::NotInEnum(decision.to_owned()))
    }
}

fn decision_prompt(text: &str) -> Prompt {
    Prompt::new(text).json_schema(decision_schema())
}

/// Whether a process with `pid` still exists (a zombie counts as gone: it was killed and only
/// waits for its parent's reap).
fn process_alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the parenthesized command name.
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.trim_start().chars().next())
            .is_some_and(|state| state != 'Z'),
        Err(_) => false,
    }
}

fn process_command(pid: u32) -> String {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|raw| {
            String::from_utf8_lossy(&raw)
                .replace('\0', " ")
                .trim()
                .to_string()
        })
        .unwrap_or_default()
}

/// The framework's `--- … ---` marks in a log tail (start, stop), without the server's own lines.
fn marks(tail: &str) -> Vec<String> {
    tail.lines()
        .filter(|l| l.starts_with("--- "))
        .map(str::to_string)
        .collect()
}

/// The variant of a client error: its text carries the last events seen, which depend on how
/// far the stream got before it broke.
fn error_kind(err: &ClientError) -> &'static str {
    match err {
        ClientError::StreamEnded { .. } => "StreamEnded",
        ClientError::Transport { .. } => "Transport",
        ClientError::TruncatedFrame { .. } => "TruncatedFrame",
        _ => "other",
    }
}

/// Polls the server until `session` is no longer busy (the turn finished server-side).
async fn wait_until_idle(agent: &Agent, session: &str) -> anyhow::Result<()> {
    let ceiling = scaled(Duration::from_secs(10));
    let client = agent.client();
    let idle = async {
        let mut tick = tokio::time::interval(Duration::from_millis(50));
        loop {
            tick.tick().await;
            if let Ok(statuses) = client.statuses().await {
                if statuses
                    .get(session)
                    .is_none_or(|s| *s == SessionStatus::Idle)
                {
                    return;
                }
            }
        }
    };
    tokio::time::timeout(ceiling, idle)
        .await
        .map_err(|_| anyhow::anyhow!("session still busy after {ceiling:?}"))
}

/// The fixture agent started with `fault` injected, and a session on it.
async fn fixture_session_with(live: &mut Live, fault: Fault) -> anyhow::Result<(Agent, Session)> {
    live.fixture().inject(fault)?;
    let agent = live.opencode().await?;
    let session = agent.create_session().await?;
    Ok((agent, session))
}

/// Prompts `text` into a turn whose event stream `cause` breaks: the client must end the turn
/// with `StreamEnded`, neither collecting a turn nor waiting for one.
async fn prompt_until_the_stream_ends(
    session: &Session,
    text: &str,
    cause: &str,
) -> anyhow::Result<ClientError> {
    let err = match session.prompt(text).await {
        Ok(turn) => anyhow::bail!("the turn was collected despite {cause}: {:?}", turn.trace),
        Err(e) => e,
    };
    anyhow::ensure!(
        matches!(err, ClientError::StreamEnded { .. }),
        "expected StreamEnded, got {err:?}"
    );
    Ok(err)
}

/// Provisions the fixture agent with `fault` injected, where the fault keeps `agent` (what the
/// fault makes of it) from becoming ready: the error, and how long provisioning took to give it.
async fn failed_start_with(
    live: &mut Live,
    fault: Fault,
    options: AgentOptions,
    agent: &str,
) -> anyhow::Result<(ProvisionError, Duration)> {
    live.fixture().inject(fault)?;
    let started = Instant::now();
    match live.opencode_with(options).await {
        Ok(_) => anyhow::bail!("{agent} was reported ready"),
        Err(e) => Ok((e, started.elapsed())),
    }
}

/// The turn of a prompt meeting the `Decide` fault's permission ask, answered with `policy`:
/// checked to end without an error and to leave no permission pending.
async fn decide_answered(live: &mut Live, policy: PermissionPolicy) -> anyhow::Result<Turn> {
    let (agent, session) = fixture_session_with(live, Fault::Decide).await?;
    let turn = session
        .prompt_with(support::prompt_answering("run it", policy))
        .await?;
    support::no_error(&turn)?;
    anyhow::ensure!(
        agent.client().permissions().await?.is_empty(),
        "a permission stayed pending"
    );
    Ok(turn)
}

#[live_agent_test(agent = "fixture", timeout = "60s")]
async fn fail_once_fault_is_an_api_error_then_recovers(live: &mut Live) -> anyhow::Result<()> {
    let (_agent, session) = fixture_session_with(live, Fault::FailOnce).await?;
    let failed = session.prompt("first").await?;
    match failed.error() {
        Some(MessageError::ApiError {
            message,
            is_retryable: false,
            status_code: None,
        }) if message == "fixture failure" => {}
        other => anyhow::bail!("expected APIError `fixture failure`, got {other:?}"),
    }
    anyhow::ensure!(
        failed.trace.iter().any(|t| t == "session.error"),
        "no session.error in {:?}",
        failed.trace
    );
    anyhow::ensure!(failed.text.is_empty() && failed.tool_calls.is_empty());
    let next = session.prompt("second").await?;
    anyhow::ensure!(
        next.error().is_none(),
        "the fault fired twice: {:?}",
        next.error()
    );
    anyhow::ensure!(
        next.text == "Fixture completed.",
        "text was {:?}",
        next.text
    );
    live.evidence().record_turn(&failed);
    live.evidence().record("error", failed.error());
    live.evidence().record_turn(&next);
    live.assert_evidence();
    Ok(())
}

#[live_agent_test(agent = "fixture", timeout = "60s")]
async fn transient_once_fault_errors_with_an_untrustworthy_structured_output(
    live: &mut Live,
) -> anyhow::Result<()> {
    let (_agent, session) = fixture_session_with(live, Fault::TransientOnce).await?;
    let turn = session.prompt_with(decision_prompt("decide")).await?;
    match turn.error() {
        Some(MessageError::ApiError {
            status_code: Some(502),
            is_retryable: true,
            ..
        }) => {}
        other => anyhow::bail!("expected a retryable APIError 502, got {other:?}"),
    }
    // The documented trap: a structured output arrives together with the error.
    anyhow::ensure!(
        turn.structured.is_some(),
        "the transient fault documents a structured output alongside the error"
    );
    let retry = session.prompt_with(decision_prompt("decide again")).await?;
    anyhow::ensure!(retry.error().is_none(), "retry failed: {:?}", retry.error());
    let decision = valid_decision(retry.structured_or_err()?)?;
    anyhow::ensure!(decision == "advance", "decision was {decision}");
    live.evidence().record_turn(&turn);
    live.evidence().record("error", turn.error());
    live.evidence().record_turn(&retry);
    live.assert_evidence();
    Ok(())
}

#[live_agent_test(agent = "fixture", timeout = "60s")]
async fn decide_fault_answered_once_completes_the_tool(live: &mut Live) -> anyhow::Result<()> {
    let turn = decide_answered(live, PermissionPolicy::Once).await?;
    let bash = turn
        .tool_call("bash")
        .ok_or_else(|| anyhow::anyhow!("no bash call"))?;
    anyhow::ensure!(
        bash.status == ToolStatus::Completed,
        "bash was {}",
        bash.status
    );
    anyhow::ensure!(
        turn.interactions.len() == 1,
        "interactions: {:?}",
        turn.interactions
    );
    anyhow::ensure!(
        turn.text == "Fixture completed.",
        "text was {:?}",
        turn.text
    );
    live.evidence().record_turn(&turn);
    live.assert_evidence();
    Ok(())
}

#[live_agent_test(agent = "fixture", timeout = "60s")]
async fn decide_fault_rejected_fails_the_tool_not_the_turn(live: &mut Live) -> anyhow::Result<()> {
    let turn = decide_answered(live, PermissionPolicy::Reject).await?;
    let bash = turn
        .tool_call("bash")
        .ok_or_else(|| anyhow::anyhow!("no bash call"))?;
    anyhow::ensure!(bash.status == ToolStatus::Error, "bash was {}", bash.status);
    anyhow::ensure!(
        bash.error
            .as_deref()
            .is_some_and(|e| e.contains("rejected")),
        "bash error was {:?}",
        bash.error
    );
    live.evidence().record_turn(&turn);
    live.assert_evidence();
    Ok(())
}

#[live_agent_test(agent = "fixture", timeout = "60s")]
async fn decide_fault_unanswered_ends_in_an_api_error(live: &mut Live) -> anyhow::Result<()> {
    // The agent's own reply ceiling, short: the documented outcome is its APIError, which must
    // arrive well within the client's turn ceiling.
    let fault = Fault::DecideWithin(scaled(Duration::from_secs(2)));
    let (agent, session) = fixture_session_with(live, fault).await?;
    let prompt = Prompt::new("run it").with_ceiling(scaled(Duration::from_secs(30)));
    let turn = session.prompt_with(prompt).await?;
    match turn.error() {
        Some(MessageError::ApiError { message, .. })
            if message == "fixture permission unanswered" => {}
        other => anyhow::bail!("expected APIError `fixture permission unanswered`, got {other:?}"),
    }
    anyhow::ensure!(
        turn.interactions.len() == 1,
        "interactions: {:?}",
        turn.interactions
    );
    anyhow::ensure!(
        agent.client().permissions().await?.is_empty(),
        "the unanswered request was not withdrawn"
    );
    live.evidence().record_turn(&turn);
    live.evidence().record("error", turn.error());
    live.assert_evidence();
    Ok(())
}

#[live_agent_test(agent = "fixture", timeout = "60s")]
async fn blocked_once_fault_blocks_one_decision(live: &mut Live) -> anyhow::Result<()> {
    let (_agent, session) = fixture_session_with(live, Fault::BlockedOnce).await?;
    let blocked = session.prompt_with(decision_prompt("decide")).await?;
    support::no_error(&blocked)?;
    let value = blocked.structured_or_err()?;
    anyhow::ensure!(
        valid_decision(value) == Ok("blocked"),
        "structured was {value}"
    );
    anyhow::ensure!(
        value["reason"] == "Release target is missing",
        "structured was {value}"
    );
    let next = session.prompt_with(decision_prompt("decide again")).await?;
    anyhow::ensure!(valid_decision(next.structured_or_err()?) == Ok("advance"));
    live.evidence().record_turn(&blocked);
    live.evidence().record_turn(&next);
    live.assert_evidence();
    Ok(())
}

#[live_agent_test(agent = "fixture", timeout = "60s")]
async fn invalid_output_once_fault_is_caught_by_validation(live: &mut Live) -> anyhow::Result<()> {
    let (_agent, session) = fixture_session_with(live, Fault::InvalidOutputOnce).await?;
    let invalid = session.prompt_with(decision_prompt("decide")).await?;
    // The message has no error: only validating the output catches it.
    support::no_error(&invalid)?;
    let rejection = valid_decision(invalid.structured_or_err()?)
        .err()
        .ok_or_else(|| anyhow::anyhow!("the invalid output passed validation"))?;
    let valid = session.prompt_with(decision_prompt("decide again")).await?;
    anyhow::ensure!(valid_decision(valid.structured_or_err()?) == Ok("advance"));
    live.evidence().record_turn(&invalid);
    live.evidence().record("validation", rejection.to_string());
    live.evidence().record_turn(&valid);
    live.assert_evidence();
    Ok(())
}

#[live_agent_test(agent = "fixture", timeout = "60s")]
async fn invalid_output_always_fault_persists_until_cleared(live: &mut Live) -> anyhow::Result<()> {
    let (_agent, session) = fixture_session_with(live, Fault::InvalidOutputAlways).await?;
    let mut rejections = Vec::new();
    for round in 0..2 {
        let turn = session.prompt_with(decision_prompt("decide")).await?;
        support::no_error(&turn)?;
        match valid_decision(turn.structured_or_err()?) {
            Err(why) => rejections.push(why.to_string()),
            Ok(decision) => anyhow::bail!("round {round}: the output passed as {decision}"),
        }
    }
    live.fixture().clear(&Fault::InvalidOutputAlways)?;
    let cleared = session.prompt_with(decision_prompt("decide")).await?;
    anyhow::ensure!(valid_decision(cleared.structured_or_err()?) == Ok("advance"));
    live.evidence().record("rejections", &rejections);
    live.evidence().record_turn(&cleared);
    live.assert_evidence();
    Ok(())
}

#[live_agent_test(agent = "fixture", timeout = "60s")]
async fn remaining_passes_fault_iterates_then_advances(live: &mut Live) -> anyhow::Result<()> {
    let (_agent, session) = fixture_session_with(live, Fault::RemainingPasses(2)).await?;
    let mut decisions = Vec::new();
    for _ in 0..3 {
        let turn = session.prompt_with(decision_prompt("decide")).await?;
        support::no_error(&turn)?;
        decisions.push(valid_decision(turn.structured_or_err()?)?.to_string());
    }
    anyhow::ensure!(
        decisions == ["iterate", "iterate", "advance"],
        "decisions: {decisions:?}"
    );
    live.evidence().record("decisions", &decisions);
    live.assert_evidence();
    Ok(())
}

#[live_agent_test(agent = "fixture", timeout = "60s")]
async fn disconnect_after_tool_fault_ends_the_stream_and_the_turn_is_recoverable(
    live: &mut Live,
) -> anyhow::Result<()> {
    let (agent, session) = fixture_session_with(live, Fault::DisconnectAfterTool).await?;
    let err = prompt_until_the_stream_ends(&session, "run the tool", "the disconnect").await?;
    anyhow::ensure!(
        live.fixture().tool_effect_completed(),
        "the tool's effect is missing"
    );
    // Recovery: the server finished the turn; its messages say how.
    live.fixture().clear(&Fault::DisconnectAfterTool)?;
    wait_until_idle(&agent, session.id()).await?;
    let recovered = Turn::from_messages(session.id(), session.messages().await?);
    anyhow::ensure!(
        recovered.error().is_none(),
        "error: {:?}",
        recovered.error()
    );
    let bash = recovered
        .tool_call("bash")
        .ok_or_else(|| anyhow::anyhow!("no bash call in the recovered turn"))?;
    anyhow::ensure!(
        bash.status == ToolStatus::Completed,
        "bash was {}",
        bash.status
    );
    anyhow::ensure!(
        recovered.text == "Fixture completed.",
        "text was {:?}",
        recovered.text
    );
    let next = session.prompt("again").await?;
    anyhow::ensure!(next.error().is_none() && next.tool_calls.is_empty());
    live.evidence().record("error", error_kind(&err));
    live.evidence().record_turn(&recovered);
    live.evidence().record_turn(&next);
    live.assert_evidence();
    Ok(())
}

#[live_agent_test(agent = "fixture", timeout = "60s")]
async fn ready_after_fault_is_ready_after_the_delay(live: &mut Live) -> anyhow::Result<()> {
    let delay = Duration::from_millis(1500);
    live.fixture().inject(Fault::ReadyAfter(delay))?;
    let started = Instant::now();
    let agent = live.opencode().await?;
    let took = started.elapsed();
    anyhow::ensure!(
        took >= delay,
        "ready after {took:?}, before the injected {delay:?}"
    );
    let health = agent.client().health().await?;
    anyhow::ensure!(health.healthy, "health: {health:?}");
    live.evidence().record("healthy", health.healthy);
    live.evidence().record("marks", marks(&agent.log_tail(20)));
    live.assert_evidence();
    Ok(())
}

#[live_agent_test(agent = "fixture", timeout = "60s")]
async fn ready_after_fault_beyond_the_ready_timeout_is_not_ready(
    live: &mut Live,
) -> anyhow::Result<()> {
    let (err, took) = failed_start_with(
        live,
        Fault::ReadyAfter(Duration::from_secs(30)),
        AgentOptions::default().ready_ceiling(Duration::from_secs(1)),
        "an agent with a 30 s start delay and a 1 s ready timeout",
    )
    .await?;
    anyhow::ensure!(took < scaled(Duration::from_secs(15)), "took {took:?}");
    let ProvisionError::NotReady { pending, .. } = &err else {
        anyhow::bail!("expected NotReady, got {err}");
    };
    anyhow::ensure!(pending.contains("listening on"), "pending: {pending}");
    live.evidence().record("pending", pending);
    live.assert_evidence();
    Ok(())
}

#[live_agent_test(agent = "fixture", timeout = "60s")]
async fn never_ready_fault_fails_provisioning_with_a_diagnostic(
    live: &mut Live,
) -> anyhow::Result<()> {
    let (err, took) = failed_start_with(
        live,
        Fault::NeverReady,
        AgentOptions::default().ready_ceiling(Duration::from_secs(2)),
        "an agent that never listens",
    )
    .await?;
    anyhow::ensure!(took < scaled(Duration::from_secs(15)), "took {took:?}");
    let ProvisionError::NotReady {
        pending,
        log_tail,
        command,
        ..
    } = &err
    else {
        anyhow::bail!("expected NotReady, got {err}");
    };
    anyhow::ensure!(pending.contains("listening on"), "pending: {pending}");
    anyhow::ensure!(
        log_tail.contains("--- start on 127.0.0.1:"),
        "log tail: {log_tail}"
    );
    let message = err.to_string();
    anyhow::ensure!(message.contains(pending.as_str()) && message.contains(log_tail.as_str()));
    anyhow::ensure!(
        command.contains("serve --hostname 127.0.0.1"),
        "command: {command}"
    );
    anyhow::ensure!(!message.contains("/tmp/"), "unredacted path in: {message}");
    live.evidence().record("pending", pending);
    live.evidence().record("log_tail", marks(log_tail));
    live.assert_evidence();
    Ok(())
}

#[live_agent_test(agent = "fixture", timeout = "60s")]
async fn exit_during_start_fault_is_exited_before_ready(live: &mut Live) -> anyhow::Result<()> {
    let (err, _) = failed_start_with(
        live,
        Fault::ExitDuringStart,
        AgentOptions::default(),
        "an agent that exits during start",
    )
    .await?;
    let ProvisionError::ExitedBeforeReady {
        status, log_tail, ..
    } = &err
    else {
        anyhow::bail!("expected ExitedBeforeReady, got {err}");
    };
    anyhow::ensure!(status.contains("exit status: 1"), "status: {status}");
    anyhow::ensure!(
        log_tail.contains("exiting during start"),
        "log tail: {log_tail}"
    );
    live.evidence().record("status", status);
    live.evidence().record("log_tail", log_tail);
    live.assert_evidence();
    Ok(())
}

#[live_agent_test(agent = "fixture", timeout = "60s")]
async fn exit_mid_turn_fault_ends_the_turn_and_restart_serves_the_session(
    live: &mut Live,
) -> anyhow::Result<()> {
    let (agent, session) = fixture_session_with(live, Fault::ExitMidTurn).await?;
    let err = prompt_until_the_stream_ends(&session, "work", "the agent's exit").await?;
    // The exit and its last words: the log tail is read to the end once `wait_exit` returns.
    let status = agent.wait_exit(Duration::from_secs(10)).await?;
    anyhow::ensure!(status.code() == Some(70), "status: {status}");
    anyhow::ensure!(
        agent.log_tail(40).contains("exiting mid-turn"),
        "log tail: {}",
        agent.log_tail(40)
    );

    agent.restart().await?;
    let client = agent.client();
    let info = client.get_session(session.id()).await?;
    anyhow::ensure!(info.id == session.id(), "another session came back");
    let messages = client.messages(session.id()).await?;
    let roles: Vec<_> = messages.iter().map(|m| m.info.role.clone()).collect();
    anyhow::ensure!(roles == ["user", "assistant"], "roles: {roles:?}");
    // The fault fires once: the restarted agent serves turns again.
    let session = client.session(session.id()).await?;
    let next = session.prompt("work again").await?;
    support::no_error(&next)?;
    anyhow::ensure!(
        next.text == "Fixture completed.",
        "text was {:?}",
        next.text
    );
    live.evidence().record("error", error_kind(&err));
    live.evidence().record("title_after_restart", &info.title);
    live.evidence().record("roles_after_restart", &roles);
    live.evidence().record_turn(&next);
    live.evidence().record("marks", marks(&agent.log_tail(200)));
    live.assert_evidence();
    Ok(())
}

#[live_agent_test(agent = "fixture", timeout = "90s")]
async fn ignore_sigterm_fault_is_killed_after_the_grace(live: &mut Live) -> anyhow::Result<()> {
    live.fixture().inject(Fault::IgnoreSigterm)?;
    // The grace is what the scenario waits out: one second proves the escalation as well as
    // the default five.
    let grace = Duration::from_secs(1);
    let agent = live
        .opencode_with(AgentOptions::default().stop_grace(grace))
        .await?;
    let pid = agent
        .pid()
        .ok_or_else(|| anyhow::anyhow!("no pid while running"))?;
    anyhow::ensure!(process_alive(pid));
    let stopping = Instant::now();
    agent.stop().await?;
    anyhow::ensure!(
        stopping.elapsed() >= scaled(grace),
        "stopped after {:?}, before the grace of {grace:?} ran out",
        stopping.elapsed()
    );
    anyhow::ensure!(!agent.is_running());
    anyhow::ensure!(
        !process_alive(pid),
        "the agent's process survived stop: {}",
        process_command(pid)
    );
    let marks = marks(&agent.log_tail(20));
    anyhow::ensure!(
        marks.last().is_some_and(|m| m.contains("after SIGKILL")),
        "marks: {marks:?}"
    );
    live.evidence().record("marks", marks);
    live.assert_evidence();
    Ok(())
}

#[live_agent_test(agent = "fixture", timeout = "60s")]
async fn detached_grandchild_fault_is_swept_on_stop(live: &mut Live) -> anyhow::Result<()> {
    live.fixture().inject(Fault::DetachedGrandchild)?;
    let agent = live.opencode().await?;
    let pid_file = agent.root().join("home").join("grandchild.pid");
    let pid = read_pid(&pid_file)?;
    anyhow::ensure!(process_alive(pid), "the grandchild is not running");
    anyhow::ensure!(
        process_command(pid).starts_with("sleep"),
        "pid {pid} is {}",
        process_command(pid)
    );
    agent.stop().await?;
    anyhow::ensure!(!process_alive(pid), "the detached grandchild survived stop");
    let marks = marks(&agent.log_tail(20));
    anyhow::ensure!(
        marks
            .last()
            .is_some_and(|m| m.contains("1 stray process(es) killed")),
        "marks: {marks:?}"
    );
    live.evidence().record("marks", marks);
    live.assert_evidence();
    Ok(())
}

fn read_pid(path: &Path) -> anyhow::Result<u32> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| anyhow::anyhow!("could not read grandchild.pid in the agent's home: {e}"))?;
    Ok(text.trim().parse()?)
}
