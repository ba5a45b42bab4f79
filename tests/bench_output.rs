//! The output of `cargo bench --bench live_overhead` stays parseable: its figure lines and its
//! reading of the live suite's libtest output, without running the (long) bench itself.

#[allow(dead_code)]
#[path = "../benches/live_overhead/libtest.rs"]
mod libtest;
#[allow(dead_code)]
#[path = "../benches/live_overhead/nextest_output.rs"]
mod nextest_output;
#[allow(dead_code)]
#[path = "../benches/live_overhead/proc_cpu.rs"]
mod proc_cpu;
#[allow(dead_code)]
#[path = "../benches/live_overhead/report.rs"]
mod report;
#[allow(dead_code)]
#[path = "../benches/live_overhead/settings.rs"]
mod settings;

use std::time::Duration;

use report::{Figure, RATIOS, Target, median, missing_ratios};

fn ms(values: &[u64]) -> Vec<Duration> {
    values.iter().map(|v| Duration::from_millis(*v)).collect()
}

#[test]
fn medians_and_ratios_of_medians() {
    assert_eq!(median(&[]), None);
    assert_eq!(median(&ms(&[30, 10, 20])), Some(Duration::from_millis(20)));
    assert_eq!(
        median(&ms(&[40, 10, 20, 30])),
        Some(Duration::from_millis(25))
    );
    let ratio = Figure::ratio("turn", &ms(&[110, 500, 100]), &ms(&[100, 90, 1000])).unwrap();
    assert_eq!(ratio.line(), "ratio turn 1.100");
    assert_eq!(Figure::ratio("turn", &ms(&[1]), &[]), None);
    assert_eq!(Figure::ratio("turn", &ms(&[1]), &ms(&[0])), None);
}

#[test]
fn every_printed_line_parses_back() {
    let figures = [
        Figure::ratio("provisioning", &ms(&[1030]), &ms(&[1000])).unwrap(),
        Figure::median("provisioning.harness", &ms(&[1030, 1040])).unwrap(),
        Figure::median("model.first_chunk", &[Duration::from_micros(1234)]).unwrap(),
        Figure::peak(
            "suite.agents_rss.default_2_threads",
            &[300 << 20, 512 << 20],
        )
        .unwrap(),
    ];
    let output: String = [
        "live_overhead: a header",
        "[live_overhead] turn: harness 1/20: 0.5 s",
    ]
    .into_iter()
    .map(String::from)
    .chain(figures.iter().map(Figure::line))
    .chain([Target::AtMost(1.05).verdict("provisioning", 1.03)])
    .collect::<Vec<_>>()
    .join("\n");
    let parsed = Figure::parse_all(&output);
    assert_eq!(parsed.len(), 4, "{output}");
    assert_eq!(
        parsed[3],
        Figure::Peak {
            name: "suite.agents_rss.default_2_threads".into(),
            mib: 512.0,
            runs: 2
        }
    );
    assert_eq!(Figure::peak("none", &[]), None);
    assert_eq!(
        parsed[0],
        Figure::Ratio {
            name: "provisioning".into(),
            value: 1.03
        }
    );
    assert_eq!(
        parsed[1],
        Figure::Median {
            name: "provisioning.harness".into(),
            ms: 1035.0,
            samples: 2
        }
    );
    assert!(
        output.contains("median model.first_chunk 1.2 ms (1 samples)"),
        "{output}"
    );
    assert!(
        output.contains("target provisioning <= 1.05: met (1.030)"),
        "{output}"
    );
    assert_eq!(
        Target::AtLeast(2.0).verdict("shared_speedup", 1.0),
        "target shared_speedup >= 2: missed (1.000)"
    );
}

