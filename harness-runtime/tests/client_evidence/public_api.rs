//! The public surface is exactly what `docs/api.md` lists: a public item that its tables do not
//! name fails this test, and so does a documented item that is no longer public.
//!
//! The items come from rustdoc itself (`cargo doc` of this crate with the `testing` feature, its
//! "all items" page), so re-exports, `#[doc(hidden)]` and `cfg`s count as a user sees them. The
//! documented ones are the first column of every table row of `docs/api.md`'s section "The
//! surface" that starts with a backticked path. Methods and fields are not listed there: rustdoc is their reference.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

#[test]
fn public_items_are_the_documented_surface() {
    let public = public_items();
    let documented = documented_items();
    let undocumented: Vec<_> = public.difference(&documented).collect();
    let gone: Vec<_> = documented.difference(&public).collect();
    assert!(
        undocumented.is_empty() && gone.is_empty(),
        "the public surface of harness-runtime differs from docs/api.md\n\
         public but not in docs/api.md (make them pub(crate), move them to `__private`, \
         or add a row saying what a user needs them for): {undocumented:?}\n\
         in docs/api.md but not public (remove their rows): {gone:?}"
    );
}

#[test]
fn the_surface_is_not_empty_and_reads_the_real_page() {
    // A parser that found nothing would make the comparison above pass against an empty table.
    let public = public_items();
    for expected in ["Live", "prelude::live_agent_test", "client::Client", "main"] {
        assert!(
            public.contains(expected),
            "{expected} not found in rustdoc's items: {public:?}"
        );
    }
    assert!(documented_items().contains("Live"));
}

fn manifest_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The target dir this test binary was built in (`<target>/debug/deps/client_evidence-…`), so the
/// documentation build reuses what `cargo doc` or `cargo clippy` already built there.
fn target_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("CARGO_TARGET_DIR") {
        return PathBuf::from(dir);
    }
    let exe = std::env::current_exe().expect("the test binary's path");
    exe.ancestors()
        .nth(3)
        .expect("the test binary lives in <target>/<profile>/deps")
        .to_path_buf()
}

/// Built once per test binary: both tests read the same page.
fn public_items() -> BTreeSet<String> {
    static ITEMS: std::sync::OnceLock<BTreeSet<String>> = std::sync::OnceLock::new();
    ITEMS.get_or_init(document_the_crate).clone()
}

