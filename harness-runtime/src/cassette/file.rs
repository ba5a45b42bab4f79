//! Reading and writing a cassette file, and its `.pending` sibling.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::command::{display_path, rerecord_command};
use super::error::CassetteError;
use super::format::{Cassette, FORMAT};
use crate::redact::Redactor;

/// Where a failed scenario's recording goes: `<stem>.json.pending`, beside the cassette.
pub(crate) fn pending_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".pending");
    PathBuf::from(name)
}

/// Reads the cassette at `path`, recorded for `scenario`. Errors name the file and what is
/// wrong: the JSON syntax, the format version, or the field (path, line and column).
pub(crate) fn load(path: &Path, scenario: &str) -> Result<Cassette, CassetteError> {
    let shown = display_path(path);
    let command = rerecord_command(scenario);
    let text = std::fs::read_to_string(path).map_err(|source| CassetteError::Read {
        path: shown.clone(),
        source,
        command: command.clone(),
    })?;
    let invalid = |what: String| CassetteError::Invalid {
        path: shown.clone(),
        what,
        command: command.clone(),
    };
    // The version first: a file of another format fails on its version, not on a field.
    let value: Value =
        serde_json::from_str(&text).map_err(|e| invalid(format!("not JSON: {e}")))?;
    match value.get("format") {
        Some(Value::Number(n)) if n.as_u64() == Some(u64::from(FORMAT)) => {}
        Some(found) => {
            return Err(invalid(format!(
                "format {found}, but this harness reads format {FORMAT} only"
            )));
        }
        None => {
            return Err(invalid(format!(
                "no `format` field (this harness reads format {FORMAT})"
            )));
        }
    }
    let mut deserializer = serde_json::Deserializer::from_str(&text);
    let cassette: Cassette = serde_path_to_error::deserialize(&mut deserializer).map_err(|e| {
        let at = e.path().to_string();
        invalid(format!("at `{at}`: {}", e.inner()))
    })?;
    if !scenario.is_empty() && cassette.scenario != scenario {
        return Err(invalid(format!(
            "recorded for the scenario `{}`, not `{scenario}`",
            cassette.scenario
        )));
    }
    Ok(cassette)
}

/// Writes `cassette` to `path`, or to its `.pending` sibling when `pending` (a failed scenario's
/// recording, kept for a look but never replayed). A written cassette removes a stale
/// `.pending`. Nothing is written when a secret of `redactor` would be. Returns the file written.
pub(crate) fn save(
    path: &Path,
    cassette: &Cassette,
    redactor: &Redactor,
    pending: bool,
) -> Result<PathBuf, CassetteError> {
    let target = if pending {
        pending_path(path)
    } else {
        path.to_path_buf()
    };
    let shown = display_path(&target);
    let mut text = serde_json::to_string_pretty(cassette).expect("a cassette is JSON");
    text.push('\n');
    if redactor.contains_secret(&text) {
        return Err(CassetteError::Secret {
            path: shown,
            location: secret_location(cassette, redactor),
        });
    }
    let write = |source| CassetteError::Write {
        path: shown.clone(),
        source,
    };
    if let Some(parent) = target.parent() {
        std::fs::create_dir_all(parent).map_err(write)?;
    }
    // Written beside and renamed over: a reader never sees half a cassette.
    let partial = target.with_extension("partial");
    std::fs::write(&partial, &text).map_err(write)?;
    std::fs::rename(&partial, &target).map_err(|e| {
        let _ = std::fs::remove_file(&partial);
        write(e)
    })?;
    if !pending {
        match std::fs::remove_file(pending_path(path)) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(write(e)),
            _ => {}
        }
    }
    Ok(target)
}

