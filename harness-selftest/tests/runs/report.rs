//! The run report, seen as a user sees it: a run of the scenario binary with three
//! failures (the secret canary's real OpenCode turn, evidence that does not match its
//! snapshot, and an exploration that found its failing order), two passes (one of them an
//! exploration), a skip and an ignored scenario, as seven processes of one nextest run
//! (`NEXTEST_RUN_ID`) writing into one report folder at once.
//! The data behind the page is checked as JSON; the page itself in headless Chromium.
//! Then the history: a scenario that passes, then fails, passes and fails again, run after run
//! (no agent), said to be a new failure, then a known flake, then a repeat, on stderr and in
//! the page.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use harness_runtime::scaled;
use harness_selftest::files::files_under;
use harness_selftest::prerequisites::{self, Prerequisite::Chromium, Prerequisite::OpenCode, Test};
use harness_selftest::run::Finished;
use harness_selftest::sandbox::{Sandbox, unique};
use harness_selftest::test;
use serde_json::Value;

/// The scenario binary.
const SCENARIOS: &str = env!("CARGO_BIN_EXE_selftest-scenarios");
/// The ceiling of one run of the scenario binary, before scaling.
const RUN_CEILING: Duration = Duration::from_secs(300);
/// The scenarios of the run and the exit code of each one's process.
const RUN: &[(&str, i32)] = &[
    ("canary::secrets_never_leak", 101),
    (MISMATCH, 101),
    (RACY, 101),
    (EXPLORED, 0),
    ("outcomes::passes", 0),
    ("requirements::needs_token", 0),
    ("skips::ignored_with_reason", 0),
];
/// The scenario whose evidence does not match the snapshot the test accepted for it.
const MISMATCH: &str = "snapshot::names_its_own_file";
/// An exploration (of two product points, no agent) that fails in the order that is not the
/// default, and one that passes in both.
const RACY: &str = "explore::fails_when_the_abort_goes_first";
const EXPLORED: &str = "explore::two_points_in_either_order";
/// The racy one's failing schedule: the abort's pass before the reply's.
const ABORT_FIRST: &str = "6bde.1>6498.1";

/// The run report's tests; [`after`] removes what they shared once they all ran.
pub(crate) fn tests() -> Vec<Test> {
    vec![
        test!(a_run_report_holds_every_outcome_failures_first_with_a_timeline_and_no_canary)
            .needs(OpenCode),
        test!(the_report_renders_in_chromium_with_counts_failures_first_and_lanes)
            .needs(OpenCode)
            .needs(Chromium),
        test!(the_history_tells_a_new_failure_from_a_known_flake_and_a_repeat),
        test!(the_history_renders_in_chromium_as_badges_and_a_list).needs(Chromium),
    ]
}

/// Run after every test of the binary: shared by two tests, the history's runs live in a
/// static, never dropped.
pub(crate) fn after() {
    if let Some(runs) = HISTORY_RUNS.get() {
        runs.remove();
    }
}

/// A finished run and its report folder.
struct ReportRun {
    report: tempfile::TempDir,
    canaries: [String; 2],
    outs: Vec<Finished>,
    _sandbox: Sandbox,
    _snapshots: tempfile::TempDir,
}

impl ReportRun {
    fn index(&self) -> PathBuf {
        self.report.path().join("index.html")
    }

    /// The data the page renders, read back from its inline JSON.
    fn data(&self) -> Value {
        let html = std::fs::read_to_string(self.index())
            .unwrap_or_else(|e| panic!("no index.html ({e})\n{}", self.outputs()));
        let open = "<script type=\"application/json\" id=\"run-data\">";
        let start = html.find(open).expect("the inline data") + open.len();
        let end = start + html[start..].find("</script>").expect("its end");
        serde_json::from_str(&html[start..end]).expect("the inline data is JSON")
    }

    fn outputs(&self) -> String {
        self.outs.iter().map(|o| format!("{o}\n")).collect()
    }
}

