//! The attribute's options, parsed through one type: a new option is one arm in [`Options::set`]
//! plus one entry in [`NAMES`].

use syn::ext::IdentExt;
use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Expr, ExprLit, Ident, Lit, LitStr, Token};

// The client gate points' names: the runtime's `GatePoint` names, from the crate both depend on
// (a proc-macro crate cannot depend on the runtime, which depends on it).
use harness_opencode_api::spelling::CLIENT_POINTS;

use crate::budget::BudgetOptions;
use crate::duration::parse_millis;
use crate::passes::PassesOption;

/// Every option the attribute accepts, in the order the docs list them.
const NAMES: &[&str] = &[
    "timeout",
    "requires",
    "ignore",
    "agent",
    "agents",
    "gate",
    "isolation",
    "cassette",
    "model_api",
    "explore",
    "explore_for",
    "explore_points",
    "passes",
    "max_tokens",
    "max_input_tokens",
    "max_output_tokens",
    "max_reasoning_tokens",
    "max_cost",
    "max_first_token",
    "max_turn",
    "needs_peer",
    "crate",
];

/// The largest `explore = N`: a budget beyond it is a typo, or a search no CI run finishes.
pub(crate) const MAX_EXPLORE_RUNS: u32 = 100_000;

/// `agent = "…"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Agent {
    OpenCode,
    Fixture,
}

/// An entry of `agents = [...]`: the runtime's `AnyAgentKind` variant it names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AnyAgent {
    OpenCodeHttp,
    OpenCodeAcp,
    QwenCode,
    GeminiCli,
}

/// `agents`' values, as written (the runtime's `AnyAgentKind::name`), with their variants.
pub(crate) const AGENTS: &[(&str, AnyAgent)] = &[
    ("opencode-http", AnyAgent::OpenCodeHttp),
    ("opencode-acp", AnyAgent::OpenCodeAcp),
    ("qwen-code", AnyAgent::QwenCode),
    ("gemini-cli", AnyAgent::GeminiCli),
];

/// `model_api = "…"`: the provider package OpenCode talks to the scripted model with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ModelApi {
    OpenAiCompatible,
    OpenAi,
    Anthropic,
    Google,
}

/// `model_api`'s values, as written, with their variants (the runtime's `ModelApi::name`).
pub(crate) const MODEL_APIS: &[(&str, ModelApi)] = &[
    ("openai-compatible", ModelApi::OpenAiCompatible),
    ("openai", ModelApi::OpenAi),
    ("anthropic", ModelApi::Anthropic),
    ("google", ModelApi::Google),
];

/// `isolation = "…"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Isolation {
    Server,
    Shared,
}

/// The parsed, validated options. `None`/empty means "use the runtime's default".
#[derive(Default)]
pub(crate) struct Options {
    pub(crate) timeout_ms: Option<u64>,
    pub(crate) requires: Option<Vec<LitStr>>,
    pub(crate) ignore: Option<LitStr>,
    pub(crate) agent: Option<Agent>,
    /// `agents = [...]`: one registration per entry, each with its literal (for its span), and
    /// the option's name.
    pub(crate) agents: Option<(Vec<(AnyAgent, LitStr)>, Ident)>,
    pub(crate) gates: Option<Vec<LitStr>>,
    pub(crate) isolation: Option<Isolation>,
    /// The bare `cassette` flag, by its name (the span a conflict is reported on).
    pub(crate) cassette: Option<Ident>,
    /// `model_api = "…"`, with the option's name (the span a conflict is reported on).
    pub(crate) model_api: Option<(ModelApi, Ident)>,
    /// `explore = N`: the budget of schedules.
    pub(crate) explore: Option<u32>,
    /// `explore_for = "…"` in milliseconds, with the option's name (the span a missing
    /// `explore` is reported on).
    pub(crate) explore_for: Option<(u64, Ident)>,
    /// `explore_points = [...]`, with the option's name.
    pub(crate) explore_points: Option<(Vec<LitStr>, Ident)>,
    /// `passes = "K of N"`.
    pub(crate) passes: Option<PassesOption>,
    /// `max_tokens = …`, `max_cost = …`, `max_first_token = "…"`, … (see `crate::budget`).
    pub(crate) budget: BudgetOptions,
    /// `needs_peer = "other_fn"` (see `crate::peer`).
    pub(crate) needs_peer: Option<LitStr>,
    pub(crate) krate: Option<syn::Path>,
}

