//! The "real model" of the round trip: a scripted upstream in this test process, scripted by
//! `harness_selftest::round_trip`, and the `OPENCODE_CONFIG_CONTENT` that names it, with a canary
//! API key and a canary header a recording must never write down.

use harness_runtime::testing::MODEL_ID;
use harness_selftest::round_trip;
use harness_selftest::upstream::ScriptedUpstream;

/// The API key of the upstream's config: a secret.
pub const CANARY_KEY: &str = "CANARY-round-trip-key-5f1e2d";
/// The value of a header of the upstream's config: a secret too.
pub const CANARY_HEADER: &str = "CANARY-round-trip-header-9b7c44";
/// Both, for checks that neither shows.
pub const CANARIES: [&str; 2] = [CANARY_KEY, CANARY_HEADER];
/// The model the config names (`TEST_OLLAMA_MODEL`).
pub const MODEL: &str = MODEL_ID;

/// Starts the upstream, scripted for every case.
pub fn start() -> ScriptedUpstream {
    ScriptedUpstream::start(round_trip::script_upstream)
}

/// `OPENCODE_CONFIG_CONTENT` naming `upstream` as a real provider would be named: an
/// OpenAI-compatible server with a key and a header.
pub fn config(upstream: &ScriptedUpstream) -> String {
    upstream
        .config("Round-trip upstream", CANARY_KEY)
        .header("X-Round-Trip-Canary", CANARY_HEADER)
        .to_string()
}

/// How many requests `upstream` received, and how many of them nothing in its script answered.
pub fn requests(upstream: &ScriptedUpstream) -> (usize, usize) {
    let model = upstream.model();
    (model.requests().len(), model.misses().len())
}
