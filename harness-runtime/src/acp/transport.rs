//! The agent's stdio as the ACP SDK's line transport, each line copied to the root's protocol
//! log (`acp.log`, unredacted like the agent's other logs there) and passed through the
//! traffic's gates on its way.

use std::io::Write;
use std::path::Path;
use std::sync::{Arc, Mutex};

use agent_client_protocol::Lines;
use futures::{Sink, Stream};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use super::process::Pipes;
use super::traffic::Traffic;

/// The file each protocol line is appended to, `→` for what the harness sent, `←` for what the
/// agent did.
pub(crate) const PROTOCOL_LOG: &str = "acp.log";

/// The protocol log, shared by both directions, and the traffic's gates and counts.
#[derive(Clone)]
struct Tap {
    file: Arc<Mutex<Option<std::fs::File>>>,
    traffic: Arc<Traffic>,
}

impl Tap {
    fn open(root: &Path, traffic: Arc<Traffic>) -> Self {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(root.join(PROTOCOL_LOG))
            .ok();
        Self {
            file: Arc::new(Mutex::new(file)),
            traffic,
        }
    }

    fn line(&self, arrow: &str, line: &str) {
        let mut file = self.file.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(file) = file.as_mut() {
            let _ = writeln!(file, "{arrow} {line}");
        }
    }
}

/// The SDK's transport over `pipes`, logging into `root`, through `traffic`'s gates. Needs a
/// tokio runtime.
pub(crate) fn lines(
    pipes: Pipes,
    root: &Path,
    traffic: Arc<Traffic>,
) -> std::io::Result<
    Lines<
        impl Sink<String, Error = std::io::Error> + Send + 'static,
        impl Stream<Item = std::io::Result<String>> + Send + 'static,
    >,
> {
    let tap = Tap::open(root, traffic);
    let stdin = tokio::process::ChildStdin::from_std(pipes.stdin)?;
    let stdout = tokio::process::ChildStdout::from_std(pipes.stdout)?;
    let outgoing = Box::pin(futures::sink::unfold(
        (stdin, tap.clone()),
        |(mut stdin, tap), line: String| async move {
            let answered = tap.traffic.sending_to_agent(&line).await;
            tap.line("→", &line);
            stdin.write_all(line.as_bytes()).await?;
            stdin.write_all(b"\n").await?;
            stdin.flush().await?;
            if let Some(method) = answered {
                tap.traffic.sent_to_agent(&method).await;
            }
            Ok::<_, std::io::Error>((stdin, tap))
        },
    ));
    let incoming = Box::pin(futures::stream::unfold(
        Some((BufReader::new(stdout).lines(), tap)),
        |state| async move {
            let (mut reader, tap) = state?;
            match reader.next_line().await {
                Ok(Some(line)) => {
                    tap.line("←", &line);
                    tap.traffic.received_from_agent(&line).await;
                    Some((Ok(line), Some((reader, tap))))
                }
                Ok(None) => None,
                // One error, then the end: a broken pipe does not heal.
                Err(e) => Some((Err(e), None)),
            }
        },
    ));
    Ok(Lines::new(outgoing, incoming))
}
