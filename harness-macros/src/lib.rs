//! `#[live_agent_test]`: parses, validates with spans, and emits a registration into
//! `harness_runtime`. All behaviour lives in the runtime crate; this crate only checks the
//! attribute's input and renders a `Scenario` descriptor next to the untouched function.

#![forbid(unsafe_code)]

mod budget;
mod duration;
mod expand;
mod options;
mod passes;
mod peer;
mod signature;

use proc_macro::TokenStream;

/// Registers an `async fn name(live: &mut Live) -> R` as a live scenario.
///
/// `R` is `()` or `Result<(), E>` with `E: Debug`. Options, all optional:
/// `timeout = "90s"`, `requires = ["VAR", ...]`, `ignore = "reason"`,
/// `agent = "opencode" | "fixture"`, `gate = "abort"` or `gate = ["abort", "stop"]` (a client
/// point, `request <METHOD> <route>`, `response <METHOD> <route>`, `event <type>` or
/// `product <name>`, each checked against the OpenCode API at compile time),
/// `isolation = "server" | "shared"`, `cassette` (a bare flag: the real model, recorded to and
/// replayed from `cassettes/<topic>__<fn>.json`; not with `agent = "fixture"`),
/// `model_api = "openai-compatible" | "openai" | "anthropic" | "google"` (the provider package
/// OpenCode talks to the scripted model with: chat completions by default, the Responses API,
/// Anthropic Messages, Gemini; not with `cassette`),
/// `explore = 200` (run the body under up to this many orderings of the product's traffic with
/// its agent, 1 to 100000), `explore_for = "5m"` (the exploration's wall-clock budget, scaled by
/// `LIVE_TIMEOUT_SCALE`; 5 minutes by default) and `explore_points = ["event session.idle"]`
/// (the decision points, as wire and product gate spellings; by default every request, response
/// and product point and the events about sessions) — both only with `explore`,
/// `passes = "3 of 5"` (a real model's verdict: K passes out of at most N runs, N ≤ 100, each on
/// a fresh agent, stopping once decided; only with `cassette` or
/// `requires = ["OPENCODE_CONFIG_CONTENT"]`, not with `explore`), the budgets
/// `max_tokens = 4000`, `max_input_tokens`, `max_output_tokens`, `max_reasoning_tokens` (whole
/// numbers ≥ 1), `max_cost = 0.05` (positive), `max_first_token = "2s"`, `max_turn = "30s"`,
/// `needs_peer = "other_scenario"` (a scenario function of the same module it meets inside one
/// runner process; listed ignored under nextest's process per test),
/// `crate = "path::to::harness_runtime"`.
#[proc_macro_attribute]
pub fn live_agent_test(args: TokenStream, item: TokenStream) -> TokenStream {
    expand::live_agent_test(args.into(), item.into()).into()
}
