//! What real OpenAI and Ollama clients expect of the scripted model beyond a happy chat: each
//! API's own error shape, a useful answer to a wrong URL, the metadata routes clients call,
//! and the `content` of a reply that is only tool calls.

use std::time::Duration;

use harness_runtime::model::{Reply, ScriptedModel};
use harness_runtime::testing::ModelSlot;
use serde_json::{Value, json};

fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(Duration::from_secs(30))
        .build()
        .expect("a plain client builds")
}

/// Sends `method path` (with `body` as JSON when given); the status and the body as JSON
/// (`null` when the body is empty or not JSON).
async fn call(
    model: &ScriptedModel,
    method: reqwest::Method,
    path: &str,
    body: Option<Value>,
) -> (u16, Value) {
    let mut request = client().request(method, format!("{}{path}", model.ollama_url()));
    if let Some(body) = body {
        request = request.json(&body);
    }
    let response = request.send().await.expect("the scripted model answers");
    let status = response.status().as_u16();
    let bytes = response.bytes().await.expect("a whole body");
    (
        status,
        serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    )
}

async fn post(model: &ScriptedModel, path: &str, body: Value) -> (u16, Value) {
    call(model, reqwest::Method::POST, path, Some(body)).await
}

async fn get(model: &ScriptedModel, path: &str) -> (u16, Value) {
    call(model, reqwest::Method::GET, path, None).await
}

/// A chat body offering `tools`, not streamed (so the answer is one JSON object).
fn chat(tools: &[&str]) -> Value {
    let tools: Vec<Value> = tools
        .iter()
        .map(|name| json!({"type": "function", "function": {"name": name, "parameters": {}}}))
        .collect();
    json!({"model": "scripted-model", "stream": false, "tools": tools,
           "messages": [{"role": "user", "content": "hi"}]})
}

/// Ollama's error shape: `{"error": "<message>"}`, nothing else.
fn ollama_error(body: &Value) -> &str {
    let object = body.as_object().expect("an error object");
    assert_eq!(object.len(), 1, "only `error`: {body}");
    body["error"]
        .as_str()
        .unwrap_or_else(|| panic!("`error` is a string: {body}"))
}

/// OpenAI's error shape: `{"error": {"message", "type", "param", "code"}}`.
fn openai_error(body: &Value) -> &str {
    let error = body["error"]
        .as_object()
        .unwrap_or_else(|| panic!("`error` is an object: {body}"));
    for field in ["message", "type", "param", "code"] {
        assert!(error.contains_key(field), "`error.{field}` in {body}");
    }
    assert!(error["type"].is_string(), "{body}");
    error["message"].as_str().expect("a message")
}

#[tokio::test]
async fn a_miss_on_the_ollama_api_answers_in_ollamas_error_shape() {
    let slot = ModelSlot::default();
    let model = slot.model().unwrap();
    let (status, body) = post(model, "/api/chat", chat(&["bash"])).await;
    assert_eq!(status, 400);
    assert!(ollama_error(&body).contains("no reply queued"), "{body}");
    let mut streamed = chat(&["bash"]);
    streamed["stream"] = json!(true);
    let (status, body) = post(model, "/api/chat", streamed).await;
    assert_eq!(status, 400);
    assert!(ollama_error(&body).contains("no reply queued"), "{body}");
}

#[tokio::test]
async fn a_miss_on_the_openai_api_keeps_openais_error_shape() {
    let slot = ModelSlot::default();
    let model = slot.model().unwrap();
    let (status, body) = post(model, "/v1/chat/completions", chat(&["bash"])).await;
    assert_eq!(status, 400);
    assert!(openai_error(&body).contains("no reply queued"), "{body}");
}

#[tokio::test]
async fn a_failure_answered_whole_on_the_ollama_api_is_an_ollama_error() {
    let slot = ModelSlot::default();
    let model = slot.model().unwrap();
    model.reply(Reply::error_mid_stream("partial", "overloaded"));
    let (status, body) = post(model, "/api/chat", chat(&["bash"])).await;
    assert_eq!(status, 500);
    assert_eq!(ollama_error(&body), "overloaded");
    model.reply(Reply::error_mid_stream("partial", "overloaded"));
    let (status, body) = post(model, "/v1/chat/completions", chat(&["bash"])).await;
    assert_eq!(status, 500);
    assert_eq!(openai_error(&body), "overloaded");
}

