//! The output of `cargo bench --bench live_overhead` stays parseable: its figure lines and its
//! reading of the live suite's libtest output, without running the (long) bench itself.

#[allow(dead_code)]
#[path = "../benches/live_overhead/libtest.rs"]
mod libtest;
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
    // The figures against the raw server and the suite's speed-up can miss their target.
    for name in ["provisioning", "turn", "replay_turn", "shared_speedup"] {
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
    // Sections with standalone figures only owe no ratio.
    assert!(missing_ratios("model", &[]).is_empty());
    assert!(missing_ratios("fixture", &[]).is_empty());
}
