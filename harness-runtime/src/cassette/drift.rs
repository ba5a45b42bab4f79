//! `LIVE_CASSETTE=verify`: a live run compared with its cassette by verdict and structure. The
//! words a model writes vary from run to run; what it did should not: the tools offered and the
//! roles of each request, and of each answer its kind (HTTP error, no response, stream), the
//! tools it called, whether it wrote text, and its finish reason.

use serde_json::Value;

use super::apis::{self, Shape};
use super::format::{
    Interaction, NormalizedRequest, RecordedResponse, StreamEnd, Verdict, WireApi,
};

/// Every difference between the recording (`recorded`, `recorded_verdict`: `None` when the
/// cassette has no provenance) and the live run (`live`, `live_verdict`), each as
/// `<what>: <recorded> → <live>`; empty when they agree.
pub(crate) fn drift(
    recorded_verdict: Option<&Verdict>,
    recorded: &[Interaction],
    live_verdict: &Verdict,
    live: &[Interaction],
) -> Vec<String> {
    let mut found = Vec::new();
    if let Some(recorded_verdict) = recorded_verdict {
        if recorded_verdict != live_verdict {
            found.push(format!("verdict {recorded_verdict} → {live_verdict}"));
        }
    }
    let (pairs, extra) = pair(recorded, live);
    for (index, paired) in pairs.iter().enumerate() {
        let label = format!("request {}", index + 1);
        let was = &recorded[index];
        let Some(now) = paired.map(|i| &live[i]) else {
            found.push(format!(
                "{label}: {} → not sent",
                response_shape(was.request.api, &was.response)
            ));
            continue;
        };
        let (was_request, now_request) = (request_shape(&was.request), request_shape(&now.request));
        if was_request != now_request {
            found.push(format!("{label}: {was_request} → {now_request}"));
        }
        let (was_answer, now_answer) = (
            response_shape(was.request.api, &was.response),
            response_shape(now.request.api, &now.response),
        );
        if was_answer != now_answer {
            found.push(format!("{label}: {was_answer} → {now_answer}"));
        }
    }
    for index in extra {
        let now = &live[index];
        found.push(format!(
            "a request more ({}): not recorded → {}",
            request_shape(&now.request),
            response_shape(now.request.api, &now.response)
        ));
    }
    found
}

/// For each recorded interaction, the live one it is compared with: first the live request
/// equal to it (OpenCode's title request races the main one, so arrival order alone can pair
/// the wrong ones), then the rest in order. Also the live interactions left over.
fn pair(recorded: &[Interaction], live: &[Interaction]) -> (Vec<Option<usize>>, Vec<usize>) {
    let mut taken = vec![false; live.len()];
    let mut pairs: Vec<Option<usize>> = recorded
        .iter()
        .map(|was| {
            let found = (0..live.len()).find(|&i| !taken[i] && live[i].request == was.request);
            if let Some(i) = found {
                taken[i] = true;
            }
            found
        })
        .collect();
    for slot in pairs.iter_mut().filter(|slot| slot.is_none()) {
        if let Some(i) = (0..live.len()).find(|&i| !taken[i]) {
            taken[i] = true;
            *slot = Some(i);
        }
    }
    let extra = (0..live.len()).filter(|&i| !taken[i]).collect();
    (pairs, extra)
}

/// A request's structure: the tools offered and the messages' roles.
fn request_shape(request: &NormalizedRequest) -> String {
    let tools = if request.tools.is_empty() {
        "no tools".to_owned()
    } else {
        format!("tools {}", request.tools.join(", "))
    };
    format!("{tools}, roles {}", request.roles.join(", "))
}

