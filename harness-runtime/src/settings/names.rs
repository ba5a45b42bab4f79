//! The name of every environment variable the runtime reads or sets, each defined once.
//!
//! Dependency-free on purpose: base modules such as `redact` use these names, and must not pull
//! in anything heavier. How each variable is read and checked lives next door, in `settings`.

// The user's settings (the README's environment table).

/// `LIVE_TIMEOUT_SCALE`: multiplies every ceiling (scenario, readiness, turn, stream watchdog).
pub(crate) const TIMEOUT_SCALE: &str = "LIVE_TIMEOUT_SCALE";
/// `LIVE_STRICT`: a missing requirement fails the scenario instead of skipping it.
pub(crate) const STRICT: &str = "LIVE_STRICT";
/// `LIVE_KEEP`: keep every scenario root, also after a pass.
pub(crate) const KEEP: &str = "LIVE_KEEP";
/// `LIVE_ISOLATION=server|shared`: whether scenarios that allow it share OpenCode servers.
pub(crate) const ISOLATION: &str = "LIVE_ISOLATION";
/// `LIVE_OPENCODE_BIN`: the `opencode` executable, instead of looking for it.
pub(crate) const OPENCODE_BIN: &str = "LIVE_OPENCODE_BIN";
/// `LIVE_FIXTURE_BIN`: the executable run as the fixture agent, instead of the test binary.
pub(crate) const FIXTURE_BIN: &str = "LIVE_FIXTURE_BIN";
/// `LIVE_SNAPSHOT_DIR`: where snapshots are read and written, instead of `<test crate>/snapshots`.
pub(crate) const SNAPSHOT_DIR: &str = "LIVE_SNAPSHOT_DIR";
/// `LIVE_CASSETTE=auto|replay|record|live|verify|missing`: how `cassette` scenarios get their
/// model.
pub(crate) const CASSETTE: &str = "LIVE_CASSETTE";
/// `LIVE_CASSETTE_DIR`: where cassettes are read and written, instead of `<test crate>/cassettes`.
pub(crate) const CASSETTE_DIR: &str = "LIVE_CASSETTE_DIR";
/// `LIVE_CASSETTE_MAX_AGE=<duration>`: a replayed cassette older than this is stale.
pub(crate) const CASSETTE_MAX_AGE: &str = "LIVE_CASSETTE_MAX_AGE";
/// `LIVE_SANDBOX`: whether agents run confined by Landlock (on by default).
pub(crate) const SANDBOX: &str = "LIVE_SANDBOX";
/// `LIVE_REPORT=<dir>|off`: where the run report goes, instead of `<target dir>/live-report`.
pub(crate) const REPORT: &str = "LIVE_REPORT";
/// `LIVE_HISTORY=<dir>|off`: where each scenario's outcomes across runs are kept, instead of
/// `<report dir>/history`.
pub(crate) const HISTORY: &str = "LIVE_HISTORY";
/// `LIVE_SCHEDULE=da2a.1>b7c1.1,…|fifo`: replay this one schedule instead of exploring.
pub(crate) const SCHEDULE: &str = "LIVE_SCHEDULE";
/// `LIVE_EXPLORE_SEED=<u64>`: the base seed of every exploration's random search.
pub(crate) const EXPLORE_SEED: &str = "LIVE_EXPLORE_SEED";
/// `LIVE_EXPLORE_QUIET=<duration>`: how long an exploring run must be quiet before the scheduler
/// releases a held step.
pub(crate) const EXPLORE_QUIET: &str = "LIVE_EXPLORE_QUIET";
/// `LIVE_EXPLORE_CONFIRM=<n>`: how many times a failing exploration replays its shrunk schedule
/// to say how reliably it fails.
pub(crate) const EXPLORE_CONFIRM: &str = "LIVE_EXPLORE_CONFIRM";
/// `LIVE_MODEL_CONCURRENCY=<n>`: how many live-model scenarios (live, recording) run at once.
pub(crate) const MODEL_CONCURRENCY: &str = "LIVE_MODEL_CONCURRENCY";
/// `LIVE_RUN_MAX_TOKENS=<n>`: the run's ceiling on live-model tokens; once spent, new
/// live-model scenarios are not started.
pub(crate) const RUN_MAX_TOKENS: &str = "LIVE_RUN_MAX_TOKENS";
/// `LIVE_RUN_MAX_COST=<number>`: the run's ceiling on live-model cost, as `LIVE_RUN_MAX_TOKENS`.
pub(crate) const RUN_MAX_COST: &str = "LIVE_RUN_MAX_COST";
/// `LIVE_NEXTEST_SKIP=pass|fail`: whether a scenario that skips at run time under nextest passes
/// (nextest has no skipped status for a test that ran) or fails.
pub(crate) const NEXTEST_SKIP: &str = "LIVE_NEXTEST_SKIP";
/// `OPENCODE_CONFIG_CONTENT`: the user's OpenCode config of a real-model scenario (and the
/// variable every agent gets its config through).
pub(crate) const CONFIG_CONTENT: &str = "OPENCODE_CONFIG_CONTENT";
/// `TEST_OLLAMA_MODEL`: the real model, one of the providers' models in `OPENCODE_CONFIG_CONTENT`.
pub(crate) const MODEL: &str = "TEST_OLLAMA_MODEL";

