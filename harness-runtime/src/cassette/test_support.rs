//! What the cassette tests share: a scripted model as the "real" upstream, a recording and a
//! replaying slot, a reqwest client that keeps every byte and every break.

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use eventsource_stream::Eventsource;
use futures::StreamExt;
use serde_json::{Value, json};

use super::error::CassetteError;
use super::format::Verdict;
use super::scenario::{RunEnd, finish_scenario, record_config, replay_config};
use crate::model::{ModelPlan, ModelSlot, ScriptedModel};
use crate::redact::Redactor;

/// The upstream's API key: it must reach the upstream and nothing else.
pub(super) const CANARY_KEY: &str = "sk-canary-7f3a9c1e55";
/// The upstream's extra header value: the same.
pub(super) const CANARY_HEADER: &str = "hdr-canary-52b8d0aa";
/// The scenario every test records and replays.
pub(super) const SCENARIO: &str = "t::cassette";

/// A scripted model standing in for the user's real provider.
pub(super) fn upstream() -> (ModelSlot, ScriptedModel) {
    let slot = ModelSlot::default();
    let model = slot.model().expect("the upstream starts").clone();
    (slot, model)
}

/// The user's config naming `base_url` as provider `real` (package `npm`), with the canary
/// key and header.
pub(super) fn user_config(base_url: &str, npm: &str) -> Value {
    json!({
        "model": "real/scripted-model",
        "provider": {"real": {
            "npm": npm,
            "name": "Real model",
            "options": {"baseURL": base_url, "apiKey": CANARY_KEY,
                        "headers": {"X-Canary": CANARY_HEADER}},
            "models": {"scripted-model": {"name": "Scripted", "tool_call": true,
                                          "options": {"num_ctx": 8192}}},
        }},
        "permission": {"bash": "allow"},
        "autoupdate": false,
        "share": "disabled",
    })
}

/// One side of a round trip: a scenario with its own workspace path, redactor and slot.
pub(super) struct Side {
    pub(super) workspace: tempfile::TempDir,
    pub(super) redactor: Arc<Redactor>,
    pub(super) slot: ModelSlot,
    /// Every progress line.
    pub(super) progress: RefCell<Vec<String>>,
}

impl Side {
    fn new(plan: ModelPlan) -> Self {
        let workspace = tempfile::tempdir().expect("a temp dir");
        let redactor = Arc::new(Redactor::default());
        redactor.add_path(workspace.path(), "[workspace]");
        let mut slot = ModelSlot::default();
        slot.set_plan(plan, SCENARIO);
        Self {
            workspace,
            redactor,
            slot,
            progress: RefCell::default(),
        }
    }

    /// A recording side writing to `path`, relaying to the provider of `config`; also returns
    /// the config OpenCode would get.
    pub(super) fn recording(path: &Path, config: &Value) -> (Self, Value) {
        let side = Self::new(ModelPlan::Record {
            path: path.to_path_buf(),
        });
        let config =
            record_config(&side.slot, config.clone(), &side.redactor).expect("the relay starts");
        (side, config)
    }