#[test]
fn libtest_outcomes_are_read_from_the_pretty_format() {
    let stdout = "\nrunning 4 tests\n\
        test turns::a          ... ok\n\
        some scenario output\n\
        test turns::b          ... FAILED\n\
        test probes::c         ... ignored, requires TEST_OLLAMA_MODEL: not set\n\
        test probes::d         ... ignored (skipped after 90 s)\n\
        \ntest result: FAILED. 1 passed; 1 failed; 2 ignored; 0 measured; 0 filtered out\n";
    let outcomes = libtest::outcomes(stdout);
    let pairs: Vec<(&str, &str)> = outcomes
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    assert_eq!(
        pairs,
        [
            ("probes::c", "ignored"),
            ("probes::d", "ignored"),
            ("turns::a", "ok"),
            ("turns::b", "FAILED")
        ]
    );
    let mut other = outcomes.clone();
    other.insert("turns::b".into(), "ok".into());
    other.remove("probes::d");
    assert_eq!(
        libtest::differences(&outcomes, &other),
        ["probes::d: ignored vs not run", "turns::b: FAILED vs ok"]
    );
    assert!(libtest::differences(&outcomes, &outcomes.clone()).is_empty());
}

/// Every ratio belongs to a section that exists, and each name is printed once.
#[test]
fn every_ratio_is_measured_by_a_section() {
    for ratio in RATIOS {
        assert!(
            settings::SECTIONS.contains(&ratio.section),
            "`ratio {}` names no section: {}",
            ratio.name,
            ratio.section
        );
        assert_eq!(
            RATIOS.iter().filter(|r| r.name == ratio.name).count(),
            1,
            "{}",
            ratio.name
        );
    }
    // The figures against the raw server, the suite's speed-up, nextest's cost and a shared
    // scenario's CPU can miss their target.
    for name in [
        "provisioning",
        "turn",
        "replay_turn",
        "replay_turn.anthropic",
        "replay_turn.responses",
        "replay_turn.gemini",
        "relayed_turn",
        "shared_speedup",
        "nextest_default",
        "shared_scenario_cpu",
    ] {
        let ratio = RATIOS.iter().find(|r| r.name == name).unwrap();
        assert!(ratio.target.is_some(), "{name} has no target");
    }
}

/// A section that returned figures without its ratio (a side took no sample) is an error the
/// bench reports, not a quiet gap in its output.
#[test]
fn a_section_without_its_ratio_is_caught() {
    let medians = [
        Figure::median("provisioning.harness", &ms(&[1700])).unwrap(),
        Figure::median("provisioning.raw", &ms(&[1690])).unwrap(),
    ];
    assert_eq!(missing_ratios("provisioning", &medians), ["provisioning"]);
    let with_ratio = [Figure::ratio("provisioning", &ms(&[1700]), &ms(&[1690])).unwrap()];
    assert!(missing_ratios("provisioning", &with_ratio).is_empty());
    // The suite prints two ratios; either missing is reported.
    let speedup = [Figure::ratio("shared_speedup", &ms(&[2]), &ms(&[1])).unwrap()];
    assert_eq!(missing_ratios("suite", &speedup), ["thread_scaling"]);
    assert_eq!(missing_ratios("nextest", &[]), ["nextest_default"]);
    assert_eq!(missing_ratios("scenario_cpu", &[]), ["shared_scenario_cpu"]);
    // Sections with standalone figures only owe no ratio.
    assert!(missing_ratios("model", &[]).is_empty());
    assert!(missing_ratios("fixture", &[]).is_empty());
}

fn target(name: &str) -> Target {
    RATIOS
        .iter()
        .find(|r| r.name == name)
        .and_then(|r| r.target)
        .unwrap_or_else(|| panic!("{name} has no target"))
}

/// The goals: nextest costs at most 15 % more than `cargo test`, shared servers make
/// the suite at least 3 times faster, a shared scenario costs its server at most half of a
/// fresh directory's CPU; each bound is met on the bound and missed just past it.
#[test]
fn the_suite_figures_verdicts() {
    for (name, bound, met, missed) in [
        ("nextest_default", "<= 1.15", 1.15, 4.4),
        ("shared_speedup", ">= 3", 3.0, 2.3),
        ("shared_scenario_cpu", "<= 0.5", 0.5, 0.51),
    ] {
        let figure = target(name);
        assert_eq!(
            figure.verdict(name, met),
            format!("target {name} {bound}: met ({met:.3})")
        );
        assert_eq!(
            figure.verdict(name, missed),
            format!("target {name} {bound}: missed ({missed:.3})")
        );
    }
    // The lines the sections print for them parse back.
    let lines = [
        Figure::ratio("nextest_default", &ms(&[230]), &ms(&[200])).unwrap(),
        Figure::median("suite.nextest_default", &ms(&[230])).unwrap(),
        Figure::median("suite.cargo_test_default", &ms(&[200])).unwrap(),
        Figure::ratio("shared_scenario_cpu", &ms(&[450, 500, 550]), &ms(&[1200])).unwrap(),
        Figure::median("scenario_cpu.shared", &ms(&[500])).unwrap(),
        Figure::median("scenario_cpu.fresh_directory", &ms(&[1200])).unwrap(),
    ]
    .map(|f| f.line());
    assert_eq!(lines[0], "ratio nextest_default 1.150");
    assert_eq!(lines[3], "ratio shared_scenario_cpu 0.417");
    assert_eq!(lines[4], "median scenario_cpu.shared 500.0 ms (1 samples)");
    assert_eq!(Figure::parse_all(&lines.join("\n")).len(), lines.len());
}

