//! A recorded stream of each hosted API (Anthropic Messages, OpenAI Responses, Gemini) goes
//! tape → file → replay and comes back byte for byte; its usage and first token are read from
//! it, its end is the API's own, and text split over frames is redacted as the text it forms.
//!
//! Frames here are canonical JSON (compact, keys sorted): a replay sends the JSON it stored, so
//! a provider's own key order comes back as the same JSON, not the same bytes.

use std::collections::BTreeMap;
use std::path::Path;

use bytes::Bytes;
use eventsource_stream::Eventsource;
use futures::StreamExt;
use serde_json::{Value, json};

use super::apis;
use super::apis::normalize;
use super::file::{load, save};
use super::format::{
    Cassette, FORMAT, Interaction, Recorded, RecordedResponse, StreamEnd, WireApi, chunk_data,
};
use super::replay::replayed_frames;
use super::tape::{Head, Tape};
use super::timing::timing;
use crate::client::TokenCounts;
use crate::redact::Redactor;

const RECORDING_ROOT: &str = "/tmp/rec-root/workspace";
const REPLAYING_ROOT: &str = "/tmp/rep-root/workspace";
const SECRET: &str = "sk-canary-0123";

fn redactor(workspace: &str) -> Redactor {
    let redactor = Redactor::default();
    redactor.add_path(Path::new(workspace), "[workspace]");
    redactor.add_secret(SECRET);
    redactor
}

