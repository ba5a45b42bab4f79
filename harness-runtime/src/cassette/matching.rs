//! Which recorded interaction answers a request, and why none did.
//!
//! A request is served by the first unused interaction with an equal normalized request:
//! arrival order alone is not enough, since OpenCode's title request races the main one.

use serde_json::Value;

use super::format::{Interaction, NormalizedRequest};

/// The fields of [`NormalizedRequest`] in the order a miss names the first difference in.
const FIELDS: [&str; 9] = [
    "api",
    "model",
    "stream",
    "tools",
    "tool_choice",
    "response_format",
    "roles",
    "last_user_text",
    "tool_results",
];

/// How many characters of a value a diagnosis shows.
const SHOWN: usize = 120;

/// The first interaction not yet `used` whose request equals `request`.
pub(crate) fn find_unused(
    interactions: &[Interaction],
    used: &[bool],
    request: &NormalizedRequest,
) -> Option<usize> {
    interactions
        .iter()
        .zip(used)
        .position(|(interaction, used)| !used && interaction.request == *request)
}

/// Why `request` matched nothing: the nearest recorded request (most equal fields, the
/// earliest among equals) and the first field that differs, recorded against got.
pub(crate) fn diagnose(interactions: &[Interaction], request: &NormalizedRequest) -> String {
    let got = fields(request);
    let nearest = interactions
        .iter()
        .enumerate()
        .map(|(index, interaction)| {
            let recorded = fields(&interaction.request);
            let equal = recorded.iter().zip(&got).filter(|(a, b)| a == b).count();
            (index, recorded, equal)
        })
        // `max_by_key` keeps the last maximum; reversed, it keeps the earliest.
        .rev()
        .max_by_key(|(_, _, equal)| *equal);
    let Some((index, recorded, _)) = nearest else {
        return "the cassette has no interactions".to_owned();
    };
    let Some(field) = (0..FIELDS.len()).find(|&i| recorded[i] != got[i]) else {
        let copies = interactions
            .iter()
            .filter(|i| i.request == *request)
            .count();
        return format!(
            "it equals interactions[{index}], already served: the recording has {copies} such \
             request(s) and this run sent more"
        );
    };
    let (was, now) = excerpts(&recorded[field], &got[field]);
    format!(
        "nearest: interactions[{index}]; first difference: {}\n      recorded: {was}\n      \
         got:      {now}",
        FIELDS[field]
    )
}

fn fields(request: &NormalizedRequest) -> Vec<Value> {
    let value = serde_json::to_value(request).expect("a normalized request is JSON");
    FIELDS.iter().map(|f| value[*f].clone()).collect()
}

/// Both values, shortened; two strings are shown from shortly before where they differ.
fn excerpts(recorded: &Value, got: &Value) -> (String, String) {
    if let (Value::String(a), Value::String(b)) = (recorded, got) {
        let same = a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count();
        let from = same.saturating_sub(40);
        return (window(a, from), window(b, from));
    }
    (
        window(&recorded.to_string(), 0),
        window(&got.to_string(), 0),
    )
}

fn window(text: &str, from: usize) -> String {
    let shown: String = text.chars().skip(from).take(SHOWN).collect();
    let head = if from > 0 { "…" } else { "" };
    let tail = if text.chars().count() > from + SHOWN {
        "…"
    } else {
        ""
    };
    format!("{head}{shown:?}{tail}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cassette::format::{RecordedResponse, WireApi};
    use serde_json::json;

    fn request(text: &str, tools: &[&str]) -> NormalizedRequest {
        NormalizedRequest {
            api: WireApi::OpenAi,
            model: "m".into(),
            stream: true,
            tools: tools.iter().map(|t| t.to_string()).collect(),
            tool_choice: Some(json!("auto")),
            response_format: None,
            roles: vec!["system".into(), "user".into()],
            last_user_text: Some(text.into()),
            tool_results: vec![],
        }
    }

    fn interaction(request: NormalizedRequest) -> Interaction {
        Interaction {
            request,
            response: RecordedResponse::Dropped { detail: "x".into() },
        }
    }

    #[test]
    fn every_field_is_compared_in_the_documented_order() {
        let value = serde_json::to_value(request("x", &[])).unwrap();
        assert_eq!(value.as_object().unwrap().len(), FIELDS.len());
    }

    #[test]
    fn equal_requests_are_served_in_order_and_once() {
        let tape = [
            interaction(request("a", &["bash"])),
            interaction(request("b", &["bash"])),
            interaction(request("a", &["bash"])),
        ];
        let mut used = vec![false; 3];
        assert_eq!(find_unused(&tape, &used, &request("a", &["bash"])), Some(0));
        used[0] = true;
        assert_eq!(find_unused(&tape, &used, &request("a", &["bash"])), Some(2));
        used[2] = true;
        assert_eq!(find_unused(&tape, &used, &request("a", &["bash"])), None);
        let why = diagnose(&tape, &request("a", &["bash"]));
        assert!(
            why.contains("equals interactions[0], already served"),
            "{why}"
        );
        assert!(why.contains("has 2 such"), "{why}");
    }

    #[test]
    fn the_nearest_is_the_most_equal_and_the_first_difference_is_named() {
        let tape = [
            interaction(request("say hello", &["read"])),
            interaction(request("say hello", &["bash"])),
            interaction(request("say hello", &["bash"])),
        ];
        let why = diagnose(&tape, &request("say goodbye", &["bash"]));
        assert_eq!(
            why,
            "nearest: interactions[1]; first difference: last_user_text\n      \
             recorded: \"say hello\"\n      got:      \"say goodbye\""
        );
        let why = diagnose(&tape, &request("x", &["grep"]));
        assert!(
            why.starts_with("nearest: interactions[0]; first difference: tools"),
            "{why}"
        );
        assert_eq!(
            diagnose(&[], &request("x", &[])),
            "the cassette has no interactions"
        );
    }

    #[test]
    fn long_texts_are_shown_around_the_difference() {
        let long = "x".repeat(300);
        let (was, now) = excerpts(&json!(format!("{long}a")), &json!(format!("{long}b")));
        assert!(was.starts_with('…') && was.ends_with("a\""), "{was}");
        assert!(now.ends_with("b\""), "{now}");
        assert!(was.chars().count() < SHOWN + 10);
    }
}
