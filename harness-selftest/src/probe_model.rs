//! A scripted model that answers the root live suite's real-model probes (`tests/live/probes.rs`)
//! the way a capable model does: the marker it is asked for, a reply streamed in many deltas, the
//! exact bash commands it is asked to run, a structured answer, and an essay slow enough to be
//! aborted mid-stream. The hosted-provider proof serves it over HTTPS as OpenCode's built-in
//! `anthropic` provider, so every probe exercises what it probes (none is skipped for a model
//! that answered in prose).

use std::time::Duration;

use harness_runtime::model::{Matcher, Reply, Rule, ScriptedModel};
use serde_json::json;

/// Scripts `model` to answer every probe, and the title requests OpenCode sends its small model.
pub fn script(model: &ScriptedModel) {
    let asks = Matcher::last_user_text_contains;
    let numbers = [
        "one",
        "two",
        "three",
        "four",
        "five",
        "six",
        "seven",
        "eight",
        "nine",
        "ten",
        "eleven",
        "twelve",
        "thirteen",
        "fourteen",
        "fifteen",
        "sixteen",
        "seventeen",
        "eighteen",
        "nineteen",
        "twenty",
    ];
    let essay = "Computing began with counting machines and grew through many hands. ".repeat(40);
    model
        // A title request offers no tools; every turn of a probe offers bash.
        .rule(Rule::when(!Matcher::offers_tool("bash")).reply(Reply::text("Probe session")))
        .rule(Rule::when(Matcher::follows_tool_result()).reply(Reply::text("Done.")))
        .rule(
            Rule::when(Matcher::wants_structured_output())
                .reply(Reply::structured(json!({"answer": "Paris"}))),
        )
        .rule(Rule::when(asks("PROBE-MARKER and nothing else")).reply(Reply::text("PROBE-MARKER")))
        .rule(
            Rule::when(asks("Count from 1 to 20"))
                .reply(Reply::text(numbers.join("\n")).in_deltas(numbers.len())),
        )
        .rule(
            Rule::when(asks("echo PROBE-MARKER > probe.txt"))
                .reply(bash("echo PROBE-MARKER > probe.txt")),
        )
        .rule(Rule::when(asks("echo PROBE-MARKER")).reply(bash("echo PROBE-MARKER")))
        .rule(
            Rule::when(asks("500-word essay")).reply(
                Reply::text(essay)
                    .in_deltas(80)
                    .slow(Duration::from_millis(100)),
            ),
        );
}

/// A bash call running `command`.
fn bash(command: &str) -> Reply {
    Reply::tool_call(
        "bash",
        json!({"command": command, "description": "Run the requested command"}),
    )
}
