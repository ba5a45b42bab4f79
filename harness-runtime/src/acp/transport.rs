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

/// The root's protocol log, shared by both directions (a log that cannot be opened is skipped:
/// the traffic does not depend on it).
#[derive(Clone)]
pub(super) struct ProtocolLog(Arc<Mutex<Option<std::fs::File>>>);

impl ProtocolLog {
    pub(super) fn open(root: &Path) -> Self {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(root.join(PROTOCOL_LOG))
            .ok();
        Self(Arc::new(Mutex::new(file)))
    }

    /// Appends `line` after `arrow` (`→` to the agent, `←` from it).
    pub(super) fn line(&self, arrow: &str, line: &str) {
        let mut file = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(file) = file.as_mut() {
            let _ = writeln!(file, "{arrow} {line}");
        }
    }
}

/// The protocol log and the traffic's gates and counts, for both directions.
#[derive(Clone)]
struct Tap {
    log: ProtocolLog,
    traffic: Arc<Traffic>,
}

impl Tap {
    fn line(&self, arrow: &str, line: &str) {
        self.log.line(arrow, line);
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
    let tap = Tap {
        log: ProtocolLog::open(root),
        traffic,
    };
    let stdin = tokio::process::ChildStdin::from_std(pipes.stdin)?;
    let stdout = tokio::process::ChildStdout::from_std(pipes.stdout)?;
    let outgoing = Box::pin(futures::sink::unfold(
        (stdin, tap.clone()),
        |(mut stdin, tap), line: String| async move {
            if *tap.traffic.dropped().borrow() {
                return Err(std::io::ErrorKind::BrokenPipe.into());
            }
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
            let mut dropped = tap.traffic.dropped();
            // A dropped connection ends here: the SDK closes, and with it the agent's input.
            let read = tokio::select! {
                read = reader.next_line() => read,
                _ = dropped.wait_for(|dropped| *dropped) => return None,
            };
            match read {
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
