//! The scripted model against a recorded real upstream: stream framing, chunk fields, usage
//! fields, error bodies, `finish_reason`s.
//!
//! Each scenario asks the scripted model (`live.model()`, raw reqwest; no OpenCode) what OpenCode
//! asks it (a request OpenCode 1.18.33 sent, `tests/data/model/`), normalizes the answer and a
//! real upstream's the same way (every value a placeholder of its type; keys, SSE framing and
//! protocol words such as `object`, `role`, `type` and `finish_reason` kept; a run of like chunks
//! counted once, since the real model sent 258 content deltas where a script sends three) and
//! requires them equal, failing with the first differing field and both values.
//!
//! The real answers are the probes' cassettes (`cassettes/probes__*.json` at the repository's
//! root), recorded through the relay from llama.cpp's `llama-server` serving gemma3:270m over
//! the OpenAI chat-completions API. What they hold is compared with a recording:
//! - a streamed text answer: the role chunk, content deltas, the final chunk with
//!   `finish_reason: "length"` (the capped model never stopped by itself), the usage chunk with
//!   `prompt_tokens_details.cached_tokens`, `data: [DONE]`.
//!
//! What they do not hold, and what stands in for it (documentation, not a recording):
//! - a tool call (that model never called a tool): every chunk's envelope is the recorded one,
//!   the `tool_calls` deltas and `finish_reason: "tool_calls"` are OpenAI's documented
//!   streaming shape;
//! - an error (every recorded answer is a 200 stream): OpenAI's documented error object, as an
//!   HTTP body and as the last event of a stream that fails mid-way;
//! - `finish_reason: "stop"` and a non-streamed answer (OpenCode always streams): not compared;
//! - Ollama's native `/api/chat` NDJSON: the scripted model serves it, but no recording of a
//!   real Ollama exists (`llama-server` does not serve `/api/chat`, and every cassette was
//!   recorded over the OpenAI API), so it is not compared.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use harness_runtime::model::{Reply, ScriptedModel};
use harness_runtime::prelude::*;
use serde_json::{Value, json};

use crate::differences::Deliberate;
use crate::transcript::{Step, Transcript, first_difference};

/// Where the scripted model differs from the recorded real upstream here on purpose. A listed
/// field that no longer differs fails the scenario.
pub(crate) const DELIBERATE: &[Deliberate] = &[
    Deliberate {
        interaction: "model::streamed_text",
        field: "/steps/0/answer/chunks/0/data/choices/0/delta/content",
        fixture: None,
        why: ROLE_CHUNK,
    },
    Deliberate {
        interaction: "model::streamed_text",
        field: "/steps/0/answer/chunks/3/data/timings",
        fixture: None,
        why: TIMINGS,
    },
    Deliberate {
        interaction: "model::streamed_tool_call",
        field: "/steps/0/answer/chunks/0/data/choices/0/delta/content",
        fixture: None,
        why: ROLE_CHUNK,
    },
    Deliberate {
        interaction: "model::streamed_tool_call",
        field: "/steps/0/answer/chunks/4/data/timings",
        fixture: None,
        why: TIMINGS,
    },
    Deliberate {
        interaction: "model::error_mid_stream",
        field: "/steps/0/answer/chunks/0/data/choices/0/delta/content",
        fixture: None,
        why: ROLE_CHUNK,
    },
];

const ROLE_CHUNK: &str = "the first chunk's delta is `{role}` alone, where llama.cpp adds \
    `content: null` (OpenAI `content: \"\"`, Ollama content in every chunk): upstreams differ \
    here, clients read the role chunk's content as absent either way, and model_protocol.rs \
    pins the role-only delta";
const TIMINGS: &str = "llama.cpp's own `timings` object (prompt and generation speeds) is not \
    part of the OpenAI API: OpenAI and Ollama do not send it and no client reads it";

/// The request of a plain turn, as OpenCode 1.18.33 sent it (streamed, `include_usage`, its
/// eleven tools offered).
fn opencode_turn() -> Value {
    let requests: Value =
        serde_json::from_str(include_str!("../data/model/opencode-1.18.33-requests.json"))
            .expect("recorded requests are JSON");
    requests[0].clone()
}

