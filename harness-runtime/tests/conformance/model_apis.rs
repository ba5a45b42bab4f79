//! The scripted model's other wire APIs against what the real providers send: Anthropic
//! Messages (`POST /v1/messages`), OpenAI Responses (`POST /v1/responses`) and Google Gemini
//! (`POST /v1beta/models/{model}:streamGenerateContent?alt=sse` and `:generateContent`).
//!
//! As in `model.rs`, each scenario asks the scripted model directly (raw reqwest, no OpenCode),
//! normalizes its answer and the provider's the same way (every value a placeholder of its
//! type; SSE event names, keys and protocol words such as `type`, `role`, `stop_reason`,
//! `finishReason` and `status` kept; a run of like events counted once) and requires them
//! equal, failing with the first differing field and both values. The provider's side is in
//! `tests/data/model/documented/` (its README names every file's source).
//!
//! Compared with a recording (real answers captured by the Vercel AI SDK's test suite):
//! - Anthropic: a streamed text answer; a streamed tool call (a text block, then a `tool_use`
//!   block); the keys of an HTTP error body;
//! - Responses: a streamed text answer; a streamed function call; a stream failing mid-way
//!   (`error`, then `response.failed`); the keys of an HTTP error body;
//! - Gemini: a streamed text answer; a streamed function call; the keys of an HTTP error body.
//!
//! Compared with documentation only:
//! - Anthropic: the `event: error` ending a failed stream (the streaming guide's example);
//! - every API: the words of a 500 body (`api_error`; `server_error` with `code: null`;
//!   `INTERNAL` with `code: 500`), the recorded bodies being 400s;
//! - Gemini: the error object as the last `data:` frame of a failed stream; Google documents
//!   the object, not that a stream ends in one, so this is an assumption.
//!
//! Not compared: non-streamed answers (OpenCode always streams); `stop_reason: max_tokens`,
//! `response.incomplete` and `MAX_TOKENS` (no recording ends at the output limit); streams cut
//! by a reset; Ollama's native API (no recording of a real Ollama exists, see `model.rs`).
//!
//! The scripted model sends less than a provider: [`GAPS`] lists each event and field it
//! leaves out, with why no client of OpenCode's needs it; a listed gap the scripted model
//! fills fails, so the list shrinks with the model.

use std::path::PathBuf;

use anyhow::Context;
use harness_runtime::model::{Reply, ScriptedModel};
use harness_runtime::prelude::*;
use serde_json::{Value, json};

use crate::model::{client, header, normalize, sse_events};
use crate::reference::matching;
use crate::transcript::{Step, Transcript, first_difference};

/// One of the wire APIs compared here.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Api {
    Anthropic,
    Responses,
    Gemini,
}

/// Something a provider sends that the scripted model leaves out on purpose.
struct Gap {
    api: Api,
    /// The SSE event name (`data` for Gemini's unnamed frames, `body` for an error body).
    event: &'static str,
    /// JSON pointers into the event's data (`*` matches any key or index); none: the whole
    /// event.
    fields: &'static [&'static str],
    why: &'static str,
}

/// Events a provider may send anywhere, left out of both sides.
const ANYWHERE: &[(&str, &str)] = &[(
    "ping",
    "Anthropic documents that a stream may include any number of `ping` events, anywhere",
)];

const USAGE_DETAIL: &str = "usage details no client of OpenCode's reads (cache writes, \
    service tier, region): @ai-sdk/anthropic reads input, output and cache-read tokens";
const REQUEST_ECHO: &str = "the Responses API echoes the request's settings (tools, \
    temperature, truncation, …) in every response object; @ai-sdk/openai reads id, \
    created_at, model, status, incomplete_details, output and usage only";
const DONE_EVENTS: &str = "the Responses API closes each part and argument string with a \
    `.done` event repeating what the deltas built; @ai-sdk/openai builds from the deltas and \
    `output_item.done`, and ignores these";
const THINKING: &str = "the recording is of a thinking model (gemini-3-pro): thought \
    signatures and thought-token counts; the scripted model does not think";

