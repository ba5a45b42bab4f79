//! The agent's stdio as the ACP SDK's line transport, each line copied to the root's protocol
//! log (`acp.log`, unredacted like the agent's other logs there) on its way.

use std::io::Write;
use std::path::Path;
use std::sync::{Arc, Mutex};

use agent_client_protocol::Lines;
use futures::{Sink, Stream};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use super::client_side::ClientSide;
use super::process::Pipes;

/// The file each protocol line is appended to, `→` for what the harness sent, `←` for what the
/// agent did.
pub(crate) const PROTOCOL_LOG: &str = "acp.log";

/// The protocol log, shared by both directions, and the client side's count of updates read.
#[derive(Clone)]
struct Tap {
    file: Arc<Mutex<Option<std::fs::File>>>,
    client_side: Arc<ClientSide>,
}

impl Tap {
    fn open(root: &Path, client_side: Arc<ClientSide>) -> Self {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(root.join(PROTOCOL_LOG))
            .ok();
        Self {
            file: Arc::new(Mutex::new(file)),
            client_side,
        }
    }

    fn line(&self, arrow: &str, line: &str) {
        if arrow == "←" {
            self.client_side.read_line(line);
        }
        let mut file = self.file.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(file) = file.as_mut() {
            let _ = writeln!(file, "{arrow} {line}");
        }
    }
}

/// The SDK's transport over `pipes`, logging into `root` and counting on `client_side` the
/// updates read. Needs a tokio runtime.
pub(crate) fn lines(
    pipes: Pipes,
    root: &Path,
    client_side: Arc<ClientSide>,
) -> std::io::Result<
    Lines<
        impl Sink<String, Error = std::io::Error> + Send + 'static,
        impl Stream<Item = std::io::Result<String>> + Send + 'static,
    >,
> {
    let tap = Tap::open(root, client_side);
    let stdin = tokio::process::ChildStdin::from_std(pipes.stdin)?;
    let stdout = tokio::process::ChildStdout::from_std(pipes.stdout)?;
    let outgoing = Box::pin(futures::sink::unfold(
        (stdin, tap.clone()),
        |(mut stdin, tap), line: String| async move {
            tap.line("→", &line);
            stdin.write_all(line.as_bytes()).await?;
            stdin.write_all(b"\n").await?;
            stdin.flush().await?;
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