fn document_the_crate() -> BTreeSet<String> {
    let target = target_dir();
    let output = harness_selftest::prerequisites::cargo()
        .args(["doc", "--no-deps", "--lib", "-p", "harness-runtime"])
        .args(["--features", "testing", "--target-dir"])
        .arg(&target)
        .current_dir(manifest_dir())
        .env_remove("RUSTDOCFLAGS")
        .output()
        .expect("cargo runs");
    assert!(
        output.status.success(),
        "cargo doc failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let page = target.join("doc/harness_runtime/all.html");
    let html = std::fs::read_to_string(&page)
        .unwrap_or_else(|e| panic!("reading rustdoc's {}: {e}", page.display()));
    items_of_all_page(&html)
}

/// Every `<li><a href="…">path</a></li>` of rustdoc's "all items" page.
fn items_of_all_page(html: &str) -> BTreeSet<String> {
    let list = html
        .split_once("<ul class=\"all-items\">")
        .map(|(_, rest)| rest)
        .unwrap_or_else(|| panic!("rustdoc's all.html has no item list:\n{html}"));
    list.split("<li><a href=\"")
        .skip(1)
        .filter_map(|entry| {
            let (_, rest) = entry.split_once("\">")?;
            let (name, _) = rest.split_once("</a>")?;
            Some(name.trim().to_string())
        })
        .collect()
}

fn documented_items() -> BTreeSet<String> {
    let path = manifest_dir().join("../docs/api.md");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    let (_, surface) = text
        .split_once("\n## The surface")
        .unwrap_or_else(|| panic!("{} has no `## The surface` section", path.display()));
    surface
        .lines()
        .filter_map(|line| line.strip_prefix("| `"))
        .filter_map(|rest| rest.split_once('`').map(|(item, _)| normalize(item)))
        .collect()
}

/// `main!` and `#[live_agent_test]` as docs write them; rustdoc's page says `main`, `live_agent_test`.
fn normalize(item: &str) -> String {
    let item = item.trim();
    let item = item
        .strip_prefix("#[")
        .and_then(|i| i.strip_suffix(']'))
        .unwrap_or(item);
    let item = item.strip_prefix("harness_runtime::").unwrap_or(item);
    item.trim_end_matches('!').to_string()
}

#[test]
fn normalize_reads_the_docs_spellings() {
    assert_eq!(normalize("#[live_agent_test]"), "live_agent_test");
    assert_eq!(normalize("main!"), "main");
    assert_eq!(
        normalize("harness_runtime::client::Client"),
        "client::Client"
    );
    let html = r#"<ul class="all-items"><li><a href="struct.Live.html">Live</a></li><li><a href="client/struct.Client.html">client::Client</a></li></ul>"#;
    let items = items_of_all_page(html);
    assert_eq!(
        items.into_iter().collect::<Vec<_>>(),
        ["Live", "client::Client"]
    );
}

/// Adding a field to a public struct must not break a user: every `pub struct` with public
/// fields is `#[non_exhaustive]`, or docs/api.md's "Types that can grow" names it among those
/// that stay open, saying why.
#[test]
fn every_open_public_struct_is_named_in_the_docs() {
    let docs = std::fs::read_to_string(manifest_dir().join("../docs/api.md")).unwrap();
    let (_, section) = docs
        .split_once("## Types that can grow")
        .expect("docs/api.md has a `## Types that can grow` section");
    let section = section.split("\n## ").next().unwrap_or_default();
    let (_, open) = section
        .split_once("keep public fields without")
        .expect("the section names the structs that stay open");
    let named: BTreeSet<&str> = open
        .split('`')
        .skip(1)
        .step_by(2)
        .filter_map(|code| code.rsplit("::").next())
        .collect();
    let mut open_structs = Vec::new();
    open_public_structs(&manifest_dir().join("src"), &mut open_structs);
    let unnamed: Vec<_> = open_structs
        .iter()
        .filter(|(name, _)| !named.contains(name.as_str()))
        .collect();
    assert!(
        unnamed.is_empty(),
        "public structs with public fields and no #[non_exhaustive] that docs/api.md does not \
         name as open (make their fields private with setters, mark them #[non_exhaustive], or \
         say in docs/api.md why they stay open): {unnamed:?}"
    );
}

/// `(name, file)` of every `pub struct` under `dir` with a `pub` field and no
/// `#[non_exhaustive]` among the attributes and docs above it.
fn open_public_structs(dir: &Path, found: &mut Vec<(String, String)>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            open_public_structs(&path, found);
            continue;
        }
        if path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        for (at, line) in lines.iter().enumerate() {
            let Some(rest) = line.trim_start().strip_prefix("pub struct ") else {
                continue;
            };
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            let above = lines[..at].iter().rev().take_while(|l| {
                l.trim_start().starts_with("#[") || l.trim_start().starts_with("//")
            });
            if above.clone().any(|l| l.contains("non_exhaustive")) {
                continue;
            }
            let indent = &line[..line.len() - line.trim_start().len()];
            let public_field = rest.trim_end().ends_with('{')
                && lines[at + 1..]
                    .iter()
                    .take_while(|l| !l.starts_with(&format!("{indent}}}")))
                    .any(|l| {
                        l.trim_start()
                            .strip_prefix("pub ")
                            .is_some_and(|f| f.contains(':'))
                    });
            if public_field {
                found.push((name, path.display().to_string()));
            }
        }
    }
}
