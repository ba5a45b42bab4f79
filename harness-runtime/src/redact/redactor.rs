//! The one redactor for evidence, progress output, diagnostics, failure messages and kept logs.
//!
//! Two passes over the text. First the registered literals (secrets in every encoded form,
//! paths, ports), leftmost-longest, so a secret is gone before anything else can split it.
//! Then the shapes of volatile values ([`super::patterns`]), numbering identities in the order
//! they are first seen, so `[session-1]` is the same session in evidence, messages and logs.

use std::collections::HashMap;
use std::fmt;
use std::path::Path;
use std::sync::{Arc, Mutex};

use regex::{Captures, Regex};

use super::overlaps;
use super::patterns::{self, Shape};
use super::secrets;

/// Replaces secrets and volatile values with named placeholders.
///
/// Vocabulary: `[secret]`; numbered `[session-N]`, `[message-N]`, `[part-N]`, `[permission-N]`,
/// `[question-N]`, `[event-N]`, `[call-N]` (tool calls), `[uuid-N]`; named `[port]`, `[root]`,
/// `[workspace]`, `[home]`, `[timestamp]`, `[duration]`, and in JSON `[tokens]`, `[cost]`.
#[derive(Default)]
pub struct Redactor {
    /// Shared with the redactors made by [`Redactor::with_fresh_numbering`], so they see what
    /// is registered later (an agent's root after the model server started).
    literals: Arc<Mutex<Literals>>,
    ids: Mutex<HashMap<&'static str, HashMap<String, usize>>>,
    /// Every registered path as `(placeholder, path)`, in registration order, so a cassette's
    /// placeholders can be turned back into this scenario's paths. Shared like `literals`.
    paths: Arc<Mutex<Vec<(String, String)>>>,
}

/// A literal to replace, and with what.
#[derive(Clone)]
struct Literal {
    text: String,
    replacement: String,
    /// Paths and ports end at a word boundary: `/root` must not eat `/rootfs`.
    bounded: bool,
}

#[derive(Default)]
struct Literals {
    entries: Vec<Literal>,
    /// Built on first use after a change; shared so a long redaction holds no lock.
    compiled: Option<Arc<LiteralPass>>,
}

struct LiteralPass {
    regex: Regex,
    replacements: HashMap<String, String>,
    /// Every form of every secret, for the occurrences the leftmost-longest pass skips.
    secrets: Option<aho_corasick::AhoCorasick>,
}

/// What a secret becomes.
const SECRET: &str = "[secret]";

impl fmt::Debug for Redactor {
    /// Counts only: the point of this type is that its contents never reach output.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let literals = self.literals.lock().map(|l| l.entries.len()).unwrap_or(0);
        let ids = self
            .ids
            .lock()
            .map(|ids| ids.values().map(HashMap::len).sum::<usize>())
            .unwrap_or(0);
        f.debug_struct("Redactor")
            .field("literals", &literals)
            .field("identities", &ids)
            .finish()
    }
}

impl Redactor {
    /// A redactor for one scenario, seeded with the secrets found in the environment
    /// (see [`Redactor::seed_from_env`]), so they are covered from the first output on.
    pub fn for_scenario() -> Self {
        let redactor = Self::default();
        redactor.seed_from_env();
        redactor
    }

    /// A redactor seeded from the given `(name, value)` pairs instead of the process env.
    pub fn from_env_iter<I, K, V>(vars: I) -> Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<str>,
        V: AsRef<str>,
    {
        let redactor = Self::default();
        redactor.seed_from_iter(vars);
        redactor
    }

    /// Registers the secrets of the process environment: every string under a provider's
    /// `options` and `headers` in `OPENCODE_CONFIG_CONTENT`, every value (6 characters or
    /// more) of a variable whose name contains KEY, TOKEN, SECRET, PASSWORD, PASSWD or
    /// CREDENTIAL, and `HOME` as `[home]`. Non-UTF-8 variables are skipped.
    pub fn seed_from_env(&self) {
        self.seed_from_iter(crate::settings::all_unicode());
    }

