//! The recorder an interaction talks through: raw HTTP to the agent (through its forwarder,
//! which names the scenario's workspace on a shared server), each call and answer written to
//! the transcript redacted, and the agent's event stream read from the start.

#![expect(
    dead_code,
    reason = "the interaction groups use the rest as they are written"
)]
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use eventsource_stream::Eventsource;
use futures::StreamExt;
use harness_runtime::fixture::{Fault, FixtureControl};
use harness_runtime::model::{Matcher, Reply, Rule, ScriptedModel};
use harness_runtime::opencode::Agent;
use harness_runtime::redact::Redactor;
use harness_runtime::{AgentKind, Live};
use serde_json::Value;
use tokio::sync::mpsc;

use crate::transcript::{Step, Transcript};

/// How long a call or an awaited event may take (scaled by `LIVE_TIMEOUT_SCALE`).
const CEILING: Duration = Duration::from_secs(30);

/// What a call got, unredacted: the interaction reads ids and fields from it.
#[derive(Debug)]
pub(crate) struct Answer {
    pub(crate) status: u16,
    pub(crate) json: Value,
    /// Not recorded: an interaction notes the ones it shows (e.g. a page's cursor headers).
    pub(crate) headers: reqwest::header::HeaderMap,
}

impl Answer {
    /// The string at `pointer` (e.g. `/id`), or an error naming what was there.
    pub(crate) fn str(&self, pointer: &str) -> anyhow::Result<String> {
        self.json
            .pointer(pointer)
            .and_then(Value::as_str)
            .map(str::to_owned)
            .with_context(|| format!("no string at {pointer} in {}", self.json))
    }
}

/// The session an event is about: `sessionID`, or the session of its `info` or `part`.
fn session_of(properties: &Value) -> Option<String> {
    [
        &properties["sessionID"],
        &properties["part"]["sessionID"],
        &properties["info"]["sessionID"],
    ]
    .into_iter()
    .find_map(Value::as_str)
    .or_else(|| {
        properties["info"]["id"]
            .as_str()
            .filter(|id| id.starts_with("ses_"))
    })
    .map(str::to_owned)
}

/// One interaction's connection to its agent, and its transcript so far.
pub(crate) struct Talk {
    http: reqwest::Client,
    base: String,
    redactor: Arc<Redactor>,
    model: ScriptedModel,
    version: String,
    /// Each event's type and the session it is about.
    events: mpsc::UnboundedReceiver<(String, Option<String>)>,
    reader: tokio::task::JoinHandle<()>,
    transcript: Transcript,
    /// The fixture agent's faults; `None` on real OpenCode.
    fixture: Option<FixtureControl>,
    /// Values sent in request paths that vary per run (a page's cursor), each recorded as its
    /// placeholder ([`Talk::conceal`]).
    concealed: Vec<(String, String)>,
}

/// What the agent's next turns do, the same on both targets: real OpenCode's model is scripted
/// to do what the fixture agent does when given the matching fault (it runs its own turns).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NextTurn {
    /// A `bash` call of `echo fixture` (asking a permission where the session's rules say ask),
    /// then the text `Fixture completed.` ([`Fault::Decide`]).
    AskPermission,
    /// The `question` tool, one question "Pick one" with options `A` and `B`, then the text
    /// `Answered: A` (reply `A`) ([`Fault::AskQuestion`]).
    AskQuestion,
    /// A `json_schema` prompt's `StructuredOutput` call with `{"fixture_invalid": true}`, which
    /// matches no schema with required properties ([`Fault::InvalidOutputOnce`]).
    InvalidStructuredOutput,
    /// A `json_schema` prompt answered with the text `Fixture completed.` and no
    /// `StructuredOutput` call ([`Fault::NoStructuredOutputOnce`]).
    NoStructuredOutput,
}

/// The fixture's question tool input, as [`Fault::AskQuestion`] asks it.
fn pick_one() -> Value {
    serde_json::json!({"questions": [{"question": "Pick one", "header": "Pick", "options": [
        {"label": "A", "description": "a"}, {"label": "B", "description": "b"}]}]})
}

