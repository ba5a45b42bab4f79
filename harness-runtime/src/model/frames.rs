//! A response body as a list of steps, streamed with optional pacing, holds and aborts.

use std::io;
use std::time::Duration;

use bytes::Bytes;
use futures::Stream;

use super::reply::Hold;

/// One step of a streamed body.
pub(crate) enum Step {
    /// Bytes to send (one SSE event or NDJSON line).
    Frame(Bytes),
    /// Wait for a stall's release.
    Hold(Hold),
    /// Send nothing more, ever (until the client or the server goes away).
    Hang,
    /// Break the body: hyper closes the connection mid-response.
    Abort,
}

/// The body stream for `steps`, waiting `delay` before every frame after the first.
/// Cancel-safe: dropping the body drops any pending wait.
pub(crate) fn body(
    steps: Vec<Step>,
    delay: Option<Duration>,
) -> impl Stream<Item = Result<Bytes, io::Error>> + Send + 'static {
    futures::stream::unfold(
        (steps.into_iter(), false),
        move |(mut steps, mut sent)| async move {
            loop {
                match steps.next()? {
                    Step::Frame(bytes) => {
                        if let (Some(delay), true) = (delay, sent) {
                            // A slow model's pacing, asked for by the script: no synchronisation.
                            tokio::time::sleep(delay).await;
                        }
                        sent = true;
                        return Some((Ok(bytes), (steps, sent)));
                    }
                    Step::Hold(hold) => hold.wait().await,
                    Step::Hang => std::future::pending::<()>().await,
                    Step::Abort => {
                        // Yield once so hyper flushes the frames already written: the client
                        // sees the headers and deltas before the break.
                        tokio::task::yield_now().await;
                        let error = io::Error::new(
                            io::ErrorKind::ConnectionAborted,
                            "scripted model: reply aborts mid-stream",
                        );
                        // An empty iterator ends the stream after the error.
                        return Some((Err(error), (Vec::new().into_iter(), sent)));
                    }
                }
            }
        },
    )
}

#[cfg(test)]
pub(crate) mod tests {
    use serde_json::Value;

    use super::Step;

    /// Each step as `(event name, data)`: an SSE frame's `event:` (else its data's `type`, else
    /// empty) and its `data:` JSON, an NDJSON line as its JSON; `<hold>`, `<hang>`, `<abort>`
    /// for the others. `data: [DONE]` is left out.
    pub(crate) fn rendered(steps: &[Step]) -> Vec<(String, Value)> {
        steps
            .iter()
            .filter_map(|step| match step {
                Step::Frame(bytes) => {
                    let text = std::str::from_utf8(bytes).expect("frames are UTF-8");
                    let mut name = None;
                    let mut data = None;
                    for line in text.lines() {
                        if let Some(n) = line.strip_prefix("event: ") {
                            name = Some(n.to_owned());
                        } else if let Some(d) = line.strip_prefix("data: ") {
                            data = Some(d.to_owned());
                        } else if !line.is_empty() {
                            data = Some(line.to_owned());
                        }
                    }
                    let data = data.expect("a frame carries data");
                    if data == "[DONE]" {
                        return None;
                    }
                    let data: Value = serde_json::from_str(&data).expect("frame data is JSON");
                    let name = name
                        .unwrap_or_else(|| data["type"].as_str().unwrap_or_default().to_owned());
                    Some((name, data))
                }
                Step::Hold(_) => Some(("<hold>".to_owned(), Value::Null)),
                Step::Hang => Some(("<hang>".to_owned(), Value::Null)),
                Step::Abort => Some(("<abort>".to_owned(), Value::Null)),
            })
            .collect()
    }
}