    fn seed_from_iter<I, K, V>(&self, vars: I)
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<str>,
        V: AsRef<str>,
    {
        for (name, value) in vars {
            let (name, value) = (name.as_ref(), value.as_ref());
            if name == "HOME" {
                self.add_path(Path::new(value), "[home]");
            }
            self.add_env(name, value);
        }
    }

    /// Registers the secrets one environment variable holds, by the one rule of the harness:
    /// every string under a provider's `options` and `headers` when it is
    /// `OPENCODE_CONFIG_CONTENT`; its whole value (6 characters or more, so a flag such as
    /// `TOKENIZERS_PARALLELISM=false` does not turn every `false` into `[secret]`) when its name
    /// contains KEY, TOKEN, SECRET, PASSWORD, PASSWD or CREDENTIAL.
    pub fn add_env(&self, name: &str, value: &str) {
        if name == secrets::CONFIG_CONTENT {
            for secret in secrets::config_secrets(value) {
                self.add_secret(&secret);
            }
        }
        if secrets::is_secret_name(name) && value.chars().count() >= secrets::MIN_ENV_SECRET_LEN {
            self.add_secret(value);
        }
    }

    /// Registers a secret: it becomes `[secret]` everywhere, also JSON-escaped (once or twice)
    /// and URL-encoded. Empty values are ignored.
    pub fn add_secret(&self, value: &str) {
        if value.is_empty() {
            return;
        }
        let forms = secrets::encoded_forms(value);
        self.add_literals(forms.into_iter().map(|text| Literal {
            text,
            replacement: SECRET.into(),
            bounded: false,
        }));
    }

    /// Registers a path (a scenario root, a workspace, the home dir) to be shown as
    /// `placeholder` (`"[root]"`; brackets are added when missing). A longer registered path
    /// wins over its parent, so `<root>/workspace` shows as `[workspace]` when both are
    /// registered. Paths shorter than 3 characters (`/`) are ignored: they would garble text.
    pub fn add_path(&self, path: &Path, placeholder: &str) {
        let placeholder = bracketed(placeholder);
        let mut texts = Vec::new();
        let display = path.display().to_string();
        let trimmed = display.trim_end_matches(['/', '\\']);
        texts.push(trimmed.to_owned());
        // macOS reports `/var/...` temp dirs as `/private/var/...` once resolved.
        if let Ok(canonical) = path.canonicalize() {
            let canonical = canonical.display().to_string();
            texts.push(canonical.trim_end_matches(['/', '\\']).to_owned());
        }
        if trimmed.chars().count() >= 3 {
            let mut paths = self.paths.lock().unwrap_or_else(|e| e.into_inner());
            paths.push((placeholder.clone(), trimmed.to_owned()));
        }
        let mut literals = Vec::new();
        for text in texts {
            if text.chars().count() < 3 {
                continue;
            }
            for form in secrets::encoded_forms(&text) {
                literals.push(Literal {
                    text: form,
                    replacement: placeholder.clone(),
                    bounded: true,
                });
            }
        }
        self.add_literals(literals.into_iter());
    }

    /// Registers a port of this scenario: `:<port>` becomes `:[port]` anywhere (loopback
    /// addresses and `port <n>` are recognised without registration).
    pub fn add_port(&self, port: u16) {
        self.add_literals(std::iter::once(Literal {
            text: format!(":{port}"),
            replacement: ":[port]".into(),
            bounded: true,
        }));
    }

    fn add_literals(&self, new: impl Iterator<Item = Literal>) {
        let mut literals = self.literals.lock().unwrap_or_else(|e| e.into_inner());
        let before = literals.entries.len();
        for literal in new {
            if !literals.entries.iter().any(|l| l.text == literal.text) {
                literals.entries.push(literal);
            }
        }
        if literals.entries.len() != before {
            literals.compiled = None;
        }
    }

    fn literal_pass(&self) -> Option<Arc<LiteralPass>> {
        let mut literals = self.literals.lock().unwrap_or_else(|e| e.into_inner());
        if literals.entries.is_empty() {
            return None;
        }
        if literals.compiled.is_none() {
            literals.compiled = Some(Arc::new(LiteralPass::build(&literals.entries)));
        }
        literals.compiled.clone()
    }