/// Every gap, by API.
const GAPS: &[Gap] = &[
    Gap {
        api: Api::Anthropic,
        event: "message_start",
        fields: &[
            "/message/usage/cache_creation_input_tokens",
            "/message/usage/cache_creation",
            "/message/usage/service_tier",
            "/message/usage/inference_geo",
        ],
        why: USAGE_DETAIL,
    },
    Gap {
        api: Api::Anthropic,
        event: "message_delta",
        fields: &[
            "/usage/input_tokens",
            "/usage/cache_creation_input_tokens",
            "/usage/cache_read_input_tokens",
        ],
        why: "the final usage repeats the input counts message_start gave; the streaming \
            guide's example sends `output_tokens` alone, as the scripted model does",
    },
    Gap {
        api: Api::Anthropic,
        event: "body",
        fields: &["/request_id"],
        why: "the id is for Anthropic's support (it is also the `request-id` header); clients \
            read `error.type` and `error.message`",
    },
    Gap {
        api: Api::Responses,
        event: "response.in_progress",
        fields: &[],
        why: "it repeats `response.created` (status `in_progress`); @ai-sdk/openai ignores it",
    },
    Gap {
        api: Api::Responses,
        event: "response.content_part.added",
        fields: &[],
        why: DONE_EVENTS,
    },
    Gap {
        api: Api::Responses,
        event: "response.output_text.done",
        fields: &[],
        why: DONE_EVENTS,
    },
    Gap {
        api: Api::Responses,
        event: "response.content_part.done",
        fields: &[],
        why: DONE_EVENTS,
    },
    Gap {
        api: Api::Responses,
        event: "response.function_call_arguments.done",
        fields: &[],
        why: DONE_EVENTS,
    },
    Gap {
        api: Api::Responses,
        event: "*",
        fields: &[
            "/response/background",
            "/response/completed_at",
            "/response/frequency_penalty",
            "/response/instructions",
            "/response/max_output_tokens",
            "/response/max_tool_calls",
            "/response/moderation",
            "/response/parallel_tool_calls",
            "/response/presence_penalty",
            "/response/previous_response_id",
            "/response/prompt_cache_key",
            "/response/prompt_cache_retention",
            "/response/reasoning",
            "/response/safety_identifier",
            "/response/service_tier",
            "/response/store",
            "/response/temperature",
            "/response/text",
            "/response/tool_choice",
            "/response/tool_usage",
            "/response/tools",
            "/response/top_logprobs",
            "/response/top_p",
            "/response/truncation",
            "/response/user",
            "/response/metadata",
        ],
        why: REQUEST_ECHO,
    },
    Gap {
        api: Api::Responses,
        event: "*",
        fields: &[
            "/response/usage/input_tokens_details/cache_write_tokens",
            "/item/content/*/logprobs",
            "/response/output/*/content/*/logprobs",
        ],
        why: "cache writes and log-probabilities no client of OpenCode's asks for or reads \
            (the text deltas' own `logprobs` are sent)",
    },
    Gap {
        api: Api::Responses,
        event: "response.function_call_arguments.delta",
        fields: &["/obfuscation"],
        why: "random padding OpenAI adds against length side channels; clients ignore it",
    },
    Gap {
        api: Api::Gemini,
        event: "data",
        fields: &[
            "/usageMetadata/promptTokensDetails",
            "/usageMetadata/thoughtsTokenCount",
            "/candidates/*/content/parts/*/thoughtSignature",
        ],
        why: THINKING,
    },
];

/// Keys whose string values are protocol words, compared as they are.
const WORDS: &[&str] = &[
    "object",
    "role",
    "type",
    "stop_reason",
    "finishReason",
    "status",
];

fn documented(file: &str) -> anyhow::Result<String> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/model/documented")
        .join(file);
    std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))
}

/// A documented stream's events (`{"event"?, "data"}`).
fn documented_stream(file: &str) -> anyhow::Result<Vec<Value>> {
    sse_events(&documented(file)?).with_context(|| format!("reading {file}"))
}