/// The full bench interleaves several runs a side of the suite figures; `--quick` (what CI
/// runs) takes one, and few scenarios.
#[test]
fn quick_runs_once_and_the_full_bench_interleaves_several() {
    let settings = |quick: bool, samples: usize| settings::Settings {
        as_test: false,
        quick,
        samples,
        only: Vec::new(),
        suite_filter: String::new(),
        nextest_filter: String::new(),
    };
    let quick = settings(true, 1);
    assert_eq!(quick.suite_runs(), 1);
    assert_eq!(quick.nextest_pairs(), 1);
    assert_eq!(quick.cpu_rounds(), (1, 2));
    // One sample per side, as `--quick` says, whatever the base count.
    for quick in [quick, settings(true, 3)] {
        assert_eq!(quick.provisioning_pairs(), 1);
        assert_eq!(quick.turn_pairs(), 1);
        assert_eq!(quick.explored_pairs(), 1);
    }
    let full = settings(false, 5);
    assert_eq!(full.provisioning_pairs(), 20);
    assert_eq!(full.turn_pairs(), 60);
    assert_eq!(full.explored_pairs(), 20);
    assert_eq!(full.suite_runs(), 3);
    assert_eq!(full.nextest_pairs(), 2);
    assert!(full.cpu_rounds().0 >= 3, "{:?}", full.cpu_rounds());
    assert_eq!(settings(false, 10).suite_runs(), 5);
    assert!(settings::SECTIONS.contains(&"nextest"));
    assert!(settings::SECTIONS.contains(&"scenario_cpu"));
}

#[test]
fn nextest_outcomes_are_read_from_its_status_lines() {
    let output = "\
────────────
 Nextest run ID 4f5d8d31-07c0-46b9-9fb2-99a5bba10c88 with nextest profile: default
    Starting 6 tests across 1 binary (2 tests skipped)
        SKIP [         ] (───) live-agent-suite::live provisioning::parallel_isolation_left
        PASS [   1.013s] (1/6) live-agent-suite::live turns::a
        SLOW [> 60.000s] live-agent-suite::live turns::slow
        FAIL [   0.105s] (2/6) live-agent-suite::live turns::b
  stdout ───
    test turns::b ... FAILED
        PASS [   9.999s] (9/9) other-crate::other turns::c
        LEAK [   2.000s] (3/6) live-agent-suite::live turns::leaky
     SIGSEGV [   0.500s] (4/6) live-agent-suite::live turns::crashed
  TRY 2 PASS [   1.500s] (5/6) live-agent-suite::live turns::retried
     TIMEOUT [ 300.000s] (6/6) live-agent-suite::live turns::slow
────────────
     Summary [  14.671s] 6 tests run: 3 passed, 3 failed, 1 skipped
";
    let outcomes = nextest_output::outcomes(output);
    let pairs: Vec<(&str, &str)> = outcomes
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    assert_eq!(
        pairs,
        [
            ("provisioning::parallel_isolation_left", "ignored"),
            ("turns::a", "ok"),
            ("turns::b", "FAILED"),
            ("turns::crashed", "FAILED"),
            ("turns::leaky", "ok"),
            ("turns::retried", "ok"),
            ("turns::slow", "FAILED"),
        ]
    );
    assert_eq!(
        nextest_output::run_id(output).as_deref(),
        Some("4f5d8d31-07c0-46b9-9fb2-99a5bba10c88")
    );
    assert_eq!(nextest_output::run_id("no header"), None);
}

