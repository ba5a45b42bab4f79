//! A child's output, copied line by line into its log file and handed to whoever reads its
//! lines, on a thread of its own: independent of any tokio runtime, so output is kept even while
//! the scenario's runtime is blocked or gone.

use std::io::{BufRead, BufReader, Read, Write};

use tokio::sync::watch;

/// Starts a thread called `name` that runs `start` first (per-thread setup), then copies
/// `stream` into `file` and calls `on_line` with each line (trailing whitespace trimmed,
/// invalid UTF-8 replaced) until EOF or a read error; then flushes `file` and turns `done` true.
pub(crate) fn spawn_line_pump(
    name: String,
    stream: impl Read + Send + 'static,
    mut file: std::fs::File,
    start: impl FnOnce() + Send + 'static,
    mut on_line: impl FnMut(String) + Send + 'static,
    done: watch::Sender<bool>,
) -> std::io::Result<()> {
    std::thread::Builder::new()
        .name(name)
        .spawn(move || {
            start();
            let mut reader = BufReader::new(stream);
            let mut buf = Vec::new();
            loop {
                buf.clear();
                match reader.read_until(b'\n', &mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {}
                }
                let _ = file.write_all(&buf);
                on_line(String::from_utf8_lossy(&buf).trim_end().to_string());
            }
            let _ = file.flush();
            done.send_replace(true);
        })
        .map(|_| ())
}
