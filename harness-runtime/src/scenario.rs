//! What a scenario declares about itself: the options of its `#[live_agent_test(...)]`.
//!
//! A base module: the runner, provisioning and `Live` read these; it depends on none of them.
//! The payload the attribute builds ([`ScenarioOptions`] and its parts) has public fields for
//! the expansion's `static` literal and is reachable only through `__private`; a scenario reads
//! it through [`DeclaredOptions`], whose getters can stay when the payload grows.

use std::time::Duration;

use crate::settings::Isolation;

/// Which agent `live.opencode()` provisions for the scenario.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AgentKind {
    /// The real `opencode serve` from the pinned npm package (the default).
    OpenCode,
    /// The fixture agent: a fake OpenCode with fault injection.
    Fixture,
}

/// An agent the framework drives, over HTTP or over ACP.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum AnyAgentKind {
    /// OpenCode's server, `opencode serve`, through the typed HTTP client (the default).
    OpenCodeHttp,
    /// OpenCode's own ACP mode, `opencode acp`.
    OpenCodeAcp,
    /// Qwen Code, `qwen --acp`.
    QwenCode,
    /// Gemini CLI, `gemini --acp`.
    GeminiCli,
}

impl AnyAgentKind {
    /// Every kind, in the order the docs list them.
    pub const ALL: &'static [AnyAgentKind] = &[
        Self::OpenCodeHttp,
        Self::OpenCodeAcp,
        Self::QwenCode,
        Self::GeminiCli,
    ];

    /// The attribute's spelling, also the report's: `opencode-http`, `opencode-acp`,
    /// `qwen-code`, `gemini-cli`. A scenario's name ends with it, `-` as `_` (`text_turn::qwen_code`).
    pub fn name(self) -> &'static str {
        let index = match self {
            Self::OpenCodeHttp => 0,
            Self::OpenCodeAcp => 1,
            Self::QwenCode => 2,
            Self::GeminiCli => 3,
        };
        harness_opencode_api::agents::AGENT_NAMES[index]
    }
}

impl std::fmt::Display for AnyAgentKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Which provider package OpenCode talks to the scripted model with (`model_api = "…"`), so a
/// scripted scenario runs the provider code path a product uses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum ModelApi {
    /// `@ai-sdk/openai-compatible`: chat completions, `POST /v1/chat/completions` (the default).
    #[default]
    OpenAiCompatible,
    /// `@ai-sdk/openai`: the Responses API, `POST /v1/responses`.
    OpenAi,
    /// `@ai-sdk/anthropic`: Messages, `POST /v1/messages`.
    Anthropic,
    /// `@ai-sdk/google`: Gemini, `POST /v1beta/models/<model>:streamGenerateContent`.
    Google,
}

impl ModelApi {
    /// The option's spelling: `openai-compatible`, `openai`, `anthropic`, `google`.
    pub fn name(self) -> &'static str {
        match self {
            Self::OpenAiCompatible => "openai-compatible",
            Self::OpenAi => "openai",
            Self::Anthropic => "anthropic",
            Self::Google => "google",
        }
    }
}

/// The options of `#[live_agent_test(...)]`. Every option is optional; the macro fills defaults.
/// What the expansion builds (`__private`), not an API: a scenario reads [`DeclaredOptions`].
#[derive(Clone, Copy, Debug)]
pub struct ScenarioOptions {
    /// The "clearly stuck" ceiling of the whole scenario, before `LIVE_TIMEOUT_SCALE`.
    pub timeout: Option<Duration>,
    /// Environment variables that must be present, UTF-8, non-empty and unpadded.
    pub requires: &'static [&'static str],
    /// `ignore = "reason"`: the scenario is ignored unless `--ignored`/`--include-ignored`.
    pub ignore: Option<&'static str>,
    /// Which agent backend `live.opencode()` starts.
    pub agent: AgentKind,
    /// Gate points armed before the scenario starts (`gate = "abort"`).
    pub gates: &'static [&'static str],
    /// `isolation = "server"` refuses a shared server even under `LIVE_ISOLATION=shared`;
    /// `"shared"` opts in without it. `None` follows `LIVE_ISOLATION`.
    pub isolation: Option<Isolation>,
    /// `cassette`: a real-model scenario whose model traffic is recorded to and replayed from
    /// `cassettes/<topic>__<fn>.json` (see `LIVE_CASSETTE`).
    pub cassette: bool,
    /// `explore = N`: run the body repeatedly under different orderings of the product's
    /// traffic with its agent, searching for one that fails. `None`: one plain run.
    pub explore: Option<ExploreOptions>,
    /// `passes = "K of N"`: a real-model scenario (live or recording) passes when K of up to N
    /// runs pass, each on a fresh agent, stopping as soon as the verdict is decided. Replayed
    /// from a cassette it runs once. `None`: one run decides.
    pub passes: Option<Passes>,
    /// `max_tokens = …`, `max_cost = …`, `max_first_token = "…"`, `max_turn = "…"`, …: limits
    /// on what the scenario's turns spend, checked against what OpenCode and the model stream
    /// report (from the cassette when replayed). A breach fails the scenario with the figure
    /// and the limit.
    pub budget: Budget,
    /// `needs_peer = "other_fn"`: the scenario meets the scenario `other_fn` of its own module
    /// inside one runner process while both run. Under nextest's process per test it cannot, so
    /// it is listed ignored there; where its peer is not in the run it is skipped at once.
    pub needs_peer: Option<&'static str>,
    /// `model_api = "…"`: the provider package OpenCode talks to the scripted model with.
    pub model_api: ModelApi,
    /// `agents = [...]`: the agent this registration runs on (one registration per entry).
    pub any_agent: Option<AnyAgentKind>,
}

