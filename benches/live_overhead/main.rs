//! `cargo bench --bench live_overhead`: what the harness costs on top of raw OpenCode, measured
//! side by side in one run and printed as ratios of medians (absolute times depend on the
//! machine; ratios measured in the same run do much less).
//!
//! `cargo bench --bench live_overhead -- --quick` is a short run (one sample per side, one
//! scenario for the suite figures); `--only turn,replay_turn` measures some sections. Sample
//! counts: `LIVE_BENCH_SAMPLES` (see `settings.rs`). Skips (exit 0) when OpenCode is not
//! installed.

mod acp_turn;
mod agent_memory;
mod common;
mod explored_run;
mod explored_schedule;
mod fixture;
mod forwarded_turn;
mod libtest;
mod model;
mod nextest;
mod nextest_output;
mod proc_cpu;
mod provisioning;
mod raw;
mod relayed_turn;
mod replay_turn;
mod report;
mod report_overhead;
mod scenario_cpu;
mod settings;
mod sse;
mod suite;
mod turn;

use std::path::PathBuf;
use std::process::ExitCode;

use harness_runtime::opencode::ProvisionError;
use harness_runtime::testing;

use common::{Bench, BenchError, progress};
use report::{Figure, RATIOS};
use settings::Settings;

fn main() -> ExitCode {
    // The harness re-executes this binary as its reaper and as the fixture agent.
    if let Some(code) = harness_runtime::runner::run_role() {
        return code;
    }
    let settings = match Settings::from_env() {
        Ok(settings) => settings,
        Err(problem) => {
            eprintln!("error: {problem}");
            return ExitCode::from(2);
        }
    };
    let manifest_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    println!(
        "live_overhead: the harness against raw OpenCode, side by side in one run; figures are \
         ratios of medians (harness / raw, A/B samples interleaved), with the medians they come \
         from"
    );
    let opencode = match testing::find_opencode(&manifest_dir) {
        Ok(opencode) => opencode,
        // The one rule for a missing prerequisite: skipped, or a failure under CI / LIVE_STRICT=1.
        Err(e @ ProvisionError::OpenCodeNotFound) => {
            return match testing::MissingPrerequisite::decide(e.to_string()) {
                testing::MissingPrerequisite::Skip(reason) => {
                    println!("skipped: {reason}");
                    ExitCode::SUCCESS
                }
                testing::MissingPrerequisite::Fail(message) => {
                    eprintln!("error: {message}");
                    ExitCode::FAILURE
                }
            };
        }
        // A wrong LIVE_OPENCODE_BIN is a mistake to fix, not a machine without OpenCode.
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    println!(
        "  provisioning: live.opencode() starting a server of its own / bare `opencode serve \
         --port 0` + health poll, same root layout and environment ({n} per side)\n  \
         turn: session.prompt() / bare reqwest prompt_async + /event until idle, same server \
         (the harness's own) and scripted reply ({t} per side)\n  \
         forwarded_turn: that bare reqwest turn through the agent's forwarder / straight to the \
         agent, same server ({t} per side)\n  \
         explored_schedule: that bare reqwest turn through a forwarder with an exploring \
         run's scheduler (quiet {q:?}) / through one without, same server ({e} per side); \
         .per_run: one explored run whole (lease, that turn through the agent's forwarder with \
         a scheduler, release) on a warm workspace / in a fresh directory ({e} per side)\n  \
         relayed_turn: session.prompt() through the recording relay to a local HTTPS upstream / \
         straight to it, each on a server of its own ({t} per side)\n  \
         replay_turn: session.prompt() answered from a cassette (recorded first, in this run) / \
         the same turn answered by the scripted model, each on a server of its own, per API \
         (chat completions, .anthropic, .responses, .gemini; {t} per side each)\n  \
         acp_turn: live.acp_agent(OpenCode) started and one turn through it / a bare ACP \
         client of `opencode acp` in the same root layout, start to the prompt's answer ({n} per \
         side)\n  \
         scenario_cpu: a shared server's CPU per one-turn scenario / a fresh directory's on a \
         bare server ({cpu_rounds} rounds of {cpu_per_round} per side)\n  \
         shared_speedup: live suite wall time, LIVE_ISOLATION=server / shared, medians of {s} \
         interleaved runs a side; thread_scaling: --test-threads 1 (one run) / 2 (filter \
         {filter:?})\n  \
         nextest_default: the default live suite under cargo nextest run / cargo test, {x} \
         interleaved pair(s) (filter {nextest_filter:?})\n  \
         report_overhead: live suite wall time with the run report written / LIVE_REPORT=off, \
         runs interleaved ({r} per side, same filter)\n  \
         also: fixture agent start-to-ready ({f} starts), scripted model time to first chunk \
         ({m} requests){quick}",
        n = settings.provisioning_pairs(),
        t = settings.turn_pairs(),
        e = settings.explored_pairs(),
        q = harness_runtime::testing::explore_quiet(),
        f = settings.samples * 2,
        m = settings.samples * 10,
        filter = settings.suite_filter,
        nextest_filter = settings.nextest_filter,
        s = settings.suite_runs(),
        x = settings.nextest_pairs(),
        cpu_rounds = settings.cpu_rounds().0,
        cpu_per_round = settings.cpu_rounds().1,
        r = report_overhead::pairs(&settings),
        quick = if settings.quick {
            "\n  --quick: a short run, figures are indicative only"
        } else {
            ""
        },
    );
    if !settings.only.is_empty() {
        println!("  sections: {}", settings.only.join(", "));
    }
    if settings.as_test {
        println!(
            "  started without --bench (cargo test): a smoke run of the cheap sections; \
             measure with `cargo bench --bench live_overhead`"
        );
    }
    let bench = Bench::new(settings, opencode, manifest_dir);
    let (figures, errors) = run(&bench);
    println!();
    let ratios = figures.iter().filter(|f| matches!(f, Figure::Ratio { .. }));
    let medians = figures
        .iter()
        .filter(|f| matches!(f, Figure::Median { .. }));
    let peaks = figures.iter().filter(|f| matches!(f, Figure::Peak { .. }));
    for figure in ratios.chain(medians).chain(peaks) {
        let line = figure.line();
        // What scripts read back must parse back; a format change fails here, not in them.
        assert!(
            Figure::parse(&line).is_some(),
            "unparseable figure line {line:?}"
        );
        println!("{line}");
    }
    for figure in &figures {
        if let Figure::Ratio { name, value } = figure {
            let target = RATIOS
                .iter()
                .find(|r| r.name == name)
                .and_then(|r| r.target);
            if let Some(target) = target {
                println!("{}", target.verdict(name, *value));
            }
        }
    }
    if errors.is_empty() {
        ExitCode::SUCCESS
    } else {
        for (section, error) in &errors {
            eprintln!(
                "error: {section}: {}",
                bench.redactor.redact(&error.to_string())
            );
        }
        ExitCode::FAILURE
    }
}

/// Every selected section in turn; a failed section is reported and the others still run.
fn run(bench: &Bench) -> (Vec<Figure>, Vec<(&'static str, BenchError)>) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime starts");
    // The reaper starts on the first registration; doing that now keeps its start out of the
    // first sample of either side.
    if let Err(e) = testing::register_with_reaper(&testing::new_token()) {
        return (
            Vec::new(),
            vec![("reaper", BenchError::io("start the reaper", e))],
        );
    }
    let mut figures = Vec::new();
    let mut errors = Vec::new();
    for section in settings::SECTIONS {
        if !bench.settings.runs(section) {
            continue;
        }
        progress(section, "started");
        let started = std::time::Instant::now();
        let result = match section {
            "model" => runtime.block_on(model::measure(bench)),
            "fixture" => runtime.block_on(fixture::measure(bench)),
            "turn" => runtime.block_on(turn::measure(bench)),
            "forwarded_turn" => runtime.block_on(forwarded_turn::measure(bench)),
            "explored_schedule" => runtime.block_on(explored_schedule::measure(bench)),
            "relayed_turn" => runtime.block_on(relayed_turn::measure(bench)),
            "replay_turn" => runtime.block_on(replay_turn::measure(bench)),
            "provisioning" => runtime.block_on(provisioning::measure(bench)),
            "acp_turn" => runtime.block_on(acp_turn::measure(bench)),
            "scenario_cpu" => runtime.block_on(scenario_cpu::measure(bench)),
            "suite" => suite::measure(bench),
            "nextest" => nextest::measure(bench),
            "report" => report_overhead::measure(bench),
            _ => unreachable!("settings validates section names"),
        };
        let result = result.and_then(|found| {
            let missing = report::missing_ratios(section, &found);
            if missing.is_empty() {
                Ok(found)
            } else {
                Err(BenchError::MissingRatios(missing))
            }
        });
        // What each section costs: CI runs them all with --quick against a time limit.
        progress(
            section,
            &format!("took {}", common::secs(started.elapsed())),
        );
        match result {
            Ok(found) => figures.extend(found),
            Err(e) => {
                progress(section, "failed (reported at the end)");
                errors.push((section, e));
            }
        }
    }
    runtime.shutdown_timeout(std::time::Duration::from_secs(10));
    (figures, errors)
}
