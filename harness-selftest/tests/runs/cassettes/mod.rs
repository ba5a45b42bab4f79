//! The cassette round trip with real OpenCode and no real model: the `round_trip::`
//! scenarios of `selftest-scenarios` are recorded from a scripted upstream that this process
//! runs (`upstream`), then replayed with the upstream stopped and no model variable set, and
//! must give the evidence their recording wrote, byte for byte. Then a changed prompt, broken
//! cassettes, and a scenario failing while it is recorded, each with the message it must give;
//! and the recordings' provenance, stale ones, `verify` and `missing` (`provenance`).

mod files;
mod hosted;
mod probes;
mod provenance;
mod upstream;

use std::path::Path;
use std::time::Duration;

use harness_runtime::scaled;
use harness_selftest::prerequisites::{Prerequisite::OpenCode, Test};
use harness_selftest::round_trip as case;
use harness_selftest::run::Finished;
use harness_selftest::sandbox::Sandbox;
use harness_selftest::test;

use hosted::each_package_records_over_https_and_replays_without_the_upstream;
use probes::the_root_probes_record_from_builtin_anthropic_over_https_and_replay;
use upstream::{CANARIES, MODEL};

/// The scenario binary.
const SCENARIOS: &str = env!("CARGO_BIN_EXE_selftest-scenarios");
/// The ceiling of one run of the scenario binary, before scaling.
const RUN_CEILING: Duration = Duration::from_secs(600);
/// The scenarios' functions, in the order the runner reports them.
const CASES: [&str; 7] = [
    "dropped_connection_then_text",
    "error_mid_stream",
    "refused_request",
    "server_error_then_text",
    "structured_output",
    "text_in_deltas",
    "tool_call",
];

pub(crate) fn tests() -> Vec<Test> {
    vec![
        test!(recorded_turns_replay_as_recorded_without_a_model).needs(OpenCode),
        test!(a_scenario_failing_while_recorded_writes_a_pending_cassette).needs(OpenCode),
        test!(each_package_records_over_https_and_replays_without_the_upstream).needs(OpenCode),
        test!(the_root_probes_record_from_builtin_anthropic_over_https_and_replay).needs(OpenCode),
    ]
}

/// Where a run keeps its cassettes and snapshots (never in the checkout).
struct Places {
    cassettes: tempfile::TempDir,
    snapshots: tempfile::TempDir,
}

impl Places {
    fn new() -> Self {
        Places {
            cassettes: tempfile::tempdir().expect("a temp dir for cassettes"),
            snapshots: tempfile::tempdir().expect("a temp dir for snapshots"),
        }
    }

    fn cassettes(&self) -> &Path {
        self.cassettes.path()
    }

    fn snapshots(&self) -> &Path {
        self.snapshots.path()
    }
}

/// Runs `args` of the scenario binary with the cassette folder `cassettes`, the snapshot folder
/// of `places`, `env` and nothing else of this process's settings; checks nothing of the run is
/// left running, and no canary is in what it left (the roots of failed scenarios: server logs,
/// homes, workspaces).
fn run(places: &Places, cassettes: &Path, args: &[&str], env: &[(&str, &str)]) -> Finished {
    let sandbox = Sandbox::new();
    let mut command = sandbox.command(SCENARIOS, args);
    command
        .env("LIVE_CASSETTE_DIR", cassettes)
        .env("LIVE_SNAPSHOT_DIR", places.snapshots())
        .envs(env.iter().copied());
    let finished = sandbox.run_clean(command, scaled(RUN_CEILING));
    files::assert_no_canary_in_files(&[sandbox.tmp.path()]);
    finished
}

/// Panics when a canary, or the cassette folder of `places` (a temp dir: volatile, shown by its
/// variable), shows in the run's output. (insta names the snapshot file it writes: its own
/// output, not the harness's.)
fn assert_output_clean(finished: &Finished, places: &Places) {
    for canary in CANARIES {
        finished.assert_nowhere(canary);
    }
    finished.assert_nowhere(&places.cassettes().display().to_string());
}

