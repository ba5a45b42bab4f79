//! Chat requests answered by a cassette (replay) or the real model (record) instead of the
//! script. Each is recorded like a scripted one, so `live.model().requests()` lists it.

use axum::http::StatusCode;
use axum::response::Response;
use bytes::Bytes;
use serde_json::Value;

use super::recording::{Answer, Api, ModelRequest};
use super::reset::ResetConnection;
use super::scripted_model::Shared;
use super::source::Source;
use super::wire_error::{self, Kind};
use crate::cassette::WireApi;

/// The body of the answer to a request no recorded interaction matches.
const MISS_MESSAGE: &str = "cassette: no recorded interaction matches this request; the scenario \
                            fails at its end naming the nearest one and how to record it again";

/// The answer from the server's cassette or relay; `None` when the script answers.
pub(crate) async fn answer(
    shared: &Shared,
    api: Api,
    body: &Bytes,
    reset: &ResetConnection,
) -> Option<Response> {
    let wire = match api {
        Api::OpenAi => WireApi::OpenAi,
        Api::Ollama => WireApi::Ollama,
    };
    let raw = || serde_json::from_slice::<Value>(body).unwrap_or(Value::Null);
    Some(match shared.source() {
        Source::Script => return None,
        Source::Replay(replay) => {
            let raw = raw();
            let taken = replay.take(wire, &raw);
            let answer = match &taken {
                Ok((interaction, _)) => Answer::Cassette {
                    interaction: *interaction,
                },
                Err(_) => Answer::Miss,
            };
            let recorded = shared.record(ModelRequest::parse(0, api, raw), answer);
            match taken {
                Ok((_, response)) => replay.respond(response, reset).await,
                Err(request) => {
                    replay.note_miss(recorded.one_line(), request);
                    // A 400, as for a scripted miss: OpenCode does not retry it for a minute.
                    wire_error::respond(
                        api,
                        StatusCode::BAD_REQUEST,
                        Kind::CassetteMiss,
                        MISS_MESSAGE,
                    )
                }
            }
        }
        Source::Relay(relay) => {
            let raw = raw();
            shared.record(ModelRequest::parse(0, api, raw.clone()), Answer::Relayed);
            relay.forward(wire, body.clone(), &raw, reset).await
        }
    })
}
