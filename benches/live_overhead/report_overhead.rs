//! `report_overhead`: what writing the run report costs the live suite. The suite (the `live`
//! binary, the suite filter, shared servers and 2 threads as most runs use) runs with the report
//! written into a temp folder and with `LIVE_REPORT=off`, interleaved (on/off, then off/on), and
//! every run must end every scenario the same way.

use std::time::Duration;

use crate::common::{Bench, BenchError, progress, secs};
use crate::libtest;
use crate::report::Figure;
use crate::settings::Settings;
use crate::suite;

const SECTION: &str = "report";

/// Runs per side: 3, or the sample count when it is larger (the figure is a ratio of medians
/// of whole-suite wall times, whose spread is a few percent; one pair would be noise).
pub fn pairs(settings: &Settings) -> usize {
    if settings.quick {
        1
    } else {
        settings.samples.max(3)
    }
}

/// Blocking: runs child processes only.
pub fn measure(bench: &Bench) -> Result<Vec<Figure>, BenchError> {
    let private = suite::build_private(bench)?;
    let binary = &private.path;
    let folder = tempfile::tempdir().map_err(|e| BenchError::io("create the report folder", e))?;
    let report = folder.path().join("live-report");
    let report = report.to_str().expect("a temp path is UTF-8");
    let mut on: Vec<Duration> = Vec::new();
    let mut off: Vec<Duration> = Vec::new();
    let mut reference = None;
    for pair in 0..pairs(&bench.settings) {
        let sides: [(bool, &str); 2] = if pair % 2 == 0 {
            [(true, report), (false, "off")]
        } else {
            [(false, "off"), (true, report)]
        };
        for (writes, value) in sides {
            let (wall, _, outcomes) = suite::run_suite_with(
                bench,
                binary,
                &bench.settings.suite_filter,
                None,
                2,
                &[("LIVE_REPORT", value)],
            )?;
            let label = if writes { "report on" } else { "report off" };
            progress(
                SECTION,
                &format!("{label} run {}: {}", pair + 1, secs(wall)),
            );
            match &reference {
                None => reference = Some(outcomes),
                Some(expected) => {
                    let differences = libtest::differences(expected, &outcomes);
                    if !differences.is_empty() {
                        return Err(BenchError::Suite(format!(
                            "runs with and without the report ended scenarios differently, so \
                             their times are not comparable: {}",
                            differences.join("; ")
                        )));
                    }
                }
            }
            if writes { &mut on } else { &mut off }.push(wall);
        }
    }
    if !folder.path().join("live-report/index.html").is_file() {
        return Err(BenchError::Suite(
            "the runs with the report wrote no live-report/index.html".into(),
        ));
    }
    Ok([
        Figure::ratio("report_overhead", &on, &off),
        Figure::median("suite.report_on", &on),
        Figure::median("suite.report_off", &off),
    ]
    .into_iter()
    .flatten()
    .collect())
}