    /// [`Side::recording`] with the relay's environment given (`SSL_CERT_FILE`).
    pub(super) fn recording_with(
        path: &Path,
        config: &Value,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> (Self, Value) {
        let side = Self::new(ModelPlan::Record {
            path: path.to_path_buf(),
        });
        let config =
            super::scenario::record_config_with(&side.slot, config.clone(), &side.redactor, env)
                .expect("the relay starts");
        (side, config)
    }

    /// [`Side::recording`] whose slot was given `env` for its relay, as
    /// `testing::live_with_cassette_env` gives one: `record_config` reads it, not the process's.
    pub(super) fn recording_with_slot_env(
        path: &Path,
        config: &Value,
        env: crate::model::slot::RelayEnv,
    ) -> (Self, Value) {
        let mut side = Self::new(ModelPlan::Record {
            path: path.to_path_buf(),
        });
        side.slot.set_relay_env(env);
        let config =
            record_config(&side.slot, config.clone(), &side.redactor).expect("the relay starts");
        (side, config)
    }

    /// A replaying side serving `path`; also returns the config OpenCode would get.
    pub(super) fn replaying(path: &Path) -> (Self, Value) {
        let side = Self::new(ModelPlan::Replay {
            path: path.to_path_buf(),
        });
        let config = replay_config(&side.slot, json!({"bash": "allow"}), &side.redactor)
            .expect("the cassette loads");
        (side, config)
    }

    /// A replaying side whose cassette does not load: the error.
    pub(super) fn replay_error(path: &Path) -> String {
        let side = Self::new(ModelPlan::Replay {
            path: path.to_path_buf(),
        });
        replay_config(&side.slot, json!({}), &side.redactor)
            .expect_err("the cassette must not load")
            .to_string()
    }

    /// The workspace path as text.
    pub(super) fn workspace(&self) -> String {
        self.workspace.path().display().to_string()
    }

    /// Runs the scenario's end for its model.
    pub(super) fn finish(&mut self, passed: bool) -> Result<(), CassetteError> {
        let progress = &self.progress;
        let verdict = if passed {
            Verdict::Passed
        } else {
            Verdict::Failed
        };
        let end = RunEnd {
            verdict,
            opencode: Some("1.0.0-test".into()),
        };
        finish_scenario(&mut self.slot, &self.redactor, end, &|line| {
            progress.borrow_mut().push(line.to_owned())
        })
        .map(|_| ())
    }
}

/// The chat URL of the provider `provider` in an OpenCode `config`.
pub(super) fn chat_url(config: &Value, provider: &str) -> String {
    let base = config["provider"][provider]["options"]["baseURL"]
        .as_str()
        .expect("the config names a base URL");
    if base.ends_with("/api") {
        format!("{base}/chat")
    } else {
        format!("{base}/chat/completions")
    }
}

/// A chat request body as OpenCode sends it: a system prompt holding the date and the
/// workspace, then the user's `text`.
pub(super) fn chat(workspace: &str, text: &str, tools: &[&str], stream: bool) -> Value {
    let tools: Vec<Value> = tools
        .iter()
        .map(|name| json!({"type": "function", "function": {"name": name, "parameters": {}}}))
        .collect();
    json!({
        "model": "scripted-model",
        "stream": stream,
        "stream_options": {"include_usage": true},
        "tool_choice": "auto",
        "tools": tools,
        "messages": [
            // Differs between the two sides (the workspace): not part of the matching key.
            {"role": "system", "content": format!("You are opencode. cwd {workspace}")},
            {"role": "user", "content": text},
        ],
    })
}

/// What a client got: the head, every body byte, and whether the body ended cleanly.
#[derive(Clone, PartialEq)]
pub(super) struct Received {
    pub(super) status: u16,
    pub(super) content_type: String,
    pub(super) retry_after_ms: Option<String>,
    pub(super) body: Vec<u8>,
    pub(super) complete: bool,
}

impl std::fmt::Debug for Received {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Received")
            .field("status", &self.status)
            .field("content_type", &self.content_type)
            .field("retry_after_ms", &self.retry_after_ms)
            .field("body", &String::from_utf8_lossy(&self.body))
            .field("complete", &self.complete)
            .finish()
    }
}

impl Received {
    /// The body's SSE `data` payloads, JSON ones parsed.
    pub(super) fn events(&self) -> Vec<Value> {
        let body = bytes::Bytes::from(self.body.clone());
        let events: Vec<_> = futures::executor::block_on(
            futures::stream::iter([Ok::<_, std::convert::Infallible>(body)])
                .eventsource()
                .collect::<Vec<_>>(),
        );
        events
            .into_iter()
            .map(|e| {
                let data = e.expect("well-formed SSE").data;
                serde_json::from_str(&data).unwrap_or(Value::String(data))
            })
            .collect()
    }

    /// The body's NDJSON lines, parsed.
    pub(super) fn lines(&self) -> Vec<Value> {
        String::from_utf8_lossy(&self.body)
            .lines()
            .map(|l| serde_json::from_str(l).expect("an NDJSON line"))
            .collect()
    }
}