/// Runs the seven scenarios as seven processes of one run, all at once, into one report folder.
fn report_run() -> ReportRun {
    let sandbox = Sandbox::new();
    let report = tempfile::tempdir().unwrap();
    let snapshots = tempfile::tempdir().unwrap();
    let canaries = [unique("reportkey"), unique("reportword")];
    let run_id = unique("nextest-run");
    accept_a_different_snapshot(&sandbox, snapshots.path());
    let running: Vec<_> = RUN
        .iter()
        .map(|(name, _)| {
            let mut command = sandbox.command(SCENARIOS, &["--exact", name]);
            command.envs([
                ("LIVE_REPORT", report.path().to_str().unwrap()),
                // Servers of their own: the canary's timeline below shows its server's spawn,
                // listening line and health (a leased server was started outside the scenario).
                ("LIVE_ISOLATION", "server"),
                ("NEXTEST_RUN_ID", &run_id),
                ("CANARY_API_KEY", &canaries[0]),
                ("CANARY_PLAIN", &canaries[1]),
                ("LIVE_SNAPSHOT_DIR", snapshots.path().to_str().unwrap()),
                // The mismatch leaves insta's `.snap.new` beside the accepted one.
                (
                    "INSTA_UPDATE",
                    if *name == MISMATCH { "new" } else { "always" },
                ),
            ]);
            sandbox.start(command)
        })
        .collect();
    let outs: Vec<Finished> = running
        .into_iter()
        .map(|r| r.wait(scaled(RUN_CEILING)))
        .collect();
    for ((name, code), out) in RUN.iter().zip(&outs) {
        assert_eq!(out.code, Some(*code), "{name}\n{out}");
        let last = out.stderr.lines().last().unwrap_or_default();
        assert!(
            last.starts_with("live report: ") && last.ends_with("index.html"),
            "the runner's last line names the report\n{out}"
        );
    }
    ReportRun {
        report,
        canaries,
        outs,
        _sandbox: sandbox,
        _snapshots: snapshots,
    }
}

/// Records the mismatching scenario's snapshot, then changes what it accepted: its next run's
/// evidence no longer matches.
fn accept_a_different_snapshot(sandbox: &Sandbox, snapshots: &Path) {
    let mut command = sandbox.command(SCENARIOS, &["--exact", MISMATCH]);
    command.envs([
        ("LIVE_SNAPSHOT_DIR", snapshots.to_str().unwrap()),
        ("INSTA_UPDATE", "always"),
    ]);
    sandbox.run(command, scaled(RUN_CEILING)).assert_code(0);
    let file = snapshots.join("snapshot__names_its_own_file.snap");
    let accepted = std::fs::read_to_string(&file).unwrap();
    let changed = accepted.replace(MISMATCH, "snapshot::as_it_was_accepted");
    assert_ne!(accepted, changed, "{accepted}");
    std::fs::write(&file, changed).unwrap();
}

fn scenario<'a>(data: &'a Value, name: &str) -> &'a Value {
    data["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == name)
        .unwrap_or_else(|| panic!("{name} is not in the report: {data:#}"))
}

