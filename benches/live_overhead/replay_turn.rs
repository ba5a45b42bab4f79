//! `replay_turn`: the `turn` section's turn (`session.prompt`, a fresh session each time) with
//! the model's answer replayed from a cassette, against the same turn answered by the scripted
//! model, samples interleaved; once per API a cassette records: chat completions (`replay_turn`),
//! Anthropic Messages (`replay_turn.anthropic`), OpenAI Responses (`replay_turn.responses`) and
//! Gemini (`replay_turn.gemini`), each API's turns on agents of its own. The cassette is recorded
//! first, in this run, from a scripted upstream speaking that API (its provider package) through
//! the recording relay, with one interaction per replayed turn (a replay serves each recorded
//! interaction once), so both sides stream the same chunks; the scripted side talks to the
//! scripted model with the same package (`model_api`). Every agent has a server of its own
//! (`isolation = "server"`), so the figures are the same whatever `LIVE_ISOLATION` says.

use std::path::Path;
use std::time::Duration;

use harness_runtime::model::Answer;
use harness_runtime::model::{Matcher, Rule};
use harness_runtime::opencode::{Agent, AgentOptions};
use harness_runtime::prelude::*;
use harness_runtime::testing::{self, CassettePlan, ModelSlot};
use harness_runtime::{__private::ScenarioOptions, ModelApi};

use crate::common::{Bench, BenchError, OWN_SERVER, finish, interleave, progress};
use crate::report::Figure;
use crate::turn::{REPLY, harness_turn};

const SECTION: &str = "replay_turn";

/// One API's part: the package both sides use, its ratio's name (its medians' prefix), and the
/// scenario its cassette is recorded for and replayed by (a replay checks the name).
struct Variant {
    api: ModelApi,
    ratio: &'static str,
    scenario: &'static str,
}

/// Every API a cassette records, chat completions first (the ratio `replay_turn` always named).
const VARIANTS: [Variant; 4] = [
    Variant {
        api: ModelApi::OpenAiCompatible,
        ratio: "replay_turn",
        scenario: "bench::replay_turn",
    },
    Variant {
        api: ModelApi::Anthropic,
        ratio: "replay_turn.anthropic",
        scenario: "bench::replay_turn_anthropic",
    },
    Variant {
        api: ModelApi::OpenAi,
        ratio: "replay_turn.responses",
        scenario: "bench::replay_turn_responses",
    },
    Variant {
        api: ModelApi::Google,
        ratio: "replay_turn.gemini",
        scenario: "bench::replay_turn_gemini",
    },
];

pub async fn measure(bench: &Bench) -> Result<Vec<Figure>, BenchError> {
    let mut figures = Vec::new();
    for variant in &VARIANTS {
        progress(
            SECTION,
            &format!("{} ({})", variant.ratio, variant.api.name()),
        );
        figures.extend(measure_api(bench, variant).await?);
    }
    Ok(figures)
}