impl Drop for Talk {
    fn drop(&mut self) {
        self.reader.abort();
    }
}

impl Talk {
    /// Connects to `agent`: reads its version and subscribes to its events before anything
    /// is sent.
    pub(crate) async fn new(live: &Live, agent: &Agent) -> anyhow::Result<Talk> {
        let http = reqwest::Client::builder()
            .no_proxy()
            .timeout(harness_runtime::scaled(CEILING))
            .build()?;
        let base = agent.forwarded_url();
        let health: Value = http
            .get(format!("{base}/global/health"))
            .send()
            .await?
            .json()
            .await?;
        let version = health["version"].as_str().unwrap_or("unknown").to_owned();
        let response = http
            .get(format!("{base}/event"))
            .timeout(Duration::from_secs(24 * 3600))
            .send()
            .await?
            .error_for_status()?;
        let mut stream = response.bytes_stream().eventsource();
        // The first frame says the subscription is live: events sent after it are ours.
        let first = tokio::time::timeout(harness_runtime::scaled(CEILING), stream.next())
            .await
            .context("the event stream sent nothing")?
            .context("the event stream ended at once")??;
        anyhow::ensure!(
            first.data.contains("server.connected"),
            "the event stream began with {:?}",
            first.data
        );
        let (sender, events) = mpsc::unbounded_channel();
        let reader = tokio::spawn(async move {
            while let Some(Ok(event)) = stream.next().await {
                let Ok(json) = serde_json::from_str::<Value>(&event.data) else {
                    continue;
                };
                let kind = json["type"].as_str().unwrap_or_default().to_owned();
                if kind == "server.heartbeat" || kind == "server.connected" {
                    continue;
                }
                if sender
                    .send((kind, session_of(&json["properties"])))
                    .is_err()
                {
                    break;
                }
            }
        });
        Ok(Talk {
            http,
            base,
            redactor: live.redactor().clone(),
            model: live.model().clone(),
            version,
            events,
            reader,
            transcript: Transcript::default(),
            concealed: Vec::new(),
            fixture: match live.options().agent() {
                // The scenario's own control is borrowed from `live`; this one writes the same
                // control files, in the agent's home.
                AgentKind::Fixture => {
                    Some(FixtureControl::attached_to(&agent.root().join("home"))?)
                }
                AgentKind::OpenCode => None,
            },
        })
    }

    /// Sets what the agent's next turns do (see [`NextTurn`]).
    pub(crate) fn next_turn(&self, turn: NextTurn) -> anyhow::Result<()> {
        if let Some(fixture) = &self.fixture {
            fixture.inject(match turn {
                NextTurn::AskPermission => Fault::Decide,
                NextTurn::AskQuestion => Fault::AskQuestion,
                NextTurn::InvalidStructuredOutput => Fault::InvalidOutputOnce,
                NextTurn::NoStructuredOutput => Fault::NoStructuredOutputOnce,
            })?;
            return Ok(());
        }
        if turn == NextTurn::InvalidStructuredOutput {
            let invalid = serde_json::json!({"fixture_invalid": true});
            self.model.rule(
                Rule::when(Matcher::wants_structured_output())
                    .reply(Reply::structured(invalid))
                    .times(1),
            );
            return Ok(());
        }
        if turn == NextTurn::NoStructuredOutput {
            self.model.rule(
                Rule::when(Matcher::wants_structured_output())
                    .reply(Reply::text("Fixture completed."))
                    .times(1),
            );
            return Ok(());
        }
        let (tool, input, text) = match turn {
            NextTurn::AskPermission => (
                "bash",
                serde_json::json!({"command": "echo fixture", "description": "fixture tool"}),
                "Fixture completed.",
            ),
            NextTurn::AskQuestion => ("question", pick_one(), "Answered: A"),
            NextTurn::InvalidStructuredOutput | NextTurn::NoStructuredOutput => {
                unreachable!("scripted above")
            }
        };
        self.model.rule(
            Rule::when(!Matcher::follows_tool_result())
                .reply(Reply::tool_call(tool, input))
                .times(1),
        );
        self.model
            .rule(Rule::when(Matcher::follows_tool_result()).reply(Reply::text(text)));
        Ok(())
    }