/// One frame as the upstream streamed it.
type Frame = (Option<&'static str>, Value);

fn upstream_bytes(frames: &[Frame]) -> Vec<u8> {
    frames
        .iter()
        .flat_map(|(event, data)| super::wire::sse_event(*event, &data.to_string()).to_vec())
        .collect()
}

/// What a round trip gave: the interaction as the file holds it, and the replayed bytes.
struct RoundTrip {
    interaction: Interaction,
    recorded: Recorded,
    replayed: Vec<u8>,
}

/// Records `frames` (the answer to `request`, sent to `path`) as the relay does, writes the
/// cassette, reads it back, and frames it as a replay in another workspace does.
fn round_trip(api: WireApi, path: &str, request: &Value, frames: &[Frame]) -> RoundTrip {
    let recording = redactor(RECORDING_ROOT);
    let tape = Tape::default();
    let index = tape.begin(normalize(
        api,
        path,
        request,
        &recording.with_fresh_numbering(),
    ));
    let content_type = "text/event-stream; charset=utf-8";
    tape.stream(
        index,
        Head {
            status: 200,
            content_type: content_type.into(),
            headers: BTreeMap::new(),
        },
    );
    // Parsed as the relay parses the upstream's body.
    let body = Bytes::from(upstream_bytes(frames));
    let events = futures::executor::block_on(
        futures::stream::iter([Ok::<_, std::convert::Infallible>(body)])
            .eventsource()
            .collect::<Vec<_>>(),
    );
    for event in events {
        let event = event.expect("well-formed SSE");
        let name = (event.event != "message").then_some(event.event);
        tape.chunk(index, name, chunk_data(&event.data));
    }
    tape.end(index, StreamEnd::Complete);
    let recorded = Recorded {
        api,
        npm: "@ai-sdk/test".into(),
        model: "m".into(),
        model_entry: json!({"cost": {"input": 3.0, "output": 15.0, "cache_read": 0.3}}),
    };
    let cassette = Cassette {
        format: FORMAT,
        scenario: "t::api".into(),
        recorded: recorded.clone(),
        provenance: None,
        interactions: tape.interactions(&recording),
    };
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("t__api.json");
    save(&file, &cassette, &recording, false).expect("the cassette is written");
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(
        !text.contains("/tmp/") && !text.contains("canary"),
        "{text}"
    );
    let mut loaded = load(&file, "t::api").expect("the cassette loads");
    assert_eq!(loaded, cassette, "the file holds what was recorded");
    let interaction = loaded.interactions.remove(0);
    let replaying = redactor(REPLAYING_ROOT);
    // The replay's own request, from its own workspace, matches the recorded one.
    let again = request.to_string().replace(RECORDING_ROOT, REPLAYING_ROOT);
    let again: Value = serde_json::from_str(&again).unwrap();
    assert_eq!(
        normalize(api, path, &again, &replaying.with_fresh_numbering()),
        interaction.request
    );
    let RecordedResponse::Stream { chunks, end, .. } = &interaction.response else {
        panic!("a stream");
    };
    assert_eq!(*end, StreamEnd::Complete);
    let replayed = replayed_frames(&replaying, content_type, chunks).concat();
    RoundTrip {
        interaction,
        recorded,
        replayed,
    }
}

/// `interaction` with its chunks 10 ms apart: the first token's time names its frame.
fn spaced(mut interaction: Interaction) -> Interaction {
    if let RecordedResponse::Stream { chunks, .. } = &mut interaction.response {
        for chunk in chunks {
            chunk.after_ms = 10;
        }
    }
    interaction
}

/// The stored pieces of the streamed text at `pointer`, in order.
fn stored(interaction: &Interaction, pointer: &str) -> Vec<String> {
    let RecordedResponse::Stream { chunks, .. } = &interaction.response else {
        panic!("a stream");
    };
    chunks
        .iter()
        .filter_map(|c| c.data.pointer(pointer)?.as_str().map(str::to_owned))
        .collect()
}

fn chunks(interaction: &Interaction) -> &[super::format::Chunk] {
    match &interaction.response {
        RecordedResponse::Stream { chunks, .. } => chunks,
        _ => panic!("a stream"),
    }
}

fn anthropic_request() -> Value {
    json!({
        "model": "claude-sonnet-4-5", "stream": true, "max_tokens": 4096,
        "system": [{"type": "text", "text": format!("You are opencode. cwd {RECORDING_ROOT}")}],
        "tools": [{"name": "bash", "input_schema": {"type": "object"}}],
        "tool_choice": {"type": "auto"},
        "messages": [{"role": "user", "content": [{"type": "text", "text": "list the files"}]}],
    })
}

fn anthropic_frames(text: &[&str]) -> Vec<Frame> {
    let mut frames: Vec<Frame> = vec![
        (
            Some("message_start"),
            json!({"type": "message_start", "message": {
            "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
            "content": [], "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": 1200, "cache_creation_input_tokens": 0,
                      "cache_read_input_tokens": 800, "output_tokens": 1}}}),
        ),
        (
            Some("content_block_start"),
            json!({"type": "content_block_start", "index": 0,
            "content_block": {"type": "text", "text": ""}}),
        ),
        (Some("ping"), json!({"type": "ping"})),
    ];
    for piece in text {
        frames.push((
            Some("content_block_delta"),
            json!({"type": "content_block_delta",
            "index": 0, "delta": {"type": "text_delta", "text": piece}}),
        ));
    }
    frames.extend([
        (
            Some("content_block_stop"),
            json!({"type": "content_block_stop", "index": 0}),
        ),
        (
            Some("content_block_start"),
            json!({"type": "content_block_start", "index": 1,
            "content_block": {"type": "tool_use", "id": "toolu_1", "name": "bash", "input": {}}}),
        ),
        (
            Some("content_block_delta"),
            json!({"type": "content_block_delta", "index": 1,
            "delta": {"type": "input_json_delta", "partial_json": "{\"command\": \"ls"}}),
        ),
        (
            Some("content_block_delta"),
            json!({"type": "content_block_delta", "index": 1,
            "delta": {"type": "input_json_delta", "partial_json": "\"}"}}),
        ),
        (
            Some("content_block_stop"),
            json!({"type": "content_block_stop", "index": 1}),
        ),
        (
            Some("message_delta"),
            json!({"type": "message_delta",
            "delta": {"stop_reason": "tool_use", "stop_sequence": null},
            "usage": {"output_tokens": 42}}),
        ),
        (Some("message_stop"), json!({"type": "message_stop"})),
    ]);
    frames
}

#[test]
fn an_anthropic_stream_round_trips_byte_for_byte_with_its_usage_and_first_token() {
    let frames = anthropic_frames(&["I will ", "list them."]);
    let trip = round_trip(
        WireApi::Anthropic,
        "/v1/messages",
        &anthropic_request(),
        &frames,
    );
    assert_eq!(
        String::from_utf8(trip.replayed).unwrap(),
        String::from_utf8(upstream_bytes(&frames)).unwrap()
    );
    let interaction = spaced(trip.interaction);
    let chunks = chunks(&interaction);
    assert_eq!(chunks[0].event.as_deref(), Some("message_start"));
    assert!(apis::ends_whole(WireApi::Anthropic, chunks));
    assert!(!apis::ends_whole(
        WireApi::Anthropic,
        &chunks[..chunks.len() - 1]
    ));
    let timing = timing(&interaction, &trip.recorded);
    // message_start, content_block_start (empty text) and ping carry no output.
    assert_eq!(timing.first_token_ms, Some(40));
    let tokens = TokenCounts {
        input: 1200,
        output: 42,
        reasoning: 0,
        cache_read: 800,
        cache_write: 0,
    };
    assert_eq!(timing.tokens, Some(tokens));
    let cost = (1200.0 * 3.0 + 42.0 * 15.0 + 800.0 * 0.3) / 1e6;
    assert!((timing.cost.unwrap() - cost).abs() < 1e-12);
    let shape = apis::shape(WireApi::Anthropic, chunks.iter().map(|c| &c.data));
    assert_eq!(shape.tools, ["bash"]);
    assert_eq!(shape.finish.as_deref(), Some("tool_use"));
    assert!(shape.text && !shape.error);
}

