//! Provenance and staleness, `verify` and `missing`, on the cassettes the round trip recorded:
//! what a recording says of itself, a replay of an edited one warned (and failed under
//! `LIVE_STRICT=1`), a verifying run against the same and a changed upstream, and a run that
//! records only the missing cassette. Each reuses the recording; few OpenCode runs are added.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use harness_selftest::round_trip as case;
use harness_selftest::upstream::ScriptedUpstream;
use serde_json::Value;

use super::files;
use super::upstream::{self, MODEL};
use super::{CASES, Places, assert_output_clean, run};

/// The version of the pinned OpenCode (`opencode-ai` in the workspace's `package.json`), as the
/// recording must have noted it.
fn pinned_opencode() -> String {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../node_modules/opencode-ai/package.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let package: Value = serde_json::from_str(&text).unwrap();
    package["version"].as_str().unwrap().to_owned()
}

/// Every recorded cassette says who recorded it: the pinned OpenCode as its server reported
/// itself, the model as configured and as the upstream named itself, a UTC date, the harness's
/// version, and the verdict (each case passed).
pub fn assert_each_recording_has_provenance(dir: &Path) {
    let opencode = pinned_opencode();
    for function in CASES {
        let cassette = files::read(dir, function);
        let provenance = &cassette["provenance"];
        assert_eq!(
            provenance["opencode"],
            opencode.as_str(),
            "{function}: {provenance}"
        );
        assert_eq!(provenance["model"], MODEL, "{function}: {provenance}");
        assert_eq!(
            provenance["harness"],
            env!("CARGO_PKG_VERSION"),
            "{function}: {provenance}"
        );
        assert_eq!(provenance["verdict"]["outcome"], "passed", "{function}");
        let date = provenance["date"].as_str().unwrap_or_default();
        let digits = date.bytes().filter(u8::is_ascii_digit).count();
        assert!(
            date.len() == 10 && digits == 8 && &date[4..5] == "-" && &date[7..8] == "-",
            "{function}: not a YYYY-MM-DD date: {provenance}"
        );
        // The scripted upstream names itself in every chunk (a refused request's body does not).
        if function != "refused_request" && function != "dropped_connection_then_text" {
            assert_eq!(
                provenance["upstream_models"],
                serde_json::json!([MODEL]),
                "{function}: {provenance}"
            );
        }
    }
}

/// The files below `dir`, by name, with their contents.
fn contents(dir: &Path) -> BTreeMap<PathBuf, String> {
    harness_selftest::files::files_under(dir)
        .into_iter()
        .map(|file| {
            let text = std::fs::read_to_string(&file).unwrap();
            (file, text)
        })
        .collect()
}

/// Copies the cassette of each of `functions` from the recording into a fresh folder, edited
/// by `edit`.
fn copied(
    places: &Places,
    functions: &[&str],
    edit: impl Fn(&str, &mut Value),
) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for function in functions {
        let from = files::cassette_path(places.cassettes(), function);
        let mut value: Value =
            serde_json::from_str(&std::fs::read_to_string(from).unwrap()).unwrap();
        edit(function, &mut value);
        let to = files::cassette_path(dir.path(), function);
        std::fs::write(to, serde_json::to_string_pretty(&value).unwrap()).unwrap();
    }
    dir
}

/// A cassette edited to an older OpenCode and an old date replays, saying it is stale on its
/// progress line; under `LIVE_STRICT=1` it fails before anything runs, naming the command that
/// records it again. One without provenance (recorded before cassettes kept it) replays saying
/// so.
pub fn assert_stale_cassettes_warn_and_fail_under_strict(places: &Places) {
    let stale = "round_trip::text_in_deltas";
    let unknown = "round_trip::tool_call";
    let edited = copied(
        places,
        &["text_in_deltas", "tool_call"],
        |function, value| {
            let object = value.as_object_mut().unwrap();
            if function == "tool_call" {
                object.remove("provenance");
            } else {
                object["provenance"]["opencode"] = "1.17.0".into();
                object["provenance"]["date"] = "2020-01-01".into();
            }
        },
    );
    // A maximum age that is no duration of a day or more is an error before any trial.
    let invalid = run(
        places,
        edited.path(),
        &["--exact", stale],
        &[("LIVE_CASSETTE_MAX_AGE", "12h")],
    );
    invalid.assert_code(2).assert_stderr(
        "LIVE_CASSETTE_MAX_AGE must be a duration of at least one day, such as 30d or 12weeks",
    );
    assert!(invalid.started().is_empty(), "a trial ran\n{invalid}");
    let opencode = pinned_opencode();
    let warned = run(
        places,
        edited.path(),
        &["--test-threads", "2", stale, unknown],
        &[("INSTA_UPDATE", "no"), ("LIVE_CASSETTE_MAX_AGE", "30d")],
    );
    warned
        .assert_code(0)
        .assert_result(stale, "ok")
        .assert_result(unknown, "ok")
        .assert_stderr(&format!(
            "[live] {stale}: model: replay $LIVE_CASSETTE_DIR/round_trip__text_in_deltas.json, \
             stale: recorded with OpenCode 1.17.0, this is {opencode}; recorded on 2020-01-01, "
        ))
        .assert_stderr(" days ago, past LIVE_CASSETTE_MAX_AGE=30days\n")
        .assert_stderr(&format!(
            "[live] {unknown}: model: replay $LIVE_CASSETTE_DIR/round_trip__tool_call.json, \
             provenance unknown (recorded before cassettes kept it)\n"
        ));
    assert_output_clean(&warned, places);

    // Strict: the stale one fails at once, before any OpenCode starts (that an unknown
    // provenance never fails is the plan's unit test: this run stays without OpenCode).
    let strict = run(
        places,
        edited.path(),
        &["--exact", stale],
        &[("INSTA_UPDATE", "no"), ("LIVE_STRICT", "1")],
    );
    strict
        .assert_code(101)
        .assert_result(stale, "FAILED")
        .assert_stdout(&format!(
            "cassette $LIVE_CASSETTE_DIR/round_trip__text_in_deltas.json is stale: recorded \
             with OpenCode 1.17.0, this is {opencode}; record it again with `LIVE_CASSETTE=record \
             cargo test --test selftest-scenarios -- {stale} --exact` (LIVE_STRICT=1 makes a \
             stale cassette a failure)"
        ));
    assert!(
        !strict.started().iter().any(|name| name == stale),
        "the stale scenario started under LIVE_STRICT=1\n{strict}"
    );
}