    /// The scenario's scripted model (real OpenCode's; the fixture agent does not call it).
    pub(crate) fn model(&self) -> &ScriptedModel {
        &self.model
    }

    /// Sends `method path` with an optional JSON body; records the request and the answer.
    pub(crate) async fn call(
        &mut self,
        method: &str,
        path: &str,
        body: Option<Value>,
    ) -> anyhow::Result<Answer> {
        let sent = body.as_ref().map(|b| (b.to_string(), self.normalize(b)));
        self.exchange(method, path, sent).await
    }

    /// Sends `method path` with `text` as its body, declared JSON whether it is or not (a
    /// malformed body); records the body as that text.
    pub(crate) async fn call_raw(
        &mut self,
        method: &str,
        path: &str,
        text: &str,
    ) -> anyhow::Result<Answer> {
        let recorded = Value::String(self.redactor.redact(text));
        self.exchange(method, path, Some((text.to_owned(), recorded)))
            .await
    }

    /// Sends the request with its body (as sent, as recorded) and records the exchange.
    async fn exchange(
        &mut self,
        method: &str,
        path: &str,
        body: Option<(String, Value)>,
    ) -> anyhow::Result<Answer> {
        let method = reqwest::Method::from_bytes(method.as_bytes())?;
        let mut request = self
            .http
            .request(method.clone(), format!("{}{path}", self.base));
        let (sent, recorded) = body.unzip();
        if let Some(sent) = sent {
            request = request
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .body(sent);
        }
        let response = request
            .send()
            .await
            .with_context(|| format!("{method} {path}"))?;
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let text = response.text().await?;
        let json = if text.is_empty() {
            Value::Null
        } else {
            serde_json::from_str(&text).unwrap_or(Value::String(text))
        };
        let path = self
            .concealed
            .iter()
            .fold(path.to_owned(), |path, (value, placeholder)| {
                path.replace(value, placeholder)
            });
        self.transcript.steps.push(Step::Call {
            request: format!("{method} {}", self.redactor.redact(&path)),
            body: recorded,
            status,
            answer: self.normalize(&json),
        });
        Ok(Answer {
            status,
            json,
            headers,
        })
    }

    pub(crate) async fn get(&mut self, path: &str) -> anyhow::Result<Answer> {
        self.call("GET", path, None).await
    }

    pub(crate) async fn post(&mut self, path: &str, body: Value) -> anyhow::Result<Answer> {
        self.call("POST", path, Some(body)).await
    }

    pub(crate) async fn patch(&mut self, path: &str, body: Value) -> anyhow::Result<Answer> {
        self.call("PATCH", path, Some(body)).await
    }

    pub(crate) async fn delete(&mut self, path: &str) -> anyhow::Result<Answer> {
        self.call("DELETE", path, None).await
    }

    /// Records the types of the events sent since the last call of this, up to and including
    /// the first of type `until`; fails naming what came if it does not come in time.
    pub(crate) async fn events_until(&mut self, until: &str) -> anyhow::Result<Vec<String>> {
        self.events_until_except(until, &[]).await
    }

    /// [`Talk::events_until`] leaving out the types in `except`: for events real OpenCode
    /// sends from work of its own that races the turn (e.g. the `session.updated` /
    /// `session.diff` of a step's summary), whose place in the order varies per run.
    pub(crate) async fn events_until_except(
        &mut self,
        until: &str,
        except: &[&str],
    ) -> anyhow::Result<Vec<String>> {
        let mut types: Vec<String> = Vec::new();
        let deadline = tokio::time::Instant::now() + harness_runtime::scaled(CEILING);
        loop {
            let next = tokio::time::timeout_at(deadline, self.events.recv())
                .await
                .map_err(|_| {
                    anyhow::anyhow!("no `{until}` event in time; the events were {types:?}")
                })?
                .with_context(|| format!("the event stream ended before `{until}`: {types:?}"))?;
            let (next, _) = next;
            let last = next == until;
            if except.contains(&next.as_str()) {
                continue;
            }
            if types.last() != Some(&next) {
                types.push(next);
            }
            if last {
                break;
            }
        }
        self.transcript.steps.push(Step::Events {
            until: until.to_owned(),
            types: types.clone(),
        });
        Ok(types)
    }