/// The first part of `cassette` that holds a secret, for the error (which never shows it).
fn secret_location(cassette: &Cassette, redactor: &Redactor) -> String {
    fn json<T: serde::Serialize>(value: &T) -> String {
        serde_json::to_string(value).unwrap_or_default()
    }
    let recorded = &cassette.recorded;
    let parts = [
        ("scenario".to_owned(), json(&cassette.scenario)),
        ("recorded.npm".to_owned(), json(&recorded.npm)),
        ("recorded.model".to_owned(), json(&recorded.model)),
        (
            "recorded.model_entry".to_owned(),
            json(&recorded.model_entry),
        ),
    ];
    let interactions = cassette
        .interactions
        .iter()
        .enumerate()
        .flat_map(|(i, interaction)| {
            [
                (
                    format!("interactions[{i}].request"),
                    json(&interaction.request),
                ),
                (
                    format!("interactions[{i}].response"),
                    json(&interaction.response),
                ),
            ]
        });
    parts
        .into_iter()
        .chain(interactions)
        .find(|(_, text)| redactor.contains_secret(text))
        .map_or_else(|| "the cassette".to_owned(), |(name, _)| name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cassette::format::{
        Interaction, NormalizedRequest, Recorded, RecordedResponse, WireApi,
    };
    use serde_json::json;

    fn cassette(text: &str) -> Cassette {
        Cassette {
            format: FORMAT,
            scenario: "t::x".into(),
            recorded: Recorded {
                api: WireApi::OpenAi,
                npm: "@ai-sdk/openai-compatible".into(),
                model: "m".into(),
                model_entry: json!({"name": "m"}),
            },
            provenance: None,
            interactions: vec![Interaction {
                request: NormalizedRequest {
                    api: WireApi::OpenAi,
                    model: "m".into(),
                    stream: false,
                    tools: vec![],
                    tool_choice: None,
                    response_format: None,
                    roles: vec!["user".into()],
                    last_user_text: Some("hi".into()),
                    tool_results: vec![],
                },
                response: RecordedResponse::Dropped {
                    detail: text.into(),
                },
            }],
        }
    }

    #[test]
    fn a_saved_cassette_loads_back_and_a_pending_one_stays_aside() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cassettes/t__x.json");
        let redactor = Redactor::default();
        let pending = save(&path, &cassette("first"), &redactor, true).unwrap();
        assert_eq!(pending, dir.path().join("cassettes/t__x.json.pending"));
        assert!(!path.exists());
        let written = save(&path, &cassette("second"), &redactor, false).unwrap();
        assert_eq!(written, path);
        assert!(
            !pending.exists(),
            "a good recording removes the stale pending one"
        );
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.ends_with("}\n") && text.contains("\n  \"format\": 1,"),
            "{text}"
        );
        assert_eq!(load(&path, "t::x").unwrap(), cassette("second"));
    }

    #[test]
    fn nothing_is_written_that_holds_a_secret_and_the_error_does_not_show_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t__x.json");
        let redactor = Redactor::default();
        redactor.add_secret("sk-canary-0123");
        let error = save(&path, &cassette("leak sk-canary-0123"), &redactor, false)
            .unwrap_err()
            .to_string();
        assert!(error.contains("interactions[0].response"), "{error}");
        assert!(
            error.contains("t__x.json") && !error.contains("canary"),
            "{error}"
        );
        assert!(std::fs::read_dir(dir.path()).unwrap().next().is_none());
    }

    fn load_error(text: &str) -> String {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t__x.json");
        std::fs::write(&path, text).unwrap();
        let error = load(&path, "t::x").unwrap_err().to_string();
        assert!(error.contains(&display_path(&path)), "{error}");
        assert!(
            error
                .contains("LIVE_CASSETTE=record cargo test --test harness_runtime -- t::x --exact"),
            "{error}"
        );
        error
    }

    #[test]
    fn broken_files_are_errors_naming_the_file_and_what_is_wrong() {
        let error = load_error("{\"format\": 1,\n  \"scenario\": ");
        assert!(
            error.contains("not JSON") && error.contains("line 2"),
            "{error}"
        );
        let error = load_error(r#"{"format": 2, "scenario": "t::x"}"#);
        assert!(
            error.contains("format 2, but this harness reads format 1"),
            "{error}"
        );
        let error = load_error(r#"{"scenario": "t::x"}"#);
        assert!(error.contains("no `format` field"), "{error}");
        let mut value = serde_json::to_value(cassette("x")).unwrap();
        value["interactions"][0]["response"]["kind"] = json!("teleported");
        let error = load_error(&serde_json::to_string_pretty(&value).unwrap());
        assert!(
            error.contains("at `interactions[0].response.kind`") && error.contains("teleported"),
            "{error}"
        );
        assert!(error.contains("line "), "{error}");
        let mut value = serde_json::to_value(cassette("x")).unwrap();
        value["interactions"][0]["request"]["stream"] = json!("yes");
        let error = load_error(&serde_json::to_string_pretty(&value).unwrap());
        assert!(
            error.contains("at `interactions[0].request.stream`"),
            "{error}"
        );
        let mut value = serde_json::to_value(cassette("x")).unwrap();
        value["scenario"] = json!("t::other");
        let error = load_error(&serde_json::to_string(&value).unwrap());
        assert!(
            error.contains("recorded for the scenario `t::other`"),
            "{error}"
        );
        let missing = tempfile::tempdir().unwrap().path().join("none.json");
        let error = load(&missing, "t::x").unwrap_err().to_string();
        assert!(
            error.contains("could not read it") && error.contains("none.json"),
            "{error}"
        );
    }
}