/// An event's name: its SSE `event:`, `data` for an unnamed frame.
fn name(event: &Value) -> &str {
    event["event"].as_str().unwrap_or("data")
}

/// The events named `names`, in order, the first of each.
/// Replaces every string `from` in `value` with `to`.
fn replace_strings(value: &mut Value, from: &str, to: &str) {
    match value {
        Value::String(text) if text == from => *text = to.to_owned(),
        Value::Array(items) => items.iter_mut().for_each(|v| replace_strings(v, from, to)),
        Value::Object(map) => map.values_mut().for_each(|v| replace_strings(v, from, to)),
        _ => {}
    }
}

fn pick(events: &[Value], names: &[&str]) -> anyhow::Result<Vec<Value>> {
    names
        .iter()
        .map(|wanted| {
            events
                .iter()
                .find(|e| name(e) == *wanted)
                .cloned()
                .with_context(|| format!("the recording has no `{wanted}` event"))
        })
        .collect()
}

/// What the scripted model answered.
struct Answer {
    request: String,
    status: u16,
    content_type: String,
    /// SSE events, or one `body` event holding a JSON body.
    events: Vec<Value>,
}

/// A chat request of `api` offering one tool, `bash`: the path and the body.
fn chat_request(api: Api, stream: bool) -> (String, Value) {
    let schema = json!({"type": "object", "properties": {"command": {"type": "string"}}});
    match api {
        Api::Anthropic => (
            "/v1/messages".to_owned(),
            json!({"model": "claude-sonnet-4-5", "max_tokens": 1024, "stream": stream,
                "messages": [{"role": "user", "content": "Say hello"}],
                "tools": [{"name": "bash", "description": "Run a command",
                    "input_schema": schema}]}),
        ),
        Api::Responses => (
            "/v1/responses".to_owned(),
            json!({"model": "gpt-5", "stream": stream,
                "input": [{"role": "user",
                    "content": [{"type": "input_text", "text": "Say hello"}]}],
                "tools": [{"type": "function", "name": "bash",
                    "description": "Run a command", "parameters": schema}]}),
        ),
        Api::Gemini => (
            if stream {
                "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
            } else {
                "/v1beta/models/gemini-2.5-flash:generateContent"
            }
            .to_owned(),
            json!({"contents": [{"role": "user", "parts": [{"text": "Say hello"}]}],
                "tools": [{"functionDeclarations": [{"name": "bash",
                    "description": "Run a command", "parameters": schema}]}]}),
        ),
    }
}

/// Asks the scripted model `api`'s chat request, answered by `reply`.
async fn ask(
    model: &ScriptedModel,
    api: Api,
    reply: Reply,
    stream: bool,
) -> anyhow::Result<Answer> {
    model.reply(reply);
    let (path, body) = chat_request(api, stream);
    let base = model.base_url();
    let root = base.strip_suffix("/v1").unwrap_or(&base);
    let response = client()
        .post(format!("{root}{path}"))
        .json(&body)
        .send()
        .await?;
    let status = response.status().as_u16();
    let content_type = header(&response, "content-type");
    let text = response
        .text()
        .await
        .context("the scripted model's answer broke")?;
    let events = if content_type.starts_with("text/event-stream") {
        sse_events(&text)?
    } else {
        let body: Value = serde_json::from_str(&text)
            .with_context(|| format!("the answer is neither a stream nor JSON: {text:?}"))?;
        vec![json!({"event": "body", "data": body})]
    };
    Ok(Answer {
        request: format!("POST {}", path.split('?').next().unwrap_or(&path)),
        status,
        content_type,
        events,
    })
}

/// The events of `events` left after the gaps of `api`, normalized, runs counted once.
fn normalized(events: Vec<Value>) -> Vec<Value> {
    let mut out: Vec<Value> = events
        .into_iter()
        .map(|mut event| {
            event["data"] = normalize(&event["data"], None, WORDS);
            event
        })
        .collect();
    out.dedup();
    out
}