/// The data: every outcome with its fields, failures first, the failure's timeline in every
/// lane it touched, its evidence, message and kept root; not one byte of a canary anywhere in
/// the report folder.
fn a_run_report_holds_every_outcome_failures_first_with_a_timeline_and_no_canary() {
    let run = report_run();
    let data = run.data();
    assert_eq!(
        data["counts"],
        serde_json::json!({"total": 7, "failed": 3, "passed": 2, "skipped": 1, "ignored": 1}),
        "{data:#}"
    );
    let order: Vec<&str> = data["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        order,
        [
            "canary::secrets_never_leak",
            RACY,
            MISMATCH,
            "requirements::needs_token",
            "skips::ignored_with_reason",
            EXPLORED,
            "outcomes::passes"
        ]
    );

    // The found failure: its schedule, how it was found, its replay line, its run's two steps
    // (the abort's pass released at decision 1, not the default).
    let racy = scenario(&data, RACY);
    assert_eq!(racy["outcome"], "failed");
    let found = &racy["exploration"];
    assert_eq!(found["mode"], "exhaustive", "{racy:#}");
    assert_eq!(found["failed"], true, "{racy:#}");
    assert_eq!(found["schedule"], ABORT_FIRST, "{racy:#}");
    assert_eq!(found["schedules"], 2, "{racy:#}");
    assert_eq!(found["budget_runs"], 4, "{racy:#}");
    assert_eq!(found["reproduced"], serde_json::json!([2, 2]), "{racy:#}");
    let command = found["replay_command"].as_str().unwrap();
    assert!(
        command.starts_with(&format!("LIVE_SCHEDULE='{ABORT_FIRST}' cargo test"))
            && command.ends_with(&format!(" -- {RACY} --exact")),
        "{racy:#}"
    );
    let steps = found["steps"].as_array().unwrap();
    let released: Vec<(&str, Option<u64>, bool)> = steps
        .iter()
        .map(|s| {
            (
                s["label"].as_str().unwrap(),
                s["decision"].as_u64(),
                s["deviated"].as_bool().unwrap_or(false),
            )
        })
        .collect();
    assert_eq!(
        released,
        [
            ("product abort", Some(1), true),
            ("product reply", None, false)
        ],
        "{racy:#}"
    );
    // The passing one: both orderings tried.
    let explored = &scenario(&data, EXPLORED)["exploration"];
    assert_eq!(explored["failed"], false, "{explored:#}");
    assert_eq!(explored["exhausted"], true, "{explored:#}");
    assert_eq!(explored["space"], 2, "{explored:#}");

    let skipped = scenario(&data, "requirements::needs_token");
    assert_eq!(skipped["outcome"], "skipped");
    assert!(
        skipped["reason"]
            .as_str()
            .unwrap()
            .contains("HARNESS_SELFTEST_TOKEN"),
        "{skipped:#}"
    );
    assert_eq!(
        scenario(&data, "skips::ignored_with_reason")["outcome"],
        "ignored"
    );
    let passed = scenario(&data, "outcomes::passes");
    assert_eq!(passed["outcome"], "passed");
    assert_eq!(passed["model"], "scripted");

    let failed = scenario(&data, "canary::secrets_never_leak");
    assert_eq!(failed["outcome"], "failed");
    assert_eq!(failed["agent"], "opencode");
    assert_eq!(failed["isolation"], "server");
    assert_eq!(failed["model"], "scripted");
    assert!(failed["duration_ms"].as_u64().unwrap() > 0);
    assert!(
        failed["failure"]
            .as_str()
            .unwrap()
            .contains("deliberate failure: the key was [secret], the word was [secret]"),
        "{failed:#}"
    );
    let entries = failed["entries"].as_array().unwrap();
    let has = |lane: &str, kind: &str| {
        entries
            .iter()
            .any(|e| e["lane"] == lane && e["kind"].as_str().unwrap().starts_with(kind))
    };
    for (lane, kind) in [
        ("provisioning", "root"),
        ("provisioning", "spawn"),
        ("provisioning", "listening line"),
        ("provisioning", "health 200"),
        ("provisioning", "ready"),
        ("turn", "prompt posted"),
        ("turn", "session.status"),
        ("turn", "turn ended"),
        ("model", "request 1"),
        ("model", "request 2"),
        ("tools", "bash completed"),
        ("teardown", "stopped"),
        ("teardown", "kept root"),
    ] {
        assert!(has(lane, kind), "no `{kind}` in lane {lane}: {entries:#?}");
    }
    let times: Vec<f64> = entries
        .iter()
        .map(|e| e["at_ms"].as_f64().unwrap())
        .collect();
    assert!(
        times.windows(2).all(|w| w[0] <= w[1]),
        "in order: {times:?}"
    );
    let tool = entries
        .iter()
        .find(|e| e["kind"] == "bash completed")
        .unwrap();
    assert!(
        tool["text"]
            .as_str()
            .unwrap()
            .contains("key=[secret] plain=[secret]"),
        "{tool:#}"
    );
    assert!(
        !failed["evidence"].as_array().unwrap().is_empty(),
        "{failed:#}"
    );
    let kept = &failed["kept_roots"][0];
    assert!(
        Path::new(kept["path"].as_str().unwrap()).is_dir(),
        "the kept root's path is a real path: {kept:#}"
    );
    assert!(!kept["log_tail"].as_str().unwrap().is_empty(), "{kept:#}");

    let mismatch = scenario(&data, MISMATCH);
    assert_eq!(mismatch["outcome"], "failed");
    let diff = &mismatch["snapshot"];
    let (accepted, new) = (
        diff["accepted"].as_str().unwrap(),
        diff["new"].as_str().unwrap(),
    );
    assert!(
        diff["file"]
            .as_str()
            .unwrap()
            .ends_with("snapshot__names_its_own_file.snap")
            && accepted.contains("snapshot::as_it_was_accepted")
            && new.contains(MISMATCH)
            && !new.contains("as_it_was_accepted"),
        "{mismatch:#}"
    );

    for file in files_under(run.report.path()) {
        let bytes = std::fs::read(&file).unwrap();
        let text = String::from_utf8_lossy(&bytes);
        for canary in &run.canaries {
            assert!(
                !text.contains(canary.as_str()),
                "a canary is in {}",
                file.display()
            );
        }
    }
}