/// An answer's structure, without its words: `tool call bash (finish: tool_calls)`,
/// `text (finish: stop)`, `no text`, `HTTP 500`, `no response`, and how a stream ended when not
/// complete, or complete without its API's last frame ([`apis::ends_whole`]).
fn response_shape(api: WireApi, response: &RecordedResponse) -> String {
    match response {
        RecordedResponse::Dropped { .. } => "no response".to_owned(),
        RecordedResponse::Body { status, .. } if !(200..300).contains(status) => {
            format!("HTTP {status}")
        }
        RecordedResponse::Body { body, .. } => payload_shape(api, [body]),
        RecordedResponse::Stream {
            status,
            chunks,
            end,
            ..
        } => {
            let shape = if (200..300).contains(status) {
                payload_shape(api, chunks.iter().map(|chunk| &chunk.data))
            } else {
                format!("HTTP {status}")
            };
            match end {
                StreamEnd::Complete
                    if (200..300).contains(status) && !apis::ends_whole(api, chunks) =>
                {
                    format!("{shape}, no end frame")
                }
                StreamEnd::Complete => shape,
                StreamEnd::Dropped => format!("{shape}, broken off"),
                StreamEnd::ClientClosed => format!("{shape}, closed by OpenCode"),
            }
        }
    }
}

