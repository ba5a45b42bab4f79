//! Record → replay round trips with a scripted model as the "real" upstream: every kind of
//! answer comes back from the cassette as it was relayed.

use serde_json::{Value, json};

use super::command::display_path;
use super::format::{Cassette, RecordedResponse, StreamEnd};
use super::test_support::*;
use crate::model::{Answer, Reply};

/// The requests of the OpenAI round trip, for a scenario whose workspace is `ws`.
fn openai_cases(ws: &str) -> Vec<Value> {
    let mut structured = chat(ws, "case structured", &["bash", "StructuredOutput"], true);
    structured["tool_choice"] = json!("required");
    vec![
        chat(ws, "case text", &["bash", "read"], true),
        chat(ws, "case tool", &["bash", "read"], true),
        structured,
        chat(ws, "case error chunk", &["bash"], true),
        chat(ws, "case 500", &["bash"], true),
        chat(ws, "case reset", &["bash"], true),
        chat(ws, "case abort", &["bash"], true),
        chat(ws, "case not streamed", &[], false),
        chat(
            ws,
            &format!("case path: edit {ws}/out.txt"),
            &["write"],
            true,
        ),
    ]
}

#[tokio::test]
async fn an_openai_recording_replays_every_answer_as_it_was_relayed() {
    let (_upstream_slot, upstream) = upstream();
    let dir = tempfile::tempdir().unwrap();
    let path = cassette_path(dir.path());
    let config = user_config(&upstream.base_url(), "@ai-sdk/openai-compatible");
    let (mut recording, relay_config) = Side::recording(&path, &config);
    // The 500 below is recorded as it came, not retried.
    recording.slot.record_upstream_errors();
    assert_no_canary(&relay_config.to_string());
    let ws = recording.workspace();
    upstream
        .reply(Reply::text("Hello from the real model").in_deltas(4))
        .reply(Reply::tool_call("bash", json!({"command": "ls -la"})))
        .reply(Reply::structured(json!({"answer": 42})))
        .reply(Reply::error_mid_stream("partial ", "the model crashed"))
        .reply(
            Reply::http_error(500, json!({"error": {"message": "overloaded"}}))
                .with_retry_after_ms(7),
        )
        .reply(Reply::reset())
        .reply(Reply::abort_mid_stream("cut off"))
        .reply(Reply::text("a plain answer"))
        .reply(Reply::text(format!("wrote {ws}/out.txt, key {CANARY_KEY}")).in_deltas(5));
    let url = chat_url(&relay_config, "real");
    let mut relayed = Vec::new();
    for body in openai_cases(&ws) {
        relayed.push(send(&url, &body).await);
    }
    recording.finish(true).unwrap();
    assert_eq!(
        *recording.progress.borrow(),
        [format!("cassette written: {}", display_path(&path))]
    );
    let text = cassette_text(&path);
    assert!(text.ends_with("}\n"), "pretty JSON with a trailing newline");
    let cassette: Cassette = serde_json::from_str(&text).unwrap();
    assert_eq!(cassette.scenario, SCENARIO);
    assert_eq!(cassette.recorded.model, "scripted-model");
    assert_eq!(
        cassette.recorded.model_entry,
        json!({"name": "Scripted", "tool_call": true})
    );
    let kinds: Vec<String> = cassette
        .interactions
        .iter()
        .map(|i| match &i.response {
            RecordedResponse::Stream { end, .. } => format!("stream {end:?}"),
            RecordedResponse::Body { status, .. } => format!("body {status}"),
            RecordedResponse::Dropped { .. } => "dropped".to_owned(),
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "stream Complete",
            "stream Complete",
            "stream Complete",
            "stream Complete",
            "body 500",
            "dropped",
            "stream Dropped",
            "body 200",
            "stream Complete"
        ]
    );
    let last = &cassette.interactions[8].request;
    assert_eq!(
        last.last_user_text.as_deref(),
        Some("case path: edit [workspace]/out.txt")
    );
    // The path and the key were split over deltas: redacted as the text they form.
    let RecordedResponse::Stream { chunks, .. } = &cassette.interactions[8].response else {
        panic!("a stream");
    };
    let stored: Vec<&str> = chunks
        .iter()
        .filter_map(|c| c.data.pointer("/choices/0/delta/content")?.as_str())
        .collect();
    assert_eq!(stored.concat(), "wrote [workspace]/out.txt, key [secret]");
    assert!(stored.len() >= 4 && !text.contains("/tmp/"), "{stored:?}");

    // Replayed in reverse: requests are matched by their content, not by their order.
    let (mut replaying, replay_config) = Side::replaying(&path);
    let ws2 = replaying.workspace();
    let url = chat_url(&replay_config, "cassette");
    let mut replayed = Vec::new();
    for body in openai_cases(&ws2).iter().rev() {
        replayed.push(send(&url, body).await);
    }
    replayed.reverse();
    replaying.finish(true).unwrap();
    let answers: Vec<Answer> = replaying
        .slot
        .model()
        .unwrap()
        .requests()
        .into_iter()
        .map(|r| r.answer)
        .collect();
    let expected: Vec<Answer> = (0..9)
        .rev()
        .map(|interaction| Answer::Cassette { interaction })
        .collect();
    assert_eq!(answers, expected);
    assert!(
        recording
            .slot
            .model()
            .unwrap()
            .requests()
            .iter()
            .all(|r| r.answer == Answer::Relayed)
    );

    // What differs: the tool-call ids (numbered placeholders), the workspace, the secret.
    let as_replayed = |received: &Result<Received, NoResponse>| -> Result<Received, NoResponse> {
        let mut received = received.clone()?;
        let body = String::from_utf8(received.body.clone()).unwrap();
        received.body = body
            .replace("call_scripted_1_0", "[call-1]")
            .replace("call_scripted_2_0", "[call-2]")
            .into_bytes();
        Ok(received)
    };
    for (index, (relayed, replayed)) in relayed.iter().zip(&replayed).enumerate().take(8) {
        match (relayed, replayed) {
            (Err(_), Err(_)) => {}
            _ => assert_eq!(&as_replayed(relayed), replayed, "case {index}"),
        }
    }
    // The split path and key come back whole, the path as this scenario's.
    let content = |received: &Result<Received, NoResponse>| -> String {
        let events = received.as_ref().unwrap().events();
        events
            .iter()
            .filter_map(|e| {
                e.pointer("/choices/0/delta/content")?
                    .as_str()
                    .map(str::to_owned)
            })
            .collect()
    };
    assert_eq!(
        content(&relayed[8]),
        format!("wrote {ws}/out.txt, key {CANARY_KEY}")
    );
    assert_eq!(
        content(&replayed[8]),
        format!("wrote {ws2}/out.txt, key [secret]")
    );
    let text = relayed[0].as_ref().unwrap();
    assert_eq!(text.content_type, "text/event-stream");
    let deltas = text
        .events()
        .iter()
        .filter(|e| e.pointer("/choices/0/delta/content").is_some())
        .count();
    assert_eq!(deltas, 4, "text in deltas");
    assert_eq!(
        relayed[0], replayed[0],
        "a text answer replays byte for byte"
    );
    let error = relayed[4].as_ref().unwrap();
    assert_eq!(
        (error.status, error.retry_after_ms.as_deref()),
        (500, Some("7"))
    );
    assert!(relayed[5].is_err(), "a reset is relayed as a reset");
    assert!(
        !relayed[6].as_ref().unwrap().complete,
        "a broken body is relayed broken"
    );
    let events = replayed[1].as_ref().unwrap().events();
    assert!(
        events
            .iter()
            .any(|e| e.pointer("/choices/0/delta/tool_calls/0/id") == Some(&json!("[call-1]")))
    );
    let structured = replayed[2].as_ref().unwrap().events();
    assert!(structured.iter().any(|e| {
        e.pointer("/choices/0/delta/tool_calls/0/function/name") == Some(&json!("StructuredOutput"))
    }));
    assert!(replayed[3].as_ref().unwrap().complete);
    let chunks = String::from_utf8_lossy(&replayed[3].as_ref().unwrap().body).into_owned();
    assert!(
        chunks.contains("the model crashed") && !chunks.contains("[DONE]"),
        "{chunks}"
    );
}

