//! The proof that exploring finds each class of race: for each, its racy searches (twenty of the
//! stop-at-reply race of [`super::search`], twenty of the lost turn of [`super::lost_turn`], ten
//! of the lost ask of [`super::lost_ask`]) run in a runner of their own (this test binary
//! again), each with its own seed; every one must fail on the class's invariant with a shrunk
//! schedule and the line that replays it; then the first line's test run is repeated (ten
//! times; five for the lost ask) and must fail the same way every time: once as printed, with
//! a server of its own, the others as nextest runs tests, leasing from one pool. One scenario
//! per class: a filter picks one, a failure names it, and the runner runs them beside the rest
//! of the suite.

use std::process::Stdio;
use std::time::{Duration, Instant};

use harness_runtime::prelude::*;

/// One class of race the proof covers.
struct Class {
    /// For people.
    name: &'static str,
    /// Its searches, as `cargo test` names them: the prefix of `<prefix>01`, `<prefix>02` …
    prefix: &'static str,
    /// How many searches it has, and how many times its first line is replayed.
    searches: usize,
    replays: usize,
    /// What its invariant says when the race happened.
    invariant: &'static str,
    /// How many of its searches run at once.
    threads: &'static str,
}

/// The product's reply overtaking its abort.
const STOP_AT_REPLY: Class = Class {
    name: "the stop-at-reply race",
    prefix: "explore::search::racy_",
    searches: 20,
    replays: 10,
    invariant: "a permission reply reached the agent after the abort",
    // A run spends much of its time waiting for the system to be quiet, and the ten share one
    // server: at ten the searches keep the cores busy (on 2 cores: 34 s, against 38 at six).
    threads: "10",
};
/// The agent running ahead of the product: its turn ended before the product subscribed.
const LOST_TURN: Class = Class {
    name: "the lost turn",
    prefix: "explore::lost_turn::lost_",
    searches: 20,
    replays: 10,
    invariant: super::lost_turn::LOST,
    // A failing run mostly waits for its user to give up.
    threads: "6",
};
/// The agent running ahead of the product: it asked while the product reconnected.
const LOST_ASK: Class = Class {
    name: "the lost ask",
    prefix: "explore::lost_ask::forgot_",
    // The third class at half the scale: its failing runs wait for the user to give up, and ten
    // more searches and five more replays would add about forty seconds of CPU to the suite.
    searches: 10,
    replays: 5,
    invariant: super::lost_ask::LOST,
    // Two rounds of five: a search's runs mostly wait (the reconnect, the user giving up).
    threads: "5",
};
/// The ceiling of the child runner of a class's searches, and of the replays (scaled).
const SEARCH_CEILING: Duration = Duration::from_secs(400);
const REPLAY_CEILING: Duration = Duration::from_secs(120);
/// How long the pooled replays' pool owner may take to stop once they ended (it waits three
/// seconds without a lease, then stops its server).
const OWNER_STOP_CEILING: Duration = Duration::from_secs(30);

