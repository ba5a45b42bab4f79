//! Hosted providers: for each of OpenCode's provider packages (OpenAI chat completions, the
//! Responses API, Anthropic's Messages, Google's Gemini), the `hosted::` scenarios are recorded
//! from a scripted upstream reached over HTTPS only, its CA trusted through `SSL_CERT_FILE` and
//! nothing else, with a 429 retried on the way; then replayed with the upstream stopped, to the
//! same evidence, the run report giving the recorded usage and first-token time. Without the CA
//! the recording fails naming the host and `SSL_CERT_FILE`.

use std::path::Path;
use std::time::Duration;

use harness_runtime::scaled;
use harness_runtime::testing::MODEL_ID;
use harness_selftest::hosted::{self as case, PACKAGES, USAGE};
use harness_selftest::report::{report_data, scenario};
use harness_selftest::run::Finished;
use harness_selftest::sandbox::run_sandboxed;
use harness_selftest::upstream::ScriptedUpstream;

use super::files;

/// The scenario binary.
const SCENARIOS: &str = env!("CARGO_BIN_EXE_selftest-scenarios");
/// The ceiling of one run of the scenario binary, before scaling.
const RUN_CEILING: Duration = Duration::from_secs(300);
/// The API key of the upstream's config: a secret no file or output may show.
const CANARY_KEY: &str = "CANARY-hosted-key-73a1c0";
/// The scenarios, in the order the runner reports them.
const CASES: [&str; 3] = ["after_rate_limit", "text", "tool_call"];

/// Runs `args` of the scenario binary with `env` and nothing else of this process's settings.
fn run(args: &[&str], env: &[(&str, &str)]) -> Finished {
    let finished = run_sandboxed(SCENARIOS, args, env, scaled(RUN_CEILING));
    finished.assert_nowhere(CANARY_KEY);
    finished
}

/// The model of OpenCode's built-in `anthropic` provider the built-in case names.
const ANTHROPIC_MODEL: &str = "anthropic/claude-sonnet-4-5";

/// Records and replays the `hosted::` scenarios through each package (Ollama's installed into
/// each server's cache by the harness, OpenCode not bundling it), then through OpenCode's
/// built-in `anthropic` provider configured as OpenCode documents it: no `models` list, the
/// key in `ANTHROPIC_API_KEY`, only its `baseURL` changed.
pub fn each_package_records_over_https_and_replays_without_the_upstream() {
    for (index, (label, npm)) in PACKAGES.into_iter().enumerate() {
        // The CA's absence fails alike whatever the package: checked once.
        round_trip(label, &Provider::Package(npm), index == 0);
    }
    round_trip("builtin_anthropic", &Provider::BuiltinAnthropic, false);
}

