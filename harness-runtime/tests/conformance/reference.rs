//! Reference transcripts: recorded from real OpenCode into `transcripts/`, read back to check
//! both targets against.

use std::path::PathBuf;

use anyhow::Context;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::differences::{self, Deliberate};
use crate::interaction::Target;
use crate::transcript::{Transcript, first_difference};

/// `CONFORMANCE_RECORD=1`: the `real` scenarios write their transcripts as the references.
const RECORD: &str = "CONFORMANCE_RECORD";
/// `CONFORMANCE_RECORD_DIR`: recording writes the transcripts there instead of over the
/// references (scripts/opencode-upgrade records another OpenCode version to compare them).
const RECORD_DIR: &str = "CONFORMANCE_RECORD_DIR";

/// A reference file.
#[derive(Debug, Serialize, Deserialize)]
struct Reference {
    /// The interaction, `<group>::<interaction>`.
    interaction: String,
    /// The OpenCode version it was recorded from.
    opencode: String,
    transcript: Transcript,
}

/// Where `interaction`'s reference lives.
pub(crate) fn path(interaction: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/conformance/transcripts")
        .join(format!("{}.json", interaction.replace("::", "__")))
}

fn recording() -> anyhow::Result<bool> {
    match std::env::var(RECORD).as_deref() {
        Err(_) | Ok("0") => Ok(false),
        Ok("1") => Ok(true),
        Ok(other) => anyhow::bail!("{RECORD} must be 1 (record) or 0, not {other:?}"),
    }
}

/// Checks `transcript`, what `target` (reporting `version`) did in `interaction`, against the
/// reference; or, recording, writes it as the reference (real OpenCode only).
pub(crate) fn check(
    interaction: &str,
    target: Target,
    version: &str,
    transcript: &Transcript,
) -> anyhow::Result<()> {
    let file = path(interaction);
    if target == Target::Real && recording()? {
        let reference = Reference {
            interaction: interaction.to_owned(),
            opencode: version.to_owned(),
            transcript: transcript.clone(),
        };
        let text = serde_json::to_string_pretty(&reference)? + "\n";
        let file = match std::env::var_os(RECORD_DIR) {
            Some(dir) => PathBuf::from(dir).join(file.file_name().expect("a reference file")),
            None => file,
        };
        std::fs::write(&file, text).with_context(|| format!("writing {}", file.display()))?;
        return Ok(());
    }
    let text = std::fs::read_to_string(&file).with_context(|| {
        format!(
            "no reference transcript for `{interaction}` at {}: record it from real OpenCode with \
             `CONFORMANCE_RECORD=1 cargo test -p harness-runtime --test conformance -- \
             {interaction}::real --exact` and review it",
            file.display()
        )
    })?;
    let reference: Reference = serde_json::from_str(&text)
        .with_context(|| format!("reading the reference {}", file.display()))?;
    let (expected, actual) = match target {
        Target::Real => (reference.transcript, transcript.clone()),
        Target::Fixture => set_aside(
            differences::of(interaction),
            &reference.transcript,
            transcript,
        )?,
    };
    match first_difference(&expected, &actual) {
        None => Ok(()),
        Some(difference) => anyhow::bail!(
            "`{interaction}`: {} ({version}) differs from the reference recorded from real \
             OpenCode {} ({}) at {difference}",
            target.name(),
            reference.opencode,
            file.strip_prefix(env!("CARGO_MANIFEST_DIR"))
                .unwrap_or(&file)
                .display()
        ),
    }
}

/// Both transcripts with every deliberately different field set aside. A listed field that
/// is in the transcript but differs nowhere is an error (the list must shrink with the
/// fixture); a pattern that finds no such field in this interaction does not apply to it.
pub(crate) fn set_aside<'a>(
    deliberate: impl Iterator<Item = &'a Deliberate>,
    expected: &Transcript,
    actual: &Transcript,
) -> anyhow::Result<(Transcript, Transcript)> {
    let mut expected = serde_json::to_value(expected)?;
    let mut actual = serde_json::to_value(actual)?;
    for d in deliberate {
        let mut fields = matching(&expected, d.field);
        fields.extend(matching(&actual, d.field));
        fields.sort();
        fields.dedup();
        // Where the fixture's value is not the listed one, the field is left to be compared.
        let differing: Vec<&String> = fields
            .iter()
            .filter(|field| expected.pointer(field) != actual.pointer(field))
            .collect();
        let excused: Vec<String> = differing
            .iter()
            .filter(|field| {
                d.fixture
                    .is_none_or(|v| actual.pointer(field).and_then(Value::as_str) == Some(v))
            })
            .map(|field| (*field).clone())
            .collect();
        let exact = d.interaction != "*" && !d.field.contains("/*");
        anyhow::ensure!(
            !differing.is_empty() || (!exact && fields.is_empty()),
            "the deliberate difference at `{}` ({}) no longer occurs in `{}`: {}; remove it from \
             its group's DELIBERATE list",
            d.field,
            d.why,
            d.interaction,
            match fields.first() {
                None => "the transcript has no such field".to_owned(),
                Some(field) => format!(
                    "both have {} at {field}",
                    expected
                        .pointer(field)
                        .map_or("nothing".to_owned(), Value::to_string)
                ),
            }
        );
        for field in &excused {
            for value in [&mut expected, &mut actual] {
                remove(value, field);
            }
        }
    }
    Ok((
        serde_json::from_value(expected)?,
        serde_json::from_value(actual)?,
    ))
}

/// The concrete pointers in `value` that `pattern` matches (`*` segments match any key or
/// index).
pub(crate) fn matching(value: &Value, pattern: &str) -> Vec<String> {
    fn walk(value: &Value, segments: &[&str], at: String, found: &mut Vec<String>) {
        let Some((first, rest)) = segments.split_first() else {
            found.push(at);
            return;
        };
        let children: Vec<(String, &Value)> = match value {
            Value::Object(map) => map
                .iter()
                .map(|(k, v)| (k.replace('~', "~0").replace('/', "~1"), v))
                .collect(),
            Value::Array(items) => items
                .iter()
                .enumerate()
                .map(|(i, v)| (i.to_string(), v))
                .collect(),
            _ => Vec::new(),
        };
        for (key, child) in children {
            if *first == "*" || *first == key {
                walk(child, rest, format!("{at}/{key}"), found);
            }
        }
    }
    let segments: Vec<&str> = pattern.split('/').skip(1).collect();
    let mut found = Vec::new();
    walk(value, &segments, String::new(), &mut found);
    found
}

/// Removes the field at `pointer` (an object's key; an array's item becomes `null`, so the
/// items after it keep their places).
fn remove(value: &mut Value, pointer: &str) {
    let Some((parent, last)) = pointer.rsplit_once('/') else {
        return;
    };
    let key = last.replace("~1", "/").replace("~0", "~");
    match value.pointer_mut(parent) {
        Some(Value::Object(map)) => {
            map.remove(&key);
        }
        Some(Value::Array(items)) => {
            if let Some(item) = key.parse::<usize>().ok().and_then(|i| items.get_mut(i)) {
                *item = Value::Null;
            }
        }
        _ => {}
    }
}
