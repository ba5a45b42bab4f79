//! The command line: libtest-mimic's flags, with any number of filters as libtest takes them.
//!
//! libtest runs a test when its name matches any filter and no `--skip` (`--exact`: the whole
//! name, for both); libtest-mimic takes one filter. So the flags are parsed by libtest-mimic's own
//! command with its positional made repeatable (every flag, error and exit code stays its own),
//! the selection is decided here, and libtest-mimic is handed it as an exact `--skip` of every
//! scenario left out: its summary still counts them as filtered out.

use std::ffi::OsString;

use clap::{ArgAction, CommandFactory, FromArgMatches};
use libtest_mimic::Arguments;

/// The clap id of libtest-mimic's positional filter (its field's name).
const FILTER: &str = "filter";

/// The parsed command line.
#[derive(Clone, Debug)]
pub(crate) struct Cli {
    /// Every flag as given, without filters (they are in `filters`).
    args: Arguments,
    /// The positional filters, in order.
    filters: Vec<String>,
}

/// Parses `argv` (the program's name first), as libtest would.
///
/// `Err` is clap's: it prints itself (`--help` to stdout, a usage error to stderr) and carries
/// the exit code (0 for `--help`, 2 for an unknown flag or a missing value).
pub(crate) fn parse<I, T>(argv: I) -> Result<Cli, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let command = Arguments::command()
        .help_template("USAGE: [OPTIONS] [FILTER]...\n\n{all-args}\n\n\n{after-help}")
        .mut_arg(FILTER, |filter| {
            filter.num_args(1..).action(ArgAction::Append).help(
                "Only tests whose names contain any FILTER are run (with --exact: whose names \
                 are one of them)",
            )
        });
    let mut matches = command.try_get_matches_from(argv)?;
    let filters = matches
        .remove_many::<String>(FILTER)
        .map(Iterator::collect)
        .unwrap_or_default();
    let args = Arguments::from_arg_matches(&matches)?;
    Ok(Cli { args, filters })
}

impl Cli {
    /// The flags (`--list`, `--ignored`, `--test-threads`, …); its `filter` is always `None`:
    /// ask [`selects`](Self::selects) about names.
    pub(crate) fn args(&self) -> &Arguments {
        &self.args
    }

    /// Whether `name` passes the filters and `--skip`: it matches a filter (or none is given)
    /// and no skip pattern, each matched whole under `--exact` and as a substring otherwise.
    /// Ignored-ness is not decided here.
    pub(crate) fn selects(&self, name: &str) -> bool {
        let matches = |pattern: &String| {
            if self.args.exact {
                name == pattern
            } else {
                name.contains(pattern.as_str())
            }
        };
        (self.filters.is_empty() || self.filters.iter().any(matches))
            && !self.args.skip.iter().any(matches)
    }

