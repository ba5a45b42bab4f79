//! The runtime's layers point one way: no module imports, through any chain, a module that
//! imports it back, and within a module no file does so with another. A cycle is how a rule ends
//! up with two homes: this test reads the sources and names the cycle it finds. Beyond cycles,
//! each top-level module uses only those listed above it in docs/architecture.md, and only
//! `settings/` reads the environment.
//!
//! What counts as a reference: `crate::<module>` paths (also inside `crate::{…}`, and crate-root
//! re-exports such as `crate::Live` resolved through `lib.rs`) between top-level modules, and
//! `super::<file>` / `super::<Name>` (resolved through the folder's `mod.rs`) between files of one
//! folder. Comments and `#[cfg(test)] mod tests` blocks do not count: a doc link is no import, and
//! a unit test may reach anywhere.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

type Graph = BTreeMap<String, BTreeSet<String>>;

#[test]
fn top_level_modules_form_no_cycle() {
    let sources = sources();
    let reexports = reexports(&sources["lib.rs"]);
    let mut graph = Graph::new();
    for (file, code) in &sources {
        let from = top_module(file);
        if from == "lib" || from == "bin" {
            continue;
        }
        for name in crate_references(code) {
            let to = reexports.get(&name).cloned().unwrap_or(name);
            if to != from && sources.keys().any(|f| top_module(f) == to) {
                graph.entry(from.clone()).or_default().insert(to);
            }
        }
    }
    assert_acyclic("modules", &graph);
}

#[test]
fn files_within_each_module_form_no_cycle() {
    let sources = sources();
    let folders: BTreeSet<String> = sources
        .keys()
        .filter_map(|f| f.split_once('/').map(|(folder, _)| folder.to_string()))
        .collect();
    for folder in folders {
        let files: BTreeMap<&String, &String> = sources
            .iter()
            .filter(|(f, _)| f.starts_with(&format!("{folder}/")))
            .collect();
        let stems: BTreeSet<String> = files.keys().map(|f| stem(f)).collect();
        let names = files
            .iter()
            .find(|(f, _)| stem(f) == "mod")
            .map(|(_, code)| reexports(code))
            .unwrap_or_default();
        let mut graph = Graph::new();
        for (file, code) in &files {
            let from = stem(file);
            if from == "mod" {
                continue;
            }
            for name in sibling_references(code, &folder) {
                let to = if stems.contains(&name) {
                    Some(name)
                } else {
                    names.get(&name).cloned()
                };
                if let Some(to) = to.filter(|to| *to != from) {
                    graph.entry(from.clone()).or_default().insert(to);
                }
            }
        }
        assert_acyclic(&folder, &graph);
    }
}