/// Every recorded streamed answer that ran to its end, with its cassette's name.
fn recorded_streams() -> anyhow::Result<Vec<(String, Value)>> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../cassettes");
    let mut streams = Vec::new();
    for entry in std::fs::read_dir(&dir).with_context(|| format!("reading {}", dir.display()))? {
        let path = entry?.path();
        let name = path
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        if !(name.starts_with("probes__") && name.ends_with(".json")) {
            continue;
        }
        let text = std::fs::read_to_string(&path)?;
        let cassette: Value =
            serde_json::from_str(&text).with_context(|| format!("reading {name}"))?;
        anyhow::ensure!(
            cassette["recorded"]["api"] == "openai",
            "{name} was recorded over {}, not the OpenAI API this group compares",
            cassette["recorded"]["api"]
        );
        for interaction in cassette["interactions"].as_array().into_iter().flatten() {
            let response = &interaction["response"];
            if response["kind"] == "stream" && response["end"] == "complete" {
                streams.push((name.clone(), response.clone()));
            }
        }
    }
    streams.sort_by(|a, b| a.0.cmp(&b.0));
    anyhow::ensure!(
        !streams.is_empty(),
        "no complete recorded stream in {}: the comparison needs the probes' cassettes",
        dir.display()
    );
    Ok(streams)
}

/// A recorded stream as the transcript compares it.
fn recorded_transcript(response: &Value) -> Transcript {
    let chunks = response["chunks"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|chunk| {
            // `after_ms` is the recording's timing, not the stream's shape.
            let mut event = json!({"data": chunk["data"]});
            if let Some(name) = chunk.get("event") {
                event["event"] = name.clone();
            }
            event
        })
        .collect();
    stream_transcript(
        response["status"].as_u64().unwrap_or_default() as u16,
        response["content_type"].as_str().unwrap_or_default(),
        chunks,
        response["end"].as_str().unwrap_or_default(),
    )
}

/// One streamed answer as one step: status, content type, its events normalized, how it
/// ended.
fn stream_transcript(status: u16, content_type: &str, events: Vec<Value>, end: &str) -> Transcript {
    let mut chunks: Vec<Value> = events.iter().map(normalize_event).collect();
    chunks.dedup();
    Transcript {
        steps: vec![Step::Call {
            request: "POST /v1/chat/completions (stream)".to_owned(),
            body: None,
            status,
            answer: json!({"content_type": content_type, "chunks": chunks, "end": end}),
        }],
    }
}

/// Keys whose string values are protocol words, compared as they are.
const WORDS: &[&str] = &["object", "role", "type", "finish_reason"];

/// An event with its JSON payload normalized; a text payload (`[DONE]`) is framing, kept.
fn normalize_event(event: &Value) -> Value {
    let mut event = event.clone();
    if event["data"].is_object() || event["data"].is_array() {
        event["data"] = normalize(&event["data"], None, WORDS);
    }
    event
}

/// `value` with every string, number and boolean a placeholder of its type (strings under a
/// key of `words` kept); `null`, keys and array lengths kept.
pub(crate) fn normalize(value: &Value, key: Option<&str>, words: &[&str]) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), normalize(v, Some(k), words)))
                .collect(),
        ),
        Value::Array(items) => items.iter().map(|v| normalize(v, None, words)).collect(),
        Value::String(_) if key.is_some_and(|k| words.contains(&k)) => value.clone(),
        Value::String(_) => json!("[string]"),
        Value::Number(_) => json!("[number]"),
        Value::Bool(_) => json!("[bool]"),
        Value::Null => Value::Null,
    }
}