/// Removes the field at `pointer` (a concrete one) from `value`.
fn remove(value: &mut Value, pointer: &str) {
    let Some((parent, last)) = pointer.rsplit_once('/') else {
        return;
    };
    let key = last.replace("~1", "/").replace("~0", "~");
    if let Some(Value::Object(map)) = value.pointer_mut(parent) {
        map.remove(&key);
    }
}

/// Sets aside what the scripted model leaves out on purpose: events sent anywhere (both
/// sides), and each gap of `api` found in `expected`, after checking `actual` does not have
/// it (a gap the scripted model fills fails, naming the gap).
fn set_aside(api: Api, expected: &mut Vec<Value>, actual: &mut Vec<Value>) -> anyhow::Result<()> {
    for side in [&mut *expected, &mut *actual] {
        side.retain(|e| !ANYWHERE.iter().any(|(n, _)| name(e) == *n));
    }
    let of = |gap: &Gap, event: &Value| gap.event == "*" || gap.event == name(event);
    for gap in GAPS.iter().filter(|g| g.api == api) {
        if gap.fields.is_empty() {
            anyhow::ensure!(
                !actual.iter().any(|e| of(gap, e)),
                "the scripted model now sends `{}`, listed as left out ({}): remove it from \
                 GAPS in model_apis.rs",
                gap.event,
                gap.why
            );
            expected.retain(|e| !of(gap, e));
            continue;
        }
        for field in gap.fields {
            if let Some(event) = actual
                .iter()
                .find(|e| of(gap, e) && !matching(&e["data"], field).is_empty())
            {
                anyhow::bail!(
                    "the scripted model now sends `{field}` in `{}`, listed as left out ({}): \
                     remove it from GAPS in model_apis.rs",
                    name(event),
                    gap.why
                );
            }
            for event in expected.iter_mut().filter(|e| of(gap, e)) {
                for concrete in matching(&event["data"], field) {
                    remove(&mut event["data"], &concrete);
                }
            }
        }
    }
    Ok(())
}

/// Requires the scripted model's `answer` to equal `expected` (what `source` sent, with
/// `status` and `content_type`), gaps set aside.
fn compare(
    interaction: &str,
    api: Api,
    source: &str,
    (status, content_type, expected): (u16, &str, Vec<Value>),
    answer: Answer,
) -> anyhow::Result<()> {
    let (mut expected, mut actual) = (expected, answer.events);
    set_aside(api, &mut expected, &mut actual)?;
    let step = |status: u16, content_type: &str, events: Vec<Value>| Transcript {
        steps: vec![Step::Call {
            request: answer.request.clone(),
            body: None,
            status,
            answer: json!({"content_type": content_type, "events": normalized(events)}),
        }],
    };
    let expected = step(status, content_type, expected);
    let actual = step(answer.status, &answer.content_type, actual);
    match first_difference(&expected, &actual) {
        None => Ok(()),
        Some(difference) => anyhow::bail!(
            "`{interaction}`: the scripted model's answer differs from {source} (values are \
             placeholders) at {difference}; make src/model/ answer as the provider does, or \
             list the difference in GAPS with why no client needs it"
        ),
    }
}

const SSE: &str = "text/event-stream";

/// A streamed answer as the provider sent it.
fn stream(events: Vec<Value>) -> (u16, &'static str, Vec<Value>) {
    (200, SSE, events)
}

/// An error body as the provider sent it, with `status`.
fn body(status: u16, body: Value) -> (u16, &'static str, Vec<Value>) {
    (
        status,
        "application/json",
        vec![json!({"event": "body", "data": body})],
    )
}

/// The reply every text scenario scripts: three deltas, usage.
fn text_reply() -> Reply {
    Reply::text("one two three").in_deltas(3).with_usage(12, 30)
}

/// The failure every mid-stream scenario scripts: two deltas, then an error.
fn failing_reply() -> Reply {
    Reply::error_mid_stream("partial answer", "overloaded").in_deltas(2)
}

/// What the scripted model answers a non-streamed request whose reply fails: HTTP 500 in the
/// API's error shape.
async fn error_body(model: &ScriptedModel, api: Api) -> anyhow::Result<Answer> {
    ask(model, api, failing_reply(), false).await
}