impl ScenarioOptions {
    /// The defaults, usable in const context.
    pub const DEFAULT: ScenarioOptions = ScenarioOptions {
        timeout: None,
        requires: &[],
        ignore: None,
        agent: AgentKind::OpenCode,
        gates: &[],
        isolation: None,
        cassette: false,
        explore: None,
        passes: None,
        budget: Budget::NONE,
        needs_peer: None,
        model_api: ModelApi::OpenAiCompatible,
        any_agent: None,
    };
}

impl Default for ScenarioOptions {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// How a scenario explores the orderings of its product's traffic (`explore = N`,
/// `explore_for = "…"`, `explore_points = [...]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExploreOptions {
    /// The budget of schedules: at most this many runs of the body, each under its own ordering
    /// (`explore = N`, 1 to 100000).
    pub runs: u32,
    /// The wall-clock budget of the whole exploration, before `LIVE_TIMEOUT_SCALE`
    /// (`explore_for = "…"`); `None` is [`DEFAULT_CEILING`](Self::DEFAULT_CEILING).
    pub ceiling: Option<Duration>,
    /// The decision points, as gate spellings: `request <METHOD> <route>`,
    /// `response <METHOD> <route>`, `event <type>`, `product <name>` (`explore_points = [...]`).
    /// Empty: every request, response and product point, and the events about sessions
    /// (`session.*`, `message.*`, `permission.*`, `question.*`, `todo.*`); heartbeats never.
    pub points: &'static [&'static str],
}

impl ExploreOptions {
    /// The wall-clock budget when `ceiling` is `None`: 5 minutes, before `LIVE_TIMEOUT_SCALE`.
    pub const DEFAULT_CEILING: Duration = Duration::from_secs(300);

    /// The wall-clock budget, before `LIVE_TIMEOUT_SCALE`: `ceiling`, or
    /// [`DEFAULT_CEILING`](Self::DEFAULT_CEILING).
    pub fn wall_clock(&self) -> Duration {
        self.ceiling.unwrap_or(Self::DEFAULT_CEILING)
    }
}

/// `passes = "K of N"`: how many runs must pass (`needed`) out of at most `runs`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Passes {
    /// K: the passes the verdict needs (1 ≤ K ≤ N).
    pub needed: u32,
    /// N: the most runs the verdict may take.
    pub runs: u32,
}

/// A scenario's limits on what its turns spend. Every field is optional; `None` is no limit.
/// Tokens and cost are what OpenCode reports for the scenario's assistant messages, summed over
/// the scenario; the times are per model request (first token) and per turn.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Budget {
    /// `max_tokens`: input + output + reasoning tokens of every turn together.
    pub tokens: Option<u64>,
    /// `max_input_tokens`.
    pub input_tokens: Option<u64>,
    /// `max_output_tokens`.
    pub output_tokens: Option<u64>,
    /// `max_reasoning_tokens`.
    pub reasoning_tokens: Option<u64>,
    /// `max_cost`: in the currency of the model's configured prices (OpenCode's `cost`).
    pub cost: Option<f64>,
    /// `max_first_token`: the time from a model request to its first streamed token, for every
    /// request, before `LIVE_TIMEOUT_SCALE`.
    pub first_token: Option<Duration>,
    /// `max_turn`: the duration of every turn, before `LIVE_TIMEOUT_SCALE`.
    pub turn: Option<Duration>,
}

impl Budget {
    /// No limit at all, usable in const context.
    pub const NONE: Budget = Budget {
        tokens: None,
        input_tokens: None,
        output_tokens: None,
        reasoning_tokens: None,
        cost: None,
        first_token: None,
        turn: None,
    };

    /// Whether any limit is set.
    pub fn is_limited(&self) -> bool {
        *self != Budget::NONE
    }
}

impl Default for Budget {
    fn default() -> Self {
        Budget::NONE
    }
}

