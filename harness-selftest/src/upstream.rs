//! The scripted upstream of the tests that run real OpenCode with no real model: a scripted
//! model served by a runtime of its own in the test process, standing in for a model provider
//! while a scenario binary runs, and the `OPENCODE_CONFIG_CONTENT` that names it as an
//! OpenAI-compatible provider ([`ProviderConfig`]), which each test extends with what its own
//! provider has: another provider package (Anthropic's, OpenAI's, Google's), headers, prices.
//! Started with [`ScriptedUpstream::start_https`], it is reached over HTTPS through a
//! [`TlsFront`] whose CA only a client told of it trusts, as a hosted provider is reached.

use std::fmt;
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use harness_runtime::model::ScriptedModel;
use harness_runtime::testing::{MODEL_ID, ModelSlot, PROVIDER_ID};
use serde_json::{Map, Value, json};

use crate::tls_front::TlsFront;

/// How long a stop may take: the runtime's shutdown, then its port refusing connections.
const STOP_CEILING: Duration = Duration::from_secs(5);

/// The scripted upstream, served by a runtime of its own while the scenario binary runs.
pub struct ScriptedUpstream {
    runtime: Option<tokio::runtime::Runtime>,
    slot: Option<ModelSlot>,
    /// Where it is reached: the scripted model's port, or the HTTPS front's.
    addr: SocketAddr,
    /// `http://<addr>` or `https://<addr>`, with no path.
    origin: String,
    base_url: String,
    front: Option<TlsFront>,
    /// The scripted model's entry in OpenCode's config, as harness-runtime writes it: the
    /// upstream serves the same model.
    model_entry: Map<String, Value>,
}

impl ScriptedUpstream {
    /// Starts it on loopback, scripted by `script`.
    pub fn start(script: impl FnOnce(&ScriptedModel)) -> Self {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("a tokio runtime starts");
        let mut slot = ModelSlot::default();
        let (base_url, mut config) = {
            let _context = runtime.enter();
            let model = slot.model().expect("the upstream starts on loopback");
            script(model);
            (model.base_url(), slot.opencode_config(json!({})))
        };
        let model_entry = match config["provider"][PROVIDER_ID]["models"][MODEL_ID].take() {
            Value::Object(entry) => entry,
            other => panic!("the scripted model's config has no entry for it: {other}"),
        };
        let addr = base_url
            .trim_start_matches("http://")
            .trim_end_matches("/v1")
            .parse()
            .expect("the upstream's base URL is http://<addr>/v1");
        ScriptedUpstream {
            runtime: Some(runtime),
            slot: Some(slot),
            addr,
            origin: format!("http://{addr}"),
            base_url,
            front: None,
            model_entry,
        }
    }

    /// Starts it as [`start`](Self::start) does, reached over HTTPS only through a front whose
    /// certificate a new CA signed ([`ca_file`](Self::ca_file)).
    pub fn start_https(script: impl FnOnce(&ScriptedModel)) -> Self {
        let mut upstream = Self::start(script);
        let front = {
            let runtime = upstream.runtime.as_ref().expect("the upstream runs");
            let _context = runtime.enter();
            TlsFront::start(upstream.addr)
        };
        upstream.addr = front.addr();
        upstream.origin = format!("https://{}", front.addr());
        upstream.base_url = format!("{}/v1", upstream.origin);
        upstream.front = Some(front);
        upstream
    }

    /// The PEM file of the CA of an HTTPS upstream, for `SSL_CERT_FILE`; `None` over HTTP.
    pub fn ca_file(&self) -> Option<&std::path::Path> {
        self.front.as_ref().map(TlsFront::ca_file)
    }

    /// Its OpenAI-compatible base URL, `http://<addr>/v1` (`https://` through its front).
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// The scripted model, for what it received (`requests`, `misses`); panics once stopped.
    pub fn model(&self) -> &ScriptedModel {
        self.slot
            .as_ref()
            .and_then(|slot| slot.model().ok())
            .expect("the upstream runs")
    }

    /// The config naming it the provider `upstream`, called `name`, with the key `api_key`.
    pub fn config(&self, name: &str, api_key: &str) -> ProviderConfig {
        ProviderConfig {
            name: name.to_string(),
            npm: OPENAI_COMPATIBLE.to_string(),
            origin: self.origin.clone(),
            base_url: self.base_url.clone(),
            api_key: api_key.to_string(),
            headers: Map::new(),
            model_entry: self.model_entry.clone(),
        }
    }

    /// Stops it: its runtime is shut down with every task, and its port refuses connections
    /// (a replay after this cannot reach it).
    pub fn stop(&mut self) {
        self.shut_down();
        let deadline = Instant::now() + STOP_CEILING;
        while TcpStream::connect_timeout(&self.addr, Duration::from_millis(200)).is_ok() {
            assert!(
                Instant::now() < deadline,
                "the upstream at {} still accepts connections after it stopped",
                self.addr
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Drops the model inside its runtime (its server's tasks are aborted there), then the
    /// runtime with every task left.
    fn shut_down(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            {
                let _context = runtime.enter();
                self.front.take();
                self.slot.take();
            }
            runtime.shutdown_timeout(STOP_CEILING);
        }
    }
}

impl Drop for ScriptedUpstream {
    fn drop(&mut self) {
        self.shut_down();
    }
}

/// `OPENCODE_CONFIG_CONTENT` naming a [`ScriptedUpstream`] as a real provider is named: the
/// only enabled provider, `upstream`, an OpenAI-compatible server with an API key, serving
/// [`MODEL_ID`]. Its text is its [`Display`](fmt::Display).
#[derive(Debug, Clone)]
pub struct ProviderConfig {
    name: String,
    npm: String,
    origin: String,
    base_url: String,
    api_key: String,
    headers: Map<String, Value>,
    model_entry: Map<String, Value>,
}

/// OpenCode's package for OpenAI-compatible providers, the default.
const OPENAI_COMPATIBLE: &str = "@ai-sdk/openai-compatible";

impl ProviderConfig {
    /// Names the provider package `npm` (`@ai-sdk/anthropic`, `@ai-sdk/openai`,
    /// `@ai-sdk/google`, …), with the base URL that package expects of the upstream: `/v1`,
    /// Google's `/v1beta`, Ollama's `/api`.
    pub fn package(mut self, npm: &str) -> Self {
        let path = if npm.contains("google") {
            "/v1beta"
        } else if npm.contains("ollama") {
            "/api"
        } else {
            "/v1"
        };
        self.npm = npm.to_string();
        self.base_url = format!("{}{path}", self.origin);
        self
    }

    /// Adds a header the provider sends with every request.
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.insert(name.to_string(), json!(value));
        self
    }

    /// Adds `field` to the model's entry, e.g. `cost` (its prices, so OpenCode reports a cost).
    pub fn model_field(mut self, field: &str, value: Value) -> Self {
        self.model_entry.insert(field.to_string(), value);
        self
    }
}

impl fmt::Display for ProviderConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut options = json!({"baseURL": self.base_url, "apiKey": self.api_key});
        if !self.headers.is_empty() {
            options["headers"] = Value::Object(self.headers.clone());
        }
        let config = json!({
            "enabled_providers": ["upstream"],
            "provider": {"upstream": {
                "npm": self.npm,
                "name": self.name,
                "options": options,
                "models": {MODEL_ID: self.model_entry},
            }},
        });
        write!(f, "{config}")
    }
}