// Anthropic Messages.

/// A streamed text answer, against the recorded one: `message_start`, one text block
/// (`content_block_start`, deltas, `content_block_stop`), `message_delta` with
/// `stop_reason: end_turn`, `message_stop`.
#[live_agent_test]
async fn anthropic_streamed_text(live: &mut Live) -> anyhow::Result<()> {
    let reply = text_reply().with_cached_tokens(0);
    let answer = ask(live.model(), Api::Anthropic, reply, true).await?;
    compare(
        "model_apis::anthropic_streamed_text",
        Api::Anthropic,
        "the recorded stream documented/anthropic-messages-text.sse",
        stream(documented_stream("anthropic-messages-text.sse")?),
        answer,
    )
}

/// A streamed tool call, against the recorded one: a text block, then a `tool_use` block
/// filled by `input_json_delta`s, `stop_reason: tool_use`.
#[live_agent_test]
async fn anthropic_streamed_tool_call(live: &mut Live) -> anyhow::Result<()> {
    let reply = Reply::tool_call("bash", json!({"command": "ls"}))
        .with_text("I'll list the files.")
        .with_usage(565, 48)
        .with_cached_tokens(0);
    let answer = ask(live.model(), Api::Anthropic, reply, true).await?;
    compare(
        "model_apis::anthropic_streamed_tool_call",
        Api::Anthropic,
        "the recorded stream documented/anthropic-messages-tool-use.sse",
        stream(documented_stream("anthropic-messages-tool-use.sse")?),
        answer,
    )
}

/// A stream failing mid-way: the recorded stream's start and text deltas, then the streaming
/// guide's `event: error` (its `type` the errors page's 500 one, `api_error`), and nothing
/// after it.
#[live_agent_test]
async fn anthropic_error_mid_stream(live: &mut Live) -> anyhow::Result<()> {
    let answer = ask(
        live.model(),
        Api::Anthropic,
        failing_reply().with_cached_tokens(0),
        true,
    )
    .await?;
    let text = documented_stream("anthropic-messages-text.sse")?;
    let mut events = pick(
        &text,
        &[
            "message_start",
            "content_block_start",
            "content_block_delta",
        ],
    )?;
    let mut error = documented_stream("anthropic-messages-error.sse")?;
    error[0]["data"]["error"]["type"] = json!("api_error");
    events.extend(error);
    compare(
        "model_apis::anthropic_error_mid_stream",
        Api::Anthropic,
        "the recorded stream's start with the streaming guide's error event",
        stream(events),
        answer,
    )
}

/// An HTTP error: the recorded body's keys (`type: "error"`, `error.type`, `error.message`)
/// with the errors page's 500 type, `api_error`.
#[live_agent_test]
async fn anthropic_error_body(live: &mut Live) -> anyhow::Result<()> {
    let answer = error_body(live.model(), Api::Anthropic).await?;
    let mut recorded: Value = serde_json::from_str(&documented("anthropic-error.json")?)?;
    recorded["error"]["type"] = json!("api_error");
    compare(
        "model_apis::anthropic_error_body",
        Api::Anthropic,
        "the recorded error body documented/anthropic-error.json",
        body(500, recorded),
        answer,
    )
}

// OpenAI Responses.

/// A streamed text answer, against the recorded one: `response.created`, a message item
/// added, `output_text` deltas, the item done, `response.completed` with the usage.
#[live_agent_test]
async fn responses_streamed_text(live: &mut Live) -> anyhow::Result<()> {
    let answer = ask(live.model(), Api::Responses, text_reply(), true).await?;
    compare(
        "model_apis::responses_streamed_text",
        Api::Responses,
        "the recorded stream documented/openai-responses-text.sse",
        stream(documented_stream("openai-responses-text.sse")?),
        answer,
    )
}