/// No response came: the connection was reset or refused.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("no response came: {0}; the server reset or refused the connection")]
pub(super) struct NoResponse(String);

/// Sends `body` to `url`.
pub(super) async fn send(url: &str, body: &Value) -> Result<Received, NoResponse> {
    let response = reqwest::Client::new()
        .post(url)
        .header("authorization", "Bearer cassette-relay")
        .json(body)
        .timeout(Duration::from_secs(10))
        .send()
        .await
        .map_err(|e| NoResponse(format!("{e:?}")))?;
    let header = |name: &str| {
        response
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    let (status, content_type, retry_after_ms) = (
        response.status().as_u16(),
        header("content-type").unwrap_or_default(),
        header("retry-after-ms"),
    );
    let mut stream = response.bytes_stream();
    let (mut body, mut complete) = (Vec::new(), true);
    while let Some(chunk) = stream.next().await {
        match chunk {
            Ok(bytes) => body.extend_from_slice(&bytes),
            Err(_) => {
                complete = false;
                break;
            }
        }
    }
    Ok(Received {
        status,
        content_type,
        retry_after_ms,
        body,
        complete,
    })
}

/// The ceiling of every wait of these tests on a signal.
pub(super) fn ceiling() -> Duration {
    crate::settings::scaled(Duration::from_secs(10))
}

/// A streamed answer being read; dropped, its client goes away mid-stream.
pub(super) struct Reading {
    stream: futures::stream::BoxStream<'static, reqwest::Result<bytes::Bytes>>,
    /// The bytes read so far.
    pub(super) bytes: Vec<u8>,
}

impl Reading {
    /// Posts `body` to `url` and starts reading the answer.
    pub(super) async fn start(url: &str, body: &Value) -> Self {
        let sent = reqwest::Client::new().post(url).json(body).send();
        let response = tokio::time::timeout(ceiling(), sent)
            .await
            .unwrap_or_else(|_| panic!("no response head from {url} within {:?}", ceiling()))
            .expect("a response");
        Self {
            stream: response.bytes_stream().boxed(),
            bytes: Vec::new(),
        }
    }

    /// Reads until the bytes so far are `enough`; panics naming `what` and the bytes read when
    /// the stream ends or breaks first, or the ceiling passes.
    pub(super) async fn until(&mut self, what: &str, enough: impl Fn(&[u8]) -> bool) {
        let read = async {
            while !enough(&self.bytes) {
                match self.stream.next().await {
                    Some(Ok(chunk)) => self.bytes.extend_from_slice(&chunk),
                    Some(Err(error)) => return Err(format!("the stream broke: {error}")),
                    None => return Err("the stream ended".to_owned()),
                }
            }
            Ok(())
        };
        let outcome = match tokio::time::timeout(ceiling(), read).await {
            Ok(outcome) => outcome,
            Err(_) => Err(format!("nothing more came within {:?}", ceiling())),
        };
        if let Err(why) = outcome {
            panic!(
                "waiting for {what}: {why}; read so far: {:?}",
                String::from_utf8_lossy(&self.bytes)
            );
        }
    }

    /// Whether the stream stays open, sending nothing more, for `quiet`. What a held stream
    /// shows is the absence of an end, so this can only observe it for a while: under load it
    /// may miss an end that comes later, never report one that did not come.
    pub(super) async fn stays_open(&mut self, quiet: Duration) -> bool {
        tokio::time::timeout(quiet, self.stream.next())
            .await
            .is_err()
    }
}

/// `cassettes/t__cassette.json` below `dir`.
pub(super) fn cassette_path(dir: &Path) -> PathBuf {
    dir.join("cassettes").join("t__cassette.json")
}

/// The cassette file's text, checked free of every canary.
pub(super) fn cassette_text(path: &Path) -> String {
    let text = std::fs::read_to_string(path).expect("the cassette was written");
    assert_no_canary(&text);
    text
}

/// Fails when `text` holds a canary secret.
pub(super) fn assert_no_canary(text: &str) {
    for canary in [CANARY_KEY, CANARY_HEADER, "canary"] {
        assert!(!text.contains(canary), "{canary} leaked into:\n{text}");
    }
}