    /// A redactor sharing this one's literals (secrets, paths, ports: registered before or
    /// after, through either) whose numbered placeholders start afresh: a cassette's request
    /// reads `[call-1]` whatever else the scenario redacted before it.
    pub(crate) fn with_fresh_numbering(&self) -> Redactor {
        Redactor {
            literals: Arc::clone(&self.literals),
            ids: Mutex::default(),
            paths: Arc::clone(&self.paths),
        }
    }

    /// Turns the path placeholders of `text` (`[root]`, `[workspace-2]`, `[home]`, …) back into
    /// the paths registered for them, the latest registration winning (an agent's home after the
    /// user's). Secrets and numbered placeholders stay as they are: nothing can restore them.
    pub(crate) fn restore_paths(&self, text: &str) -> String {
        if !text.contains('[') {
            return text.to_owned();
        }
        let paths = self.paths.lock().unwrap_or_else(|e| e.into_inner());
        let mut restored = text.to_owned();
        let mut seen = std::collections::HashSet::new();
        for (placeholder, path) in paths.iter().rev() {
            if seen.insert(placeholder.as_str()) && restored.contains(placeholder.as_str()) {
                restored = restored.replace(placeholder.as_str(), path);
            }
        }
        restored
    }

    /// Whether `text` holds a registered secret in any of its encoded forms (checked before a
    /// file that must never hold one is written).
    pub(crate) fn contains_secret(&self, text: &str) -> bool {
        let Some(pass) = self.literal_pass() else {
            return false;
        };
        match &pass.secrets {
            Some(secrets) => secrets.is_match(text),
            // The automaton failed to build: the slower check over every secret literal.
            None => pass
                .replacements
                .iter()
                .any(|(literal, replacement)| replacement == SECRET && text.contains(literal)),
        }
    }

    /// Redacts free text: registered literals first, then ids, UUIDs, ports, timestamps and
    /// durations.
    pub fn redact(&self, text: &str) -> String {
        let text = match self.literal_pass() {
            Some(pass) => pass.apply(text),
            None => text.to_owned(),
        };
        self.redact_shapes(&text)
    }

    fn redact_shapes(&self, text: &str) -> String {
        let pattern = patterns::pattern();
        if !pattern.is_match(text) {
            return text.to_owned();
        }
        let mut ids = self.ids.lock().unwrap_or_else(|e| e.into_inner());
        pattern
            .replace_all(text, |caps: &Captures<'_>| {
                let matched = &caps[0];
                match patterns::classify(caps) {
                    None => matched.to_owned(),
                    Some(Shape::Named(name)) => name.to_owned(),
                    Some(Shape::Numbered(kind)) => {
                        let table = ids.entry(kind).or_default();
                        let next = table.len() + 1;
                        let n = *table.entry(matched.to_ascii_lowercase()).or_insert(next);
                        format!("[{kind}-{n}]")
                    }
                    Some(Shape::HostPort) => {
                        let host = caps.name("host").map_or("", |h| h.as_str());
                        format!("{host}:[port]")
                    }
                    Some(Shape::PortKeyword) => {
                        let prefix = caps.name("portkw").map_or("", |p| p.as_str());
                        format!("{prefix}[port]")
                    }
                }
            })
            .into_owned()
    }

    /// Redacts a JSON value: every string and object key as text; the values of `tokens`,
    /// `cost` (and `*_tokens`, `*Tokens`) become `"[tokens]"` / `"[cost]"`; numeric `port`s
    /// `"[port]"`; numeric `duration`/`elapsed` values `"[duration]"`; 13-digit epoch
    /// milliseconds `"[timestamp]"`.
    ///
    /// Objects are walked, and come back, with their keys sorted, whether or not this build's
    /// `serde_json` keeps insertion order (`preserve_order`): ids are numbered in the order met,
    /// so the walk's order decides which one is `[message-1]`.
    pub fn redact_json(&self, value: &serde_json::Value) -> serde_json::Value {
        use serde_json::Value;
        match value {
            Value::String(s) => Value::String(self.redact(s)),
            Value::Number(n) => match number_placeholder(None, n.as_u64(), n.as_f64()) {
                Some(p) => Value::String(p.into()),
                None => value.clone(),
            },
            Value::Array(items) => {
                Value::Array(items.iter().map(|v| self.redact_json(v)).collect())
            }
            Value::Object(map) => Value::Object({
                let mut entries: Vec<_> = map.iter().collect();
                entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
                entries
                    .into_iter()
                    .map(|(k, v)| {
                        let redacted = match (key_placeholder(k), v) {
                            (Some(p), _) => Value::String(p.into()),
                            (None, Value::Number(n)) => {
                                match number_placeholder(Some(k), n.as_u64(), n.as_f64()) {
                                    Some(p) => Value::String(p.into()),
                                    None => v.clone(),
                                }
                            }
                            (None, _) => self.redact_json(v),
                        };
                        (self.redact(k), redacted)
                    })
                    .collect()
            }),
            Value::Null | Value::Bool(_) => value.clone(),
        }
    }
}

