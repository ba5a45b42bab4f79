//! The registered scenarios, checked for name clashes before anything runs.

use crate::Scenario;

/// Fails on two scenarios with one name (`--exact` and nextest could not tell them apart).
///
/// `scenarios` must be sorted by name, as [`Scenario::all`] returns them. Scenarios from two
/// crates can clash because the name leaves out the crate.
pub(crate) fn check_unique(scenarios: &[&Scenario]) -> Result<(), String> {
    let clashes: Vec<String> = scenarios
        .windows(2)
        .filter(|pair| pair[0].name() == pair[1].name())
        .map(|pair| {
            format!(
                "two scenarios are named `{}`: {}:{} and {}:{}",
                pair[0].name(),
                pair[0].file,
                pair[0].line,
                pair[1].file,
                pair[1].line
            )
        })
        .collect();
    if clashes.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{}; rename one of each pair so every scenario has its own name",
            clashes.join("; ")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::check_unique;
    use crate::__private::ScenarioFuture;
    use crate::{Live, Scenario, ScenarioOptions};

    fn body(_: &mut Live) -> ScenarioFuture<'_> {
        Box::pin(async { Ok(()) })
    }

    fn scenario(module_path: &'static str, file: &'static str, line: u32) -> Scenario {
        Scenario {
            module_path,
            function: "same",
            file,
            line,
            manifest_dir: "/m",
            snapshot_assertion: crate::snapshot_assertion!(),
            options: ScenarioOptions::DEFAULT,
            body,
        }
    }

    #[test]
    fn distinct_names_pass() {
        let a = scenario("suite::tools", "tests/live/tools.rs", 3);
        let b = scenario("suite::agents", "tests/live/agents.rs", 4);
        assert_eq!(check_unique(&[&b, &a]), Ok(()));
    }

    #[test]
    fn a_clash_names_the_scenario_and_both_places() {
        let a = scenario("suite_one::tools", "tests/live/tools.rs", 3);
        let b = scenario("suite_two::tools", "src/tools.rs", 17);
        let error = check_unique(&[&a, &b]).unwrap_err();
        assert!(error.contains("`tools::same`"), "{error}");
        assert!(error.contains("tests/live/tools.rs:3"), "{error}");
        assert!(error.contains("src/tools.rs:17"), "{error}");
    }
}