/// The structure of an answer's payloads on `api` ([`apis::shape`]) as words.
fn payload_shape<'a>(api: WireApi, payloads: impl IntoIterator<Item = &'a Value>) -> String {
    let Shape {
        tools,
        text,
        error,
        finish,
    } = apis::shape(api, payloads);
    let mut shape = if !tools.is_empty() {
        format!("tool call {}", tools.join(", "))
    } else if text {
        "text".to_owned()
    } else {
        "no text".to_owned()
    };
    if error {
        shape.push_str(", an error");
    }
    if let Some(finish) = finish {
        shape.push_str(&format!(" (finish: {finish})"));
    }
    shape
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cassette::format::Chunk;
    use serde_json::json;

    fn request(text: &str, tools: &[&str], roles: &[&str]) -> NormalizedRequest {
        NormalizedRequest {
            api: WireApi::OpenAi,
            model: "m".into(),
            stream: true,
            tools: tools.iter().map(|t| t.to_string()).collect(),
            tool_choice: None,
            response_format: None,
            roles: roles.iter().map(|r| r.to_string()).collect(),
            last_user_text: Some(text.into()),
            tool_results: vec![],
        }
    }

    fn stream(payloads: Vec<Value>) -> RecordedResponse {
        RecordedResponse::Stream {
            status: 200,
            content_type: "text/event-stream".into(),
            headers: Default::default(),
            chunks: payloads
                .into_iter()
                .map(|data| Chunk {
                    after_ms: 0,
                    event: None,
                    data,
                })
                .collect(),
            end: StreamEnd::Complete,
        }
    }

    fn text(words: &str) -> RecordedResponse {
        stream(vec![
            json!({"choices": [{"delta": {"content": words}}]}),
            json!({"choices": [{"delta": {}, "finish_reason": "stop"}]}),
            json!("[DONE]"),
        ])
    }

    fn bash_call() -> RecordedResponse {
        stream(vec![
            json!({"choices": [{"delta": {"tool_calls": [{"index": 0, "function": {"name": "bash", "arguments": ""}}]}}]}),
            json!({"choices": [{"delta": {"tool_calls": [{"index": 0, "function": {"arguments": "{}"}}]}}]}),
            json!({"choices": [{"delta": {}, "finish_reason": "tool_calls"}]}),
            json!("[DONE]"),
        ])
    }

    fn interaction(request: NormalizedRequest, response: RecordedResponse) -> Interaction {
        Interaction { request, response }
    }

    fn tool_turn() -> Vec<Interaction> {
        vec![
            interaction(
                request("run it", &["bash"], &["system", "user"]),
                bash_call(),
            ),
            interaction(
                request(
                    "run it",
                    &["bash"],
                    &["system", "user", "assistant", "tool"],
                ),
                text("done"),
            ),
        ]
    }

    #[test]
    fn shapes_keep_what_the_model_did_not_its_words() {
        assert_eq!(
            response_shape(WireApi::OpenAi, &text("hi")),
            "text (finish: stop)"
        );
        assert_eq!(
            response_shape(WireApi::OpenAi, &bash_call()),
            "tool call bash (finish: tool_calls)"
        );
        assert_eq!(
            response_shape(WireApi::OpenAi, &stream(vec![])),
            "no text, no end frame"
        );
        let ollama = stream(vec![
            json!({"message": {"role": "assistant", "content": "x"}, "done": false}),
            json!({"message": {"content": ""}, "done": true, "done_reason": "stop"}),
        ]);
        assert_eq!(
            response_shape(WireApi::Ollama, &ollama),
            "text (finish: stop)"
        );
        let body = RecordedResponse::Body {
            status: 500,
            content_type: "application/json".into(),
            headers: Default::default(),
            body: json!({"error": "x"}),
        };
        assert_eq!(response_shape(WireApi::OpenAi, &body), "HTTP 500");
        let answered = RecordedResponse::Body {
            status: 200,
            content_type: "application/json".into(),
            headers: Default::default(),
            body: json!({"choices": [{"message": {"content": "x"}, "finish_reason": "stop"}]}),
        };
        assert_eq!(
            response_shape(WireApi::OpenAi, &answered),
            "text (finish: stop)"
        );
        let dropped = RecordedResponse::Dropped { detail: "x".into() };
        assert_eq!(response_shape(WireApi::OpenAi, &dropped), "no response");
        let RecordedResponse::Stream { chunks, .. } = text("x") else {
            unreachable!()
        };
        let broken = RecordedResponse::Stream {
            status: 200,
            content_type: "text/event-stream".into(),
            headers: Default::default(),
            chunks,
            end: StreamEnd::Dropped,
        };
        assert_eq!(
            response_shape(WireApi::OpenAi, &broken),
            "text (finish: stop), broken off"
        );
    }

    #[test]
    fn other_words_are_no_drift() {
        let mut live = tool_turn();
        live[1].response = text("finished, in other words");
        let verdict = Verdict::Passed;
        assert_eq!(
            drift(Some(&verdict), &tool_turn(), &verdict, &live),
            Vec::<String>::new()
        );
    }

    #[test]
    fn a_text_instead_of_a_tool_call_and_a_changed_verdict_are_drift() {
        let live = vec![interaction(
            request("run it", &["bash"], &["system", "user"]),
            text("I would run it"),
        )];
        let skipped = Verdict::Skipped {
            reason: "the model did not call the bash tool".into(),
        };
        assert_eq!(
            drift(Some(&Verdict::Passed), &tool_turn(), &skipped, &live),
            [
                "verdict passed → skipped (the model did not call the bash tool)",
                "request 1: tool call bash (finish: tool_calls) → text (finish: stop)",
                "request 2: text (finish: stop) → not sent",
            ]
        );
        // Without the recording's verdict (no provenance) only the traffic is compared.
        assert_eq!(drift(None, &tool_turn(), &skipped, &live).len(), 2);
    }

    #[test]
    fn requests_pair_by_content_first_then_in_order() {
        let title = interaction(request("run it", &[], &["system", "user"]), text("Title"));
        let mut recorded = tool_turn();
        recorded.insert(0, title.clone());
        // Live, the title request arrived after the main one: no drift.
        let mut live = tool_turn();
        live.insert(1, title);
        assert_eq!(
            drift(None, &recorded, &Verdict::Passed, &live),
            Vec::<String>::new()
        );
        // One more request live, with another tool offered.
        live.push(interaction(
            request("again", &["bash", "edit"], &["user"]),
            text("x"),
        ));
        assert_eq!(
            drift(None, &recorded, &Verdict::Passed, &live),
            ["a request more (tools bash, edit, roles user): not recorded → text (finish: stop)"]
        );
        // A request whose offered tools changed is compared with the one in its place.
        let mut changed = tool_turn();
        changed[0].request.tools = vec!["bash".into(), "read".into()];
        assert_eq!(
            drift(None, &tool_turn(), &Verdict::Passed, &changed),
            ["request 1: tools bash, roles system, user → tools bash, read, roles system, user"]
        );
    }
}
