//! The "real model" of the round trip: a scripted model in this test process, scripted by
//! `harness_selftest::round_trip`, and the `OPENCODE_CONFIG_CONTENT` that names it, with a canary
//! API key and a canary header a recording must never write down.

use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use harness_runtime::testing::MODEL_ID;
use harness_runtime::testing::ModelSlot;
use harness_selftest::round_trip;
use serde_json::json;

/// The API key of the upstream's config: a secret.
pub const CANARY_KEY: &str = "CANARY-round-trip-key-5f1e2d";
/// The value of a header of the upstream's config: a secret too.
pub const CANARY_HEADER: &str = "CANARY-round-trip-header-9b7c44";
/// Both, for checks that neither shows.
pub const CANARIES: [&str; 2] = [CANARY_KEY, CANARY_HEADER];
/// The model the config names (`TEST_OLLAMA_MODEL`).
pub const MODEL: &str = MODEL_ID;

/// The scripted upstream, served by a runtime of its own while the scenario binary runs.
pub struct Upstream {
    runtime: Option<tokio::runtime::Runtime>,
    slot: Option<ModelSlot>,
    addr: SocketAddr,
    base_url: String,
}

impl Upstream {
    /// Starts the upstream, scripted for every case.
    pub fn start() -> Self {
        Self::start_with(round_trip::script_upstream)
    }

    /// Starts the upstream, scripted by `script`.
    pub fn start_with(script: fn(&harness_runtime::model::ScriptedModel)) -> Self {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("a tokio runtime starts");
        let slot = ModelSlot::default();
        let base_url = {
            let _context = runtime.enter();
            let model = slot.model().expect("the upstream starts on loopback");
            script(model);
            model.base_url()
        };
        let addr = base_url
            .trim_start_matches("http://")
            .trim_end_matches("/v1")
            .parse()
            .expect("the upstream's base URL is http://<addr>/v1");
        Upstream {
            runtime: Some(runtime),
            slot: Some(slot),
            addr,
            base_url,
        }
    }

    /// `OPENCODE_CONFIG_CONTENT` naming the upstream as a real provider would be named: an
    /// OpenAI-compatible server with a key and a header.
    pub fn config(&self) -> String {
        json!({
            "enabled_providers": ["upstream"],
            "provider": {"upstream": {
                "npm": "@ai-sdk/openai-compatible",
                "name": "Round-trip upstream",
                "options": {
                    "baseURL": self.base_url,
                    "apiKey": CANARY_KEY,
                    "headers": {"X-Round-Trip-Canary": CANARY_HEADER},
                },
                "models": {MODEL: {
                    "name": MODEL,
                    "tool_call": true,
                    "attachment": false,
                    "reasoning": false,
                    "temperature": true,
                    "limit": {"context": 128000, "output": 4096},
                }},
            }},
        })
        .to_string()
    }

    /// How many requests it received, and how many of them nothing in its script answered.
    pub fn requests(&self) -> (usize, usize) {
        let slot = self.slot.as_ref().expect("the upstream runs");
        let model = slot.model().expect("started in `start`");
        (model.requests().len(), model.misses().len())
    }

    /// Stops it: its runtime is shut down with every task, and its port refuses connections.
    pub fn stop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            {
                let _context = runtime.enter();
                self.slot.take();
            }
            runtime.shutdown_timeout(Duration::from_secs(5));
        }
        let deadline = Instant::now() + Duration::from_secs(5);
        while TcpStream::connect_timeout(&self.addr, Duration::from_millis(200)).is_ok() {
            assert!(
                Instant::now() < deadline,
                "the upstream at {} still accepts connections after it stopped",
                self.addr
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Upstream {
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            {
                let _context = runtime.enter();
                self.slot.take();
            }
            runtime.shutdown_timeout(Duration::from_secs(5));
        }
    }
}
