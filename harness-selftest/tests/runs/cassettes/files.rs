//! What a recording wrote, read back: the cassettes (through the harness's own reader, which
//! checks the format), what each case's interactions hold, and secrets in any file.

use std::path::{Path, PathBuf};

use harness_selftest::files::files_under;
use harness_selftest::round_trip as case;
use serde_json::Value;

use super::upstream::{CANARIES, MODEL};

/// The cassette of `round_trip::<function>` below `dir`.
pub fn cassette_path(dir: &Path, function: &str) -> PathBuf {
    dir.join(format!("round_trip__{function}.json"))
}

/// The cassette of `round_trip::<function>`, read and checked by the harness's reader; panics
/// naming what is wrong.
pub fn read(dir: &Path, function: &str) -> Value {
    let path = cassette_path(dir, function);
    let cassette = harness_runtime::testing::read_cassette(&path)
        .unwrap_or_else(|e| panic!("the cassette of {function} does not load: {e}"));
    assert_eq!(cassette["format"], 1, "{function}");
    assert_eq!(cassette["scenario"], format!("round_trip::{function}"));
    let recorded = &cassette["recorded"];
    assert_eq!(recorded["api"], "openai", "{function}: {recorded}");
    assert_eq!(recorded["npm"], "@ai-sdk/openai-compatible", "{function}");
    assert_eq!(recorded["model"], MODEL, "{function}");
    assert_eq!(
        recorded["model_entry"]["name"], MODEL,
        "{function}: {recorded}"
    );
    cassette
}