/// The page in a real browser: Chromium renders it from the file, with no network, and the
/// DOM it dumps has the counts, the failure first and open on its timeline with every lane,
/// and no script error. A screenshot lands in the target directory.
fn the_report_renders_in_chromium_with_counts_failures_first_and_lanes() {
    let chromium = prerequisites::chromium().expect("chromium, checked as a prerequisite");
    let run = report_run();
    let profile = tempfile::tempdir().unwrap();
    let url = format!("file://{}", run.index().display());
    let dom = without_scripts(&chromium_output(
        &chromium,
        profile.path(),
        &["--dump-dom", &url],
    ));

    let body = &dom[dom.find("<body").expect("a body")..];
    let body = &body[..body.find('>').unwrap()];
    assert!(
        !body.contains("data-errors"),
        "the page's script failed: {body}"
    );
    assert!(body.contains("data-rendered=\"7\""), "{dom}");
    for (id, text) in [
        ("count-total", "7 total"),
        ("count-failed", "3 failed"),
        ("count-passed", "2 passed"),
        ("count-skipped", "1 skipped"),
        ("count-ignored", "1 ignored"),
    ] {
        assert!(
            dom.contains(&format!("id=\"{id}\"")) && dom.contains(text),
            "{id}: {dom}"
        );
    }
    let rows: Vec<&str> = dom
        .match_indices("<tr class=\"scenario\" data-outcome=\"")
        .map(|(at, m)| {
            let rest = &dom[at + m.len()..];
            &rest[..rest.find('"').unwrap()]
        })
        .collect();
    assert_eq!(
        rows,
        [
            "failed", "failed", "failed", "skipped", "ignored", "passed", "passed"
        ],
        "{dom}"
    );
    // Both explorations are badged in the index; the failing one opened on its exploration:
    // the summary, the replay line, and its run as a sequence of two steps.
    for explored in ["failed", "passed"] {
        assert_eq!(
            dom.matches(&format!("data-explored=\"{explored}\""))
                .count(),
            1,
            "{explored}: {dom}"
        );
    }
    assert_eq!(
        dom.matches("class=\"badge badge-explored\"").count(),
        2,
        "{dom}"
    );
    assert_eq!(
        dom.matches("<div class=\"exploration\">").count(),
        1,
        "{dom}"
    );
    let abort_first = ABORT_FIRST.replace('>', "&gt;");
    assert!(
        dom.contains(&format!(
            "<p class=\"exploration-summary\">failed under schedule {abort_first}, found at \
             schedule 2 of at most 4 (exhaustive search), reproduced 2 of 2; 4 runs in all</p>"
        )),
        "{dom}"
    );
    assert!(
        dom.contains(&format!(
            "<code class=\"replay-command\">LIVE_SCHEDULE='{abort_first}' cargo test"
        )),
        "{dom}"
    );
    assert!(dom.contains("class=\"sequence\" data-steps=\"2\""), "{dom}");
    assert_eq!(dom.matches("class=\"seq-step ").count(), 2, "{dom}");
    assert!(
        dom.contains("class=\"seq-step seq-product decision deviated\""),
        "{dom}"
    );
    assert!(dom.contains("Snapshot diff: "), "{dom}");
    assert!(
        dom.contains("class=\"add\""),
        "the new evidence's line: {dom}"
    );
    // The failure opened on its timeline, every lane drawn, its steps listed in order.
    assert!(dom.contains("class=\"timeline\""), "{dom}");
    for lane in [
        "provisioning",
        "turn",
        "model",
        "tools",
        "asks",
        "gates",
        "teardown",
    ] {
        assert!(
            dom.contains(&format!("data-lane=\"{lane}\"")),
            "lane {lane}: {dom}"
        );
    }
    assert!(dom.contains("class=\"mark\""), "{dom}");
    assert!(dom.contains("class=\"span\""), "a tool call's span: {dom}");
    assert!(dom.contains("Kept root: "), "{dom}");
    for canary in &run.canaries {
        assert!(!dom.contains(canary.as_str()), "a canary was rendered");
    }

    let screenshot = target_dir().join("live-report-screenshot.png");
    let _ = std::fs::remove_file(&screenshot);
    let shot = format!("--screenshot={}", screenshot.display());
    chromium_output(
        &chromium,
        profile.path(),
        &[&shot, "--window-size=1280,900", &url],
    );
    assert!(
        std::fs::metadata(&screenshot).is_ok_and(|m| m.len() > 10_000),
        "no screenshot at {}",
        screenshot.display()
    );
}