/// How the recording names the upstream.
enum Provider {
    /// A provider of its own, `upstream`, with this package, its key in its options.
    Package(&'static str),
    /// OpenCode's `anthropic`, its key in `ANTHROPIC_API_KEY`.
    BuiltinAnthropic,
}

impl Provider {
    /// `OPENCODE_CONFIG_CONTENT`, `TEST_OLLAMA_MODEL` and the key's variable, if any.
    fn config(&self, upstream: &ScriptedUpstream) -> (String, &'static str, Option<&'static str>) {
        match self {
            Self::Package(npm) => (
                upstream
                    .config("Hosted upstream", CANARY_KEY)
                    .package(npm)
                    .to_string(),
                MODEL_ID,
                None,
            ),
            Self::BuiltinAnthropic => (
                serde_json::json!({"provider": {"anthropic": {"options": {
                    "baseURL": upstream.base_url(),
                }}}})
                .to_string(),
                ANTHROPIC_MODEL,
                Some("ANTHROPIC_API_KEY"),
            ),
        }
    }
}

/// The round trip through `provider`, its files in folders named `label`; first without the
/// CA when `untrusted_first`.
fn round_trip(label: &str, provider: &Provider, untrusted_first: bool) {
    let places = tempfile::tempdir().expect("a temp dir");
    let dir = |name: &str| {
        let path = places.path().join(format!("{label}-{name}"));
        std::fs::create_dir_all(&path).expect("a folder of the round trip");
        path
    };
    let (cassettes, snapshots, report) = (dir("cassettes"), dir("snapshots"), dir("report"));
    let text = |path: &Path| path.to_str().expect("a UTF-8 temp dir").to_owned();
    let (cassettes_dir, snapshots_dir) = (text(&cassettes), text(&snapshots));
    let mut upstream = ScriptedUpstream::start_https(case::script_upstream);
    let ca = text(upstream.ca_file().expect("an HTTPS upstream has a CA"));
    let (config, model, key_variable) = provider.config(&upstream);
    let key = key_variable.map(|name| (name, CANARY_KEY));
    let places_env = [
        ("LIVE_CASSETTE_DIR", cassettes_dir.as_str()),
        ("LIVE_SNAPSHOT_DIR", snapshots_dir.as_str()),
    ];
    let recording = |extra: &[(&'static str, &str)]| {
        let env = [
            &places_env[..],
            &[
                ("LIVE_CASSETTE", "record"),
                // The upstream is scripted: its scenarios may record at once.
                ("LIVE_MODEL_CONCURRENCY", "3"),
                ("OPENCODE_CONFIG_CONTENT", config.as_str()),
                ("TEST_OLLAMA_MODEL", model),
                ("INSTA_UPDATE", "always"),
            ],
            key.as_slice(),
            extra,
        ]
        .concat();
        run(&["--test-threads", "2", "hosted::"], &env)
    };

    if untrusted_first {
        // Without the CA: the relay cannot trust the upstream, and says what to do.
        let untrusted = recording(&[]);
        untrusted
            .assert_code(101)
            .assert_result("hosted::text", "FAILED")
            .assert_shows(&["127.0.0.1", "SSL_CERT_FILE"]);
        let written = harness_selftest::files::files_under(&cassettes);
        assert!(
            written
                .iter()
                .all(|file| file.to_string_lossy().ends_with(".pending")),
            "{label}: a failed recording wrote a cassette: {written:?}\n{untrusted}"
        );
        for pending in written {
            std::fs::remove_file(pending).expect("the pending cassette is removed");
        }
        // Its evidence (the failed turns') is not the recording's.
        for snapshot in harness_selftest::files::files_under(&snapshots) {
            std::fs::remove_file(snapshot).expect("the failed run's snapshot is removed");
        }
    }

    // Record, trusting the CA through SSL_CERT_FILE only.
    let before = upstream.model().requests().len();
    let recorded = recording(&[("SSL_CERT_FILE", ca.as_str())]);
    for function in CASES {
        recorded.assert_result(&format!("hosted::{function}"), "ok");
    }
    recorded.assert_code(0).assert_stderr(
        "[live] hosted::after_rate_limit: model: upstream answered 429, retrying in 1s (1 of 4)\n",
    );
    let asked = upstream.model().requests().len() - before;
    assert!(asked >= 4, "{label}: {asked} requests\n{recorded}");
    assert!(
        upstream.model().misses().is_empty(),
        "{label}: the upstream missed requests\n{recorded}"
    );
    let accepted: Vec<String> = harness_selftest::files::files_under(&snapshots)
        .iter()
        .map(|s| std::fs::read_to_string(s).expect("a snapshot"))
        .collect();
    assert_eq!(accepted.len(), CASES.len(), "{label}\n{recorded}");

    // Replay, the upstream stopped and no model variables set.
    upstream.stop();
    let report_dir = text(&report);
    let replayed = run(
        &["--test-threads", "2", "hosted::"],
        &[
            &places_env[..],
            &[("INSTA_UPDATE", "no"), ("LIVE_REPORT", report_dir.as_str())],
        ]
        .concat(),
    );
    for function in CASES {
        let name = format!("hosted::{function}");
        replayed.assert_result(&name, "ok").assert_stderr(&format!(
            "[live] {name}: model: replay $LIVE_CASSETTE_DIR/hosted__{function}.json\n"
        ));
    }
    replayed.assert_code(0).assert_nowhere("model: record");
    let after: Vec<String> = harness_selftest::files::files_under(&snapshots)
        .iter()
        .map(|s| std::fs::read_to_string(s).expect("a snapshot"))
        .collect();
    assert_eq!(
        after, accepted,
        "{label}: the replay changed the snapshots\n{replayed}"
    );

    // The budgets' figures, from the cassette: the text turn's usage and its first token.
    let data = report_data(&report);
    let usage = &scenario(&data, "hosted::text")["usage"];
    assert_eq!(usage["input"], USAGE.0, "{label}: {usage:#}");
    assert_eq!(usage["output"], USAGE.1, "{label}: {usage:#}");
    assert_eq!(usage["clock"], "recorded", "{label}: {usage:#}");
    assert!(
        usage["slowest_first_token"][1].as_u64().is_some(),
        "{label}: no first-token time: {usage:#}"
    );
    let read = files::assert_none_in_files(&[&cassettes, &snapshots], &[CANARY_KEY]);
    assert!(read >= 2 * CASES.len(), "{label}: {read} files read");
}
