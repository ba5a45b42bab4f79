//! A product that is an ACP client (as an editor extension or an orchestrator is): it starts the
//! agent command it is configured with (`LIVE_ACP_AGENT_COMMAND`, as a user would configure
//! `qwen --acp` or `opencode acp`), opens a session in `LIVE_AGENT_DIRECTORY`, sends the prompt
//! given as its argument, approves each permission request once, and prints what the agent
//! said and how the turn stopped.
//!
//! `acp_ask <prompt>`; exit 0 when the turn ended, 1 with the reason on stderr otherwise.

use std::path::PathBuf;
use std::process::{ExitCode, Stdio};

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    ContentBlock, InitializeRequest, NewSessionRequest, PermissionOptionKind, PromptRequest,
    RequestPermissionOutcome, RequestPermissionRequest, RequestPermissionResponse,
    SelectedPermissionOutcome, SessionNotification, SessionUpdate, TextContent,
};
use agent_client_protocol::{Agent, Client, Lines};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    match ask().await {
        Ok(stop) => {
            println!("stop: {stop}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("acp_ask: {e}");
            ExitCode::from(1)
        }
    }
}

async fn ask() -> Result<String, Box<dyn std::error::Error>> {
    let prompt = std::env::args().nth(1).ok_or("usage: acp_ask <prompt>")?;
    let command = std::env::var("LIVE_ACP_AGENT_COMMAND")?;
    let cwd = PathBuf::from(std::env::var("LIVE_AGENT_DIRECTORY")?);
    let mut agent = tokio::process::Command::new(&command)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()?;
    let stdin = agent.stdin.take().ok_or("no stdin")?;
    let stdout = agent.stdout.take().ok_or("no stdout")?;
    let outgoing = Box::pin(futures::sink::unfold(
        stdin,
        |mut stdin, line: String| async move {
            stdin.write_all(line.as_bytes()).await?;
            stdin.write_all(b"\n").await?;
            stdin.flush().await?;
            Ok::<_, std::io::Error>(stdin)
        },
    ));
    let incoming = Box::pin(futures::stream::unfold(
        BufReader::new(stdout).lines(),
        |mut lines| async move {
            match lines.next_line().await {
                Ok(Some(line)) => Some((Ok(line), lines)),
                Ok(None) | Err(_) => None,
            }
        },
    ));
    let stop = Client
        .v1()
        .on_receive_notification(
            async move |notification: SessionNotification, _cx| {
                if let SessionUpdate::AgentMessageChunk(chunk) = notification.update {
                    if let ContentBlock::Text(text) = chunk.content {
                        print!("{}", text.text);
                    }
                }
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .on_receive_request(
            async move |request: RequestPermissionRequest, responder, _cx| {
                let once = request
                    .options
                    .iter()
                    .find(|option| option.kind == PermissionOptionKind::AllowOnce);
                let outcome = match once {
                    Some(option) => RequestPermissionOutcome::Selected(
                        SelectedPermissionOutcome::new(option.option_id.clone()),
                    ),
                    None => RequestPermissionOutcome::Cancelled,
                };
                println!("permission asked: approved once");
                responder.respond(RequestPermissionResponse::new(outcome))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .connect_with(
            Lines::new(outgoing, incoming),
            async move |cx: ConnectionTo<Agent>| {
                cx.send_request(InitializeRequest::new(ProtocolVersion::V1))
                    .block_task()
                    .await?;
                let session = cx
                    .send_request(NewSessionRequest::new(cwd))
                    .block_task()
                    .await?;
                let answer = cx
                    .send_request(PromptRequest::new(
                        session.session_id,
                        vec![ContentBlock::Text(TextContent::new(prompt))],
                    ))
                    .block_task()
                    .await?;
                println!();
                let stop = serde_json::to_value(answer.stop_reason)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default();
                Ok(stop)
            },
        )
        .await?;
    Ok(stop)
}