/// Records the seven cases from the upstream (with the canaries in its config), replays them with
/// the upstream stopped and no model variables, then checks an edited answer replays as edited,
/// and a changed prompt and broken cassettes fail as they must.
fn recorded_turns_replay_as_recorded_without_a_model() {
    let places = Places::new();
    let mut upstream = upstream::start();
    let config = upstream::config(&upstream);

    // Run 1: record.
    let recorded = run(
        &places,
        places.cassettes(),
        &["--test-threads", "2", "round_trip::"],
        &[
            ("LIVE_CASSETTE", "record"),
            // Both threads record, as before the cap (its default, 1, is for a local model).
            ("LIVE_MODEL_CONCURRENCY", "2"),
            ("OPENCODE_CONFIG_CONTENT", &config),
            ("TEST_OLLAMA_MODEL", MODEL),
            ("INSTA_UPDATE", "always"),
        ],
    );
    for function in CASES {
        let name = format!("round_trip::{function}");
        let file = format!("$LIVE_CASSETTE_DIR/round_trip__{function}.json");
        recorded
            .assert_result(&name, "ok")
            .assert_stderr(&format!("[live] {name}: model: record → {file}\n"))
            .assert_stderr(&format!("[live] {name}: cassette written: {file}\n"));
    }
    recorded.assert_code(0);
    assert_output_clean(&recorded, &places);
    files::assert_each_case_recorded(places.cassettes());
    provenance::assert_each_recording_has_provenance(places.cassettes());
    // Every request the upstream answered is in a cassette, and it missed none.
    let in_cassettes: usize = CASES
        .iter()
        .map(|f| files::interactions(&files::read(places.cassettes(), f)).len())
        .sum();
    assert_eq!(
        upstream::requests(&upstream),
        (in_cassettes, 0),
        "\n{recorded}"
    );
    let snapshots = harness_selftest::files::files_under(places.snapshots());
    assert_eq!(snapshots.len(), CASES.len(), "{snapshots:?}");
    files::assert_evidence_captures_each_turn(places.snapshots());
    let accepted: Vec<String> = snapshots
        .iter()
        .map(|s| std::fs::read_to_string(s).unwrap())
        .collect();

    // Run 2: replay, with no model to talk to and nothing saying where one would be.
    upstream.stop();
    let replayed = run(
        &places,
        places.cassettes(),
        &["--test-threads", "2", "round_trip::"],
        &[("INSTA_UPDATE", "no")],
    );
    for function in CASES {
        let name = format!("round_trip::{function}");
        let file = format!("$LIVE_CASSETTE_DIR/round_trip__{function}.json");
        replayed
            .assert_result(&name, "ok")
            .assert_stderr(&format!("[live] {name}: model: replay {file}\n"));
    }
    replayed
        .assert_code(0)
        .assert_nowhere("model: record")
        .assert_nowhere("stale")
        .assert_nowhere("provenance unknown");
    assert_output_clean(&replayed, &places);
    // The same evidence: the snapshots passed unchanged, and no new one was proposed.
    let after: Vec<String> = harness_selftest::files::files_under(places.snapshots())
        .iter()
        .map(|s| std::fs::read_to_string(s).unwrap())
        .collect();
    assert_eq!(
        after, accepted,
        "the replay changed the snapshots\n{replayed}"
    );

    assert_an_edited_answer_is_what_replays(&places);
    assert_a_changed_prompt_misses(&places);
    assert_broken_cassettes_fail_naming_the_file(&places);
    provenance::assert_stale_cassettes_warn_and_fail_under_strict(&places);
    provenance::assert_verify_reports_drift_and_writes_nothing(&places);
    provenance::assert_missing_records_only_the_missing(&places);

    let read = files::assert_no_canary_in_files(&[places.cassettes(), places.snapshots()]);
    assert_eq!(read, 2 * CASES.len(), "cassettes and snapshots");
}

/// The answer a replay serves is the cassette's: an answer edited by hand replays as edited,
/// and the evidence (against the recording's snapshot) fails.
fn assert_an_edited_answer_is_what_replays(places: &Places) {
    let name = "round_trip::text_in_deltas";
    let file = "round_trip__text_in_deltas.json";
    let mut cassette: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(places.cassettes().join(file)).unwrap())
            .unwrap();
    let content = cassette["interactions"][0]["response"]["chunks"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find_map(|chunk| chunk.pointer_mut("/data/choices/0/delta/content"))
        .expect("a content delta");
    *content = format!("Edited by hand. {}", content.as_str().unwrap()).into();
    let edited = tempfile::tempdir().unwrap();
    std::fs::write(
        edited.path().join(file),
        serde_json::to_string_pretty(&cassette).unwrap(),
    )
    .unwrap();
    run(
        places,
        edited.path(),
        &["--exact", name],
        &[("INSTA_UPDATE", "no")],
    )
    .assert_code(101)
    .assert_result(name, "FAILED")
    .assert_stdout(&format!(
        "the evidence of `{name}` does not match \
         `$LIVE_SNAPSHOT_DIR/round_trip__text_in_deltas.snap`"
    ))
    .assert_shows(&["Edited by hand. "]);
}