    /// Records which sessions the events sent since the last events step were about, in order
    /// of first appearance, up to and including the first event of type `until`: where a
    /// stream's scope matters more than the order of its types.
    pub(crate) async fn sessions_of_events_until(&mut self, until: &str) -> anyhow::Result<()> {
        let mut sessions: Vec<String> = Vec::new();
        let deadline = tokio::time::Instant::now() + harness_runtime::scaled(CEILING);
        loop {
            let (kind, session) = tokio::time::timeout_at(deadline, self.events.recv())
                .await
                .map_err(|_| {
                    anyhow::anyhow!("no `{until}` event in time; sessions seen: {sessions:?}")
                })?
                .with_context(|| format!("the event stream ended before `{until}`"))?;
            if let Some(session) = session.filter(|s| !sessions.contains(s)) {
                sessions.push(session);
            }
            if kind == until {
                break;
            }
        }
        self.note(
            &format!("the sessions of the events until {until}"),
            Value::from(sessions),
        );
        Ok(())
    }

    /// Records `value` as `placeholder` wherever a later request path sends it: for a value
    /// that varies per run and that the redactor does not know (a page's cursor).
    pub(crate) fn conceal(&mut self, value: &str, placeholder: &str) {
        self.concealed
            .push((value.to_owned(), placeholder.to_owned()));
    }

    /// Records a value the interaction derived (redacted).
    pub(crate) fn note(&mut self, what: &str, value: Value) {
        let value = self.normalize(&value);
        self.transcript.steps.push(Step::Note {
            what: what.to_owned(),
            value,
        });
    }

    /// The version the agent reported and the transcript.
    pub(crate) fn finish(mut self) -> (String, Transcript) {
        (
            std::mem::take(&mut self.version),
            std::mem::take(&mut self.transcript),
        )
    }

    /// `value` redacted (ids numbered, paths and secrets as placeholders, in keys too), with
    /// the values that vary per run as placeholders but the shape kept: epoch milliseconds
    /// `[timestamp]`, token counts and costs `[number]` (a usage's fields are part of the
    /// shape), a session's slug `[slug]`, the project's id `[project]`, a port `[port]`, an
    /// `UnknownError`'s log reference `err_[ref]`.
    fn normalize(&self, value: &Value) -> Value {
        self.normalize_in(None, false, value)
    }

    fn normalize_in(&self, key: Option<&str>, usage: bool, value: &Value) -> Value {
        match value {
            Value::String(_) if key == Some("slug") => "[slug]".into(),
            Value::String(_) if key == Some("projectID") => "[project]".into(),
            Value::String(text) if key == Some("ref") && text.starts_with("err_") => {
                "err_[ref]".into()
            }
            Value::String(text) => Value::String(self.redactor.redact(text)),
            Value::Number(n) => {
                let epoch_ms = n
                    .as_f64()
                    .is_some_and(|f| f.fract() == 0.0 && (1e12..1e13).contains(&f));
                if usage {
                    "[number]".into()
                } else if epoch_ms {
                    "[timestamp]".into()
                } else if key == Some("port") {
                    "[port]".into()
                } else {
                    value.clone()
                }
            }
            Value::Array(items) => Value::Array(
                items
                    .iter()
                    .map(|item| self.normalize_in(key, usage, item))
                    .collect(),
            ),
            // Keys in sorted order, as `Redactor::redact_json` walks them: ids are numbered in
            // the order met, and serde_json keeps the server's order (`preserve_order`).
            Value::Object(map) => Value::Object({
                let mut entries: Vec<_> = map.iter().collect();
                entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
                entries
                    .into_iter()
                    .map(|(k, v)| {
                        let usage = usage || k == "tokens" || k == "cost";
                        (
                            self.redactor.redact(k),
                            self.normalize_in(Some(k), usage, v),
                        )
                    })
                    .collect()
            }),
            Value::Null | Value::Bool(_) => value.clone(),
        }
    }
}