async fn measure_api(bench: &Bench, variant: &Variant) -> Result<Vec<Figure>, BenchError> {
    let n = bench.settings.turn_pairs();
    let options = ScenarioOptions {
        model_api: variant.api,
        ..OWN_SERVER
    };
    let dir = tempfile::tempdir().map_err(|e| BenchError::io("create a temp dir", e))?;
    let cassette = dir.path().join("bench__replay_turn.json");
    let mut scripted = bench.live("bench::turn", options);
    scripted
        .model()
        .rule(Rule::when(Matcher::any()).reply(Reply::text(REPLY)));
    let mut replayed = testing::live_with_cassette(
        bench.info(variant.scenario, options),
        CassettePlan::Replay(cassette.clone()),
    );
    let measured = async {
        // A warm-up turn per side, then n measured ones; the scripted side's server starts
        // meanwhile (nothing is measured before both sides run), which keeps `--quick` short.
        let (recorded, scripted_agent) = tokio::join!(
            record(bench, variant, &cassette, n + 1),
            scripted.opencode()
        );
        recorded?;
        let scripted_agent = scripted_agent.map_err(BenchError::harness)?;
        let replayed_agent = replayed.opencode().await.map_err(BenchError::harness)?;
        if scripted_agent.is_shared() || replayed_agent.is_shared() {
            return Err(BenchError::NotOwnServer(SECTION));
        }
        bench.redactor.add_port(scripted_agent.port());
        bench.redactor.add_port(replayed_agent.port());
        measure_on(variant.ratio, &replayed_agent, &scripted_agent, n).await
    }
    .await;
    // Every turn of both sides reached its model once, and every replayed one was answered
    // from the cassette (a request that matched nothing fails `finish`).
    let scripted_requests = scripted.model().requests();
    let replayed_requests = replayed.model().requests();
    let replayed_finished = testing::finish(&mut replayed, measured.is_ok())
        .await
        .map_err(BenchError::harness);
    let scripted_finished = finish(scripted, measured.is_ok()).await;
    let figures = measured?;
    replayed_finished?;
    scripted_finished?;
    let from_cassette = replayed_requests
        .iter()
        .filter(|r| matches!(r.answer, Answer::Cassette { .. }))
        .count();
    let expected = n + 1;
    if scripted_requests.len() != expected || from_cassette != expected {
        return Err(BenchError::Harness(format!(
            "{}: for {expected} turns per side, the scripted model saw {} requests and the \
             cassette answered {from_cassette} of {}",
            variant.ratio,
            scripted_requests.len(),
            replayed_requests.len()
        )));
    }
    Ok(figures)
}

/// Records `turns` turns of a scripted upstream speaking `variant`'s API into `cassette`.
async fn record(
    bench: &Bench,
    variant: &Variant,
    cassette: &Path,
    turns: usize,
) -> Result<(), BenchError> {
    let mut upstream = ModelSlot::default();
    upstream.set_api(variant.api);
    upstream
        .model()
        .map_err(BenchError::harness)?
        .rule(Rule::when(Matcher::any()).reply(Reply::text(REPLY)));
    // The scripted model's own config, as a user's config naming a real provider would be.
    let config = upstream.opencode_config(AgentOptions::default().permission_config().clone());
    let mut live = testing::live_with_cassette(
        bench.info(variant.scenario, OWN_SERVER),
        CassettePlan::Record(cassette.to_path_buf()),
    );
    let recorded = async {
        let agent = live
            .opencode_with(AgentOptions::default().config(config))
            .await
            .map_err(BenchError::harness)?;
        for _ in 0..turns {
            harness_turn(&agent).await?;
        }
        Ok::<_, BenchError>(())
    }
    .await;
    let finished = testing::finish(&mut live, recorded.is_ok())
        .await
        .map_err(BenchError::harness);
    recorded?;
    finished?;
    let relayed = upstream.model().map_err(BenchError::harness)?.requests();
    if relayed.len() != turns || !cassette.is_file() {
        return Err(BenchError::Harness(format!(
            "recording {turns} turns relayed {} requests and wrote {}",
            relayed.len(),
            if cassette.is_file() {
                "the cassette"
            } else {
                "no cassette"
            }
        )));
    }
    progress(
        SECTION,
        &format!("{}: recorded {turns} turns", variant.ratio),
    );
    Ok(())
}

async fn measure_on(
    name: &str,
    replayed: &Agent,
    scripted: &Agent,
    n: usize,
) -> Result<Vec<Figure>, BenchError> {
    // The first prompt loads the provider (seconds): a warm-up turn per side.
    harness_turn(replayed).await?;
    harness_turn(scripted).await?;
    let [replay, script]: [Vec<Duration>; 2] = interleave(
        name,
        n,
        ["replay", "scripted"],
        || harness_turn(replayed),
        || harness_turn(scripted),
    )
    .await?;
    Ok([
        Figure::ratio(name, &replay, &script),
        Figure::median(&format!("{name}.replay"), &replay),
        Figure::median(&format!("{name}.scripted"), &script),
    ]
    .into_iter()
    .flatten()
    .collect())
}