/// One `name = value`, or a bare `name` (a flag such as `cassette`; for any other option an
/// error, reported with its span).
struct Arg {
    name: Ident,
    value: Option<Expr>,
}

impl Parse for Arg {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        // `parse_any` so that `crate` (a keyword) is accepted as an option name.
        let name = Ident::parse_any(input)?;
        let value = if input.peek(Token![=]) {
            input.parse::<Token![=]>()?;
            Some(ungrouped(input.parse()?))
        } else {
            None
        };
        Ok(Arg { name, value })
    }
}

/// The value itself: one passed through a `macro_rules!` fragment (`$value:literal`,
/// `$value:expr`) arrives wrapped in an invisible group, and means the same as written bare.
fn ungrouped(value: Expr) -> Expr {
    match value {
        Expr::Group(group) => ungrouped(*group.expr),
        other => other,
    }
}

impl Parse for Options {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let args = Punctuated::<Arg, Token![,]>::parse_terminated(input)?;
        let mut options = Options::default();
        let mut seen: Vec<String> = Vec::new();
        let mut errors: Option<syn::Error> = None;
        for arg in args {
            let name = arg.name.unraw().to_string();
            let result = if seen.contains(&name) {
                Err(syn::Error::new(
                    arg.name.span(),
                    format!("duplicate option `{name}`: give each option once"),
                ))
            } else {
                seen.push(name.clone());
                options.set(&name, &arg)
            };
            if let Err(error) = result {
                match &mut errors {
                    Some(all) => all.combine(error),
                    None => errors = Some(error),
                }
            }
        }
        for error in options.conflicts() {
            match &mut errors {
                Some(all) => all.combine(error),
                None => errors = Some(error),
            }
        }
        match errors {
            Some(error) => Err(error),
            None => Ok(options),
        }
    }
}

impl Options {
    /// Errors for options that cannot go together (or not alone), each on the option that
    /// makes them clash.
    fn conflicts(&self) -> Vec<syn::Error> {
        let mut errors = Vec::new();
        if let Some(cassette) = &self.cassette
            && self.agent == Some(Agent::Fixture)
        {
            errors.push(syn::Error::new(
                cassette.span(),
                "`cassette` records and replays a real model's traffic, which the fixture \
                 agent never sends: remove `cassette` or `agent = \"fixture\"`",
            ));
        }
        if let (Some(_), Some((_, name))) = (&self.cassette, &self.model_api) {
            errors.push(syn::Error::new(
                name.span(),
                "`model_api` picks how OpenCode talks to the scripted model, and a `cassette` \
                 scenario talks to the real model through its own provider: remove `model_api` \
                 or `cassette`",
            ));
        }
        if self.explore.is_none() {
            let lone = [
                self.explore_for.as_ref().map(|(_, name)| name),
                self.explore_points.as_ref().map(|(_, name)| name),
            ];
            for name in lone.into_iter().flatten() {
                errors.push(syn::Error::new(
                    name.span(),
                    format!(
                        "`{name}` shapes an exploration, and this scenario does not explore: \
                         add `explore = N` (the budget of schedules) or remove `{name}`"
                    ),
                ));
            }
        }
        errors.extend(self.passes_conflicts());
        errors.extend(self.agents_conflicts());
        errors
    }

    /// `agents` makes one scenario per agent: `agent` would pick a second backend for the same
    /// body, and `needs_peer` names one function's scenario where there are several.
    fn agents_conflicts(&self) -> Vec<syn::Error> {
        let Some((_, name)) = &self.agents else {
            return Vec::new();
        };
        let mut errors = Vec::new();
        if self.agent.is_some() {
            errors.push(syn::Error::new(
                name.span(),
                "`agents` lists the agents this scenario runs on, and `agent` picks the backend \
                 of `live.opencode()`: remove `agent` (list \"opencode-http\" in `agents`)",
            ));
        }
        if self.needs_peer.is_some() {
            errors.push(syn::Error::new(
                name.span(),
                "`agents` makes one scenario per agent, and `needs_peer` meets one scenario: \
                 remove one of them",
            ));
        }
        errors
    }