#[test]
fn an_anthropic_path_split_over_deltas_is_redacted_whole_and_replayed_as_this_scenarios() {
    let pieces = [
        "see /tmp/rec-",
        "root/work",
        "space/a.txt and ",
        "sk-canary-",
        "0123",
    ];
    let frames = anthropic_frames(&pieces);
    let trip = round_trip(
        WireApi::Anthropic,
        "/v1/messages",
        &anthropic_request(),
        &frames,
    );
    let texts = stored(&trip.interaction, "/delta/text");
    assert_eq!(texts.concat(), "see [workspace]/a.txt and [secret]");
    let replayed = String::from_utf8(trip.replayed).unwrap();
    assert!(
        replayed.contains(&format!("see {REPLAYING_ROOT}")),
        "{replayed}"
    );
}

fn responses_request() -> Value {
    json!({
        "model": "gpt-5", "stream": true, "store": false,
        "instructions": format!("You are opencode. cwd {RECORDING_ROOT}"),
        "tools": [{"type": "function", "name": "bash", "parameters": {"type": "object"}}],
        "tool_choice": "auto",
        "input": [{"role": "user", "content": [{"type": "input_text", "text": "list the files"}]}],
    })
}

fn responses_frames(text: &[&str]) -> Vec<Frame> {
    let event = |name: &'static str, mut data: Value| {
        data["type"] = json!(name);
        (Some(name), data)
    };
    let mut frames = vec![
        event(
            "response.created",
            json!({"sequence_number": 0, "response": {"id": "resp_1",
            "object": "response", "status": "in_progress", "model": "gpt-5", "output": [],
            "usage": null}}),
        ),
        event(
            "response.output_item.added",
            json!({"output_index": 0, "item": {"id": "rs_1",
            "type": "reasoning", "summary": []}}),
        ),
        event(
            "response.output_item.added",
            json!({"output_index": 1, "item": {"id": "msg_1",
            "type": "message", "role": "assistant", "status": "in_progress", "content": []}}),
        ),
    ];
    for piece in text {
        frames.push(event(
            "response.output_text.delta",
            json!({"item_id": "msg_1",
            "output_index": 1, "content_index": 0, "delta": piece}),
        ));
    }
    frames.extend([
        event(
            "response.output_item.added",
            json!({"output_index": 2, "item": {"id": "fc_1",
            "type": "function_call", "name": "bash", "call_id": "c_1", "arguments": ""}}),
        ),
        event(
            "response.function_call_arguments.delta",
            json!({"item_id": "fc_1",
            "output_index": 2, "delta": "{\"command\":\"ls\"}"}),
        ),
        event(
            "response.completed",
            json!({"response": {"id": "resp_1", "object": "response",
            "status": "completed", "model": "gpt-5", "output": [],
            "usage": {"input_tokens": 1500, "input_tokens_details": {"cached_tokens": 1000},
                      "output_tokens": 120, "output_tokens_details": {"reasoning_tokens": 64},
                      "total_tokens": 1620}}}),
        ),
    ]);
    frames
}

#[test]
fn a_responses_stream_round_trips_byte_for_byte_with_its_usage_and_first_token() {
    let frames = responses_frames(&["Hel", "lo"]);
    let trip = round_trip(
        WireApi::Responses,
        "/v1/responses",
        &responses_request(),
        &frames,
    );
    assert_eq!(
        String::from_utf8(trip.replayed).unwrap(),
        String::from_utf8(upstream_bytes(&frames)).unwrap()
    );
    let interaction = spaced(trip.interaction);
    let chunks = chunks(&interaction);
    assert!(apis::ends_whole(WireApi::Responses, chunks));
    let timing = timing(&interaction, &trip.recorded);
    // created, the reasoning item and the message item carry no output; the first delta does.
    assert_eq!(timing.first_token_ms, Some(40));
    let tokens = TokenCounts {
        input: 500,
        output: 56,
        reasoning: 64,
        cache_read: 1000,
        cache_write: 0,
    };
    assert_eq!(timing.tokens, Some(tokens));
    let shape = apis::shape(WireApi::Responses, chunks.iter().map(|c| &c.data));
    assert_eq!(shape.tools, ["bash"]);
    assert_eq!(shape.finish.as_deref(), Some("completed"));
    assert!(shape.text && !shape.error);
}

