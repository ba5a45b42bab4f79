//! docs/other-agents.md's table of what each agent did is rendered from the live suite's
//! accepted evidence (`snapshots/agents__turns__<scenario>__<agent>.snap`, one body run on every
//! agent), so it says what a run showed, not what someone remembered. A changed snapshot fails
//! here with the table it now renders; `UPDATE_AGENT_TABLE=1` writes it into the page.

use std::path::{Path, PathBuf};

use serde_json::Value;

/// The agents, in the table's column order: (snapshot infix, column heading).
const AGENTS: [(&str, &str); 4] = [
    ("opencode_http", "OpenCode over HTTP"),
    ("opencode_acp", "OpenCode over ACP"),
    ("qwen_code", "Qwen Code over ACP"),
    ("gemini_cli", "Gemini CLI over ACP"),
];
/// The scenarios, in row order: (function, row heading).
const SCENARIOS: [(&str, &str); 7] = [
    ("text_turn", "text turn"),
    ("tool_call_approved", "shell command, permission approved"),
    ("tool_call_rejected", "shell command, permission rejected"),
    ("cancel_mid_turn", "cancel mid-turn"),
    ("multi_step_plan", "multi-step plan (todo tool)"),
    ("file_edit", "file written by its own tool"),
    ("session_closed", "session closed, next one served"),
];
const START: &str = "<!-- agent-table: start (rendered from snapshots/agents__*.snap) -->";
const END: &str = "<!-- agent-table: end -->";

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

#[test]
fn the_docs_table_of_agents_is_what_their_snapshots_say() {
    let table = render(&repo().join("snapshots"));
    let page_path = repo().join("docs/other-agents.md");
    let page = std::fs::read_to_string(&page_path).expect("docs/other-agents.md");
    let (Some(start), Some(end)) = (page.find(START), page.find(END)) else {
        panic!("docs/other-agents.md lacks the table's markers `{START}` … `{END}`");
    };
    let current = &page[start + START.len()..end];
    if current.trim() == table.trim() {
        return;
    }
    if std::env::var_os("UPDATE_AGENT_TABLE").is_some() {
        let updated = format!(
            "{}{START}\n{}\n{}",
            &page[..start],
            table.trim(),
            &page[end..]
        );
        std::fs::write(&page_path, updated).expect("write docs/other-agents.md");
        return;
    }
    panic!(
        "docs/other-agents.md's table of agents differs from the snapshots; rerun with \
         UPDATE_AGENT_TABLE=1 to write it. The snapshots say:\n{table}"
    );
}

/// The table, a column per agent, a row for what it is and for each scenario.
fn render(snapshots: &Path) -> String {
    let mut lines = vec![
        format!("| | {} |", AGENTS.map(|(_, heading)| heading).join(" | ")),
        format!("|---|{}", "---|".repeat(AGENTS.len())),
    ];
    // `None`: no snapshot, the scenario skipped on that agent.
    let sections = |agent: &str, scenario: &str| -> Option<Vec<(String, Value)>> {
        let path = snapshots.join(format!("agents__turns__{scenario}__{agent}.snap"));
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
            Err(e) => panic!("{}: {e}", path.display()),
        };
        let body = text
            .splitn(3, "---\n")
            .nth(2)
            .expect("a snapshot has a header");
        Some(parse_sections(body))
    };
    let identity: Vec<String> = AGENTS
        .iter()
        .map(|(agent, _)| {
            let found = sections(agent, "text_turn")
                .unwrap_or_else(|| panic!("no text_turn snapshot for {agent}"));
            match found.iter().find(|(key, _)| key == "agent") {
                Some((_, agent)) => identity_cell(agent),
                None => "(OpenCode's HTTP API)".into(),
            }
        })
        .collect();
    lines.push(format!(
        "| agent, and what it advertises | {} |",
        identity.join(" | ")
    ));
    for (scenario, heading) in SCENARIOS {
        let cells: Vec<String> = AGENTS
            .iter()
            .map(|(agent, _)| {
                let Some(found) = sections(agent, scenario) else {
                    return "skipped (not advertised)".into();
                };
                let turn = found.iter().find(|(key, _)| key == "turn").map(|(_, t)| t);
                turn.map_or_else(|| "(no turn recorded)".into(), turn_cell)
            })
            .collect();
        lines.push(format!("| {heading} | {} |", cells.join(" | ")));
    }
    lines.join("\n")
}

