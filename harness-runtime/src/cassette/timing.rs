//! How long the model took, from recorded streams: each request's time to its first token and
//! its whole duration, from the chunks' `after_ms`. Recording, they are the relay's (the model's
//! own pace); replaying, the cassette's served interactions (what the model took when it was
//! recorded: a replay sends without the recorded pauses).

use super::apis::carries_output;
use super::format::{Interaction, Recorded, RecordedResponse};
use super::relay::Relay;
use super::replay::Replay;
use super::usage::request_usage;
use crate::client::TokenCounts;
use crate::model::{ModelSlot, ScriptedModel};

/// One model request's timing.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct RequestTiming {
    /// From the request to the first chunk carrying model output (text, reasoning or a tool
    /// call, as its API streams them: [`carries_output`]); `None` when no chunk did (an HTTP error, a whole body, a dropped request).
    pub(crate) first_token_ms: Option<u64>,
    /// From the request to the stream's last chunk; `None` for an answer not streamed.
    pub(crate) duration_ms: Option<u64>,
    /// When a replay served it (ms since the epoch), to place it in a turn; `None` recording.
    pub(crate) served_at_ms: Option<u64>,
    /// The tokens its answer reported, in its own API ([`request_usage`]); `None` when it
    /// reported none, or the model was scripted.
    pub(crate) tokens: Option<TokenCounts>,
    /// Their cost, when the recorded model entry prices the model.
    pub(crate) cost: Option<f64>,
}

/// The timing of `interaction`'s response, as recorded, with the usage it reported (priced by
/// `recorded`'s model entry).
pub(crate) fn timing(interaction: &Interaction, recorded: &Recorded) -> RequestTiming {
    let (tokens, cost) =
        request_usage(interaction, recorded).map_or((None, None), |(t, c)| (Some(t), c));
    RequestTiming {
        tokens,
        cost,
        ..stream_timing(interaction)
    }
}

/// When `interaction`'s stream carried its first output, and when it ended.
fn stream_timing(interaction: &Interaction) -> RequestTiming {
    let RecordedResponse::Stream { chunks, .. } = &interaction.response else {
        return RequestTiming::default();
    };
    let api = interaction.request.api;
    let mut elapsed = 0u64;
    let mut first_token_ms = None;
    for chunk in chunks {
        elapsed = elapsed.saturating_add(chunk.after_ms);
        if first_token_ms.is_none() && carries_output(api, chunk.event.as_deref(), &chunk.data) {
            first_token_ms = Some(elapsed);
        }
    }
    RequestTiming {
        first_token_ms,
        duration_ms: (!chunks.is_empty()).then_some(elapsed),
        ..RequestTiming::default()
    }
}