/// A streamed function call, against the recorded one: a `function_call` item added,
/// argument deltas, the item done with its arguments, `response.completed`.
#[live_agent_test]
async fn responses_streamed_tool_call(live: &mut Live) -> anyhow::Result<()> {
    let reply = Reply::tool_call("bash", json!({"command": "ls"})).with_usage(45, 25);
    let answer = ask(live.model(), Api::Responses, reply, true).await?;
    compare(
        "model_apis::responses_streamed_tool_call",
        Api::Responses,
        "the recorded stream documented/openai-responses-function-call.sse",
        stream(documented_stream("openai-responses-function-call.sse")?),
        answer,
    )
}

/// A stream failing mid-way: the recorded text stream's start and deltas, then the recorded
/// failure's `error` event and `response.failed`.
#[live_agent_test]
async fn responses_error_mid_stream(live: &mut Live) -> anyhow::Result<()> {
    let answer = ask(live.model(), Api::Responses, failing_reply(), true).await?;
    let text = documented_stream("openai-responses-text.sse")?;
    let mut events = pick(
        &text,
        &[
            "response.created",
            "response.output_item.added",
            "response.output_text.delta",
        ],
    )?;
    let failure = documented_stream("openai-responses-error.sse")?;
    let mut failed = pick(&failure, &["error", "response.failed"])?;
    // The recording failed for quota, a scripted failure is a server error: the kind (a
    // protocol word, kept by the normalization) differs by design; the shape is compared.
    for event in &mut failed {
        replace_strings(event, "insufficient_quota", "server_error");
    }
    events.extend(failed);
    compare(
        "model_apis::responses_error_mid_stream",
        Api::Responses,
        "the recorded text stream's start with the recorded failure \
         (documented/openai-responses-error.sse)",
        stream(events),
        answer,
    )
}

/// An HTTP error: the recorded body's keys (`error.message`, `type`, `param`, `code`) with
/// OpenAI's documented 500 words (`server_error`, `param` and `code` null).
#[live_agent_test]
async fn responses_error_body(live: &mut Live) -> anyhow::Result<()> {
    let answer = error_body(live.model(), Api::Responses).await?;
    let mut recorded: Value = serde_json::from_str(&documented("openai-responses-error.json")?)?;
    recorded["error"]["type"] = json!("server_error");
    recorded["error"]["param"] = Value::Null;
    recorded["error"]["code"] = Value::Null;
    compare(
        "model_apis::responses_error_body",
        Api::Responses,
        "the recorded error body documented/openai-responses-error.json",
        body(500, recorded),
        answer,
    )
}

// Google Gemini.

/// A streamed text answer, against the recorded one: `GenerateContentResponse` frames of
/// text parts, each with `usageMetadata`, the last with `finishReason: STOP`.
#[live_agent_test]
async fn gemini_streamed_text(live: &mut Live) -> anyhow::Result<()> {
    let answer = ask(live.model(), Api::Gemini, text_reply(), true).await?;
    compare(
        "model_apis::gemini_streamed_text",
        Api::Gemini,
        "the recorded stream documented/gemini-stream-text.sse",
        stream(documented_stream("gemini-stream-text.sse")?),
        answer,
    )
}

/// A streamed function call, against the recorded one: a frame with the whole
/// `functionCall` part and `finishReason: STOP` (Gemini says `STOP` after calls too).
#[live_agent_test]
async fn gemini_streamed_tool_call(live: &mut Live) -> anyhow::Result<()> {
    // The recorded call's argument names: arguments are the tool's, not the protocol's.
    let reply = Reply::tool_call("bash", json!({"location": "San Francisco"})).with_usage(29, 15);
    let answer = ask(live.model(), Api::Gemini, reply, true).await?;
    let recorded = documented_stream("gemini-stream-function-call.sse")?;
    // Deliberate: gemini-3 finishes in a frame of its own, an empty text part after the call;
    // the scripted model finishes in the call's frame, as a frame may carry parts and the
    // finish (the text recording's last one does) and @ai-sdk/google reads the finish from
    // whichever frame has it.
    let [call, finish] = <[Value; 2]>::try_from(recorded)
        .map_err(|_| anyhow::anyhow!("the recorded call is not a call frame and a finish"))?;
    anyhow::ensure!(
        finish["data"]["candidates"][0]["content"]["parts"] == json!([{"text": ""}]),
        "the recorded finish frame carries parts: the merge below no longer applies"
    );
    let mut merged = call;
    merged["data"]["candidates"][0]["finishReason"] =
        finish["data"]["candidates"][0]["finishReason"].clone();
    compare(
        "model_apis::gemini_streamed_tool_call",
        Api::Gemini,
        "the recorded stream documented/gemini-stream-function-call.sse",
        stream(vec![merged]),
        answer,
    )
}