/// One finished child runner.
struct Ran {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

/// Runs this test binary with `args` and `env`, captured, within `ceiling`; killed (with its
/// process group's agents reaped by its own runner) if it takes longer.
async fn runner(args: &[&str], env: &[(&str, &str)], ceiling: Duration) -> anyhow::Result<Ran> {
    // The children's scenarios fail on purpose and a failed scenario keeps its roots: they go in
    // a directory of this proof's, removed when the child has ended, not in the machine's.
    let scratch = tempfile::Builder::new().prefix("live-proof-").tempdir()?;
    let mut command = tokio::process::Command::new(std::env::current_exe()?);
    command
        .args(args)
        // A runner of its own even when this one runs under nextest: nextest's run's pool
        // would outlive the child's scratch directory.
        .env_remove("NEXTEST_RUN_ID")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    child_environment(&mut command, scratch.path(), env);
    let ceiling = scaled(ceiling);
    let output = tokio::time::timeout(ceiling, command.output())
        .await
        .map_err(|_| anyhow::anyhow!("`{}` did not end within {ceiling:?}", args.join(" ")))??;
    Ok(Ran {
        code: output.status.code(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    })
}

/// What every child runner of the proof gets: `TMPDIR` in `scratch`, no report, no schedule
/// or nextest of this run's, `env`, no stdin, and an end with the proof.
fn child_environment(
    command: &mut tokio::process::Command,
    scratch: &std::path::Path,
    env: &[(&str, &str)],
) {
    command
        .env("TMPDIR", scratch)
        .env_remove("LIVE_SCHEDULE")
        .env_remove("NEXTEST")
        // The children's scenarios are this scenario's evidence, not rows of the run report.
        .env("LIVE_REPORT", "off")
        .stdin(Stdio::null())
        .kill_on_drop(true);
    for (name, value) in env {
        command.env(name, value);
    }
}

/// Runs this test binary `count` times at once with `args` and `env`, as nextest runs tests:
/// each a process of its own, all leasing from one pool of servers (a `NEXTEST_RUN_ID` of their
/// own), so one OpenCode server starts instead of `count`. A shell starts them and outlives
/// them by nothing: it is their runner, whose end (with no lease held) stops the pool's owner,
/// which this waits for before the scratch directory holding the pool goes.
async fn pooled_runners(
    count: usize,
    args: &[&str],
    env: &[(&str, &str)],
    ceiling: Duration,
) -> anyhow::Result<Vec<Ran>> {
    let scratch = tempfile::Builder::new().prefix("live-proof-").tempdir()?;
    let outputs = scratch.path().join("replays");
    std::fs::create_dir(&outputs)?;
    // Each child in a subshell of its own (so the shell does not `exec` it): its output and
    // exit code in files of `outputs`.
    const EACH: &str = r#"dir=$1; count=$2; shift 2; i=1
while [ "$i" -le "$count" ]; do
  ( "$@" >"$dir/out.$i" 2>"$dir/err.$i"; echo $? >"$dir/code.$i" ) &
  i=$((i + 1))
done
wait"#;
    let mut command = tokio::process::Command::new("sh");
    command
        .arg("-c")
        .arg(EACH)
        .arg("sh")
        .arg(&outputs)
        .arg(count.to_string())
        .arg(std::env::current_exe()?)
        .args(args)
        .env("NEXTEST_RUN_ID", run_id())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        // Its own group, so a ceiling stops the children with it.
        .process_group(0);
    child_environment(&mut command, scratch.path(), env);
    let mut shell = command.spawn()?;
    let ceiling = scaled(ceiling);
    if tokio::time::timeout(ceiling, shell.wait()).await.is_err() {
        if let Some(pid) = shell.id() {
            // SIGTERM: each child's runner stops its scenarios and their agents; SIGKILL if
            // that takes longer (their reapers stop the agents then).
            use nix::sys::signal::{Signal, killpg};
            let group = nix::unistd::Pid::from_raw(pid as i32);
            let _ = killpg(group, Signal::SIGTERM);
            // The shell reaped (SIGTERM ends it), signal 0 reaches the group while any process
            // of it is left.
            let _ = tokio::time::timeout(Duration::from_secs(1), shell.wait()).await;
            let stopping = Instant::now();
            while killpg(group, None).is_ok() && stopping.elapsed() < Duration::from_secs(10) {
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            let _ = killpg(group, Signal::SIGKILL);
            let _ = shell.wait().await;
        }
        wait_for_pool_owner(scratch.path()).await?;
        anyhow::bail!(
            "the {count} pooled runs of `{}` did not end within {ceiling:?}",
            args.join(" ")
        );
    }
    wait_for_pool_owner(scratch.path()).await?;
    (1..=count)
        .map(|i| {
            let read = |name: &str| {
                std::fs::read(outputs.join(format!("{name}.{i}")))
                    .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
            };
            Ok(Ran {
                code: read("code")?.trim().parse().ok(),
                stdout: read("out")?,
                stderr: read("err")?,
            })
        })
        .collect()
}

/// A new run id for the pooled runs: a UUID's shape (all nextest's run ids have), from the time
/// and this process.
fn run_id() -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut digits = String::new();
    for part in 0..2 {
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_u128(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap_or_default()
                .as_nanos(),
        );
        hasher.write_u32(std::process::id());
        hasher.write_u8(part);
        digits.push_str(&format!("{:016x}", hasher.finish()));
    }
    format!(
        "{}-{}-{}-{}-{}",
        &digits[..8],
        &digits[8..12],
        &digits[12..16],
        &digits[16..20],
        &digits[20..32]
    )
}

/// Waits until the pool owner of the runs that used `tmpdir` has stopped: its socket is gone
/// (the owner removes it last, after stopping its servers).
async fn wait_for_pool_owner(tmpdir: &std::path::Path) -> anyhow::Result<()> {
    let started = Instant::now();
    loop {
        let sockets: Vec<_> = std::fs::read_dir(tmpdir)?
            .flatten()
            .filter(|entry| {
                entry
                    .file_name()
                    .to_string_lossy()
                    .starts_with("live-pool-")
            })
            .map(|entry| entry.path().join("pool.sock"))
            .filter(|socket| socket.exists())
            .collect();
        if sockets.is_empty() {
            return Ok(());
        }
        anyhow::ensure!(
            started.elapsed() <= scaled(OWNER_STOP_CEILING),
            "the pool owner of the pooled runs still ran {OWNER_STOP_CEILING:?} after they ended \
             (its socket was still there)"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A failed scenario's message in libtest's output: the text after `---- <name> ----`.
fn failure_of<'a>(stdout: &'a str, name: &str) -> Option<&'a str> {
    let header = format!("---- {name} ----\n");
    let start = stdout.find(&header)? + header.len();
    let rest = &stdout[start..];
    let end = rest
        .find("\n---- ")
        .or_else(|| rest.find("\nfailures:"))
        .unwrap_or(rest.len());
    Some(&rest[..end])
}

/// What one search reported: `(found at schedule, shrink runs, the shrunk schedule, the replay
/// line)`.
fn found(message: &str) -> anyhow::Result<(u32, u32, String, String)> {
    let number_after = |marker: &str| -> Option<u32> {
        let at = message.find(marker)? + marker.len();
        message[at..]
            .split(|c: char| !c.is_ascii_digit())
            .next()?
            .parse()
            .ok()
    };
    let schedule = message
        .split("failed under schedule ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .ok_or_else(|| anyhow::anyhow!("no schedule in: {message}"))?;
    let at = number_after("found at schedule ")
        .ok_or_else(|| anyhow::anyhow!("no \"found at schedule\" in: {message}"))?;
    let shrink = message
        .find("; shrunk from ")
        .and_then(|i| {
            let rest = &message[i..];
            let runs = rest.find(" in ")? + 4;
            rest[runs..].split(' ').next()?.parse().ok()
        })
        .unwrap_or(0);
    let replay = message
        .lines()
        .find_map(|line| line.strip_prefix("replay it: "))
        .ok_or_else(|| anyhow::anyhow!("no replay line in: {message}"))?;
    Ok((at, shrink, schedule.to_owned(), replay.to_owned()))
}

/// Twenty seeds, twenty finds of the stop-at-reply race, and its first line replayed ten times.
#[live_agent_test(timeout = "600s")]
async fn every_seed_finds_the_stop_at_reply_race_and_its_line_replays_it(
    live: &mut Live,
) -> anyhow::Result<()> {
    prove(live, &STOP_AT_REPLY).await
}

/// Twenty seeds, twenty finds of the lost turn, and its first line replayed ten times.
#[live_agent_test(timeout = "600s")]
async fn every_seed_finds_the_lost_turn_and_its_line_replays_it(
    live: &mut Live,
) -> anyhow::Result<()> {
    prove(live, &LOST_TURN).await
}

/// Ten seeds, ten finds of the lost ask, and its first line replayed five times.
#[live_agent_test(timeout = "600s")]
async fn every_seed_finds_the_lost_ask_and_its_line_replays_it(
    live: &mut Live,
) -> anyhow::Result<()> {
    prove(live, &LOST_ASK).await
}

/// Every seed of `class` finds it, and its first line replays it every time.
async fn prove(live: &Live, class: &Class) -> anyhow::Result<()> {
    let Class {
        name: class_name,
        prefix: racy,
        searches,
        replays,
        invariant,
        threads,
    } = *class;
    let started = Instant::now();
    // A new base seed every run (the children mix it with each scenario's name), shown so a
    // failure of this proof can be repeated.
    let base = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)?
        .as_nanos()
        % 1_000_000_000;
    let base = base.to_string();
    live.progress(format!(
        "{class_name}: running its {searches} racy searches, base seed {base} (LIVE_EXPLORE_SEED)"
    ));
    let searched = runner(
        &["--ignored", "--test-threads", threads, racy],
        // No confirming replays: the ten replays of the line below are this proof's check that
        // a schedule reproduces, and forty more runs would not fit its three minutes.
        &[("LIVE_EXPLORE_SEED", &base), ("LIVE_EXPLORE_CONFIRM", "0")],
        SEARCH_CEILING,
    )
    .await?;
    let search_time = started.elapsed();
    anyhow::ensure!(
        searched.code == Some(101),
        "the racy searches should all fail (exit 101), got {:?}:\n{}\n{}",
        searched.code,
        searched.stdout,
        searched.stderr
    );
    let mut finds = Vec::new();
    let mut spaces = Vec::new();
    for n in 1..=searches {
        let name = format!("{racy}{n:02}");
        anyhow::ensure!(
            searched.stdout.contains(&format!("test {name} ... FAILED")),
            "{name} did not fail:\n{}",
            searched.stdout
        );
        let message = failure_of(&searched.stdout, &name)
            .ok_or_else(|| anyhow::anyhow!("no failure message of {name}:\n{}", searched.stdout))?;
        anyhow::ensure!(
            message.contains(invariant),
            "{name} failed, but not on the race:\n{message}"
        );
        anyhow::ensure!(
            message.contains("; not replayed: LIVE_EXPLORE_CONFIRM=0)"),
            "{name} replayed its schedule although LIVE_EXPLORE_CONFIRM=0:\n{message}"
        );
        let (at, shrink_runs, schedule, replay) = found(message)?;
        // A space within the budget is searched exhaustively: its size is not estimated.
        let space =
            if message.contains("(found at schedule ") && message.contains(", exhaustive search") {
                "exhaustive".to_owned()
            } else {
                message
                    .split("random search of about ")
                    .nth(1)
                    .and_then(|rest| rest.split(' ').next())
                    .unwrap_or("?")
                    .to_owned()
            };
        spaces.push(space);
        anyhow::ensure!(at <= 40, "{name} found it past its budget of 40: {message}");
        // The default order lets the product go first: a race found there was the machine's
        // timing, not a schedule's choice, and its line would replay it only by chance.
        anyhow::ensure!(
            schedule != "fifo",
            "{name} failed in the default order, which the product should win: {message}"
        );
        finds.push((name, at, shrink_runs, schedule, replay));
    }
    let ats: Vec<u32> = finds.iter().map(|f| f.1).collect();
    let shrinks: Vec<u32> = finds.iter().map(|f| f.2).collect();
    let deviations: Vec<usize> = finds
        .iter()
        .map(|f| {
            if f.3 == "fifo" {
                0
            } else {
                f.3.split(',').count()
            }
        })
        .collect();
    live.progress(format!(
        "{class_name}: {searches} of {searches} searches found it, in {:.0} seconds: found at schedule \
         {ats:?} of spaces of about {spaces:?} orderings, shrunk in {shrinks:?} runs to \
         {deviations:?} deviations",
        search_time.as_secs_f64()
    ));

    // The first search's line, run as its test command runs: this binary, its environment and
    // its arguments after `--`.
    let (name, _, _, schedule, replay) = &finds[0];
    let expected_tail =
        format!("' cargo test -p product-example --test live -- {name} --exact --include-ignored");
    anyhow::ensure!(
        replay.starts_with(&format!("LIVE_SCHEDULE='{schedule}"))
            && replay.ends_with(&expected_tail),
        "unexpected replay line: {replay}"
    );
    let replayed = Instant::now();
    let mut reproduced = 0;
    let args = [name.as_str(), "--exact", "--include-ignored"];
    let env = [("LIVE_SCHEDULE", schedule.as_str())];
    // The first replay runs the line as printed: a runner with a server of its own. The others
    // run it as nextest runs a test, each a process of its own, all leasing from one pool: one
    // server starts for them instead of one each (its start is most of a replay's CPU).
    let (alone, pooled) = tokio::join!(
        runner(&args, &env, REPLAY_CEILING),
        pooled_runners(replays - 1, &args, &env, REPLAY_CEILING)
    );
    for ran in std::iter::once(alone).chain(pooled?.into_iter().map(Ok)) {
        let ran = ran?;
        let message = failure_of(&ran.stdout, name).unwrap_or_default();
        anyhow::ensure!(
            ran.code == Some(101)
                && message.contains(&format!("failed under schedule {schedule} (LIVE_SCHEDULE)"))
                && message.contains(invariant),
            "the replay of {schedule} did not fail on the race ({reproduced} of {replays} \
             did):\n{}\n{}",
            ran.stdout,
            ran.stderr
        );
        reproduced += 1;
    }
    live.progress(format!(
        "{class_name}: the replay line of {name} ({schedule}) failed on the race {reproduced} of \
         {replays} times (the first with a server of its own, the others from one pool), in \
         {:.0} seconds; {class_name} took {:.0} seconds",
        replayed.elapsed().as_secs_f64(),
        started.elapsed().as_secs_f64()
    ));
    Ok(())
}
