//! The root live suite's probes (`tests/live/probes.rs`, run as they are by `selftest-probes`)
//! recorded through OpenCode's built-in `anthropic` provider configured as a user of Claude
//! configures it — `TEST_OLLAMA_MODEL=anthropic/<model>`, only the provider's `baseURL` in
//! `OPENCODE_CONFIG_CONTENT` (no `models` list), the key in `ANTHROPIC_API_KEY` — from a scripted
//! upstream reached over HTTPS, its CA trusted through `SSL_CERT_FILE`; then replayed with the
//! upstream stopped. Both runs assert the root suite's accepted snapshots, and every probe
//! passes (none is skipped for a capability the model did not exercise).

use std::path::{Path, PathBuf};
use std::time::Duration;

use harness_runtime::scaled;
use harness_selftest::files::files_under;
use harness_selftest::probe_model;
use harness_selftest::run::Finished;
use harness_selftest::sandbox::run_sandboxed;
use harness_selftest::upstream::ScriptedUpstream;

use super::files;

/// The root suite's probes in a runner of their own.
const PROBES: &str = env!("CARGO_BIN_EXE_selftest-probes");
/// The ceiling of one run of the probes, before scaling.
const RUN_CEILING: Duration = Duration::from_secs(300);
/// The key in `ANTHROPIC_API_KEY`: a secret no file or output may show.
const CANARY_KEY: &str = "CANARY-probes-anthropic-key-5e21b7";
/// A model of OpenCode's catalog for its built-in `anthropic` provider.
const MODEL: &str = "anthropic/claude-sonnet-4-5";
/// The probes, in the order the runner reports them.
const PROBE_NAMES: [&str; 7] = [
    "abort_mid_turn",
    "basic_turn",
    "permission_answered",
    "permission_rejected",
    "streaming_turn",
    "structured_output",
    "tool_call",
];

/// The root suite's accepted snapshot of `probe`.
fn accepted(probe: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../snapshots")
        .join(format!("probes__{probe}.snap"))
}

/// Runs the probes with `env` and nothing else of this process's settings.
fn run(env: &[(&str, &str)]) -> Finished {
    let finished = run_sandboxed(PROBES, &["--test-threads", "2"], env, scaled(RUN_CEILING));
    finished.assert_nowhere(CANARY_KEY);
    finished
}

pub fn the_root_probes_record_from_builtin_anthropic_over_https_and_replay() {
    let places = tempfile::tempdir().expect("a temp dir");
    let (cassettes, snapshots) = (
        places.path().join("cassettes"),
        places.path().join("snapshots"),
    );
    std::fs::create_dir_all(&cassettes).expect("the cassettes' folder");
    std::fs::create_dir_all(&snapshots).expect("the snapshots' folder");
    // A copy of the accepted snapshots: a mismatch may write `.snap.new` beside them, never in
    // the checkout.
    for probe in PROBE_NAMES {
        std::fs::copy(
            accepted(probe),
            snapshots.join(format!("probes__{probe}.snap")),
        )
        .expect("the root suite's accepted snapshot of each probe");
    }
    let text = |path: &Path| path.to_str().expect("a UTF-8 temp dir").to_owned();
    let (cassettes_dir, snapshots_dir) = (text(&cassettes), text(&snapshots));
    let places_env = [
        ("LIVE_CASSETTE_DIR", cassettes_dir.as_str()),
        ("LIVE_SNAPSHOT_DIR", snapshots_dir.as_str()),
        // The accepted evidence is what both runs must give.
        ("INSTA_UPDATE", "no"),
    ];

    let mut upstream = ScriptedUpstream::start_https(probe_model::script);
    let ca = text(upstream.ca_file().expect("an HTTPS upstream has a CA"));
    let config = serde_json::json!({"provider": {"anthropic": {"options": {
        "baseURL": upstream.base_url(),
    }}}})
    .to_string();
    let recorded = run(&[
        &places_env[..],
        &[
            ("LIVE_CASSETTE", "record"),
            ("LIVE_MODEL_CONCURRENCY", "2"),
            ("OPENCODE_CONFIG_CONTENT", config.as_str()),
            ("TEST_OLLAMA_MODEL", MODEL),
            ("ANTHROPIC_API_KEY", CANARY_KEY),
            ("SSL_CERT_FILE", ca.as_str()),
        ],
    ]
    .concat());
    for probe in PROBE_NAMES {
        recorded.assert_result(&format!("probes::{probe}"), "ok");
    }
    recorded.assert_code(0);
    assert!(
        upstream.model().misses().is_empty(),
        "the upstream missed requests\n{recorded}"
    );
    let written: Vec<PathBuf> = files_under(&cassettes);
    assert_eq!(
        written.len(),
        PROBE_NAMES.len(),
        "one cassette per probe: {written:?}\n{recorded}"
    );
    for probe in PROBE_NAMES {
        let cassette = harness_runtime::testing::read_cassette(
            &cassettes.join(format!("probes__{probe}.json")),
        )
        .unwrap_or_else(|e| panic!("the cassette of {probe} does not load: {e}"));
        assert_eq!(
            cassette["recorded"]["api"], "anthropic",
            "{probe}: {}",
            cassette["recorded"]
        );
    }

    // Replay, the upstream stopped and no model variable set.
    upstream.stop();
    let replayed = run(&places_env);
    for probe in PROBE_NAMES {
        let name = format!("probes::{probe}");
        replayed.assert_result(&name, "ok").assert_stderr(&format!(
            "[live] {name}: model: replay $LIVE_CASSETTE_DIR/probes__{probe}.json\n"
        ));
    }
    replayed.assert_code(0).assert_nowhere("model: record");

    // Both runs gave the accepted evidence, and nothing else was written beside it.
    for probe in PROBE_NAMES {
        let copy = std::fs::read(snapshots.join(format!("probes__{probe}.snap"))).unwrap();
        let original = std::fs::read(accepted(probe)).unwrap();
        assert!(
            copy == original,
            "{probe}: its snapshot changed\n{replayed}"
        );
    }
    assert_eq!(
        files_under(&snapshots).len(),
        PROBE_NAMES.len(),
        "{replayed}"
    );
    files::assert_none_in_files(&[&cassettes, &snapshots], &[CANARY_KEY]);
}