/// The Ollama-native requests, for a scenario whose workspace is `ws`.
fn ollama_cases(ws: &str) -> Vec<Value> {
    let native = |text: &str, tools: &[&str], stream: Option<bool>| {
        let mut body = chat(ws, text, tools, true);
        let object = body.as_object_mut().unwrap();
        object.remove("stream_options");
        object.remove("tool_choice");
        match stream {
            Some(stream) => object.insert("stream".into(), json!(stream)),
            // Ollama streams unless told not to.
            None => object.remove("stream"),
        };
        body
    };
    vec![
        native("ollama text", &["bash"], None),
        native("ollama tool", &["bash"], Some(true)),
        native("ollama not streamed", &[], Some(false)),
    ]
}

#[tokio::test]
async fn an_ollama_native_recording_replays_line_for_line() {
    let (_upstream_slot, upstream) = upstream();
    let dir = tempfile::tempdir().unwrap();
    let path = cassette_path(dir.path());
    let base = format!("{}/api", upstream.ollama_url());
    let (mut recording, relay_config) =
        Side::recording(&path, &user_config(&base, "ollama-ai-provider-v2"));
    assert!(
        relay_config["provider"]["real"]["options"]["baseURL"]
            .as_str()
            .unwrap()
            .ends_with("/api")
    );
    upstream
        .reply(Reply::text("Hi from Ollama").in_deltas(3))
        .reply(Reply::tool_call("bash", json!({"command": "pwd"})))
        .reply(Reply::text("whole"));
    let url = chat_url(&relay_config, "real");
    let mut relayed = Vec::new();
    for body in ollama_cases(&recording.workspace()) {
        relayed.push(send(&url, &body).await.unwrap());
    }
    recording.finish(true).unwrap();
    let cassette: Cassette = serde_json::from_str(&cassette_text(&path)).unwrap();
    assert_eq!(cassette.recorded.npm, "ollama-ai-provider-v2");
    // The provenance: who recorded it (the test side's OpenCode), when, and the verdict; the
    // model as configured and as the upstream named itself in its lines.
    let provenance = cassette
        .provenance
        .as_ref()
        .expect("a recording has provenance");
    assert_eq!(provenance.opencode.as_deref(), Some("1.0.0-test"));
    assert_eq!(provenance.model, "scripted-model");
    assert_eq!(provenance.upstream_models, ["scripted-model"]);
    assert_eq!(provenance.date, super::provenance::today());
    assert_eq!(provenance.harness, env!("CARGO_PKG_VERSION"));
    assert_eq!(provenance.verdict, super::format::Verdict::Passed);
    assert!(matches!(
        &cassette.interactions[0].response,
        RecordedResponse::Stream { content_type, chunks, end: StreamEnd::Complete, .. }
            if content_type == "application/x-ndjson" && chunks.len() == 4
    ));

    let (replaying, replay_config) = Side::replaying(&path);
    assert_eq!(
        replay_config["provider"]["cassette"]["npm"],
        "ollama-ai-provider-v2"
    );
    let url = chat_url(&replay_config, "cassette");
    assert!(url.ends_with("/api/chat"), "{url}");
    let replaying_ws = replaying.workspace();
    for (index, body) in ollama_cases(&replaying_ws).iter().enumerate() {
        let replayed = send(&url, body).await.unwrap();
        assert_eq!(replayed, relayed[index], "case {index}");
    }
    let lines = relayed[0].lines();
    let text: String = lines
        .iter()
        .filter_map(|l| l.pointer("/message/content").and_then(Value::as_str))
        .collect();
    assert_eq!(text, "Hi from Ollama");
    assert_eq!(lines.last().unwrap()["done"], true);
    assert!(
        relayed[1]
            .lines()
            .iter()
            .any(|l| l.pointer("/message/tool_calls/0/function/name") == Some(&json!("bash")))
    );
    assert_eq!(relayed[2].content_type, "application/json");
}