/// The markup as rendered, without the page's own script and data (which name what they render).
fn without_scripts(dom: &str) -> String {
    let mut out = String::new();
    let mut rest = dom;
    while let Some(at) = rest.find("<script") {
        out.push_str(&rest[..at]);
        let end = rest[at..].find("</script>").expect("a closed script") + at;
        rest = &rest[end + "</script>".len()..];
    }
    out.push_str(rest);
    out
}

/// Runs headless Chromium offline with a throwaway profile; its stdout.
fn chromium_output(chromium: &Path, profile: &Path, args: &[&str]) -> String {
    let mut command = Command::new(chromium);
    command
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--virtual-time-budget=5000",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args);
    let out = harness_selftest::run::Running::start(command).wait(scaled(Duration::from_secs(60)));
    assert_eq!(out.code, Some(0), "chromium failed\n{out}");
    out.stdout
}

/// The target directory this test binary runs from (`target/<profile>/deps/runs-…`).
fn target_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("CARGO_TARGET_DIR") {
        return PathBuf::from(dir);
    }
    let exe = std::env::current_exe().unwrap();
    exe.ancestors().nth(3).unwrap().to_path_buf()
}

/// The scenario whose outcome each run of the history chooses, and one that always passes.
const ASKED: &str = "history::fails_when_asked";
const PASSES: &str = "outcomes::passes";
/// The history scenario's outcome in each run: three passes, a failure (new), a pass, a failure
/// (a known flake: it failed before), a failure (a repeat).
const SEQUENCE: [bool; 7] = [true, true, true, false, true, false, false];
/// The run that the failing scenario is retried in (as nextest retries, same run id).
const RETRIED: usize = 5;

/// Runs of the scenario binary in sequence, each a nextest run of two processes at once, with
/// the history moved out of the report (`LIVE_HISTORY`).
struct HistoryRuns {
    report: tempfile::TempDir,
    history: tempfile::TempDir,
    canary: String,
    /// Each run's two processes: the chosen scenario's (its retry's, for [`RETRIED`]), the other.
    outs: Vec<[Finished; 2]>,
    /// The page as each run left it.
    pages: Vec<String>,
    sandbox: Sandbox,
}

/// The history's runs, made once for the two tests that read them (fifteen processes).
static HISTORY_RUNS: OnceLock<HistoryRuns> = OnceLock::new();

