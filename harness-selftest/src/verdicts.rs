//! The cases of the verdicts proof, shared by both sides: what each `verdicts::` scenario of
//! `selftest-scenarios` asks, and how the scripted upstream of `tests/runs/verdicts.rs` answers it
//! (by the last user text), run after run, in a known pattern.

use harness_runtime::model::{Matcher, Reply, Rule, ScriptedModel};

/// `passes = "3 of 5"`: answered right, wrong, right, right, …: the verdict passes at run 4.
pub const THREE_OF_FIVE: &str = "Verdicts: three of five, say the word";
/// `passes = "3 of 4"`: answered right, then wrong from then on: after run 3 three passes are
/// out of reach (one passed, one run left).
pub const THREE_OF_FOUR: &str = "Verdicts: three of four, say the word";
/// The answer a run needs to pass.
pub const RIGHT: &str = "The word is right.";
/// An answer that fails the run.
pub const WRONG: &str = "The word is wrong.";

/// Scripts `model` as the upstream of both cases (rules are tried in order, spent ones skipped).
pub fn script_upstream(model: &ScriptedModel) {
    let asks = Matcher::last_user_text_contains;
    model
        .rule(
            Rule::when(asks(THREE_OF_FIVE))
                .reply(Reply::text(RIGHT))
                .times(1),
        )
        .rule(
            Rule::when(asks(THREE_OF_FIVE))
                .reply(Reply::text(WRONG))
                .times(1),
        )
        .rule(Rule::when(asks(THREE_OF_FIVE)).reply(Reply::text(RIGHT)))
        .rule(
            Rule::when(asks(THREE_OF_FOUR))
                .reply(Reply::text(RIGHT))
                .times(1),
        )
        .rule(Rule::when(asks(THREE_OF_FOUR)).reply(Reply::text(WRONG)));
}