fn identity_cell(agent: &Value) -> String {
    let mut advertised = Vec::new();
    collect_true(&agent["capabilities"], "", &mut advertised);
    format!(
        "{} {}: {}",
        scalar(&agent["name"]),
        scalar(&agent["version"]),
        advertised.join(", ")
    )
}

/// The capability paths whose value is `true` or an object (`sessionCapabilities.list: {}`),
/// leaving out the agent's private `_meta`.
fn collect_true(value: &Value, prefix: &str, out: &mut Vec<String>) {
    let Value::Object(map) = value else { return };
    for (key, value) in map {
        if key == "_meta" {
            continue;
        }
        let path = if prefix.is_empty() {
            key.clone()
        } else {
            format!("{prefix}.{key}")
        };
        match value {
            Value::Bool(true) => out.push(format!("`{path}`")),
            Value::Object(inner) if inner.is_empty() => out.push(format!("`{path}`")),
            Value::Object(_) => collect_true(value, &path, out),
            _ => {}
        }
    }
}

fn turn_cell(turn: &Value) -> String {
    let list = |key: &str| -> Vec<String> {
        turn[key]
            .as_array()
            .map(|items| items.iter().map(scalar).collect())
            .unwrap_or_default()
    };
    let events = list("events");
    let mut parts = vec![match events.is_empty() {
        true => "updates: none".to_string(),
        false => format!("updates: {}", events.join(", ")),
    }];
    if let Some(calls) = turn["tool_calls"].as_array() {
        let calls: Vec<String> = calls
            .iter()
            .map(|c| format!("`{}` {}", scalar(&c["tool"]), scalar(&c["status"])))
            .collect();
        parts.push(format!("tool: {}", calls.join(", ")));
    }
    if let Some(asks) = turn["interactions"].as_array() {
        let replies: Vec<String> = asks.iter().map(|a| scalar(&a["reply"])).collect();
        parts.push(format!("asked, replied {}", replies.join(", ")));
    }
    let plan = list("plan");
    if !plan.is_empty() {
        parts.push(format!("plan: {}", plan.join(", ")));
    }
    let errors = list("errors");
    if !errors.is_empty() {
        parts.push(format!("errors: {}", errors.join(", ")));
    }
    if !turn["stop_reason"].is_null() {
        parts.push(format!("stop: `{}`", scalar(&turn["stop_reason"])));
    }
    parts.join("; ").replace('|', "\\|")
}

fn scalar(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Null => "—".into(),
        other => other.to_string(),
    }
}

/// The top-level `- key:` sections of an evidence snapshot, each as JSON. The evidence's YAML is
/// block style only (maps, lists, plain or double-quoted scalars, `{}`): read by indentation.
fn parse_sections(body: &str) -> Vec<(String, Value)> {
    let lines: Vec<&str> = body.lines().filter(|l| !l.trim().is_empty()).collect();
    let mut sections = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let key = lines[i]
            .strip_prefix("- ")
            .and_then(|l| l.strip_suffix(':'))
            .unwrap_or_else(|| panic!("not a section: {:?}", lines[i]));
        let start = i + 1;
        i = start;
        while i < lines.len() && lines[i].starts_with("    ") {
            i += 1;
        }
        sections.push((key.to_string(), parse_block(&lines[start..i], 4)));
    }
    sections
}