/// What a replacement writes besides its bracketed placeholders (`:` of `:[port]`).
fn kept_text(replacement: &str) -> String {
    let mut kept = String::new();
    let mut depth = 0usize;
    for c in replacement.chars() {
        match c {
            '[' => depth += 1,
            ']' if depth > 0 => depth -= 1,
            _ if depth == 0 => kept.push(c),
            _ => {}
        }
    }
    kept
}

impl LiteralPass {
    fn build(entries: &[Literal]) -> Self {
        let mut sorted: Vec<&Literal> = entries.iter().collect();
        // The regex alternation is leftmost-first: longest first makes it leftmost-longest.
        sorted.sort_by(|a, b| b.text.len().cmp(&a.text.len()).then(a.text.cmp(&b.text)));
        let alternatives: Vec<String> = sorted
            .iter()
            .map(|l| {
                let escaped = regex::escape(&l.text);
                let ends_in_word = l
                    .text
                    .chars()
                    .last()
                    .is_some_and(|c| c.is_alphanumeric() || c == '_');
                if l.bounded && ends_in_word {
                    format!(r"{escaped}\b")
                } else {
                    escaped
                }
            })
            .collect();
        let regex = regex::RegexBuilder::new(&alternatives.join("|"))
            .size_limit(64 << 20)
            .build()
            .expect("escaped literals form a valid regex");
        let secret_texts: Vec<&str> = sorted
            .iter()
            .filter(|l| l.replacement == SECRET)
            .map(|l| l.text.as_str())
            .collect();
        // Escaped literals always build; an automaton that does not is only a lost refinement.
        // A contiguous NFA, not the default DFA: the DFA of a few long Unicode secrets in all
        // their forms took most of the time of building a redactor, for searches this short.
        let secrets = (!secret_texts.is_empty())
            .then(|| {
                aho_corasick::AhoCorasick::builder()
                    .kind(Some(aho_corasick::AhoCorasickKind::ContiguousNFA))
                    .build(&secret_texts)
                    .ok()
            })
            .flatten();
        // A replacement that keeps text of its own (`:[port]` keeps the colon) would give back
        // a secret made of that text: such a match becomes `[secret]` instead.
        let replacements = sorted
            .into_iter()
            .map(|l| {
                let kept = kept_text(&l.replacement);
                let replacement =
                    if l.replacement != SECRET && secret_texts.iter().any(|s| kept.contains(s)) {
                        SECRET.to_owned()
                    } else {
                        l.replacement.clone()
                    };
                (l.text.clone(), replacement)
            })
            .collect();
        Self {
            regex,
            replacements,
            secrets,
        }
    }

    fn apply(&self, text: &str) -> String {
        let chosen: Vec<overlaps::Span<'_>> = self
            .regex
            .find_iter(text)
            .map(|m| {
                let replacement = self.replacements.get(m.as_str()).map_or(SECRET, |r| r);
                (m.start(), m.end(), replacement)
            })
            .collect();
        let spans = match &self.secrets {
            Some(secrets) => overlaps::widen(
                chosen,
                secrets
                    .find_overlapping_iter(text)
                    .map(|m| (m.start(), m.end())),
                SECRET,
            ),
            None => chosen,
        };
        let mut out = String::with_capacity(text.len());
        let mut at = 0;
        for (start, end, replacement) in spans {
            out.push_str(&text[at..start]);
            out.push_str(replacement);
            at = end;
        }
        out.push_str(&text[at..]);
        out
    }
}