/// The model requests of the scenario of `slot`, in order: a recording relay's (live traffic
/// through the relay too), the interactions a replay served, or the scripted model's streams
/// (their first token as streamed; no duration).
pub(crate) fn model_requests(slot: &ModelSlot) -> Vec<RequestTiming> {
    let Some(model) = slot.started() else {
        return Vec::new();
    };
    if let Some(replay) = ScriptedModel::recorded::<Replay>(model) {
        let interactions = &replay.cassette().interactions;
        return replay
            .served()
            .into_iter()
            .filter_map(|(index, at)| {
                let interaction = interactions.get(index)?;
                Some(RequestTiming {
                    served_at_ms: Some(at),
                    ..timing(interaction, &replay.cassette().recorded)
                })
            })
            .collect();
    }
    match ScriptedModel::recorded::<Relay>(model) {
        Some(relay) => {
            let recorded = &relay.upstream().recorded;
            relay
                .interactions()
                .iter()
                .map(|interaction| timing(interaction, recorded))
                .collect()
        }
        None => model
            .first_tokens_ms()
            .into_iter()
            .map(|first_token_ms| RequestTiming {
                first_token_ms,
                ..RequestTiming::default()
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cassette::format::{Chunk, NormalizedRequest, StreamEnd, WireApi};
    use serde_json::{Value, json};

    /// `interaction`'s timing, recorded from a model without prices.
    fn at(interaction: &Interaction) -> RequestTiming {
        let recorded = Recorded {
            api: interaction.request.api,
            npm: "p".into(),
            model: "m".into(),
            model_entry: json!({}),
        };
        timing(interaction, &recorded)
    }

    fn stream(chunks: &[(u64, Value)]) -> Interaction {
        Interaction {
            request: NormalizedRequest {
                api: WireApi::OpenAi,
                model: "m".into(),
                stream: true,
                tools: vec![],
                tool_choice: None,
                response_format: None,
                roles: vec![],
                last_user_text: None,
                tool_results: vec![],
            },
            response: RecordedResponse::Stream {
                status: 200,
                content_type: "text/event-stream".into(),
                headers: Default::default(),
                chunks: chunks
                    .iter()
                    .map(|(after_ms, data)| Chunk {
                        after_ms: *after_ms,
                        event: None,
                        data: data.clone(),
                    })
                    .collect(),
                end: StreamEnd::Complete,
            },
        }
    }

    #[test]
    fn the_first_token_is_the_first_chunk_with_output_not_the_role_chunk() {
        let interaction = stream(&[
            (40, json!({"choices": [{"delta": {"role": "assistant"}}]})),
            (2000, json!({"choices": [{"delta": {"content": ""}}]})),
            (410, json!({"choices": [{"delta": {"content": "Hi"}}]})),
            (
                30,
                json!({"choices": [{"delta": {}, "finish_reason": "stop"}]}),
            ),
            (5, json!("[DONE]")),
        ]);
        assert_eq!(
            at(&interaction),
            RequestTiming {
                first_token_ms: Some(2450),
                duration_ms: Some(2485),
                served_at_ms: None,
                tokens: None,
                cost: None,
            }
        );
    }

    #[test]
    fn reasoning_tool_calls_and_ollama_lines_count_as_output() {
        for data in [
            json!({"choices": [{"delta": {"reasoning_content": "hm"}}]}),
            json!({"choices": [{"delta": {"tool_calls": [{"index": 0}]}}]}),
            json!({"message": {"role": "assistant", "content": "Hi"}, "done": false}),
            json!({"message": {"role": "assistant", "content": "", "thinking": "hm"}}),
        ] {
            assert_eq!(
                at(&stream(&[(7, data.clone())])).first_token_ms,
                Some(7),
                "{data}"
            );
        }
        let silent = stream(&[(7, json!({"message": {"role": "assistant", "content": ""}}))]);
        assert_eq!(at(&silent).first_token_ms, None);
    }

    /// The scripted model times its streams as they go out: a slow reply's first token comes
    /// after its delay, a quick one's at once, a request not streamed has none.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_scripted_model_times_its_first_token_as_it_streams() {
        use crate::model::Reply;
        let slot = ModelSlot::default();
        let model = slot.model().unwrap();
        model
            .reply(
                Reply::text("slow")
                    .in_deltas(2)
                    .slow(std::time::Duration::from_millis(300)),
            )
            .reply(Reply::text("quick"))
            .reply(Reply::text("whole"));
        let client = reqwest::Client::new();
        let url = format!("{}/chat/completions", model.base_url());
        for stream in [true, true, false] {
            let body = json!({"model": "m", "stream": stream,
                              "messages": [{"role": "user", "content": "hi"}]});
            let response = client.post(&url).json(&body).send().await.unwrap();
            response.bytes().await.unwrap();
        }
        let first = model_requests(&slot);
        assert_eq!(first.len(), 3, "{first:?}");
        let slow = first[0].first_token_ms.unwrap();
        assert!(slow >= 300, "{first:?}");
        assert!(first[1].first_token_ms.unwrap() < slow, "{first:?}");
        assert_eq!(first[2].first_token_ms, None, "{first:?}");
    }

    #[test]
    fn an_answer_not_streamed_has_no_timing() {
        let mut interaction = stream(&[]);
        interaction.response = RecordedResponse::Dropped {
            detail: "reset".into(),
        };
        assert_eq!(at(&interaction), RequestTiming::default());
    }
}