fn indent(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

/// A block of lines at `at` indentation: a list when it starts with `- `, else a map.
fn parse_block(lines: &[&str], at: usize) -> Value {
    if lines.is_empty() {
        return Value::Null;
    }
    let is_list = lines[0][at..].starts_with("- ");
    let mut items = Vec::new();
    let mut map = serde_json::Map::new();
    let mut i = 0;
    while i < lines.len() {
        let line = &lines[i][at..];
        let mut end = i + 1;
        while end < lines.len() && indent(lines[end]) > at {
            end += 1;
        }
        if is_list {
            let rest = &line[2..];
            // `- key: value` opens a map item whose other keys sit at `at + 2`.
            // A quoted scalar may hold `: ` itself.
            if !rest.starts_with('"') && (rest.contains(": ") || rest.ends_with(':')) {
                let first = format!("{}{}", " ".repeat(at + 2), rest);
                let mut block: Vec<&str> = vec![first.as_str()];
                block.extend(&lines[i + 1..end]);
                let owned: Vec<String> = block.iter().map(|s| s.to_string()).collect();
                let refs: Vec<&str> = owned.iter().map(String::as_str).collect();
                items.push(parse_block(&refs, at + 2));
            } else {
                items.push(plain(rest));
            }
        } else {
            let (key, value) = line.split_once(':').expect("a map entry");
            let value = value.trim();
            let parsed = if value.is_empty() {
                let child = &lines[i + 1..end];
                parse_block(child, child.first().map_or(at, |l| indent(l)))
            } else {
                plain(value)
            };
            map.insert(key.trim_matches('"').to_string(), parsed);
        }
        i = end;
    }
    if is_list {
        Value::Array(items)
    } else {
        Value::Object(map)
    }
}

fn plain(text: &str) -> Value {
    if text == "{}" {
        return Value::Object(Default::default());
    }
    if text.starts_with('"') {
        return serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.into()));
    }
    match text {
        "true" => Value::Bool(true),
        "false" => Value::Bool(false),
        "~" | "null" => Value::Null,
        _ => Value::String(text.to_string()),
    }
}

/// OpenCode over HTTP answers `advertises` with what `opencode acp` of the same binary
/// advertised in its accepted snapshot.
#[test]
fn opencode_over_http_advertises_what_its_acp_mode_does() {
    let text = std::fs::read_to_string(
        repo().join("snapshots/agents__turns__text_turn__opencode_acp.snap"),
    )
    .expect("the opencode-acp text_turn snapshot");
    let body = text
        .splitn(3, "---\n")
        .nth(2)
        .expect("a snapshot has a header");
    let sections = parse_sections(body);
    let (_, agent) = sections
        .iter()
        .find(|(key, _)| key == "agent")
        .expect("an agent section");
    let file = repo().join("harness-runtime/src/any_agent/opencode_http_capabilities.json");
    let http: Value =
        serde_json::from_str(&std::fs::read_to_string(&file).expect("the file")).expect("JSON");
    assert_eq!(
        http,
        agent["capabilities"],
        "{} differs from what `opencode acp` advertised: copy its capabilities",
        file.display()
    );
}

#[test]
fn the_snapshot_reader_reads_nested_maps_lists_and_quoted_scalars() {
    let body = "- turn:\n    events:\n      - a ×2\n      - \"done: x\"\n    tool_calls:\n      - tool: \"execute: x\"\n        status: completed\n    plan: {}\n- agent:\n    name: OpenCode\n    caps:\n      deep:\n        on: true\n";
    let sections = parse_sections(body);
    assert_eq!(
        sections[0].1,
        serde_json::json!({"events": ["a ×2", "done: x"], "tool_calls": [{"tool": "execute: x", "status": "completed"}], "plan": {}})
    );
    assert_eq!(
        sections[1].1,
        serde_json::json!({"name": "OpenCode", "caps": {"deep": {"on": true}}})
    );
}