#[test]
fn each_module_uses_only_those_above_it_in_the_architecture() {
    let layers = layers(&architecture());
    assert!(
        layers.len() > 10,
        "docs/architecture.md lists no layers this test can read: {layers:?}"
    );
    let sources = sources();
    for file in sources.keys() {
        let module = top_module(file);
        assert!(
            matches!(module.as_str(), "lib" | "bin") || layers.contains(&module),
            "src/{file}: its module `{module}` is not among the layers of docs/architecture.md \
             ({layers:?}); list it where it belongs"
        );
    }
    let reexports = reexports(&sources["lib.rs"]);
    let mut wrong = Vec::new();
    for (file, code) in &sources {
        let from = top_module(file);
        let Some(from_layer) = layers.iter().position(|m| *m == from) else {
            continue;
        };
        for name in crate_references(code) {
            let to = reexports
                .get(&name)
                .cloned()
                .unwrap_or_else(|| name.clone());
            if let Some(to_layer) = layers.iter().position(|m| *m == to) {
                if to_layer > from_layer {
                    wrong.push(format!(
                        "src/{file} uses crate::{name} ({to}, listed below {from})"
                    ));
                }
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "each layer uses only those above it (docs/architecture.md), but:\n{}\nmove what both \
         need up, or pass it in from below",
        wrong.join("\n")
    );
}

#[test]
fn only_settings_reads_the_environment() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut found = Vec::new();
    for (file, text) in files_under(&root) {
        if file.starts_with("settings/") {
            continue;
        }
        for (n, line) in text.lines().enumerate() {
            if line.contains("env::var") {
                found.push(format!("src/{file}:{}: {}", n + 1, line.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "every environment variable is read in src/settings/ (a typed reader there), but:\n{}",
        found.join("\n")
    );
}

/// docs/architecture.md, the page that lists the layers.
fn architecture() -> String {
    let page = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/architecture.md");
    std::fs::read_to_string(&page).unwrap_or_else(|e| panic!("{}: {e}", page.display()))
}

/// The runtime's top-level modules in the order docs/architecture.md lists them (`  src/x/` or
/// `  src/x.rs` at the start of a line, nested folders skipped), highest first.
fn layers(page: &str) -> Vec<String> {
    let mut layers: Vec<String> = Vec::new();
    for line in page.lines() {
        let Some(path) = line.strip_prefix("  src/") else {
            continue;
        };
        let path = path.split_whitespace().next().unwrap_or_default();
        let module = match path.strip_suffix(".rs") {
            Some(file) => file,
            None => match path.strip_suffix('/') {
                Some(folder) if !folder.contains('/') => folder,
                _ => continue,
            },
        };
        if !layers.iter().any(|known| known == module) {
            layers.push(module.to_string());
        }
    }
    layers
}

/// Every `.rs` file under `src/`, by path relative to it, as written.
fn files_under(root: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut pending: Vec<PathBuf> = vec![root.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let relative = path
                    .strip_prefix(root)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                out.insert(relative, std::fs::read_to_string(&path).unwrap());
            }
        }
    }
    out
}

/// Every `.rs` file under `src/`, by path relative to it, without comments and unit tests.
fn sources() -> BTreeMap<String, String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let out: BTreeMap<String, String> = files_under(&root)
        .into_iter()
        .map(|(file, text)| (file, code_only(&text)))
        .collect();
    assert!(out.contains_key("lib.rs"), "no src/lib.rs under {root:?}");
    out
}

fn code_only(text: &str) -> String {
    let mut code = String::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("#[cfg(test)]")
            && lines
                .peek()
                .is_some_and(|next| next.trim_start().starts_with("mod tests"))
        {
            break;
        }
        if !trimmed.starts_with("//") {
            code.push_str(line);
            code.push('\n');
        }
    }
    code
}

/// `client` for `client/http.rs`, `live` for `live.rs`.
fn top_module(file: &str) -> String {
    match file.split_once('/') {
        Some((folder, _)) => folder.to_string(),
        None => file.trim_end_matches(".rs").to_string(),
    }
}

fn stem(file: &str) -> String {
    Path::new(file)
        .file_stem()
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

/// The first segment after each `prefix::`, and every first segment inside `prefix::{…}`.
fn segments_after(code: &str, prefix: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let needle = format!("{prefix}::");
    let mut rest = code;
    while let Some(at) = rest.find(&needle) {
        let before = rest[..at].chars().next_back();
        rest = &rest[at + needle.len()..];
        // `$crate::`, `harness_runtime::crate…`: only the whole word counts.
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$') {
            continue;
        }
        if let Some(group) = rest.strip_prefix('{') {
            let end = matching_brace(group);
            for item in split_top_level(&group[..end]) {
                if let Some(name) = first_ident(item) {
                    found.insert(name);
                }
            }
        } else if let Some(name) = first_ident(rest) {
            found.insert(name);
        }
    }
    found
}

fn matching_brace(text: &str) -> usize {
    let mut depth = 0;
    for (i, c) in text.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => return i,
            '}' => depth -= 1,
            _ => {}
        }
    }
    text.len()
}

fn split_top_level(text: &str) -> Vec<&str> {
    let (mut parts, mut depth, mut start) = (Vec::new(), 0, 0);
    for (i, c) in text.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts
}

fn first_ident(text: &str) -> Option<String> {
    let ident: String = text
        .trim_start()
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    (!ident.is_empty() && ident != "self").then_some(ident)
}