#[test]
fn nextest_and_cargo_test_outcomes_compare_with_the_runners_differences_explained() {
    let map = |pairs: &[(&str, &str)]| -> std::collections::BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    };
    let cargo_test = map(&[
        ("turns::a", "ok"),
        ("probes::skipped_at_run_time", "ignored"),
        ("provisioning::parallel_isolation_left", "ok"),
        ("probes::ignored_at_list_time", "ignored"),
    ]);
    let nextest = map(&[
        ("turns::a", "ok"),
        ("probes::skipped_at_run_time", "ok"),
        ("provisioning::parallel_isolation_left", "ignored"),
        ("probes::ignored_at_list_time", "ignored"),
        ("turns::filtered_out", "ignored"),
    ]);
    let comparison = nextest_output::compare(&cargo_test, &nextest);
    assert!(comparison.differences.is_empty(), "{comparison:?}");
    assert_eq!(comparison.explained.len(), 2, "{comparison:?}");
    assert!(
        comparison.explained[0].starts_with("probes::skipped_at_run_time: skipped at run time")
    );
    assert!(comparison.explained[1].starts_with("provisioning::parallel_isolation_left: passed"));
    // A failure, or a scenario only one runner ran, makes the times incomparable.
    let mut failing = nextest.clone();
    failing.insert("turns::a".into(), "FAILED".into());
    failing.remove("probes::ignored_at_list_time");
    assert_eq!(
        nextest_output::compare(&cargo_test, &failing).differences,
        [
            "probes::ignored_at_list_time: ignored under cargo test vs not run under nextest",
            "turns::a: ok under cargo test vs FAILED under nextest"
        ]
    );
}

#[test]
fn cpu_ticks_are_read_after_the_command_name() {
    // pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime
    // stime cutime cstime …
    let stat = "4242 (open code) (x)) S 1 4242 4242 0 -1 4194560 100 0 0 0 150 30 12 8 20 0 9 0";
    assert_eq!(proc_cpu::stat_ticks(stat), Some(150 + 30 + 12 + 8));
    assert_eq!(proc_cpu::stat_ticks("4242 (short) S 1 2"), None);
    assert_eq!(proc_cpu::stat_ticks("no name here"), None);
    let own = proc_cpu::ticks_of(&[std::process::id()]);
    assert!(own.contains_key(&std::process::id()), "{own:?}");
    assert_eq!(
        proc_cpu::duration(250),
        Duration::from_secs_f64(250.0 / clock_ticks())
    );
}

fn clock_ticks() -> f64 {
    // SAFETY: sysconf only reads a system constant.
    unsafe { libc::sysconf(libc::_SC_CLK_TCK) as f64 }
}

/// Every ratio is a row of the figures table in docs/performance.md, with its target, and the
/// suite figures are in the README's.
#[test]
fn the_figures_tables_name_every_ratio_and_its_target() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let performance = std::fs::read_to_string(root.join("docs/performance.md")).unwrap();
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let row = |page: &str, name: &str| -> Option<String> {
        page.lines()
            .find(|l| l.starts_with(&format!("| `{name}` |")))
            .map(str::to_string)
    };
    for ratio in RATIOS {
        let line = row(&performance, ratio.name)
            .unwrap_or_else(|| panic!("docs/performance.md has no row for `{}`", ratio.name));
        if let Some(target) = ratio.target {
            let bound = match target {
                Target::AtMost(b) => format!("≤ {b}"),
                Target::AtLeast(b) => format!("≥ {b}"),
            };
            assert!(
                line.contains(&bound),
                "{} row lacks {bound}: {line}",
                ratio.name
            );
        }
    }
    for name in ["shared_speedup", "nextest_default", "shared_scenario_cpu"] {
        let line = row(&readme, name)
            .unwrap_or_else(|| panic!("the README's figures table has no row for `{name}`"));
        let ratio = RATIOS.iter().find(|r| r.name == name).unwrap();
        let bound = match ratio.target.unwrap() {
            Target::AtMost(b) => format!("≤ {b}"),
            Target::AtLeast(b) => format!("≥ {b}"),
        };
        assert!(
            line.contains(&bound),
            "README's {name} row lacks {bound}: {line}"
        );
    }
}