/// A stream failing mid-way: the recorded stream's first text frame, then Google's
/// documented error object (500, `INTERNAL`) as the last frame. Documentation only: Google
/// documents the object, not a stream ending in one.
#[live_agent_test]
async fn gemini_error_mid_stream(live: &mut Live) -> anyhow::Result<()> {
    let answer = ask(live.model(), Api::Gemini, failing_reply(), true).await?;
    let text = documented_stream("gemini-stream-text.sse")?;
    let mut error: Value = serde_json::from_str(&documented("gemini-error.json")?)?;
    error["error"]["code"] = json!(500);
    error["error"]["status"] = json!("INTERNAL");
    let events = vec![text[0].clone(), json!({"data": error})];
    compare(
        "model_apis::gemini_error_mid_stream",
        Api::Gemini,
        "the recorded stream's first frame with Google's documented error object",
        stream(events),
        answer,
    )
}

/// An HTTP error: the recorded body's keys (`error.code`, `message`, `status`) with the
/// troubleshooting guide's 500 status, `INTERNAL`.
#[live_agent_test]
async fn gemini_error_body(live: &mut Live) -> anyhow::Result<()> {
    let answer = error_body(live.model(), Api::Gemini).await?;
    let mut recorded: Value = serde_json::from_str(&documented("gemini-error.json")?)?;
    recorded["error"]["code"] = json!(500);
    recorded["error"]["status"] = json!("INTERNAL");
    compare(
        "model_apis::gemini_error_body",
        Api::Gemini,
        "the recorded error body documented/gemini-error.json",
        body(500, recorded),
        answer,
    )
}

/// The comparison finds what it should: a gap the scripted model fills, an event it leaves
/// out that is not listed, a changed protocol word; and not a changed value.
#[live_agent_test]
async fn gaps_and_words_are_compared(_live: &mut Live) -> anyhow::Result<()> {
    let event = |name: &str, data: Value| json!({"event": name, "data": data});
    let answer = |events: Vec<Value>| Answer {
        request: "POST /v1/responses".to_owned(),
        status: 200,
        content_type: SSE.to_owned(),
        events,
    };
    let created = event(
        "response.created",
        json!({"type": "response.created", "response": {"id": "a", "status": "in_progress"}}),
    );
    let progress = event(
        "response.in_progress",
        json!({"type": "response.in_progress"}),
    );
    let done = |status: &str| {
        event(
            "response.completed",
            json!({"type": "response.completed", "response": {"id": "b", "status": status}}),
        )
    };
    let documented = vec![created.clone(), progress.clone(), done("completed")];
    let run = |actual: Vec<Value>| {
        compare(
            "test",
            Api::Responses,
            "test",
            stream(documented.clone()),
            answer(actual),
        )
    };
    run(vec![created.clone(), done("completed")])?;
    let mut other_id = created.clone();
    other_id["data"]["response"]["id"] = json!("z");
    run(vec![other_id, done("completed")])?;
    let filled = run(vec![created.clone(), progress, done("completed")]);
    anyhow::ensure!(
        filled.is_err_and(|e| e.to_string().contains("remove it from GAPS")),
        "a filled gap passed"
    );
    let word = run(vec![created.clone(), done("incomplete")]);
    anyhow::ensure!(
        word.is_err_and(|e| e
            .to_string()
            .contains("/answer/events/1/data/response/status")),
        "a changed status passed"
    );
    let missing = run(vec![created]);
    anyhow::ensure!(
        missing.is_err_and(|e| e.to_string().contains("/answer/events/1")),
        "a missing event passed"
    );
    Ok(())
}
