//! The scripted model's wire protocol, exercised with reqwest and requests recorded from the
//! real OpenCode 1.18.33 (`tests/data/model/`).

use std::time::{Duration, Instant};

use eventsource_stream::Eventsource;
use futures::StreamExt;
use harness_runtime::model::{Answer, Api, Matcher, Reply, Rule, ScriptedModel, ScriptedToolCall};
use harness_runtime::redact::Redactor;
use harness_runtime::testing::ModelSlot;
use serde_json::{Value, json};

/// What OpenCode 1.18.33 sent: a plain turn, the next turn, the tool follow-up, a
/// `json_schema` turn (paths replaced by `/tmp/live-root`).
fn opencode_requests() -> Vec<Value> {
    let text = include_str!("../data/model/opencode-1.18.33-requests.json");
    serde_json::from_str(text).expect("recorded requests are JSON")
}

/// The summaries of what OpenCode sent in the reference runs.
fn reference_summaries() -> Vec<Value> {
    include_str!("../data/model/mock_requests.jsonl")
        .lines()
        .map(|l| serde_json::from_str(l).expect("jsonl line"))
        .collect()
}

fn chat_url(model: &ScriptedModel) -> String {
    format!("{}/chat/completions", model.base_url())
}

async fn post(url: &str, body: &Value) -> reqwest::Response {
    reqwest::Client::new()
        .post(url)
        .json(body)
        .timeout(Duration::from_secs(30))
        .send()
        .await
        .expect("request is answered")
}

/// The `data:` payloads of an SSE response.
async fn sse_data(response: reqwest::Response) -> Vec<String> {
    assert_eq!(response.status(), 200);
    assert_eq!(
        response.headers()["content-type"].to_str().unwrap(),
        "text/event-stream"
    );
    response
        .bytes_stream()
        .eventsource()
        .map(|event| event.expect("well-formed SSE").data)
        .collect()
        .await
}

fn chunks(data: &[String]) -> Vec<Value> {
    data.iter()
        .filter(|d| *d != "[DONE]")
        .map(|d| serde_json::from_str(d).expect("chunk is JSON"))
        .collect()
}

fn content(chunks: &[Value]) -> Vec<String> {
    chunks
        .iter()
        .filter_map(|c| {
            c.pointer("/choices/0/delta/content")?
                .as_str()
                .map(String::from)
        })
        .collect()
}