/// The events of an SSE body in a cassette's form (`{"event"?, "data"}`), read strictly: only
/// `event: ` and `data: ` lines, every event ended by a blank line, as the relay frames (and
/// records) the real upstream's stream.
pub(crate) fn sse_events(body: &str) -> anyhow::Result<Vec<Value>> {
    let Some(events) = body.strip_suffix("\n\n") else {
        anyhow::bail!("the stream does not end with a blank line after its last event: {body:?}");
    };
    let mut parsed = Vec::new();
    for block in events.split("\n\n") {
        let (mut name, mut data) = (None, Vec::new());
        for line in block.split('\n') {
            if let Some(event) = line.strip_prefix("event: ") {
                name = Some(event);
            } else if let Some(payload) = line.strip_prefix("data: ") {
                data.push(payload);
            } else {
                anyhow::bail!("a stream line is neither `event: ` nor `data: `: {line:?}");
            }
        }
        let data = data.join("\n");
        // As a cassette stores a payload: JSON objects and arrays as JSON, the rest as text.
        let data = match serde_json::from_str::<Value>(&data) {
            Ok(json @ (Value::Object(_) | Value::Array(_))) => json,
            _ => Value::String(data),
        };
        let mut event = json!({"data": data});
        if let Some(name) = name {
            event["event"] = json!(name);
        }
        parsed.push(event);
    }
    Ok(parsed)
}

pub(crate) fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(Duration::from_secs(30))
        .build()
        .expect("a plain reqwest client builds")
}

/// What the scripted model streams for OpenCode's turn, answered by `reply`.
async fn scripted_stream(model: &ScriptedModel, reply: Reply) -> anyhow::Result<Transcript> {
    model.reply(reply);
    let response = client()
        .post(format!("{}/chat/completions", model.base_url()))
        .json(&opencode_turn())
        .send()
        .await?;
    let status = response.status().as_u16();
    let content_type = header(&response, "content-type");
    let body = response
        .text()
        .await
        .context("the scripted model's stream broke")?;
    // Read to its end without a break: the stream completed.
    Ok(stream_transcript(
        status,
        &content_type,
        sse_events(&body)?,
        "complete",
    ))
}

pub(crate) fn header(response: &reqwest::Response, name: &str) -> String {
    response
        .headers()
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned()
}

/// Requires `actual` (the scripted model's) to equal `expected` (what `source` answered), the
/// deliberate differences of `interaction` set aside.
fn compare(
    interaction: &str,
    source: &str,
    expected: &Transcript,
    actual: &Transcript,
) -> anyhow::Result<()> {
    let listed = DELIBERATE.iter().filter(|d| d.interaction == interaction);
    let (expected, actual) = crate::reference::set_aside(listed, expected, actual)?;
    match first_difference(&expected, &actual) {
        None => Ok(()),
        Some(difference) => anyhow::bail!(
            "`{interaction}`: the scripted model's answer differs from {source} (values are \
             placeholders) at {difference}; make src/model/ answer as the real upstream does"
        ),
    }
}

/// The chunks of a transcript made by [`stream_transcript`].
fn chunks_of(transcript: &Transcript) -> Vec<Value> {
    match transcript.steps.first() {
        Some(Step::Call { answer, .. }) => answer["chunks"].as_array().cloned().unwrap_or_default(),
        _ => Vec::new(),
    }
}

/// `transcript` with its chunks replaced by `chunks`.
fn with_chunks(transcript: &Transcript, chunks: Vec<Value>) -> Transcript {
    let mut transcript = transcript.clone();
    if let Some(Step::Call { answer, .. }) = transcript.steps.first_mut() {
        answer["chunks"] = Value::Array(chunks);
    }
    transcript
}

/// A recorded chunk (normalized) with its delta replaced by `delta` (normalized here).
fn with_delta(chunk: &Value, delta: Value) -> Value {
    let mut chunk = chunk.clone();
    chunk["data"]["choices"][0]["delta"] = normalize(&delta, None, WORDS);
    chunk
}

/// The recorded text stream's chunks, checked to be what the tool-call expectation is built
/// from: role, content, finish, usage, `[DONE]`.
fn recorded_text_chunks(recorded: &Transcript) -> anyhow::Result<[Value; 5]> {
    let chunks = chunks_of(recorded);
    let count = chunks.len();
    chunks.try_into().map_err(|_| {
        anyhow::anyhow!(
            "the recorded text stream has {count} kinds of chunk, not the five (role, content, \
             finish, usage, [DONE]) the tool-call expectation is built from"
        )
    })
}