// Internal: set by the harness for the processes it starts, read by those processes.

/// `HARNESS_RUNTIME_ROLE`: puts a re-executed binary in a helper role.
pub(crate) const ROLE: &str = "HARNESS_RUNTIME_ROLE";
/// `LIVE_HARNESS_OWNER`: the owner mark every spawned agent and all its descendants carry.
pub(crate) const OWNER: &str = "LIVE_HARNESS_OWNER";
/// `LIVE_POOL_RUNNER`: `<pid>:<start time>` of the process whose tests lease from a pool's
/// owner (nextest's runner); the owner ends once it is gone and nothing is leased.
pub(crate) const POOL_RUNNER: &str = "LIVE_POOL_RUNNER";
/// `LIVE_ACP_FORWARD`: where an `acp-forward` helper connects: the scenario's relay to its ACP
/// agent (`127.0.0.1:<port>`).
pub(crate) const ACP_FORWARD: &str = "LIVE_ACP_FORWARD";
/// `LIVE_SANDBOX_LAUNCH`: what the sandbox launcher confines and then runs (JSON).
pub(crate) const SANDBOX_LAUNCH: &str = "LIVE_SANDBOX_LAUNCH";
/// `LIVE_FIXTURE_HEARTBEAT_MS`: the fixture agent's heartbeat period.
pub(crate) const FIXTURE_HEARTBEAT_MS: &str = "LIVE_FIXTURE_HEARTBEAT_MS";
/// `LIVE_FIXTURE_RUN_ID`: the run id the fixture agent records per launch.
pub(crate) const FIXTURE_RUN_ID: &str = "LIVE_FIXTURE_RUN_ID";
/// `LIVE_FIXTURE_AS`: what a fixture launch declares itself as.
pub(crate) const FIXTURE_AS: &str = "LIVE_FIXTURE_AS";
/// `LIVE_FIXTURE_WAIT_STDIN`: the fixture agent's `run` mode waits for a line on stdin before
/// exiting.
pub(crate) const FIXTURE_WAIT_STDIN: &str = "LIVE_FIXTURE_WAIT_STDIN";
/// `LIVE_FIXTURE_TEST_REPLAY_EVIDENCE`: the file the fixture agent writes each `prompt_async`
/// request to.
pub(crate) const FIXTURE_REPLAY_EVIDENCE: &str = "LIVE_FIXTURE_TEST_REPLAY_EVIDENCE";
/// `LIVE_SANDBOX_ARG_<n>`: the arguments a shared workspace's shell wrapper got (`-c <command>`),
/// handed to the sandbox launcher, which passes them on to the shell it confines.
pub(crate) const SANDBOX_ARG: &str = "LIVE_SANDBOX_ARG_";

// Others' variables, read as their owners define them.

/// `HOME`: the fixture agent's home, where its control files and sessions are.
pub(crate) const HOME: &str = "HOME";
/// `PATH`: searched for `opencode` when nothing nearer is found.
pub(crate) const PATH: &str = "PATH";
/// `INSTA_UPDATE`: insta's; `always` also re-records a corrupt snapshot.
pub(crate) const INSTA_UPDATE: &str = "INSTA_UPDATE";
/// `CI`: set by CI services; on, a missing prerequisite fails instead of being skipped.
pub(crate) const CI: &str = "CI";
/// `NEXTEST_EXECUTION_MODE`: nextest's; `process-per-test` when each test runs in a process of
/// its own (set when nextest lists the tests, too).
pub(crate) const NEXTEST_EXECUTION_MODE: &str = "NEXTEST_EXECUTION_MODE";
/// `SHELL`: the user's shell, which OpenCode's bash tool runs commands with when it can.
pub(crate) const SHELL: &str = "SHELL";
/// `NEXTEST_RUN_ID`: nextest's id of the run, shared by its processes.
pub(crate) const NEXTEST_RUN_ID: &str = "NEXTEST_RUN_ID";
/// `NEXTEST`: `1` in every process nextest runs.
pub(crate) const NEXTEST: &str = "NEXTEST";
/// `CARGO_TARGET_DIR`: cargo's target directory, when not the default.
pub(crate) const CARGO_TARGET_DIR: &str = "CARGO_TARGET_DIR";
/// `CARGO_PKG_NAME`: the package cargo runs a binary for.
pub(crate) const CARGO_PKG_NAME: &str = "CARGO_PKG_NAME";