impl HistoryRuns {
    fn get() -> &'static HistoryRuns {
        HISTORY_RUNS.get_or_init(history_runs)
    }

    fn remove(&self) {
        for dir in [
            self.report.path(),
            self.history.path(),
            self.sandbox.tmp.path(),
            self.sandbox.scratch.path(),
        ] {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

fn history_runs() -> HistoryRuns {
    let sandbox = Sandbox::new();
    let report = tempfile::tempdir().unwrap();
    let history = tempfile::tempdir().unwrap();
    let canary = unique("historykey");
    // An earlier history the runner cannot read: set aside with a note, never a failure.
    std::fs::write(
        history.path().join("outcomes__passes.json"),
        "{\"outcomes\": [",
    )
    .unwrap();
    let start = |name: &str, run_id: &str, fail: bool| {
        let mut command = sandbox.command(SCENARIOS, &["--exact", name]);
        command.envs([
            ("LIVE_REPORT", report.path().to_str().unwrap()),
            ("LIVE_HISTORY", history.path().to_str().unwrap()),
            ("NEXTEST_RUN_ID", run_id),
        ]);
        if fail {
            command.env("SELFTEST_HISTORY_FAIL", &canary);
        }
        sandbox.start(command)
    };
    let mut outs = Vec::new();
    let mut pages = Vec::new();
    for (i, passes) in SEQUENCE.into_iter().enumerate() {
        let run_id = unique("history-run");
        let running = [
            start(ASKED, &run_id, !passes),
            start(PASSES, &run_id, false),
        ];
        let [mut asked, other] = running.map(|r| r.wait(scaled(RUN_CEILING)));
        if i == RETRIED {
            // Its retry fails again: still one outcome of this run.
            asked = start(ASKED, &run_id, !passes).wait(scaled(RUN_CEILING));
        }
        for (out, code) in [(&asked, if passes { 0 } else { 101 }), (&other, 0)] {
            assert_eq!(out.code, Some(code), "run {i}\n{out}");
            let last = out.stderr.lines().last().unwrap_or_default();
            assert!(
                last.starts_with("live report: "),
                "the report's line is still the last\n{out}"
            );
        }
        pages.push(std::fs::read_to_string(report.path().join("index.html")).unwrap());
        outs.push([asked, other]);
    }
    HistoryRuns {
        report,
        history,
        canary,
        outs,
        pages,
        sandbox,
    }
}

/// The inline data of a page.
fn page_data(html: &str) -> Value {
    let open = "<script type=\"application/json\" id=\"run-data\">";
    let start = html.find(open).expect("the inline data") + open.len();
    let end = start + html[start..].find("</script>").expect("its end");
    serde_json::from_str(&html[start..end]).expect("the inline data is JSON")
}

/// On stderr, the end of each run says what its failure is: not known before the third pass,
/// then new, then a known flake, then a repeat; a pass says nothing. The page's data has the
/// same, the pass rate and the recent outcomes (redacted); the history holds one outcome per
/// run (a retry replaced its run's), in the folder `LIVE_HISTORY` names; an unreadable file there
/// was set aside with a one-line note.
fn the_history_tells_a_new_failure_from_a_known_flake_and_a_repeat() {
    let runs = HistoryRuns::get();
    let said = |run: usize| -> Vec<String> {
        runs.outs[run][0]
            .stderr
            .lines()
            .filter_map(|l| l.strip_prefix("live history: "))
            .map(str::to_owned)
            .collect()
    };
    for run in [0, 1, 2, 4] {
        assert_eq!(said(run), Vec::<String>::new(), "a pass says nothing");
    }
    assert_eq!(
        said(3),
        [format!("{ASKED}: new failure (passed the last 3 runs)")]
    );
    assert_eq!(
        said(5),
        [format!("{ASKED}: known flake: failed 2 of the last 6 runs")]
    );
    assert_eq!(
        said(6),
        [format!("{ASKED}: repeat failure: failed the last 2 runs")]
    );
    let note = runs.outs[0][1]
        .stderr
        .lines()
        .find(|l| l.starts_with("live history: "))
        .unwrap_or_else(|| panic!("no note of the unreadable file\n{}", runs.outs[0][1]));
    assert!(
        note.contains("outcomes__passes.json could not be read (")
            && note.ends_with(
                "outcomes__passes.json.unreadable, its scenario's history starts afresh"
            ),
        "{note}"
    );

    let standing = |run: usize| {
        let data = page_data(&runs.pages[run]);
        scenario(&data, ASKED)["history"].clone()
    };
    let new = standing(3);
    assert_eq!(new["standing"], "new", "{new:#}");
    assert_eq!(new["line"], "new failure (passed the last 3 runs)");
    assert_eq!(
        (new["passed"].as_u64(), new["verdicts"].as_u64()),
        (Some(3), Some(4))
    );
    let outcomes: Vec<&str> = new["recent"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["outcome"].as_str().unwrap())
        .collect();
    assert_eq!(outcomes, ["passed", "passed", "passed", "failed"]);
    assert_eq!(
        new["recent"][3]["failure"], "asked to fail, with the key [secret]",
        "the failure's first line, redacted: {new:#}"
    );
    let flake = standing(5);
    assert_eq!(flake["standing"], "flake", "{flake:#}");
    assert_eq!(flake["recent"].as_array().unwrap().len(), 6, "{flake:#}");
    assert_eq!(standing(6)["standing"], "repeat");
    let data = page_data(&runs.pages[6]);
    let passing = &scenario(&data, PASSES)["history"];
    assert_eq!(
        (passing["passed"].as_u64(), passing["verdicts"].as_u64()),
        (Some(7), Some(7))
    );
    assert!(passing.get("standing").is_none(), "{passing:#}");

    let kept: Value = serde_json::from_str(
        &std::fs::read_to_string(runs.history.path().join("history__fails_when_asked.json"))
            .unwrap(),
    )
    .unwrap();
    let kept: Vec<&str> = kept["outcomes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["outcome"].as_str().unwrap())
        .collect();
    assert_eq!(
        kept,
        [
            "passed", "passed", "passed", "failed", "passed", "failed", "failed"
        ],
        "one outcome per run, the retry's replacing its run's"
    );
    assert!(
        !runs.report.path().join("history").exists(),
        "LIVE_HISTORY moved it"
    );
    for file in files_under(runs.history.path())
        .into_iter()
        .chain(files_under(runs.report.path()))
    {
        let text = String::from_utf8_lossy(&std::fs::read(&file).unwrap()).into_owned();
        assert!(
            !text.contains(&runs.canary),
            "the canary is in {}",
            file.display()
        );
    }
}

/// The pages of the new failure and of the known flake in Chromium: the failure's badge with
/// its tooltip, the strip of its outcomes, and its History section, open with the failure.
fn the_history_renders_in_chromium_as_badges_and_a_list() {
    let chromium = prerequisites::chromium().expect("chromium, checked as a prerequisite");
    let runs = HistoryRuns::get();
    let profile = tempfile::tempdir().unwrap();
    for (run, standing, badge, line) in [
        (
            3,
            "new",
            "new failure",
            "new failure (passed the last 3 runs)",
        ),
        (
            5,
            "flake",
            "known flake",
            "known flake: failed 2 of the last 6 runs",
        ),
    ] {
        let page = runs.report.path().join(format!("run-{run}.html"));
        std::fs::write(&page, &runs.pages[run]).unwrap();
        let url = format!("file://{}", page.display());
        let dom = without_scripts(&chromium_output(
            &chromium,
            profile.path(),
            &["--dump-dom", &url],
        ));
        let body = &dom[dom.find("<body").expect("a body")..];
        assert!(
            !body[..body.find('>').unwrap()].contains("data-errors"),
            "the page's script failed: {dom}"
        );
        assert_eq!(
            dom.matches(&format!("data-history=\"{standing}\"")).count(),
            1,
            "{dom}"
        );
        assert!(
            dom.contains(&format!(
                "<span class=\"badge badge-{standing}\">{badge}</span>"
            )),
            "{dom}"
        );
        assert!(
            dom.contains(&format!("title=\"{line}\n")),
            "the tooltip: {dom}"
        );
        assert_eq!(
            dom.matches("class=\"past past-").count(),
            2 * (run + 1),
            "{dom}"
        );
        assert!(
            dom.contains(&format!(
                "<p class=\"history-summary\">{line}; passed {} of the last {} runs",
                SEQUENCE[..=run].iter().filter(|p| **p).count(),
                run + 1
            )),
            "{dom}"
        );
        assert!(
            dom.contains("failed: asked to fail, with the key [secret] (this run)</li>"),
            "{dom}"
        );
        assert!(!dom.contains(&runs.canary), "a canary was rendered");
    }
}