/// What a scenario's `#[live_agent_test(...)]` declared, read-only (`live.options()`): one
/// getter per option, named as the attribute spells it.
#[derive(Clone, Copy, Debug)]
pub struct DeclaredOptions(ScenarioOptions);

impl DeclaredOptions {
    /// A view of `options`.
    pub(crate) fn of(options: ScenarioOptions) -> Self {
        Self(options)
    }

    /// `timeout = "…"`: the scenario's ceiling, before `LIVE_TIMEOUT_SCALE`; `None`: the
    /// runner's default.
    pub fn timeout(&self) -> Option<Duration> {
        self.0.timeout
    }

    /// `requires = [...]`: the environment variables the scenario needs.
    pub fn requires(&self) -> &'static [&'static str] {
        self.0.requires
    }

    /// `ignore = "reason"`: why the scenario runs only under `--ignored`.
    pub fn ignore(&self) -> Option<&'static str> {
        self.0.ignore
    }

    /// `agent = "…"`: which agent `live.opencode()` starts.
    pub fn agent(&self) -> AgentKind {
        self.0.agent
    }

    /// `agents = [...]`: the agent this scenario runs on, one of those listed; `None` when it
    /// lists none (see [`Live::any_agent_kind`](crate::Live::any_agent_kind)).
    pub fn any_agent(&self) -> Option<AnyAgentKind> {
        self.0.any_agent
    }

    /// `gate = [...]`: the gate points armed before the scenario starts.
    pub fn gates(&self) -> &'static [&'static str] {
        self.0.gates
    }

    /// `isolation = "…"`; `None` follows `LIVE_ISOLATION`.
    pub fn isolation(&self) -> Option<Isolation> {
        self.0.isolation
    }

    /// `cassette`: whether the scenario talks to the real model through a cassette.
    pub fn cassette(&self) -> bool {
        self.0.cassette
    }

    /// `model_api = "…"`: the provider package OpenCode talks to the scripted model with.
    pub fn model_api(&self) -> ModelApi {
        self.0.model_api
    }

    /// `explore = N`: the most runs an exploration takes; `None`: one plain run.
    pub fn explore(&self) -> Option<u32> {
        self.0.explore.map(|explore| explore.runs)
    }

    /// `explore_for = "…"`: the exploration's wall-clock budget as declared, before
    /// `LIVE_TIMEOUT_SCALE`; `None` when not given (5 minutes apply to an exploring scenario).
    pub fn explore_for(&self) -> Option<Duration> {
        self.0.explore.and_then(|explore| explore.ceiling)
    }

    /// `explore_points = [...]`: the decision points, as gate spellings; empty: the defaults.
    pub fn explore_points(&self) -> &'static [&'static str] {
        self.0.explore.map_or(&[], |explore| explore.points)
    }

    /// `passes = "K of N"`: `(K, N)`, the passes the verdict needs out of at most N runs.
    pub fn passes(&self) -> Option<(u32, u32)> {
        self.0.passes.map(|passes| (passes.needed, passes.runs))
    }

    /// `max_tokens`: input + output + reasoning tokens of every turn together.
    pub fn max_tokens(&self) -> Option<u64> {
        self.0.budget.tokens
    }

    /// `max_input_tokens`.
    pub fn max_input_tokens(&self) -> Option<u64> {
        self.0.budget.input_tokens
    }

    /// `max_output_tokens`.
    pub fn max_output_tokens(&self) -> Option<u64> {
        self.0.budget.output_tokens
    }

    /// `max_reasoning_tokens`.
    pub fn max_reasoning_tokens(&self) -> Option<u64> {
        self.0.budget.reasoning_tokens
    }

    /// `max_cost`, in the currency of the model's configured prices.
    pub fn max_cost(&self) -> Option<f64> {
        self.0.budget.cost
    }

    /// `max_first_token`, before `LIVE_TIMEOUT_SCALE`.
    pub fn max_first_token(&self) -> Option<Duration> {
        self.0.budget.first_token
    }

    /// `max_turn`, before `LIVE_TIMEOUT_SCALE`.
    pub fn max_turn(&self) -> Option<Duration> {
        self.0.budget.turn
    }

    /// `needs_peer = "other_fn"`: the scenario of the same module it meets while both run.
    pub fn needs_peer(&self) -> Option<&'static str> {
        self.0.needs_peer
    }
}

#[cfg(test)]
mod tests {
    use super::AnyAgentKind;

    /// The attribute's agent spellings (`harness-opencode-api`, which `name` reads) are the
    /// kinds', one each, in the same order.
    #[test]
    fn every_agent_kind_has_its_shared_spelling() {
        let names: Vec<&str> = AnyAgentKind::ALL.iter().map(|kind| kind.name()).collect();
        assert_eq!(names, harness_opencode_api::agents::AGENT_NAMES);
    }
}
