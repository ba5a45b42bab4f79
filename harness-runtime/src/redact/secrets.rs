//! Which environment values are secrets, and the encoded forms a secret can take in output.

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};

/// The env var whose provider `options` and `headers` hold credentials (its name comes from the
/// dependency-free `settings::names`, the one module `redact` uses).
pub(crate) use crate::settings::names::CONFIG_CONTENT;

/// Words that mark an env var's value as a secret (matched in the upper-cased name).
const SECRET_NAME_WORDS: &[&str] = &["KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL"];

/// Env values shorter than this are not treated as secrets: flags such as `TOKENIZERS_PARALLELISM=false`
/// would otherwise turn every `false` in the output into `[secret]`.
pub(crate) const MIN_ENV_SECRET_LEN: usize = 6;

/// Strings of a provider's config shorter than this are kept: `"v1"` is not a credential, and
/// redacting it would garble unrelated text.
pub(crate) const MIN_CONFIG_SECRET_LEN: usize = 4;

/// Whether the env var `name` holds a secret by its name.
pub(crate) fn is_secret_name(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    SECRET_NAME_WORDS.iter().any(|word| upper.contains(word))
}

/// Every string under a provider's `options` and `headers` in an OpenCode config document.
/// A document that is not JSON yields nothing (requirements report it; the redactor must not fail).
pub(crate) fn config_secrets(document: &str) -> Vec<String> {
    let mut found = Vec::new();
    let Ok(config) = serde_json::from_str::<serde_json::Value>(document) else {
        return found;
    };
    let Some(providers) = config.get("provider").and_then(|p| p.as_object()) else {
        return found;
    };
    for provider in providers.values() {
        collect_under_sensitive_keys(provider, false, &mut found);
    }
    found.retain(|s| s.chars().count() >= MIN_CONFIG_SECRET_LEN);
    found
}

fn collect_under_sensitive_keys(value: &serde_json::Value, inside: bool, out: &mut Vec<String>) {
    match value {
        serde_json::Value::String(s) if inside => out.push(s.clone()),
        serde_json::Value::Array(items) => {
            for item in items {
                collect_under_sensitive_keys(item, inside, out);
            }
        }
        serde_json::Value::Object(map) => {
            for (key, child) in map {
                let sensitive = inside || key == "options" || key == "headers";
                collect_under_sensitive_keys(child, sensitive, out);
            }
        }
        _ => {}
    }
}

/// `encodeURIComponent`'s set: everything but `A-Z a-z 0-9 - _ . ! ~ * ' ( )`.
const URI_COMPONENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'!')
    .remove(b'~')
    .remove(b'*')
    .remove(b'\'')
    .remove(b'(')
    .remove(b')');

/// `application/x-www-form-urlencoded` (WHATWG, `url::form_urlencoded`): all but `* - . _`.
const FORM: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'*')
    .remove(b'-')
    .remove(b'.')
    .remove(b'_');

/// The forms `value` takes when it is embedded in output: raw, inside a JSON string (also with
/// non-ASCII escaped, and escaped twice for JSON inside a JSON string), and URL-encoded (strict,
/// `encodeURIComponent`, form encoding with `+`, lower-case hex). Deduplicated, raw first.
pub(crate) fn encoded_forms(value: &str) -> Vec<String> {
    let mut forms = vec![value.to_owned()];
    let json = json_escape(value);
    let json_ascii = json_escape_ascii(value);
    forms.push(json_escape(&json));
    forms.push(json_escape(&json_ascii));
    forms.push(json.replace('/', "\\/"));
    forms.push(json);
    forms.push(json_ascii);
    let strict = utf8_percent_encode(value, NON_ALPHANUMERIC).to_string();
    let component = utf8_percent_encode(value, URI_COMPONENT).to_string();
    let component_plus = component.replace("%20", "+");
    let form = utf8_percent_encode(value, FORM)
        .to_string()
        .replace("%20", "+");
    for encoded in [strict, component, component_plus, form] {
        if encoded.contains('%') {
            forms.push(lower_hex(&encoded));
        }
        forms.push(encoded);
    }
    let mut seen = std::collections::HashSet::new();
    forms.retain(|form| !form.is_empty() && seen.insert(form.clone()));
    forms
}

/// The body of a JSON string literal holding `value` (serde_json's escaping, quotes stripped).
pub(crate) fn json_escape(value: &str) -> String {
    let quoted = serde_json::to_string(value).unwrap_or_default();
    quoted[1..quoted.len().saturating_sub(1).max(1)].to_owned()
}

/// Like [`json_escape`], with every non-ASCII character as `\uXXXX` (Python's default).
fn json_escape_ascii(value: &str) -> String {
    let mut out = String::new();
    for c in json_escape(value).chars() {
        if c.is_ascii() {
            out.push(c);
        } else {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        }
    }
    out
}

fn lower_hex(encoded: &str) -> String {
    let mut out = String::with_capacity(encoded.len());
    let mut rest = encoded;
    while let Some(at) = rest.find('%') {
        out.push_str(&rest[..at]);
        let escape = rest.get(at..at + 3).unwrap_or(&rest[at..]);
        out.push_str(&escape.to_ascii_lowercase());
        rest = &rest[at + escape.len()..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_names() {
        for name in [
            "OPENAI_API_KEY",
            "github_token",
            "DB_PASSWORD",
            "CLIENT_SECRET",
            "X_CREDENTIAL",
            "MYSQL_PASSWD",
        ] {
            assert!(is_secret_name(name), "{name}");
        }
        for name in ["PATH", "HOME", "LIVE_TIMEOUT_SCALE"] {
            assert!(!is_secret_name(name), "{name}");
        }
    }

    #[test]
    fn config_secrets_cover_options_and_headers_of_every_provider() {
        let doc = r#"{
            "model": "ollama/gemma3:270m",
            "provider": {
                "ollama": {"options": {"baseURL": "http://10.0.0.1:11434/v1", "apiKey": "sk-live-123",
                           "headers": {"X-Auth": "hdr-secret"}}, "name": "Ollama local"},
                "other": {"headers": {"Authorization": ["Bearer abcdef"]}, "options": {"timeout": 30, "v": "v1"}}
            }
        }"#;
        let mut found = config_secrets(doc);
        found.sort();
        assert_eq!(
            found,
            [
                "Bearer abcdef",
                "hdr-secret",
                "http://10.0.0.1:11434/v1",
                "sk-live-123"
            ]
        );
        assert!(config_secrets("not json").is_empty());
        assert!(config_secrets(r#"{"provider": 3}"#).is_empty());
    }

    #[test]
    fn encoded_forms_cover_json_and_url() {
        let forms = encoded_forms("a\"b/c d\u{e9}");
        for expected in [
            "a\"b/c d\u{e9}",
            "a\\\"b/c d\u{e9}",
            "a\\\\\\\"b/c d\u{e9}",
            "a\\\"b\\/c d\u{e9}",
            "a\\\"b/c d\\u00e9",
            "a%22b%2Fc%20d%C3%A9",
            "a%22b%2Fc+d%C3%A9",
            "a%22b%2fc%20d%c3%a9",
        ] {
            assert!(
                forms.iter().any(|f| f == expected),
                "{expected} in {forms:?}"
            );
        }
        assert_eq!(encoded_forms("plain"), ["plain"]);
    }
}