fn crate_references(code: &str) -> BTreeSet<String> {
    segments_after(code, "crate")
}

/// References from a file of `folder` to its siblings: `super::x` and `crate::folder::x`.
fn sibling_references(code: &str, folder: &str) -> BTreeSet<String> {
    let mut found = segments_after(code, "super");
    found.extend(segments_after(code, &format!("crate::{folder}")));
    found
}

/// `name → file stem` for every `pub use file::{…}` / `pub(crate) use file::…` in a `lib.rs` or
/// `mod.rs`.
fn reexports(code: &str) -> BTreeMap<String, String> {
    let mut names = BTreeMap::new();
    for statement in code.split(';') {
        let statement = statement.trim();
        let Some(path) = ["pub use ", "pub(crate) use "]
            .iter()
            .find_map(|p| statement.strip_prefix(p))
        else {
            continue;
        };
        let Some((file, items)) = path.split_once("::") else {
            continue;
        };
        // The prelude's `pub use crate::{…}` re-exports re-exports: not a definition's file.
        if matches!(file.trim(), "crate" | "self" | "super") {
            continue;
        }
        let items = items.trim().trim_start_matches('{').trim_end_matches('}');
        for item in split_top_level(items) {
            let item = item.trim();
            // `x as y` is known as `y`; `a::B` as `B`.
            let name = item.rsplit(" as ").next().unwrap_or(item);
            let name = name.rsplit("::").next().unwrap_or(name).trim();
            if !name.is_empty() && name != "self" {
                names.insert(name.to_string(), file.trim().to_string());
            }
        }
    }
    names
}

fn assert_acyclic(scope: &str, graph: &Graph) {
    for start in graph.keys() {
        if let Some(cycle) = path_back(graph, start) {
            panic!(
                "{scope}: import cycle {}; move what both need into one of them or a module \
                 below both\nwhole graph: {graph:#?}",
                cycle.join(" -> ")
            );
        }
    }
}

/// A path `start -> … -> start`, if there is one.
fn path_back(graph: &Graph, start: &str) -> Option<Vec<String>> {
    let mut stack = vec![vec![start.to_string()]];
    let mut seen = BTreeSet::new();
    while let Some(path) = stack.pop() {
        let last = path.last().unwrap();
        for next in graph.get(last).into_iter().flatten() {
            if next == start {
                let mut cycle = path.clone();
                cycle.push(next.clone());
                return Some(cycle);
            }
            if seen.insert(next.clone()) {
                let mut longer = path.clone();
                longer.push(next.clone());
                stack.push(longer);
            }
        }
    }
    None
}

#[test]
fn the_reader_sees_what_it_should() {
    let code = code_only(
        "use crate::{Live, client::{Client, Session}};\n// crate::evidence\nuse super::{a, B};\n\
         $crate::runner::run();\n#[cfg(test)]\nmod tests { use crate::opencode; }\n",
    );
    assert_eq!(
        crate_references(&code),
        ["Live", "client"].map(String::from).into()
    );
    assert_eq!(
        segments_after(&code, "super"),
        ["B", "a"].map(String::from).into()
    );
    let names = reexports(
        "pub use a::{X, Y as Z};\npub(crate) use b::W;\nmod c;\npub use crate::{X, c::V};",
    );
    assert!(!names.contains_key("V"));
    assert_eq!(names["X"], "a");
    assert_eq!(names["Z"], "a");
    assert_eq!(names["W"], "b");
    let mut graph = Graph::new();
    graph.entry("a".into()).or_default().insert("b".into());
    graph.entry("b".into()).or_default().insert("a".into());
    assert!(path_back(&graph, "a").is_some());
    graph.remove("b");
    assert!(path_back(&graph, "a").is_none());
    let page = "  src/settings/   env\n  src/opencode/pool/ shared\n    src/x/ not a layer\n  \
                src/live.rs  Live\n  src/settings/ again\n  tests/module_graph.rs\n";
    assert_eq!(layers(page), ["settings", "live"]);
}