#[tokio::test]
async fn an_unknown_route_names_itself_and_what_is_served_in_the_apis_shape() {
    let slot = ModelSlot::default();
    let model = slot.model().unwrap();
    let (status, body) = post(model, "/api/generate", json!({"model": "scripted-model"})).await;
    assert_eq!(status, 404);
    let message = ollama_error(&body);
    for expected in ["POST /api/generate", "POST /api/chat", "GET /api/tags"] {
        assert!(message.contains(expected), "{expected:?} in {message}");
    }
    let (status, body) = post(model, "/chat/completions", chat(&[])).await;
    assert_eq!(status, 404);
    let message = openai_error(&body);
    for expected in ["POST /chat/completions", "POST /v1/chat/completions", "/v1"] {
        assert!(message.contains(expected), "{expected:?} in {message}");
    }
    assert_eq!(body["error"]["type"], "invalid_request_error");
    // A served path with the wrong method says so too, instead of an empty 405.
    let (status, body) = get(model, "/v1/chat/completions").await;
    assert_eq!(status, 405);
    assert!(
        openai_error(&body).contains("GET /v1/chat/completions"),
        "{body}"
    );
    let (status, body) = get(model, "/api/chat").await;
    assert_eq!(status, 405);
    assert!(ollama_error(&body).contains("GET /api/chat"), "{body}");
    // Of Gemini's actions on a model's path, only the two chat ones are served.
    let path = "/v1beta/models/gemini-2.5-flash:countTokens";
    let (status, body) = post(model, path, json!({"contents": []})).await;
    assert_eq!(status, 404);
    assert!(body.to_string().contains(&format!("POST {path}")), "{body}");
    assert!(
        model.requests().is_empty(),
        "none of these is a chat request"
    );
}

#[tokio::test]
async fn v1_models_id_answers_the_scripted_model_and_404s_others() {
    let slot = ModelSlot::default();
    let model = slot.model().unwrap();
    let (status, body) = get(model, "/v1/models/scripted-model").await;
    assert_eq!(status, 200);
    assert_eq!(
        body,
        json!({"id": "scripted-model", "object": "model", "created": 0, "owned_by": "scripted"})
    );
    let (status, body) = get(model, "/v1/models/gpt-4o").await;
    assert_eq!(status, 404);
    assert!(openai_error(&body).contains("gpt-4o"), "{body}");
    assert_eq!(body["error"]["code"], "model_not_found");
}

#[tokio::test]
async fn api_show_describes_the_scripted_model_and_404s_others() {
    let slot = ModelSlot::default();
    let model = slot.model().unwrap();
    for name in ["scripted-model", "scripted-model:latest"] {
        let (status, body) = post(model, "/api/show", json!({"model": name})).await;
        assert_eq!(status, 200, "{name}: {body}");
        assert_eq!(body["details"]["format"], "gguf", "{body}");
        assert!(body["modelfile"].is_string() && body["template"].is_string());
        assert!(body["model_info"].is_object(), "{body}");
        let capabilities = body["capabilities"].as_array().expect("capabilities");
        assert!(capabilities.contains(&json!("tools")), "{body}");
    }
    // Older clients send `name`.
    let (status, _) = post(model, "/api/show", json!({"name": "scripted-model"})).await;
    assert_eq!(status, 200);
    let (status, body) = post(model, "/api/show", json!({"model": "llama3"})).await;
    assert_eq!(status, 404);
    assert!(ollama_error(&body).contains("'llama3' not found"), "{body}");
    let (status, body) = post(model, "/api/show", json!({})).await;
    assert_eq!(status, 400);
    assert!(ollama_error(&body).contains("model is required"), "{body}");
}

#[tokio::test]
async fn api_ps_lists_the_scripted_model_as_loaded() {
    let slot = ModelSlot::default();
    let model = slot.model().unwrap();
    let (status, body) = get(model, "/api/ps").await;
    assert_eq!(status, 200);
    let loaded = &body["models"][0];
    assert_eq!(loaded["name"], "scripted-model");
    assert_eq!(loaded["model"], "scripted-model");
    assert!(loaded["expires_at"].is_string() && loaded["size_vram"].is_u64());
    assert_eq!(loaded["details"]["format"], "gguf");
}

#[tokio::test]
async fn a_reply_of_only_tool_calls_has_null_content_on_openai_and_empty_on_ollama() {
    let slot = ModelSlot::default();
    let model = slot.model().unwrap();
    model
        .reply(Reply::tool_call("bash", json!({"command": "ls"})))
        .reply(Reply::tool_call("bash", json!({"command": "ls"})))
        .reply(Reply::text(""));
    let (status, body) = post(model, "/v1/chat/completions", chat(&["bash"])).await;
    assert_eq!(status, 200);
    let message = &body["choices"][0]["message"];
    assert!(message["content"].is_null(), "{body}");
    assert!(
        message.as_object().unwrap().contains_key("content"),
        "OpenAI sends `content: null`, not no content"
    );
    assert_eq!(message["tool_calls"][0]["function"]["name"], "bash");
    let (status, body) = post(model, "/api/chat", chat(&["bash"])).await;
    assert_eq!(status, 200);
    assert_eq!(
        body["message"]["content"], "",
        "Ollama sends an empty string"
    );
    // An empty text answer is still a (empty) string on OpenAI.
    let (_, body) = post(model, "/v1/chat/completions", chat(&["bash"])).await;
    assert_eq!(body["choices"][0]["message"]["content"], "");
}