/// The interactions of `cassette`.
pub fn interactions(cassette: &Value) -> &[Value] {
    cassette["interactions"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
}

/// The payloads of a streamed response's chunks (none for other kinds).
fn chunks(response: &Value) -> Vec<&Value> {
    response["chunks"]
        .as_array()
        .map(|chunks| chunks.iter().map(|c| &c["data"]).collect())
        .unwrap_or_default()
}

/// The content deltas of a streamed OpenAI response, in order.
pub fn content_deltas(response: &Value) -> Vec<String> {
    chunks(response)
        .into_iter()
        .filter_map(|data| data.pointer("/choices/0/delta/content")?.as_str())
        .filter(|text| !text.is_empty())
        .map(str::to_string)
        .collect()
}

/// The names of the tools a streamed OpenAI response calls.
pub fn called_tools(response: &Value) -> Vec<String> {
    chunks(response)
        .into_iter()
        .filter_map(|data| data.pointer("/choices/0/delta/tool_calls")?.as_array())
        .flatten()
        .filter_map(|call| call.pointer("/function/name")?.as_str())
        .map(str::to_string)
        .collect()
}

/// Whether a streamed response carries an error chunk.
pub fn has_error_chunk(response: &Value) -> bool {
    chunks(response)
        .into_iter()
        .any(|data| data.get("error").is_some())
}

/// Checks what each case's cassette holds: the upstream's answer as it was streamed.
pub fn assert_each_case_recorded(dir: &Path) {
    let text = read(dir, "text_in_deltas");
    let [only] = interactions(&text) else {
        panic!("text_in_deltas: one interaction expected: {text:#}");
    };
    assert_eq!(only["request"]["last_user_text"], case::TEXT_IN_DELTAS);
    assert_eq!(only["response"]["kind"], "stream", "{only:#}");
    assert_eq!(only["response"]["end"], "complete", "{only:#}");
    let deltas = content_deltas(&only["response"]);
    assert!(
        deltas.len() >= 4,
        "four content deltas expected: {deltas:?}"
    );
    assert_eq!(deltas.concat(), case::DELTAS_TEXT);

    let tool = read(dir, "tool_call");
    let [call, after] = interactions(&tool) else {
        panic!("tool_call: the call and the answer after it expected: {tool:#}");
    };
    assert_eq!(called_tools(&call["response"]), ["bash"], "{call:#}");
    let results = after["request"]["tool_results"].to_string();
    assert!(results.contains(case::TOOL_OUTPUT), "{after:#}");
    assert_eq!(
        content_deltas(&after["response"]).concat(),
        case::AFTER_TOOL_TEXT
    );

    let structured = read(dir, "structured_output");
    let first = &interactions(&structured)[0];
    assert_eq!(first["request"]["tool_choice"], "required", "{first:#}");
    assert_eq!(
        called_tools(&first["response"]),
        ["StructuredOutput"],
        "{first:#}"
    );

    let error = read(dir, "error_mid_stream");
    let [failed, answered] = interactions(&error) else {
        panic!("error_mid_stream: the broken stream and the retry expected: {error:#}");
    };
    assert_eq!(
        failed["request"], answered["request"],
        "the retry is the same request"
    );
    assert!(has_error_chunk(&failed["response"]), "{failed:#}");
    assert_eq!(
        content_deltas(&failed["response"]).concat(),
        case::PARTIAL_TEXT
    );
    assert_eq!(
        content_deltas(&answered["response"]).concat(),
        case::AFTER_ERROR_TEXT
    );

    let refused = read(dir, "refused_request");
    let [only] = interactions(&refused) else {
        panic!("refused_request: one interaction expected (a 400 is not retried): {refused:#}");
    };
    assert_eq!(only["response"]["kind"], "body", "{only:#}");
    assert_eq!(only["response"]["status"], 400, "{only:#}");

    let server_error = read(dir, "server_error_then_text");
    let [failed, answered] = interactions(&server_error) else {
        panic!("server_error_then_text: the 500 and the retry expected: {server_error:#}");
    };
    assert_eq!(
        failed["request"], answered["request"],
        "the retry is the same request"
    );
    let response = &failed["response"];
    assert_eq!(response["kind"], "body", "{failed:#}");
    assert_eq!(response["status"], 500, "{failed:#}");
    assert_eq!(response["headers"]["retry-after-ms"], "1", "{failed:#}");
    assert_eq!(
        content_deltas(&answered["response"]).concat(),
        case::AFTER_500_TEXT
    );

    let dropped = read(dir, "dropped_connection_then_text");
    let [reset, answered] = interactions(&dropped) else {
        panic!("dropped_connection_then_text: the reset and the retry expected: {dropped:#}");
    };
    assert_eq!(
        reset["request"], answered["request"],
        "the retry is the same request"
    );
    assert_eq!(reset["response"]["kind"], "dropped", "{reset:#}");
    assert_eq!(
        content_deltas(&answered["response"]).concat(),
        case::AFTER_RESET_TEXT
    );
}

/// Checks the evidence each case's recording wrote (the snapshots below `dir`) holds the turn's
/// structure: what the replay is then compared against.
pub fn assert_evidence_captures_each_turn(dir: &Path) {
    let snapshot = |function: &str| {
        let path = dir.join(format!("round_trip__{function}.snap"));
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    };
    for (function, expected) in [
        ("text_in_deltas", "- text_deltas: 4\n"),
        (
            "tool_call",
            "      - tool: bash\n        status: completed\n",
        ),
        ("tool_call", case::TOOL_OUTPUT),
        (
            "structured_output",
            "    structured_output:\n      answer: forty-two\n",
        ),
        ("error_mid_stream", case::AFTER_ERROR_TEXT),
        ("refused_request", "    errors:\n      - APIError\n"),
        ("server_error_then_text", case::AFTER_500_TEXT),
        ("dropped_connection_then_text", case::AFTER_RESET_TEXT),
    ] {
        let text = snapshot(function);
        assert!(
            text.contains(expected),
            "{function}: no {expected:?} in\n{text}"
        );
    }
}

/// Panics when a canary is in a file below any of `dirs`; returns how many files were read.
pub fn assert_no_canary_in_files(dirs: &[&Path]) -> usize {
    assert_none_in_files(dirs, &CANARIES)
}

/// Panics when one of `canaries` is in a file below any of `dirs`; returns how many files were
/// read.
pub fn assert_none_in_files(dirs: &[&Path], canaries: &[&str]) -> usize {
    let files: Vec<PathBuf> = dirs.iter().flat_map(|dir| files_under(dir)).collect();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap_or_default();
        for canary in canaries {
            assert!(
                !text.contains(canary),
                "{} holds the canary {canary}",
                file.display()
            );
        }
    }
    files.len()
}