/// A streamed text answer, like the real model's: role chunk, content deltas, the final chunk
/// (`length`: cut at the output limit, as the recorded model always was), the usage chunk with
/// cached prompt tokens (llama.cpp's prompt cache), `[DONE]`; against every recorded one.
#[live_agent_test]
async fn streamed_text(live: &mut Live) -> anyhow::Result<()> {
    let reply = Reply::text("one two three")
        .in_deltas(3)
        .at_output_limit()
        .with_usage(2198, 256)
        .with_cached_tokens(1917);
    let scripted = scripted_stream(live.model(), reply).await?;
    for (cassette, response) in recorded_streams()? {
        compare(
            "model::streamed_text",
            &format!("the real model's stream in cassettes/{cassette}"),
            &recorded_transcript(&response),
            &scripted,
        )?;
    }
    Ok(())
}

/// A streamed tool call. No cassette holds one (the recorded model never called a tool), so
/// the expectation is the recorded stream's chunks with OpenAI's documented tool-call deltas
/// in place of the content deltas (API reference, "The chat completion chunk object":
/// `delta.tool_calls[]` of `index`, `id`, `type: "function"`, `function.name` and
/// `function.arguments` first, then `index` and `function.arguments` fragments) and
/// `finish_reason: "tool_calls"`.
#[live_agent_test]
async fn streamed_tool_call(live: &mut Live) -> anyhow::Result<()> {
    let reply = Reply::tool_call(
        "bash",
        json!({"command": "echo PROBE-MARKER", "description": "Print a marker"}),
    )
    .with_usage(2198, 20)
    .with_cached_tokens(1917);
    let scripted = scripted_stream(live.model(), reply).await?;
    let (cassette, response) = recorded_streams()?.remove(0);
    let recorded = recorded_transcript(&response);
    let [role, content, finish, usage, done] = recorded_text_chunks(&recorded)?;
    let mut tool_finish = finish.clone();
    tool_finish["data"]["choices"][0]["finish_reason"] = json!("tool_calls");
    let expected = with_chunks(
        &recorded,
        vec![
            role,
            with_delta(
                &content,
                json!({"tool_calls": [{"index": 0, "id": "call_abc123", "type": "function",
                    "function": {"name": "get_weather", "arguments": ""}}]}),
            ),
            with_delta(
                &content,
                json!({"tool_calls": [{"index": 0, "function": {"arguments": "{\"location\":"}}]}),
            ),
            tool_finish,
            usage,
            done,
        ],
    );
    compare(
        "model::streamed_tool_call",
        &format!(
            "the real model's stream in cassettes/{cassette} with OpenAI's documented tool-call \
             deltas"
        ),
        &expected,
        &scripted,
    )
}

/// A stream that fails mid-way: the recorded role and content chunks, then OpenAI's documented
/// error object as the last event and no `[DONE]`. No cassette holds a real failure.
#[live_agent_test]
async fn error_mid_stream(live: &mut Live) -> anyhow::Result<()> {
    let scripted = scripted_stream(
        live.model(),
        Reply::error_mid_stream("partial answer", "overloaded").in_deltas(2),
    )
    .await?;
    let (cassette, response) = recorded_streams()?.remove(0);
    let recorded = recorded_transcript(&response);
    let [role, content, ..] = recorded_text_chunks(&recorded)?;
    let error = normalize_event(&json!({"data": server_error()}));
    let expected = with_chunks(&recorded, vec![role, content, error]);
    compare(
        "model::error_mid_stream",
        &format!(
            "the real model's stream in cassettes/{cassette} ending in OpenAI's documented \
             server error"
        ),
        &expected,
        &scripted,
    )
}

/// OpenAI's documented answer to a server failure (its error codes guide, 500).
fn server_error() -> Value {
    json!({"error": {"message": "The server had an error while processing your request. Sorry \
        about that!", "type": "server_error", "param": null, "code": null}})
}