#[tokio::test]
async fn streams_text_in_deltas_with_finish_usage_and_done() {
    let slot = ModelSlot::default();
    let model = slot.model().unwrap();
    model.reply(Reply::text("Hello from the scripted model").in_deltas(3));
    let data = sse_data(post(&chat_url(model), &opencode_requests()[0]).await).await;
    assert_eq!(data.last().map(String::as_str), Some("[DONE]"));
    let chunks = chunks(&data);
    assert_eq!(
        chunks[0]["choices"][0]["delta"],
        json!({"role": "assistant"})
    );
    assert!(
        chunks
            .iter()
            .all(|c| c["object"] == "chat.completion.chunk")
    );
    assert_eq!(
        content(&chunks),
        vec!["Hello from", " the scrip", "ted model"]
    );
    let finish: Vec<&Value> = chunks
        .iter()
        .filter_map(|c| c.pointer("/choices/0/finish_reason"))
        .filter(|f| !f.is_null())
        .collect();
    assert_eq!(finish, vec![&json!("stop")]);
    let usage = chunks.last().unwrap();
    assert_eq!(usage["choices"], json!([]));
    assert_eq!(
        usage["usage"],
        json!({"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15})
    );
}

#[tokio::test]
async fn sends_no_usage_chunk_unless_asked() {
    let slot = ModelSlot::default();
    let model = slot.model().unwrap();
    model.reply(Reply::text("x").with_usage(3, 4));
    let mut body = opencode_requests()[0].clone();
    body.as_object_mut().unwrap().remove("stream_options");
    let chunks = chunks(&sse_data(post(&chat_url(model), &body).await).await);
    assert!(
        chunks.iter().all(|c| c.get("usage").is_none()),
        "{chunks:?}"
    );
}

#[tokio::test]
async fn answers_a_non_streamed_request_with_one_completion() {
    let slot = ModelSlot::default();
    let model = slot.model().unwrap();
    model.reply(Reply::tool_call("read", json!({"filePath": "a.txt"})).with_text("Reading"));
    let mut body = opencode_requests()[0].clone();
    body["stream"] = json!(false);
    let response = post(&chat_url(model), &body).await;
    assert_eq!(response.status(), 200);
    let completion: Value = response.json().await.unwrap();
    assert_eq!(completion["object"], "chat.completion");
    let choice = &completion["choices"][0];
    assert_eq!(choice["finish_reason"], "tool_calls");
    assert_eq!(choice["message"]["content"], "Reading");
    let call = &choice["message"]["tool_calls"][0];
    assert_eq!(call["function"]["name"], "read");
    let args: Value =
        serde_json::from_str(call["function"]["arguments"].as_str().unwrap()).unwrap();
    assert_eq!(args, json!({"filePath": "a.txt"}));
    assert_eq!(completion["usage"]["total_tokens"], 15);
    assert!(!model.requests()[0].stream);
}

#[tokio::test]
async fn streams_several_tool_calls_as_indexed_deltas_with_argument_fragments() {
    let slot = ModelSlot::default();
    let model = slot.model().unwrap();
    let bash = json!({"command": "echo hi > out.txt", "description": "write"});
    let read = json!({"filePath": "out.txt"});
    model.reply(Reply::tool_calls(vec![
        ScriptedToolCall::new("bash", bash.clone()),
        ScriptedToolCall::new("read", read.clone()),
    ]));
    let chunks = chunks(&sse_data(post(&chat_url(model), &opencode_requests()[0]).await).await);
    // Reassemble as the AI SDK does: by index, id and name on the first delta, args appended.
    let mut calls: Vec<(String, String, String)> = Vec::new();
    let mut argument_deltas = 0;
    for chunk in &chunks {
        let Some(deltas) = chunk
            .pointer("/choices/0/delta/tool_calls")
            .and_then(Value::as_array)
        else {
            continue;
        };
        for delta in deltas {
            let index = delta["index"].as_u64().unwrap() as usize;
            if let Some(id) = delta["id"].as_str() {
                assert_eq!(index, calls.len(), "a new call takes the next index");
                assert_eq!(delta["type"], "function");
                let name = delta["function"]["name"].as_str().unwrap();
                calls.push((id.to_string(), name.to_string(), String::new()));
            }
            if let Some(fragment) = delta["function"]["arguments"]
                .as_str()
                .filter(|f| !f.is_empty())
            {
                calls[index].2.push_str(fragment);
                argument_deltas += 1;
            }
        }
    }
    assert_eq!(calls.len(), 2);
    assert_ne!(calls[0].0, calls[1].0, "call ids are unique");
    assert_eq!((calls[0].1.as_str(), calls[1].1.as_str()), ("bash", "read"));
    assert_eq!(serde_json::from_str::<Value>(&calls[0].2).unwrap(), bash);
    assert_eq!(serde_json::from_str::<Value>(&calls[1].2).unwrap(), read);
    assert!(argument_deltas > 2, "arguments arrive in fragments");
    let finish = chunks
        .iter()
        .filter_map(|c| {
            c.pointer("/choices/0/finish_reason")
                .and_then(Value::as_str)
        })
        .collect::<Vec<_>>();
    assert_eq!(finish, vec!["tool_calls"]);
}

#[tokio::test]
async fn answers_the_structured_output_tool_opencode_adds_for_json_schema() {
    let slot = ModelSlot::default();
    let model = slot.model().unwrap();
    model.rule(
        Rule::when(Matcher::wants_structured_output())
            .reply(Reply::structured(json!({"answer": "42"}))),
    );
    let structured = &opencode_requests()[3];
    let chunks = chunks(&sse_data(post(&chat_url(model), structured).await).await);
    let start = chunks
        .iter()
        .find_map(|c| c.pointer("/choices/0/delta/tool_calls/0/function/name"))
        .unwrap();
    assert_eq!(start, "StructuredOutput");
    let recorded = &model.requests()[0];
    assert_eq!(recorded.tool_choice, Some(json!("required")));
    assert!(matches!(recorded.answer, Answer::Rule { index: 0, .. }));
}

#[tokio::test]
async fn records_what_opencode_sent_as_the_reference_runs_saw_it() {
    let slot = ModelSlot::default();
    let model = slot.model().unwrap();
    model.rule(Rule::when(Matcher::any()).reply(Reply::text("ok")));
    for body in opencode_requests() {
        sse_data(post(&chat_url(model), &body).await).await;
    }
    let requests = model.requests();
    let reference = reference_summaries();
    // The plain turn offers the same tools, in the same order, as in the reference runs, except
    // `webfetch`: the capture ran with `"webfetch": "deny"`, and OpenCode does not offer a
    // denied tool at all.
    let offered_in = |summary: &Value| -> Vec<String> {
        let tools: Vec<String> = serde_json::from_value(summary["tools"].clone()).unwrap();
        tools.into_iter().filter(|t| t != "webfetch").collect()
    };
    assert_eq!(requests[0].tools_offered, offered_in(&reference[0]));
    assert_eq!(requests[3].tools_offered, offered_in(&reference[2]));
    assert!(requests[3].offers_tool("StructuredOutput"));
    assert_eq!(requests[0].model, "scripted-model");
    assert_eq!(requests[0].message_roles, vec!["system", "user"]);
    assert_eq!(requests[0].last_user_text.as_deref(), Some("Say hello"));
    assert_eq!(requests[0].response_format, None);
    assert_eq!(
        requests[2].message_roles,
        vec!["system", "user", "assistant", "user", "assistant", "tool"]
    );
    assert!(requests[2].follows_tool_result());
    assert_eq!(
        requests[3].last_user_text.as_deref(),
        Some("What is the answer?")
    );
    assert_eq!(
        requests.iter().map(|r| r.seq).collect::<Vec<_>>(),
        vec![0, 1, 2, 3]
    );
    assert!(
        requests
            .iter()
            .all(|r| r.api == Api::OpenAi && r.stream && r.include_usage)
    );
    let summary = serde_json::to_value(model.summaries()[3].clone()).unwrap();
    assert_eq!(summary["tool_choice"], "required");
    assert_eq!(
        summary["answer"],
        json!({"by": "rule", "index": 0, "reply": "text \"ok\""})
    );
    assert!(summary.get("raw").is_none());
}

#[tokio::test]
async fn rules_route_by_tool_and_user_text_and_run_out_after_their_count() {
    let slot = ModelSlot::default();
    let model = slot.model().unwrap();
    model
        .rule(
            Rule::when(Matcher::last_user_text_contains("answer"))
                .reply(Reply::text("from rule 0"))
                .times(1),
        )
        .rule(Rule::when(Matcher::follows_tool_result()).reply(Reply::text("from rule 1")))
        .reply(Reply::text("queued 1"))
        .reply(Reply::text("queued 2"));
    let requests = opencode_requests();
    let mut replies = Vec::new();
    for body in [
        &requests[3],
        &requests[3],
        &requests[2],
        &requests[2],
        &requests[0],
    ] {
        replies
            .push(content(&chunks(&sse_data(post(&chat_url(model), body).await).await)).concat());
    }
    assert_eq!(
        replies,
        vec![
            "from rule 0",
            "queued 1",
            "from rule 1",
            "from rule 1",
            "queued 2"
        ]
    );
    assert_eq!(model.pending(), 0);
}

#[tokio::test]
async fn answers_title_requests_by_itself() {
    let slot = ModelSlot::default();
    let model = slot.model().unwrap();
    // The shape of OpenCode's title request (session/prompt.ts): no tools, a fixed user line.
    let title = json!({"model": "scripted-model", "stream": true, "messages": [
        {"role": "system", "content": "You are a title generator."},
        {"role": "user", "content": "Generate a title for this conversation:\n"},
        {"role": "user", "content": "Say hello"}]});
    let text = content(&chunks(
        &sse_data(post(&chat_url(model), &title).await).await,
    ))
    .concat();
    assert!(!text.is_empty());
    assert_eq!(model.requests()[0].answer, Answer::Title);
    assert!(model.misses().is_empty());
}

#[tokio::test]
async fn a_miss_is_a_non_retryable_400_and_fails_the_scenario_at_its_end_redacted() {
    let mut slot = ModelSlot::default();
    let model = slot.model().unwrap().clone();
    let mut body = opencode_requests()[0].clone();
    body["messages"][1]["content"] = json!("deploy with token hunter2");
    let response = post(&chat_url(&model), &body).await;
    assert_eq!(response.status(), 400);
    assert!(
        response
            .text()
            .await
            .unwrap()
            .contains("scripted model: no reply queued")
    );
    assert_eq!(model.misses().len(), 1);
    let redactor = Redactor::for_scenario();
    redactor.add_secret("hunter2");
    let error = slot.finish(&redactor).unwrap_err().to_string();
    assert!(
        error.contains("1 request(s) had no scripted reply"),
        "{error}"
    );
    assert!(error.contains("deploy with token [secret]"), "{error}");
    assert!(error.contains("tools=[bash,edit,glob"), "{error}");
    assert!(!error.contains("hunter2"));
}

#[tokio::test]
async fn finish_passes_when_everything_was_answered() {
    let mut slot = ModelSlot::default();
    slot.finish(&Redactor::for_scenario())
        .expect("an unused model passes");
    let model = slot.model().unwrap().clone();
    model.reply(Reply::text("x"));
    sse_data(post(&chat_url(&model), &opencode_requests()[0]).await).await;
    slot.finish(&Redactor::for_scenario())
        .expect("everything was answered");
}

#[tokio::test]
async fn http_errors_carry_status_and_body() {
    let slot = ModelSlot::default();
    let model = slot.model().unwrap();
    model.reply(Reply::http_error(
        429,
        json!({"error": {"message": "slow down"}}),
    ));
    let response = post(&chat_url(model), &opencode_requests()[0]).await;
    assert_eq!(response.status(), 429);
    assert_eq!(
        response.json::<Value>().await.unwrap(),
        json!({"error": {"message": "slow down"}})
    );
}

#[tokio::test]
async fn an_http_error_can_carry_retry_after_ms() {
    let slot = ModelSlot::default();
    let model = slot.model().unwrap();
    model
        .reply(
            Reply::http_error(502, json!({"error": {"message": "bad gateway"}}))
                .with_retry_after_ms(5),
        )
        .reply(Reply::http_error(500, "plain"));
    let first = post(&chat_url(model), &opencode_requests()[0]).await;
    assert_eq!(first.status(), 502);
    assert_eq!(first.headers()["retry-after-ms"], "5");
    let second = post(&chat_url(model), &opencode_requests()[0]).await;
    assert_eq!(second.status(), 500);
    assert!(second.headers().get("retry-after-ms").is_none());
}

#[tokio::test]
async fn a_reset_drops_the_connection_without_a_response() {
    let slot = ModelSlot::default();
    let model = slot.model().unwrap();
    model.reply(Reply::reset()).reply(Reply::text("after"));
    let error = reqwest::Client::new()
        .post(chat_url(model))
        .json(&opencode_requests()[0])
        .timeout(Duration::from_secs(30))
        .send()
        .await
        .expect_err("no response");
    assert!(!error.is_timeout() && error.status().is_none(), "{error:?}");
    // The server keeps serving other connections.
    let data = sse_data(post(&chat_url(model), &opencode_requests()[0]).await).await;
    assert_eq!(content(&chunks(&data)).concat(), "after");
}

#[tokio::test]
async fn an_error_mid_stream_sends_deltas_then_an_error_chunk_and_no_done() {
    let slot = ModelSlot::default();
    let model = slot.model().unwrap();
    model.reply(Reply::error_mid_stream("partial answer", "overloaded").in_deltas(2));
    let data = sse_data(post(&chat_url(model), &opencode_requests()[0]).await).await;
    assert!(!data.contains(&"[DONE]".to_string()));
    let chunks = chunks(&data);
    assert_eq!(content(&chunks), vec!["partial", " answer"]);
    assert_eq!(chunks.last().unwrap()["error"]["message"], "overloaded");
}

#[tokio::test]
async fn an_abort_mid_stream_breaks_the_body_after_some_deltas() {
    let slot = ModelSlot::default();
    let model = slot.model().unwrap();
    model.reply(Reply::abort_mid_stream("partial"));
    let response = post(&chat_url(model), &opencode_requests()[0]).await;
    assert_eq!(response.status(), 200);
    let mut stream = response.bytes_stream();
    let mut received = Vec::new();
    let mut failed = false;
    while let Some(item) = stream.next().await {
        match item {
            Ok(bytes) => received.extend_from_slice(&bytes),
            Err(_) => {
                failed = true;
                break;
            }
        }
    }
    assert!(failed, "the body ends with an error");
    let text = String::from_utf8(received).unwrap();
    assert!(text.contains("\"content\":\"partial\""), "{text}");
    assert!(!text.contains("[DONE]"));
}

#[tokio::test]
async fn a_stall_holds_after_the_role_chunk_until_released() {
    let slot = ModelSlot::default();
    let model = slot.model().unwrap();
    let (reply, stall) = Reply::text("released").stalled();
    model.reply(reply);
    let response = post(&chat_url(model), &opencode_requests()[0]).await;
    stall.reached().await.unwrap();
    let mut events = response.bytes_stream().eventsource();
    let first = events.next().await.unwrap().unwrap();
    assert!(first.data.contains("\"role\":\"assistant\""));
    let rest = tokio::spawn(async move {
        let mut data = Vec::new();
        while let Some(event) = events.next().await {
            data.push(event.unwrap().data);
        }
        data
    });
    // Held: the rest cannot complete before the release.
    tokio::task::yield_now().await;
    assert!(!rest.is_finished());
    stall.release();
    let data = rest.await.unwrap();
    assert_eq!(content(&chunks(&data)).concat(), "released");
    assert_eq!(data.last().map(String::as_str), Some("[DONE]"));
}

#[tokio::test]
async fn a_stalled_http_error_waits_before_its_status() {
    let slot = ModelSlot::default();
    let model = slot.model().unwrap();
    let (reply, stall) = Reply::http_error(503, "busy").stalled();
    model.reply(reply);
    let url = chat_url(model);
    let request = tokio::spawn(async move { post(&url, &opencode_requests()[0]).await.status() });
    stall.reached().await.unwrap();
    assert!(!request.is_finished());
    stall.release();
    assert_eq!(request.await.unwrap(), 503);
}

#[tokio::test]
async fn dropping_the_slot_ends_held_requests() {
    let slot = ModelSlot::default();
    let model = slot.model().unwrap().clone();
    let (reply, stall) = Reply::stall();
    model.reply(reply);
    let response = post(&chat_url(&model), &opencode_requests()[0]).await;
    stall.reached().await.unwrap();
    drop(slot);
    let mut stream = response.bytes_stream();
    let mut ended_with_error = false;
    while let Some(item) = tokio::time::timeout(Duration::from_secs(10), stream.next())
        .await
        .expect("the held body ends once the server stops")
    {
        ended_with_error |= item.is_err();
    }
    assert!(ended_with_error, "the held body is cut off, not completed");
}

#[tokio::test]
async fn slow_replies_pace_their_chunks() {
    let slot = ModelSlot::default();
    let model = slot.model().unwrap();
    model.reply(
        Reply::text("abcd")
            .in_deltas(4)
            .slow(Duration::from_millis(40)),
    );
    let started = Instant::now();
    let data = sse_data(post(&chat_url(model), &opencode_requests()[0]).await).await;
    // role, 4 deltas, finish, usage, [DONE]: 7 paced gaps.
    assert!(
        started.elapsed() >= Duration::from_millis(7 * 40),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(content(&chunks(&data)).concat(), "abcd");
}

#[tokio::test]
async fn wait_for_requests_returns_once_they_arrived() {
    let slot = ModelSlot::default();
    let model = slot.model().unwrap();
    model.reply(Reply::text("x"));
    let url = chat_url(model);
    let request =
        tokio::spawn(async move { sse_data(post(&url, &opencode_requests()[0]).await).await });
    model.wait_for_requests(1).await.unwrap();
    assert_eq!(model.requests().len(), 1);
    request.await.unwrap();
}

#[tokio::test]
async fn lists_its_model_for_openai_and_ollama_clients() {
    let slot = ModelSlot::default();
    let model = slot.model().unwrap();
    let client = reqwest::Client::new();
    let models: Value = client
        .get(format!("{}/models", model.base_url()))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(models["data"][0]["id"], "scripted-model");
    let tags: Value = client
        .get(format!("{}/api/tags", model.ollama_url()))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(tags["models"][0]["name"], "scripted-model");
    let version: Value = client
        .get(format!("{}/api/version", model.ollama_url()))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(version["version"].is_string());
}

#[tokio::test]
async fn speaks_ollama_chat_as_ndjson_and_as_one_object() {
    let slot = ModelSlot::default();
    let model = slot.model().unwrap();
    model
        .reply(Reply::text("hello there").in_deltas(2))
        .reply(Reply::tool_call("bash", json!({"command": "ls"})));
    let url = format!("{}/api/chat", model.ollama_url());
    let body = json!({"model": "scripted-model", "messages": [{"role": "user", "content": "hi"}],
                      "tools": [{"type": "function", "function": {"name": "bash"}}]});
    let response = post(&url, &body).await;
    assert_eq!(response.headers()["content-type"], "application/x-ndjson");
    let text = response.text().await.unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let said: String = lines
        .iter()
        .filter_map(|l| l["message"]["content"].as_str())
        .collect();
    assert_eq!(said, "hello there");
    assert_eq!(lines.last().unwrap()["done"], true);
    assert_eq!(lines.last().unwrap()["done_reason"], "stop");
    assert!(lines[..lines.len() - 1].iter().all(|l| l["done"] == false));

    let mut once = body.clone();
    once["stream"] = json!(false);
    let answer: Value = post(&url, &once).await.json().await.unwrap();
    assert_eq!(answer["done"], true);
    assert_eq!(
        answer["message"]["tool_calls"][0]["function"],
        json!({"name": "bash", "arguments": {"command": "ls"}})
    );
    let requests = model.requests();
    assert_eq!(requests[0].api, Api::Ollama);
    assert!(requests[0].stream && !requests[1].stream);
    assert_eq!(requests[0].tools_offered, vec!["bash"]);
}

#[tokio::test]
async fn the_opencode_config_points_at_the_running_server() {
    let mut slot = ModelSlot::default();
    let config = slot.opencode_config(json!({"bash": "ask"}));
    let model = slot.model().unwrap();
    assert_eq!(
        config["provider"]["scripted"]["options"]["baseURL"],
        model.base_url()
    );
    assert_eq!(
        config["provider"]["scripted"]["npm"],
        "@ai-sdk/openai-compatible"
    );
    assert_eq!(config["enabled_providers"], json!(["scripted"]));
    assert_eq!(config["model"], "scripted/scripted-model");
    assert_eq!(config["permission"], json!({"bash": "ask"}));
    let entry = &config["provider"]["scripted"]["models"]["scripted-model"];
    assert_eq!(entry["tool_call"], true);
    assert!(entry["limit"]["output"].as_u64().unwrap() > 0);
    assert!(model.base_url().starts_with("http://127.0.0.1:"));
}