    /// `passes` samples a real model: a scripted scenario is deterministic, and an exploring
    /// one already runs its body many times for its own search.
    fn passes_conflicts(&self) -> Vec<syn::Error> {
        let Some(passes) = &self.passes else {
            return Vec::new();
        };
        let mut errors = Vec::new();
        let real_model = self.cassette.is_some()
            || self.requires.as_ref().is_some_and(|vars| {
                vars.iter()
                    .any(|var| var.value().contains("OPENCODE_CONFIG_CONTENT"))
            });
        if !real_model {
            errors.push(syn::Error::new(
                passes.span,
                "`passes` decides over several runs of a real model, and this scenario's model \
                 is scripted (deterministic: one run decides): add `cassette` (recorded and \
                 replayed) or `requires = [\"OPENCODE_CONFIG_CONTENT\"]` (live only), or \
                 remove `passes`",
            ));
        }
        if self.explore.is_some() {
            errors.push(syn::Error::new(
                passes.span,
                "`passes` and `explore` both run the body many times, for different ends: an \
                 exploration searches orderings for one failure, a verdict samples a real \
                 model; remove one of them",
            ));
        }
        errors
    }

    /// Sets one option from its argument, validating the value.
    fn set(&mut self, name: &str, arg: &Arg) -> syn::Result<()> {
        if name == "cassette" {
            if let Some(value) = &arg.value {
                return Err(syn::Error::new(
                    value.span(),
                    "`cassette` is a flag and takes no value: write `cassette` alone",
                ));
            }
            self.cassette = Some(arg.name.clone());
            return Ok(());
        }
        let Some(value) = &arg.value else {
            return Err(syn::Error::new(
                arg.name.span(),
                match name {
                    "ignore" => "`ignore` needs a reason: `ignore = \"why\"`".to_string(),
                    _ if NAMES.contains(&name) => format!("`{name}` needs a value: `{name} = …`"),
                    _ => unknown(name),
                },
            ));
        };
        match name {
            "timeout" => {
                let text = string(value, "`timeout` takes a string such as \"90s\"")?;
                let millis =
                    parse_millis(&text.value()).map_err(|e| syn::Error::new(text.span(), e))?;
                self.timeout_ms = Some(millis);
            }
            "requires" => {
                let vars = string_list(
                    value,
                    false,
                    "`requires` takes a list of variable names: `requires = [\"VAR\"]`",
                )?;
                for var in &vars {
                    check_var_name(var)?;
                }
                self.requires = Some(vars);
            }
            "ignore" => {
                let reason = string(value, "`ignore` takes a reason: `ignore = \"why\"`")?;
                if reason.value().trim().is_empty() {
                    return Err(syn::Error::new(reason.span(), "the ignore reason is empty"));
                }
                self.ignore = Some(reason);
            }
            "agent" => {
                let kind = string(value, "`agent` takes \"opencode\" or \"fixture\"")?;
                self.agent = Some(match kind.value().as_str() {
                    "opencode" => Agent::OpenCode,
                    "fixture" => Agent::Fixture,
                    other => {
                        return Err(syn::Error::new(
                            kind.span(),
                            format!(
                                "unknown agent `{other}`: expected \"opencode\" or \"fixture\""
                            ),
                        ));
                    }
                });
            }
            "agents" => {
                let expected = AGENTS
                    .iter()
                    .map(|(name, _)| format!("\"{name}\""))
                    .collect::<Vec<_>>()
                    .join(", ");
                let entries = string_list(
                    value,
                    false,
                    &format!("`agents` takes a list of agents: `agents = [{expected}]`"),
                )?;
                if entries.is_empty() {
                    return Err(syn::Error::new(
                        value.span(),
                        format!("`agents` is empty: list at least one of {expected}"),
                    ));
                }
                let mut agents: Vec<(AnyAgent, LitStr)> = Vec::new();
                for entry in entries {
                    let Some((_, variant)) = AGENTS.iter().find(|(name, _)| *name == entry.value())
                    else {
                        return Err(syn::Error::new(
                            entry.span(),
                            format!(
                                "unknown agent `{}`: expected one of {expected}",
                                entry.value()
                            ),
                        ));
                    };
                    if agents.iter().any(|(listed, _)| listed == variant) {
                        return Err(syn::Error::new(
                            entry.span(),
                            format!("agent `{}` is listed twice", entry.value()),
                        ));
                    }
                    agents.push((*variant, entry));
                }
                self.agents = Some((agents, arg.name.clone()));
            }
            "gate" => {
                let points = string_list(
                    value,
                    true,
                    "`gate` takes a gate point or a list: `gate = \"abort\"`, `gate = [\"abort\", \"stop\"]`",
                )?;
                let mut names: Vec<String> = Vec::new();
                for point in &points {
                    let text = point.value();
                    // Any of the five forms; the message is the runtime's `GateError` for it.
                    harness_opencode_api::spelling::check(&text)
                        .map_err(|message| syn::Error::new(point.span(), message))?;
                    if names.contains(&text) {
                        return Err(syn::Error::new(
                            point.span(),
                            format!("gate point `{text}` is listed twice"),
                        ));
                    }
                    names.push(text);
                }
                self.gates = Some(points);
            }
            "explore" => {
                self.explore = Some(explore_runs(value)?);
            }
            "explore_for" => {
                let text = string(
                    value,
                    "`explore_for` takes a duration in a string, such as \"5m\"",
                )?;
                let millis =
                    parse_millis(&text.value()).map_err(|e| syn::Error::new(text.span(), e))?;
                self.explore_for = Some((millis, arg.name.clone()));
            }
            "explore_points" => {
                let points = string_list(
                    value,
                    true,
                    "`explore_points` takes a point or a list: \
                     `explore_points = [\"event session.idle\", \"product before_reply\"]`",
                )?;
                let mut names: Vec<String> = Vec::new();
                for point in &points {
                    let text = point.value();
                    check_explore_point(&text)
                        .map_err(|message| syn::Error::new(point.span(), message))?;
                    if names.contains(&text) {
                        return Err(syn::Error::new(
                            point.span(),
                            format!("explore point `{text}` is listed twice: give each once"),
                        ));
                    }
                    names.push(text);
                }
                self.explore_points = Some((points, arg.name.clone()));
            }
            "model_api" => {
                let expected = MODEL_APIS
                    .iter()
                    .map(|(name, _)| format!("\"{name}\""))
                    .collect::<Vec<_>>()
                    .join(", ");
                let api = string(value, &format!("`model_api` takes one of {expected}"))?;
                let Some((_, variant)) = MODEL_APIS.iter().find(|(name, _)| *name == api.value())
                else {
                    return Err(syn::Error::new(
                        api.span(),
                        format!(
                            "unknown model API `{}`: expected one of {expected} (the provider \
                             package OpenCode talks to the scripted model with)",
                            api.value()
                        ),
                    ));
                };
                self.model_api = Some((*variant, arg.name.clone()));
            }
            "isolation" => {
                let level = string(value, "`isolation` takes \"server\" or \"shared\"")?;
                self.isolation = Some(match level.value().as_str() {
                    "server" => Isolation::Server,
                    "shared" => Isolation::Shared,
                    other => {
                        return Err(syn::Error::new(
                            level.span(),
                            format!(
                                "unknown isolation `{other}`: expected \"server\" (always its \
                                 own server) or \"shared\" (a shared server)"
                            ),
                        ));
                    }
                });
            }
            "passes" => {
                self.passes = Some(crate::passes::parse(value)?);
            }
            "needs_peer" => {
                self.needs_peer = Some(crate::peer::parse(value)?);
            }
            _ if crate::budget::NAMES.contains(&name) => {
                self.budget.set(name, value)?;
            }
            "crate" => {
                let path = string(
                    value,
                    "`crate` takes a path in a string: `crate = \"my_reexport\"`",
                )?;
                self.krate = Some(path.parse().map_err(|_| {
                    syn::Error::new(
                        path.span(),
                        "`crate` must be a path such as \"::harness_runtime\"",
                    )
                })?);
            }
            _ => return Err(syn::Error::new(arg.name.span(), unknown(name))),
        }
        Ok(())
    }
}