/// The error bodies the scripted model answers itself, over HTTP. No cassette holds a real
/// error (every recorded answer is a 200 stream), so they are compared with OpenAI's
/// documented error object (`{"error":{"message","type","param","code"}}`, API reference
/// "Error codes"), with the status and a JSON content type: a model it does not serve (404,
/// `code: "model_not_found"`) and a route it does not serve (404, `code: null`, OpenAI's
/// "Invalid URL" answer).
#[live_agent_test]
async fn error_bodies(live: &mut Live) -> anyhow::Result<()> {
    let base = live.model().base_url();
    let documented = [
        (
            "/models/no-such-model",
            json!({"error": {"message": "The model `gpt-5` does not exist or you do not have \
                access to it.", "type": "invalid_request_error", "param": null,
                "code": "model_not_found"}}),
        ),
        (
            "/no-such-route",
            json!({"error": {"message": "Invalid URL (GET /v1/no-such-route)",
                "type": "invalid_request_error", "param": null, "code": null}}),
        ),
    ];
    for (path, body) in documented {
        let response = client().get(format!("{base}{path}")).send().await?;
        let step = |status: u16, content_type: &str, answer: &Value| Transcript {
            steps: vec![Step::Call {
                request: format!("GET /v1{path}"),
                body: None,
                status,
                answer: json!({"content_type": content_type,
                    "body": normalize(answer, None, &[])}),
            }],
        };
        let status = response.status().as_u16();
        let content_type = header(&response, "content-type");
        let answer: Value = response
            .json()
            .await
            .context("the error body is not JSON")?;
        compare(
            "model::error_bodies",
            "OpenAI's documented error object",
            &step(404, "application/json", &body),
            &step(status, &content_type, &answer),
        )?;
    }
    Ok(())
}

/// The normalization compares what it should: a changed key, a protocol word, a `null` or a
/// missing event is found; a changed value and the number of like chunks in a run are not.
#[live_agent_test]
async fn normalization_keeps_keys_words_and_framing(_live: &mut Live) -> anyhow::Result<()> {
    let chunk = |delta: Value, finish: Value| {
        json!({"data": {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}})
    };
    let stream =
        |events: Vec<Value>| stream_transcript(200, "text/event-stream", events, "complete");
    let done = json!({"data": "[DONE]"});
    let reference = stream(vec![
        chunk(json!({"content": "a"}), Value::Null),
        chunk(json!({}), json!("length")),
        done.clone(),
    ]);
    let same = stream(vec![
        chunk(json!({"content": "b"}), Value::Null),
        chunk(json!({"content": "c"}), Value::Null),
        chunk(json!({}), json!("length")),
        done.clone(),
    ]);
    anyhow::ensure!(first_difference(&reference, &same).is_none());
    let differing = [
        (
            vec![
                chunk(json!({"text": "a"}), Value::Null),
                chunk(json!({}), json!("length")),
                done.clone(),
            ],
            "/answer/chunks/0/data/choices/0/delta/content",
        ),
        (
            vec![
                chunk(json!({"content": "a"}), Value::Null),
                chunk(json!({}), json!("stop")),
                done.clone(),
            ],
            "/answer/chunks/1/data/choices/0/finish_reason",
        ),
        (
            vec![
                chunk(json!({"content": "a"}), json!("")),
                chunk(json!({}), json!("length")),
                done.clone(),
            ],
            "/answer/chunks/0/data/choices/0/finish_reason",
        ),
        (
            vec![
                chunk(json!({"content": "a"}), Value::Null),
                chunk(json!({}), json!("length")),
            ],
            "/answer/chunks/2",
        ),
    ];
    for (events, field) in differing {
        let difference = first_difference(&reference, &stream(events))
            .context("a difference the normalization must keep was lost")?;
        anyhow::ensure!(difference.field == field, "{difference}");
    }
    let framed = sse_events("data: {\"a\":1}\n\nevent: ping\ndata: x\n\ndata: [DONE]\n\n")?;
    anyhow::ensure!(
        framed
            == vec![
                json!({"data": {"a": 1}}),
                json!({"event": "ping", "data": "x"}),
                done
            ],
        "{framed:?}"
    );
    anyhow::ensure!(sse_events("data: [DONE]\n").is_err());
    anyhow::ensure!(sse_events(": keep-alive\n\ndata: [DONE]\n\n").is_err());
    Ok(())
}