#[test]
fn a_responses_path_split_over_deltas_is_redacted_whole() {
    let frames = responses_frames(&["wrote /tmp/rec-root/", "workspace/out.txt"]);
    let trip = round_trip(
        WireApi::Responses,
        "/v1/responses",
        &responses_request(),
        &frames,
    );
    assert_eq!(
        stored(&trip.interaction, "/delta").concat(),
        "wrote [workspace]/out.txt{\"command\":\"ls\"}"
    );
    let replayed = String::from_utf8(trip.replayed).unwrap();
    assert!(
        replayed.contains(&format!("wrote {REPLAYING_ROOT}")),
        "{replayed}"
    );
}

const GEMINI_PATH: &str = "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse";

fn gemini_request() -> Value {
    json!({
        "systemInstruction": {"parts": [{"text": format!("You are opencode. cwd {RECORDING_ROOT}")}]},
        "contents": [{"role": "user", "parts": [{"text": "list the files"}]}],
        "tools": [{"functionDeclarations": [{"name": "bash", "parameters": {"type": "object"}}]}],
        "toolConfig": {"functionCallingConfig": {"mode": "AUTO"}},
        "generationConfig": {"maxOutputTokens": 4096},
    })
}

fn gemini_frames(text: &[&str]) -> Vec<Frame> {
    let frame = |parts: Value, finish: Option<&str>, usage: Value| {
        let mut candidate = json!({"content": {"role": "model", "parts": parts}, "index": 0});
        if let Some(finish) = finish {
            candidate["finishReason"] = json!(finish);
        }
        (
            None,
            json!({"candidates": [candidate], "usageMetadata": usage,
                      "modelVersion": "gemini-2.5-flash", "responseId": "r1"}),
        )
    };
    let running = json!({"promptTokenCount": 900, "totalTokenCount": 900});
    let mut frames = vec![frame(
        json!([{"text": "", "thought": true, "thoughtSignature": "c2ln"}]),
        None,
        running.clone(),
    )];
    for piece in text {
        frames.push(frame(json!([{"text": piece}]), None, running.clone()));
    }
    frames.push(frame(
        json!([{"functionCall": {"name": "bash", "args": {"command": "ls"}}}]),
        Some("STOP"),
        json!({"promptTokenCount": 900, "cachedContentTokenCount": 600,
               "candidatesTokenCount": 30, "thoughtsTokenCount": 20, "totalTokenCount": 950}),
    ));
    frames
}

#[test]
fn a_gemini_stream_round_trips_byte_for_byte_with_its_usage_and_first_token() {
    let frames = gemini_frames(&["Listing ", "them."]);
    let trip = round_trip(WireApi::Gemini, GEMINI_PATH, &gemini_request(), &frames);
    assert_eq!(
        String::from_utf8(trip.replayed).unwrap(),
        String::from_utf8(upstream_bytes(&frames)).unwrap()
    );
    assert_eq!(trip.interaction.request.model, "gemini-2.5-flash");
    assert!(trip.interaction.request.stream);
    let interaction = spaced(trip.interaction);
    let chunks = chunks(&interaction);
    assert!(apis::ends_whole(WireApi::Gemini, chunks));
    assert!(!apis::ends_whole(
        WireApi::Gemini,
        &chunks[..chunks.len() - 1]
    ));
    let timing = timing(&interaction, &trip.recorded);
    // The empty thought part carries nothing; the first text does.
    assert_eq!(timing.first_token_ms, Some(20));
    let tokens = TokenCounts {
        input: 300,
        output: 30,
        reasoning: 20,
        cache_read: 600,
        cache_write: 0,
    };
    assert_eq!(timing.tokens, Some(tokens));
    let shape = apis::shape(WireApi::Gemini, chunks.iter().map(|c| &c.data));
    assert_eq!(shape.tools, ["bash"]);
    assert_eq!(shape.finish.as_deref(), Some("STOP"));
    assert!(shape.text && !shape.error);
}

#[test]
fn a_gemini_path_split_over_frames_is_redacted_whole() {
    let frames = gemini_frames(&["in /tmp/rec-root/wor", "kspace now"]);
    let trip = round_trip(WireApi::Gemini, GEMINI_PATH, &gemini_request(), &frames);
    let texts = stored(&trip.interaction, "/candidates/0/content/parts/0/text");
    assert_eq!(texts.concat(), "in [workspace] now");
}
