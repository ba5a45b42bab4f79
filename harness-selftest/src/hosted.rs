//! The cases of the hosted-provider round trip, shared by both sides: what each `hosted::`
//! scenario of `selftest-scenarios` asks, how the scripted upstream of the test answers it, and
//! the provider packages it is recorded through. The upstream is reached over HTTPS only
//! ([`ScriptedUpstream::start_https`](crate::upstream::ScriptedUpstream::start_https)), as a
//! hosted provider is, and answers each package's own wire API.

use harness_runtime::model::{Matcher, Reply, Rule, ScriptedModel};
use serde_json::json;

/// OpenCode's provider packages a recording goes through, by the name its cassette folder
/// takes: OpenAI chat completions, the Responses API, Anthropic's Messages, Google's Gemini,
/// Ollama's native `/api/chat`. The Ollama one is not bundled in OpenCode: the checkout's
/// `package.json` pins it, and the harness seeds each server's cache with it.
pub const PACKAGES: [(&str, &str); 5] = [
    ("chat_completions", "@ai-sdk/openai-compatible"),
    ("responses", "@ai-sdk/openai"),
    ("anthropic", "@ai-sdk/anthropic"),
    ("gemini", "@ai-sdk/google"),
    ("ollama", "ollama-ai-provider-v2"),
];

/// A text turn, whose answer reports [`USAGE`].
pub const TEXT: &str = "Hosted: answer in a few words";
/// A turn that runs a tool, then answers [`AFTER_TOOL_TEXT`].
pub const TOOL_CALL: &str = "Hosted: run a tool";
/// Answered 429 with `retry-after: 1` once, then [`AFTER_RATE_LIMIT_TEXT`].
pub const AFTER_RATE_LIMIT: &str = "Hosted: answer after a rate limit";

/// The text turn's answer.
pub const TEXT_ANSWER: &str = "Hello from the hosted model.";
/// What the tool prints.
pub const TOOL_OUTPUT: &str = "hosted-tool-output";
/// The answer after the tool ran.
pub const AFTER_TOOL_TEXT: &str = "The tool printed its words.";
/// The answer after the rate limit.
pub const AFTER_RATE_LIMIT_TEXT: &str = "Answered after the rate limit.";
/// The usage of the text turn's answer: input, output.
pub const USAGE: (u64, u64) = (321, 45);

/// Scripts `model` as the upstream of every case (rules on the prompt; the rate limit once).
pub fn script_upstream(model: &ScriptedModel) {
    let asks = Matcher::last_user_text_contains;
    let (input, output) = USAGE;
    model
        .rule(Rule::when(asks(TEXT)).reply(Reply::text(TEXT_ANSWER).with_usage(input, output)))
        .rule(
            Rule::when(asks(TOOL_CALL).and(Matcher::follows_tool_result()))
                .reply(Reply::text(AFTER_TOOL_TEXT)),
        )
        .rule(Rule::when(asks(TOOL_CALL)).reply(Reply::tool_call(
            "bash",
            json!({"command": format!("echo {TOOL_OUTPUT}"), "description": "Print words"}),
        )))
        .rule(
            Rule::when(asks(AFTER_RATE_LIMIT))
                .reply(
                    Reply::http_error(
                        429,
                        json!({"type": "error", "error": {"type": "rate_limit_error",
                               "message": "scripted rate limit"}}),
                    )
                    .with_retry_after(1),
                )
                .times(1),
        )
        .rule(Rule::when(asks(AFTER_RATE_LIMIT)).reply(Reply::text(AFTER_RATE_LIMIT_TEXT)));
}
