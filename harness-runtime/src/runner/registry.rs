//! The registered scenarios, checked for name clashes before anything runs.

use super::descriptor::Scenario;

/// Scenarios that share a name: `--exact` and nextest could not tell them apart.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "{}; rename one of each pair so every scenario has its own name",
    clashes.iter().map(ToString::to_string).collect::<Vec<_>>().join("; ")
)]
pub(crate) struct NameClashes {
    clashes: Vec<Clash>,
}

/// Two scenarios named alike, and where each is defined.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("two scenarios are named `{name}`: {first} and {second}")]
struct Clash {
    name: String,
    /// `file:line` of each.
    first: String,
    second: String,
}

/// Fails on two scenarios with one name.
///
/// `scenarios` must be sorted by name, as [`Scenario::all`] returns them. Scenarios from two
/// crates can clash because the name leaves out the crate.
pub(crate) fn check_unique(scenarios: &[&Scenario]) -> Result<(), NameClashes> {
    let place = |s: &Scenario| format!("{}:{}", s.file, s.line);
    let clashes: Vec<Clash> = scenarios
        .windows(2)
        .filter(|pair| pair[0].name() == pair[1].name())
        .map(|pair| Clash {
            name: pair[0].name(),
            first: place(pair[0]),
            second: place(pair[1]),
        })
        .collect();
    if clashes.is_empty() {
        Ok(())
    } else {
        Err(NameClashes { clashes })
    }
}

#[cfg(test)]
mod tests {
    use super::check_unique;
    use crate::__private::ScenarioFuture;
    use crate::Live;
    use crate::runner::descriptor::Scenario;
    use crate::scenario::ScenarioOptions;

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
            snapshot_assertion: crate::__snapshot_assertion!(),
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
        let error = check_unique(&[&a, &b]).unwrap_err().to_string();
        assert!(error.contains("`tools::same`"), "{error}");
        assert!(error.contains("tests/live/tools.rs:3"), "{error}");
        assert!(error.contains("src/tools.rs:17"), "{error}");
        assert!(
            error.ends_with("; rename one of each pair so every scenario has its own name"),
            "{error}"
        );
    }
}