fn bracketed(name: &str) -> String {
    if name.starts_with('[') && name.ends_with(']') {
        name.to_owned()
    } else {
        format!("[{name}]")
    }
}

/// The placeholder replacing a JSON key's whole value, whatever its type.
pub(crate) fn key_placeholder(key: &str) -> Option<&'static str> {
    if key == "tokens" || key.ends_with("_tokens") || key.ends_with("Tokens") {
        Some("[tokens]")
    } else if key == "cost" {
        Some("[cost]")
    } else {
        None
    }
}

/// The placeholder of a JSON number, by its key and its magnitude.
pub(crate) fn number_placeholder(
    key: Option<&str>,
    as_u64: Option<u64>,
    as_f64: Option<f64>,
) -> Option<&'static str> {
    let key = key.map(str::to_ascii_lowercase);
    let key = key.as_deref().unwrap_or("");
    if key == "port" {
        return Some("[port]");
    }
    if key.contains("duration") || key.contains("elapsed") {
        return Some("[duration]");
    }
    // 13 digits: epoch milliseconds from 2001 to 2286, as OpenCode's `time.created`.
    if as_u64.is_some_and(|n| (1_000_000_000_000..10_000_000_000_000).contains(&n))
        || as_f64.is_some_and(|f| f.fract() == 0.0 && (1e12..1e13).contains(&f))
    {
        return Some("[timestamp]");
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fresh_numbering_shares_the_literals_and_restarts_the_ids() {
        let redactor = Redactor::default();
        redactor.add_secret("sk-canary-0123");
        redactor.add_path(Path::new("/tmp/live-root-a/workspace"), "[workspace]");
        assert_eq!(redactor.redact("call_abc123"), "[call-1]");
        assert_eq!(redactor.redact("call_def456"), "[call-2]");
        let fresh = redactor.with_fresh_numbering();
        redactor.add_path(Path::new("/tmp/live-root-b/workspace"), "[workspace-2]");
        assert_eq!(
            fresh.redact("call_def456 sk-canary-0123 /tmp/live-root-a/workspace/x"),
            "[call-1] [secret] [workspace]/x"
        );
        assert_eq!(fresh.redact("/tmp/live-root-b/workspace"), "[workspace-2]");
        assert_eq!(
            fresh.restore_paths("[workspace-2]"),
            "/tmp/live-root-b/workspace"
        );
        // The original's numbering is untouched.
        assert_eq!(redactor.redact("call_def456"), "[call-2]");
    }

    #[test]
    fn path_placeholders_are_restored_to_the_latest_path_and_secrets_are_not() {
        let redactor = Redactor::default();
        redactor.add_path(Path::new("/home/user"), "[home]");
        redactor.add_path(Path::new("/tmp/root-b/home/"), "[home]");
        redactor.add_path(Path::new("/tmp/root-b/workspace"), "[workspace]");
        redactor.add_path(Path::new("/tmp/root-c/workspace"), "[workspace-2]");
        redactor.add_secret("sk-canary-0123");
        assert_eq!(
            redactor.restore_paths("[workspace]/a [workspace-2]/b [home] [secret] [call-1]"),
            "/tmp/root-b/workspace/a /tmp/root-c/workspace/b /tmp/root-b/home [secret] [call-1]"
        );
    }

    #[test]
    fn secrets_are_found_in_every_encoded_form_and_only_secrets() {
        let redactor = Redactor::default();
        assert!(!redactor.contains_secret("anything"));
        redactor.add_path(Path::new("/tmp/root-b"), "[root]");
        redactor.add_secret("sk \"canary\"");
        assert!(redactor.contains_secret("x sk \"canary\" y"));
        assert!(redactor.contains_secret(r#"{"k":"sk \"canary\""}"#));
        assert!(redactor.contains_secret("sk%20%22canary%22"));
        assert!(!redactor.contains_secret("/tmp/root-b sk canary"));
    }
}