/// Run 3: the prompt changed since the recording: the request matches nothing, and the failure
/// names the field that differs and the command that records the cassette again.
fn assert_a_changed_prompt_misses(places: &Places) {
    let name = "round_trip::text_in_deltas";
    let changed = run(
        places,
        places.cassettes(),
        &["--exact", name],
        &[("INSTA_UPDATE", "no"), (case::PROMPT_SUFFIX, " (changed)")],
    );
    changed
        .assert_code(101)
        .assert_result(name, "FAILED")
        .assert_stdout("request(s) matched no recorded interaction")
        .assert_stdout("first difference: last_user_text")
        .assert_stdout(&format!(
            "record the cassette again with `LIVE_CASSETTE=record cargo test --test \
             selftest-scenarios -- {name} --exact`"
        ));
}

/// Run 4: a truncated cassette and one of another format fail the scenario when it provisions
/// its agent, naming the file and what is wrong.
fn assert_broken_cassettes_fail_naming_the_file(places: &Places) {
    let name = "round_trip::text_in_deltas";
    let file = "round_trip__text_in_deltas.json";
    let good = std::fs::read_to_string(places.cassettes().join(file)).unwrap();
    let broken = tempfile::tempdir().unwrap();
    let broken_file = broken.path().join(file);

    std::fs::write(&broken_file, &good[..good.len() / 2]).unwrap();
    let truncated = run(places, broken.path(), &["--exact", name], &[]);
    truncated
        .assert_code(101)
        .assert_result(name, "FAILED")
        .assert_stdout(&format!(
            "could not replay the cassette: cassette $LIVE_CASSETTE_DIR/{file}: not JSON: EOF \
             while parsing"
        ));

    let mut value: serde_json::Value = serde_json::from_str(&good).unwrap();
    value["format"] = 99.into();
    std::fs::write(&broken_file, serde_json::to_string_pretty(&value).unwrap()).unwrap();
    run(places, broken.path(), &["--exact", name], &[])
        .assert_code(101)
        .assert_result(name, "FAILED")
        .assert_stdout(&format!(
            "cassette $LIVE_CASSETTE_DIR/{file}: format 99, but this harness reads format 1 only"
        ));
}

/// Run 5: a scenario that fails while it is recorded writes its cassette as pending, says so,
/// and leaves no cassette a replay would take.
fn a_scenario_failing_while_recorded_writes_a_pending_cassette() {
    let places = Places::new();
    let upstream = upstream::start();
    let config = upstream::config(&upstream);
    let name = "round_trip::tool_call";
    let failed = run(
        &places,
        places.cassettes(),
        &["--exact", name],
        &[
            ("LIVE_CASSETTE", "record"),
            ("OPENCODE_CONFIG_CONTENT", &config),
            ("TEST_OLLAMA_MODEL", MODEL),
            ("INSTA_UPDATE", "always"),
            (case::FAIL_AFTER_TURN, "1"),
        ],
    );
    failed
        .assert_code(101)
        .assert_result(name, "FAILED")
        .assert_stdout(case::DELIBERATE_FAILURE)
        .assert_stderr(&format!(
            "[live] {name}: cassette written as pending: \
             $LIVE_CASSETTE_DIR/round_trip__tool_call.json.pending (the scenario failed; fix it \
             and record again)\n"
        ));
    assert_output_clean(&failed, &places);
    let cassette = files::cassette_path(places.cassettes(), "tool_call");
    assert!(
        !cassette.exists(),
        "a failed recording wrote {}",
        cassette.display()
    );
    let pending = places
        .cassettes()
        .join("round_trip__tool_call.json.pending");
    let value = harness_runtime::testing::read_cassette(&pending)
        .unwrap_or_else(|e| panic!("the pending cassette does not load: {e}"));
    assert_eq!(files::interactions(&value).len(), 2, "{value:#}");
    assert_eq!(upstream::requests(&upstream), (2, 0));
    assert_eq!(
        files::assert_no_canary_in_files(&[places.cassettes(), places.snapshots()]),
        2,
        "the pending cassette and the snapshot"
    );
}