/// `explore = N`: an integer literal from 1 to [`MAX_EXPLORE_RUNS`].
fn explore_runs(value: &Expr) -> syn::Result<u32> {
    let range = format!("between 1 and {MAX_EXPLORE_RUNS}");
    let Expr::Lit(ExprLit {
        lit: Lit::Int(number),
        ..
    }) = value
    else {
        return Err(syn::Error::new(
            value.span(),
            format!("`explore` takes a number of schedules {range}: `explore = 200`"),
        ));
    };
    match number.base10_parse::<u32>() {
        Ok(runs) if (1..=MAX_EXPLORE_RUNS).contains(&runs) => Ok(runs),
        _ => Err(syn::Error::new(
            number.span(),
            format!(
                "`explore = {}` is out of range: give a number of schedules {range}",
                number.base10_digits()
            ),
        )),
    }
}

/// Checks a decision point of `explore_points`: a wire or product point in a gate's spelling;
/// `model` (the scripted model's answers); client points and heartbeats are refused (the
/// scheduler never holds them).
pub(crate) fn check_explore_point(name: &str) -> Result<(), String> {
    if name == harness_opencode_api::spelling::MODEL_POINT {
        return Ok(());
    }
    match harness_opencode_api::spelling::parse(name) {
        Ok(harness_opencode_api::spelling::Spelled::Client(client)) => Err(format!(
            "`{client}` is {}: explore_points takes the wire and product points the scheduler \
             orders, {}, or `model`",
            if CLIENT_POINTS.contains(&client) {
                "a client gate point, not a decision point"
            } else {
                "no decision point"
            },
            harness_opencode_api::spelling::FORMS
        )),
        Ok(harness_opencode_api::spelling::Spelled::Acp(_)) => Err(format!(
            "`{name}` is a gate point on an ACP agent's traffic, not a decision point: \
             explore_points takes the wire and product points the scheduler orders, or `model`"
        )),
        Ok(harness_opencode_api::spelling::Spelled::Event(HEARTBEAT)) => Err(format!(
            "`{name}` is never a decision point: heartbeats pass at once; list the events whose \
             order matters"
        )),
        Ok(_) => Ok(()),
        Err(problem) => Err(harness_opencode_api::spelling::message(name, &problem)),
    }
}

