//! The data of a run as the page reads it: one record per scenario (its outcome and its finished
//! timeline), serialized as JSON.

use serde::{Deserialize, Serialize};

use super::exploration::ExplorationRecord;
use super::history::HistorySummary;
use super::verdict::VerdictRecord;
use crate::redact::Redactor;
use crate::timeline::{Collected, Entry, KeptRoot, SnapshotDiff};

/// How a scenario ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Outcome {
    Failed,
    Passed,
    /// Not run: a missing requirement, or the scenario said so (`live.skip`).
    Skipped,
    /// `ignore = "…"` without `--ignored`.
    Ignored,
}

impl Outcome {
    /// Failures first, then what did not run, then passes: the order of the index.
    pub(crate) fn rank(self) -> u8 {
        match self {
            Outcome::Failed => 0,
            Outcome::Skipped => 1,
            Outcome::Ignored => 2,
            Outcome::Passed => 3,
        }
    }
}

/// Everything the report shows of one scenario.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct ScenarioRecord {
    /// `<topic>::<fn>`.
    pub(crate) name: String,
    pub(crate) outcome: Outcome,
    /// Why it was skipped or ignored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) reason: Option<String>,
    pub(crate) duration_ms: u64,
    /// `opencode` or `fixture`.
    pub(crate) agent: String,
    /// `server` or `shared`.
    pub(crate) isolation: String,
    /// `scripted`, `cassette (replay)`, `real`, …
    pub(crate) model: String,
    #[serde(default)]
    pub(crate) entries: Vec<Entry>,
    /// The evidence as recorded (already redacted by the recorder), key by key.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) evidence: Vec<(String, serde_json::Value)>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) snapshot: Option<SnapshotDiff>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) failure: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) kept_roots: Vec<KeptRoot>,
    /// An exploring scenario's search (`explore = N`, or a `LIVE_SCHEDULE` replay).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) exploration: Option<ExplorationRecord>,
    /// Its outcomes across recent runs, this one's last (`LIVE_HISTORY`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) history: Option<HistorySummary>,
    /// What its turns spent (tokens, cost, times), when its agents reported any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) usage: Option<super::UsageRecord>,
    /// A verdict over several live runs (`passes = "K of N"`): each run's outcome.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) verdict: Option<VerdictRecord>,
}

impl ScenarioRecord {
    /// A record without a timeline (ignored, skipped or failed before its body).
    pub(crate) fn bare(
        name: &str,
        outcome: Outcome,
        options: &crate::scenario::ScenarioOptions,
    ) -> Self {
        ScenarioRecord {
            name: name.to_owned(),
            outcome,
            reason: None,
            duration_ms: 0,
            agent: agent_name(options.agent).to_owned(),
            isolation: isolation_name(options).to_owned(),
            model: if options.cassette {
                "cassette".to_owned()
            } else if options.requires.contains(&crate::settings::CONFIG_CONTENT) {
                "real".to_owned()
            } else {
                "scripted".to_owned()
            },
            entries: Vec::new(),
            evidence: Vec::new(),
            snapshot: None,
            failure: None,
            kept_roots: Vec::new(),
            exploration: None,
            history: None,
            usage: None,
            verdict: None,
        }
    }

    /// Takes the scenario's finished timeline; the isolation it ran at is what provisioning
    /// noted (a fallback to a server of its own shows there), else what it asked for.
    pub(crate) fn read_timeline(&mut self, timeline: Collected) {
        if timeline.entries.iter().any(|e| e.kind == "shared server") {
            self.isolation = "shared".to_owned();
        } else if timeline.entries.iter().any(|e| e.kind == "spawn") {
            self.isolation = "server".to_owned();
        }
        self.entries = timeline.entries;
        self.snapshot = timeline.snapshot;
        self.kept_roots = timeline.kept_roots;
    }

    /// Every string through `redactor`: the one place the report's text is redacted. A kept
    /// root's path is restored afterwards (it is the user's way to the evidence, as the runner
    /// prints it), secrets in it are not.
    pub(crate) fn redacted(mut self, redactor: &Redactor) -> Self {
        let text = |s: &mut String| *s = redactor.redact(s);
        text(&mut self.name);
        self.reason.as_mut().map(text);
        text(&mut self.model);
        for entry in &mut self.entries {
            text(&mut entry.kind);
            text(&mut entry.text);
            entry.key.as_mut().map(text);
        }
        for (key, value) in &mut self.evidence {
            text(key);
            redact_strings(value, redactor);
        }
        if let Some(diff) = &mut self.snapshot {
            text(&mut diff.file);
            text(&mut diff.accepted);
            text(&mut diff.new);
        }
        self.failure.as_mut().map(text);
        for kept in &mut self.kept_roots {
            kept.path = redactor.restore_paths(&redactor.redact(&kept.path));
            text(&mut kept.log_tail);
        }
        self.exploration = self.exploration.map(|e| e.redacted(redactor));
        self.verdict = self.verdict.map(|v| v.redacted(redactor));
        self
    }
}

/// Redacts every string (and key) of `value`, leaving numbers as they are.
fn redact_strings(value: &mut serde_json::Value, redactor: &Redactor) {
    use serde_json::Value;
    match value {
        Value::String(s) => *s = redactor.redact(s),
        Value::Array(items) => items.iter_mut().for_each(|v| redact_strings(v, redactor)),
        Value::Object(map) => {
            let taken = std::mem::take(map);
            for (key, mut v) in taken {
                redact_strings(&mut v, redactor);
                map.insert(redactor.redact(&key), v);
            }
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

fn agent_name(kind: crate::AgentKind) -> &'static str {
    match kind {
        crate::AgentKind::OpenCode => "opencode",
        crate::AgentKind::Fixture => "fixture",
    }
}

fn isolation_name(options: &crate::scenario::ScenarioOptions) -> &'static str {
    // The scenario's attribute, else the suite's level: what provisioning starts from (a
    // fallback to a server of its own shows in the timeline).
    let level = options.isolation.unwrap_or_else(crate::settings::isolation);
    match level {
        crate::Isolation::Server => "server",
        crate::Isolation::Shared => "shared",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timeline::{Collector, Lane, install_on_this_thread, note};

    /// A shared scenario that fell back to a server of its own is shown at the isolation it ran.
    #[test]
    fn the_isolation_shown_is_the_one_provisioning_noted() {
        let options = crate::scenario::ScenarioOptions {
            isolation: Some(crate::Isolation::Shared),
            ..crate::scenario::ScenarioOptions::DEFAULT
        };
        let timeline = Collector::new();
        install_on_this_thread(Some(timeline.clone()));
        note(Lane::Provisioning, "spawn", || "opencode serve".into());
        install_on_this_thread(None);
        let mut record = ScenarioRecord::bare("a::b", Outcome::Passed, &options);
        assert_eq!(record.isolation, "shared");
        record.read_timeline(timeline.take());
        assert_eq!(record.isolation, "server");
        assert_eq!(record.entries[0].lane, Lane::Provisioning);
    }
}
