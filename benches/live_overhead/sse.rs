//! A bare `GET /event` reader for the raw side: chunks in, `data:` JSON objects out.

use serde_json::Value;

use crate::common::BenchError;

/// One open event stream and the bytes not yet split into events.
pub struct RawEvents {
    response: reqwest::Response,
    buffer: Vec<u8>,
}

impl RawEvents {
    pub async fn open(http: &reqwest::Client, base: &str) -> Result<RawEvents, BenchError> {
        let response = http
            .get(format!("{base}/event"))
            .header("accept", "text/event-stream")
            .send()
            .await
            .and_then(reqwest::Response::error_for_status)
            .map_err(|e| BenchError::Raw(format!("GET /event: {e}")))?;
        Ok(RawEvents {
            response,
            buffer: Vec::new(),
        })
    }

    /// The next event's JSON; an error when the stream ends.
    pub async fn next(&mut self) -> Result<Value, BenchError> {
        loop {
            if let Some(end) = self.buffer.windows(2).position(|w| w == b"\n\n") {
                let frame: Vec<u8> = self.buffer.drain(..end + 2).collect();
                let data: String = String::from_utf8_lossy(&frame)
                    .lines()
                    .filter_map(|l| l.strip_prefix("data:"))
                    .map(str::trim_start)
                    .collect::<Vec<_>>()
                    .join("\n");
                if data.is_empty() {
                    continue;
                }
                return serde_json::from_str(&data)
                    .map_err(|e| BenchError::Raw(format!("an event that is not JSON: {e}")));
            }
            match self.response.chunk().await {
                Ok(Some(chunk)) => self.buffer.extend_from_slice(&chunk),
                Ok(None) => return Err(BenchError::Raw("the event stream ended".into())),
                Err(e) => return Err(BenchError::Raw(format!("the event stream broke: {e}"))),
            }
        }
    }
}