/// OpenCode's keep-alive event, which no exploration orders.
const HEARTBEAT: &str = "server.heartbeat";

fn unknown(name: &str) -> String {
    format!(
        "unknown option `{name}`: expected one of {}",
        NAMES.join(", ")
    )
}

/// The value as a string literal, or an error on the value's span.
fn string(value: &Expr, expected: &str) -> syn::Result<LitStr> {
    match value {
        Expr::Lit(ExprLit {
            lit: Lit::Str(text),
            ..
        }) => Ok(text.clone()),
        other => Err(syn::Error::new(other.span(), expected)),
    }
}

/// `["A", "B"]` (or, when `single_ok`, a lone `"A"`): every element a string literal.
fn string_list(value: &Expr, single_ok: bool, expected: &str) -> syn::Result<Vec<LitStr>> {
    match value {
        Expr::Array(array) => array.elems.iter().map(|e| string(e, expected)).collect(),
        Expr::Lit(ExprLit {
            lit: Lit::Str(text),
            ..
        }) if single_ok => Ok(vec![text.clone()]),
        other => Err(syn::Error::new(other.span(), expected)),
    }
}

/// An environment variable name a shell can set: non-empty, no `=`, whitespace or NUL.
fn check_var_name(var: &LitStr) -> syn::Result<()> {
    let text = var.value();
    let bad = text.is_empty()
        || text
            .chars()
            .any(|c| c == '=' || c == '\0' || c.is_whitespace());
    if bad {
        return Err(syn::Error::new(
            var.span(),
            "not an environment variable name: expected a non-empty name without `=` or whitespace",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    /// The attribute's agents are the runtime's (`AnyAgentKind::name` reads the shared list),
    /// spelt alike and in the same order.
    #[test]
    fn agents_are_the_shared_spellings() {
        let attribute: Vec<&str> = super::AGENTS.iter().map(|(name, _)| *name).collect();
        assert_eq!(attribute, harness_opencode_api::agents::AGENT_NAMES);
    }
}
