//! The server's output: copied to log files in the root, kept as a tail in memory, and scanned
//! for the line that says which port it listens on.

use std::collections::VecDeque;
use std::io::Read;
use std::sync::Mutex;
use std::time::Duration;

use tokio::sync::watch;

/// How many recent lines are kept for diagnostics.
const TAIL_LINES: usize = 400;

/// The recent output of one agent, stdout and stderr interleaved in arrival order.
#[derive(Debug, Default)]
pub(crate) struct ServerLog {
    lines: Mutex<VecDeque<String>>,
}

impl ServerLog {
    fn push(&self, line: String) {
        let mut lines = self.lines.lock().expect("log lock");
        if lines.len() == TAIL_LINES {
            lines.pop_front();
        }
        lines.push_back(line);
    }

    /// The last `n` lines, unredacted (callers redact).
    pub(crate) fn tail(&self, n: usize) -> String {
        let lines = self.lines.lock().expect("log lock");
        let skip = lines.len().saturating_sub(n);
        lines
            .iter()
            .skip(skip)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// Marks a new start in the tail, so restarts are visible in diagnostics.
    pub(crate) fn mark(&self, text: &str) {
        self.push(format!("--- {text} ---"));
    }

    /// The lines after the last mark that starts with `prefix` (all of them without one),
    /// unredacted: what one start printed, without an earlier start's lines.
    pub(crate) fn since_mark(&self, prefix: &str) -> String {
        let lines = self.lines.lock().expect("log lock");
        let marker = format!("--- {prefix}");
        let from = lines
            .iter()
            .rposition(|line| line.starts_with(&marker))
            .map_or(0, |i| i + 1);
        lines
            .iter()
            .skip(from)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// The port in `opencode server listening on http://127.0.0.1:P`.
pub(crate) fn listening_port(line: &str) -> Option<u16> {
    let rest = &line[line.find("listening on http://")? + "listening on http://".len()..];
    let authority = rest.split(['/', ' ']).next()?;
    let port = authority.rsplit_once(':')?.1;
    port.trim_end().parse().ok()
}

/// Turns true once both output pipes of one start reached EOF: from then on, everything the
/// process printed is in the log. EOF comes when the last holder of a pipe (the server or a
/// descendant) exits.
#[derive(Debug, Clone)]
pub(crate) struct Drained {
    stdout: watch::Receiver<bool>,
    stderr: watch::Receiver<bool>,
}

impl Drained {
    /// Waits up to `ceiling` for both pipes to drain: a descendant that still holds one must
    /// not hang a diagnostic, which then carries what was read so far.
    pub(crate) async fn wait(mut self, ceiling: Duration) {
        let both = async {
            let _ = self.stdout.wait_for(|d| *d).await;
            let _ = self.stderr.wait_for(|d| *d).await;
        };
        let _ = tokio::time::timeout(ceiling, both).await;
    }
}

/// Copies a started process's stdout and stderr into their log files and `log`, each on its
/// own thread; publishes on `port` the first listening port stdout shows.
pub(crate) fn pump_output(
    (stdout, stdout_file): (impl Read + Send + 'static, std::fs::File),
    (stderr, stderr_file): (impl Read + Send + 'static, std::fs::File),
    log: &std::sync::Arc<ServerLog>,
    port: watch::Sender<Option<u16>>,
) -> std::io::Result<Drained> {
    let (stdout_done, stdout_drained) = watch::channel(false);
    let (stderr_done, stderr_drained) = watch::channel(false);
    pump(stdout, stdout_file, log.clone(), Some(port), stdout_done)?;
    pump(stderr, stderr_file, log.clone(), None, stderr_done)?;
    Ok(Drained {
        stdout: stdout_drained,
        stderr: stderr_drained,
    })
}

/// Copies `stream` line by line into `file` and `log` on its own thread (independent of any
/// tokio runtime); when `port` is given, publishes the first listening port seen. `done`
/// turns true at EOF.
fn pump(
    stream: impl Read + Send + 'static,
    file: std::fs::File,
    log: std::sync::Arc<ServerLog>,
    port: Option<watch::Sender<Option<u16>>>,
    done: watch::Sender<bool>,
) -> std::io::Result<()> {
    crate::process::spawn_line_pump(
        "live-log-pump".into(),
        stream,
        file,
        || {},
        move |line| {
            if let Some(port) = &port {
                if port.borrow().is_none() {
                    if let Some(p) = listening_port(&line) {
                        port.send_replace(Some(p));
                    }
                }
            }
            log.push(line);
        },
        done,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_listening_line() {
        assert_eq!(
            listening_port("opencode server listening on http://127.0.0.1:4096"),
            Some(4096)
        );
        assert_eq!(
            listening_port("opencode server listening on http://127.0.0.1:51234/\r"),
            Some(51234)
        );
        assert_eq!(
            listening_port("Warning: OPENCODE_SERVER_PASSWORD is not set"),
            None
        );
    }

    #[test]
    fn tail_keeps_the_last_lines() {
        let log = ServerLog::default();
        for i in 0..(TAIL_LINES + 5) {
            log.push(format!("line {i}"));
        }
        assert_eq!(
            log.tail(2),
            format!("line {}\nline {}", TAIL_LINES + 3, TAIL_LINES + 4)
        );
    }
}