    /// What libtest-mimic is given for trials named `names`: the same flags, with every name
    /// [`selects`](Self::selects) rejects as an exact skip.
    pub(crate) fn for_libtest<'a>(&self, names: impl IntoIterator<Item = &'a str>) -> Arguments {
        let mut args = self.args.clone();
        args.skip = names
            .into_iter()
            .filter(|name| !self.selects(name))
            .map(String::from)
            .collect();
        args.exact = true;
        args
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NAMES: [&str; 6] = [
        "abort::one",
        "abort::two",
        "other::turns_one",
        "other::ignored",
        "turns::one",
        "turns::two",
    ];

    fn cli(args: &[&str]) -> Cli {
        parse(std::iter::once("live").chain(args.iter().copied())).expect("parses")
    }

    /// The names `args` selects, as libtest would run them (ignored-ness aside).
    fn selected(args: &[&str]) -> Vec<&'static str> {
        let cli = cli(args);
        NAMES.into_iter().filter(|n| cli.selects(n)).collect()
    }

    #[test]
    fn no_filter_selects_everything() {
        assert_eq!(selected(&[]), NAMES);
    }

    #[test]
    fn a_name_matching_any_filter_is_selected() {
        assert_eq!(
            selected(&["turns::", "abort::"]),
            ["abort::one", "abort::two", "turns::one", "turns::two"]
        );
        assert_eq!(
            selected(&["turns", "abort::two"]),
            ["abort::two", "other::turns_one", "turns::one", "turns::two"]
        );
        // After `--`, as libtest takes it: still filters.
        assert_eq!(
            selected(&["turns::", "--", "abort::one"]),
            ["abort::one", "turns::one", "turns::two"]
        );
    }

    #[test]
    fn exact_matches_whole_names_for_filters_and_skips() {
        assert_eq!(
            selected(&["--exact", "turns::one", "abort::two", "turns"]),
            ["abort::two", "turns::one"]
        );
        assert_eq!(
            selected(&["--exact", "turns::one", "turns::two", "--skip", "two"]),
            ["turns::one", "turns::two"]
        );
        assert_eq!(
            selected(&["--exact", "--skip", "turns::one"]),
            [
                "abort::one",
                "abort::two",
                "other::turns_one",
                "other::ignored",
                "turns::two"
            ]
        );
    }

    #[test]
    fn skip_removes_what_the_filters_selected() {
        assert_eq!(
            selected(&["turns", "abort", "--skip", "other", "--skip", "two"]),
            ["abort::one", "turns::one"]
        );
        assert_eq!(
            selected(&["--skip=one", "--skip", "two"]),
            ["other::ignored"]
        );
    }

    /// nextest's invocations: a run of one scenario and the terse listing.
    #[test]
    fn nextest_invocations_parse() {
        let run = cli(&["--exact", "turns::one", "--nocapture"]);
        assert!(run.args().exact && run.args().nocapture && !run.args().list);
        assert_eq!(run.filters, ["turns::one"]);
        let list = cli(&["--list", "--format", "terse"]);
        assert!(list.args().list);
        assert!(list.filters.is_empty());
        let ignored = cli(&["--list", "--format", "terse", "--ignored"]);
        assert!(ignored.args().list && ignored.args().ignored);
    }

    #[test]
    fn flags_keep_their_values() {
        let cli = cli(&[
            "--test-threads",
            "3",
            "turns::",
            "--include-ignored",
            "-q",
            "abort::",
        ]);
        assert_eq!(cli.args().test_threads, Some(3));
        assert!(cli.args().include_ignored && cli.args().quiet);
        assert_eq!(cli.filters, ["turns::", "abort::"]);
        assert_eq!(cli.args().filter, None);
    }

    #[test]
    fn unknown_flags_and_missing_values_are_usage_errors() {
        for bad in [
            &["turns::", "--bogus"][..],
            &["--skip"],
            &["--test-threads", "many"],
        ] {
            let argv = std::iter::once("live").chain(bad.iter().copied());
            let error = parse(argv).expect_err("parsed");
            assert_eq!(error.exit_code(), 2, "{bad:?}: {error}");
        }
    }

    #[test]
    fn help_names_several_filters() {
        let help = parse(["live", "--help"]).expect_err("help is clap's early exit");
        assert_eq!(help.exit_code(), 0);
        let text = help.render().to_string();
        assert!(text.contains("[FILTER]..."), "{text}");
    }

    /// libtest-mimic, given [`Cli::for_libtest`], runs exactly what `selects` selects and counts
    /// the rest as filtered out.
    #[test]
    fn libtest_mimic_runs_the_selection() {
        let cli = cli(&["turns::", "abort::one", "--skip", "two"]);
        let mut args = cli.for_libtest(NAMES);
        args.test_threads = Some(1);
        // Its report goes to a file, not into this test's output.
        let log = tempfile::NamedTempFile::new().unwrap();
        args.logfile = Some(log.path().to_str().unwrap().to_owned());
        let ran = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let trials = NAMES
            .into_iter()
            .map(|name| {
                let ran = ran.clone();
                libtest_mimic::Trial::test(name, move || {
                    ran.lock().unwrap().push(name);
                    Ok(())
                })
            })
            .collect();
        let conclusion = libtest_mimic::run(&args, trials);
        assert_eq!(*ran.lock().unwrap(), ["abort::one", "turns::one"]);
        assert_eq!(conclusion.num_passed, 2);
        assert_eq!(conclusion.num_filtered_out, 4);
        let report = std::fs::read_to_string(log.path()).unwrap();
        assert!(
            report.contains("2 passed; 0 failed; 0 ignored; 0 measured; 4 filtered out"),
            "{report}"
        );
    }
}