/// `LIVE_CASSETTE=verify` against the same upstream: no drift, and nothing written; against an
/// upstream that answers the tool prompt in prose: the drift, per request and of the verdict,
/// reported without failing; still nothing written.
pub fn assert_verify_reports_drift_and_writes_nothing(places: &Places) {
    let name = "round_trip::tool_call";
    let file = "$LIVE_CASSETTE_DIR/round_trip__tool_call.json";
    let before = contents(places.cassettes());
    let verify = |upstream: &ScriptedUpstream| {
        let config = upstream::config(upstream);
        let env = [
            ("LIVE_CASSETTE", "verify"),
            ("OPENCODE_CONFIG_CONTENT", config.as_str()),
            ("TEST_OLLAMA_MODEL", MODEL),
            ("INSTA_UPDATE", "no"),
        ];
        let finished = run(places, places.cassettes(), &["--exact", name], &env);
        assert_output_clean(&finished, places);
        assert_eq!(
            contents(places.cassettes()),
            before,
            "a verifying run changed the cassettes\n{finished}"
        );
        finished
    };

    let same = upstream::start();
    verify(&same)
        .assert_code(0)
        .assert_result(name, "ok")
        .assert_stderr(&format!(
            "[live] {name}: model: verify {file} against the real model (nothing is written)\n"
        ))
        .assert_stderr(&format!("[live] {name}: verify: no drift from {file}\n"));
    assert_eq!(
        upstream::requests(&same),
        (2, 0),
        "the call and the answer after it"
    );
    drop(same);

    let changed = ScriptedUpstream::start(case::script_changed_upstream);
    let drift = format!(
        "[live] {name}: drift from {file}: verdict passed → skipped (the model did not call the \
         bash tool); request 1: tool call bash (finish: tool_calls) → text (finish: stop); \
         request 2: text (finish: stop) → not sent\n"
    );
    verify(&changed)
        .assert_code(0)
        .assert_result(name, "ignored")
        .assert_stderr(&drift);
    // That `LIVE_STRICT=1` makes drift a failure, naming the command that records the cassette
    // again, is `verify_tests`' (no OpenCode run needed).
}

/// `LIVE_CASSETTE=missing` replays the cassette that exists (leaving it as it is) and records
/// the one that does not.
pub fn assert_missing_records_only_the_missing(places: &Places) {
    let dir = copied(places, &["text_in_deltas"], |_, _| {});
    let kept = contents(dir.path());
    let upstream = upstream::start();
    let config = upstream::config(&upstream);
    let finished = run(
        places,
        dir.path(),
        &[
            "--test-threads",
            "2",
            "round_trip::text_in_deltas",
            "round_trip::tool_call",
        ],
        &[
            ("LIVE_CASSETTE", "missing"),
            ("OPENCODE_CONFIG_CONTENT", &config),
            ("TEST_OLLAMA_MODEL", MODEL),
            ("INSTA_UPDATE", "no"),
        ],
    );
    finished
        .assert_code(0)
        .assert_result("round_trip::text_in_deltas", "ok")
        .assert_result("round_trip::tool_call", "ok")
        .assert_stderr(
            "[live] round_trip::text_in_deltas: model: replay \
             $LIVE_CASSETTE_DIR/round_trip__text_in_deltas.json\n",
        )
        .assert_stderr(
            "[live] round_trip::tool_call: model: record → \
             $LIVE_CASSETTE_DIR/round_trip__tool_call.json\n",
        )
        .assert_stderr(
            "[live] round_trip::tool_call: cassette written: \
             $LIVE_CASSETTE_DIR/round_trip__tool_call.json\n",
        );
    assert_output_clean(&finished, places);
    assert_eq!(
        upstream::requests(&upstream),
        (2, 0),
        "only the missing one asked the upstream"
    );
    let after = contents(dir.path());
    let existing = files::cassette_path(dir.path(), "text_in_deltas");
    assert_eq!(
        after.get(&existing),
        kept.get(&existing),
        "the replayed cassette changed"
    );
    assert_eq!(after.len(), 2, "{:?}", after.keys());
    files::read(dir.path(), "tool_call");
}
