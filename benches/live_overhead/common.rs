//! What every section shares: the bench context, its error, progress lines, A/B interleaving.

use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use harness_runtime::__private::ScenarioOptions;
use harness_runtime::model::{Matcher, Rule};
use harness_runtime::opencode::Agent;
use harness_runtime::prelude::Reply;
use harness_runtime::redact::Redactor;
use harness_runtime::testing::{self, ScenarioInfo};
use harness_runtime::{Isolation, Live};

use crate::settings::Settings;

/// Why a section could not produce its figures.
#[derive(Debug)]
pub enum BenchError {
    /// A file or process operation failed.
    Io {
        what: &'static str,
        source: std::io::Error,
    },
    /// The harness side failed (its message is redacted by the harness).
    Harness(String),
    /// The raw side failed (redacted by the bench's redactor).
    Raw(String),
    /// The live suite could not be built or run, or two runs disagreed.
    Suite(String),
    /// The section's harness side got a lease of a shared server where it asked for a server of
    /// its own ([`OWN_SERVER`]): its figure would not measure what its name says.
    NotOwnServer(&'static str),
    /// The section measured, but printed none of these ratios (a side without samples).
    MissingRatios(Vec<&'static str>),
}

impl BenchError {
    pub fn io(what: &'static str, source: std::io::Error) -> Self {
        BenchError::Io { what, source }
    }

    pub fn harness(error: impl std::fmt::Display) -> Self {
        BenchError::Harness(error.to_string())
    }
}

impl std::fmt::Display for BenchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BenchError::Io { what, source } => write!(f, "could not {what}: {source}"),
            BenchError::Harness(m) => write!(f, "harness side failed: {m}"),
            BenchError::Raw(m) => write!(f, "raw side failed: {m}"),
            BenchError::Suite(m) => write!(f, "live suite: {m}"),
            BenchError::MissingRatios(names) => write!(
                f,
                "it printed no `ratio {}`: a side took no sample or measured zero; its progress \
                 lines above say which",
                names.join("`, `ratio ")
            ),
            BenchError::NotOwnServer(section) => write!(
                f,
                "the {section} section asked for a server of its own (isolation = \"server\") \
                 but got a lease of a shared one, so its figure would not compare a server of \
                 the harness's own with a raw one; the bench's OWN_SERVER options must give the \
                 agent a server of its own"
            ),
        }
    }
}

impl std::error::Error for BenchError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            BenchError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// The options of every harness-side agent the bench measures against a raw server: a server of
/// its own whatever `LIVE_ISOLATION` says (the raw side is a server of its own too).
pub const OWN_SERVER: ScenarioOptions = ScenarioOptions {
    isolation: Some(Isolation::Server),
    ..ScenarioOptions::DEFAULT
};

/// The run's shared context.
pub struct Bench {
    pub settings: Settings,
    /// The `opencode` executable both sides run.
    pub opencode: PathBuf,
    /// The root package: the live suite and `node_modules` are found from here.
    pub manifest_dir: PathBuf,
    /// Redacts the raw side's diagnostics (roots, ports) as the harness redacts its own.
    pub redactor: Arc<Redactor>,
    /// The raw side's HTTP client (loopback only, like the harness's).
    pub http: reqwest::Client,
}

impl Bench {
    pub fn new(settings: Settings, opencode: PathBuf, manifest_dir: PathBuf) -> Self {
        let redactor = Arc::new(Redactor::for_scenario());
        redactor.add_path(&manifest_dir, "[crate]");
        let http = reqwest::Client::builder()
            .no_proxy()
            .build()
            .expect("a reqwest client without TLS always builds");
        Bench {
            settings,
            opencode,
            manifest_dir,
            redactor,
            http,
        }
    }

    /// A scenario context outside the runner, as the harness's own integration tests make one.
    /// Must be called inside the tokio runtime (the scripted model starts on it).
    pub fn live(&self, name: &str, options: ScenarioOptions) -> Live {
        testing::live(self.info(name, options))
    }

    /// What a scenario context of the bench knows about itself.
    pub fn info(&self, name: &str, options: ScenarioOptions) -> ScenarioInfo {
        ScenarioInfo {
            name: name.to_string(),
            options,
            manifest_dir: self.manifest_dir.clone(),
            snapshot_assertion: harness_runtime::testing::snapshot_assertion!(),
        }
    }
}

/// Stops the agents of `live` and removes their roots (keeps them after a failure).
pub async fn finish(mut live: Live, passed: bool) -> Result<(), BenchError> {
    testing::finish_agents(&mut live, passed)
        .await
        .map_err(BenchError::harness)
}

/// A scripted turn's server of the harness's own, answering every prompt `reply`, for `section`:
/// `live` with its agent, or `live` finished and the error.
pub async fn turn_agent(
    mut live: Live,
    section: &'static str,
    reply: &str,
) -> Result<(Live, Agent), BenchError> {
    live.model()
        .rule(Rule::when(Matcher::any()).reply(Reply::text(reply)));
    match live.opencode().await {
        Ok(agent) if !agent.is_shared() => Ok((live, agent)),
        Ok(_) => {
            let _ = finish(live, true).await;
            Err(BenchError::NotOwnServer(section))
        }
        Err(e) => {
            let _ = finish(live, false).await;
            Err(BenchError::harness(e))
        }
    }
}

/// A progress line on stderr: the run is long and figures come only at the end.
pub fn progress(section: &str, message: &str) {
    eprintln!("[live_overhead] {section}: {message}");
}

/// A duration for progress lines: seconds, or milliseconds below one second.
pub fn secs(d: Duration) -> String {
    if d < Duration::from_secs(1) {
        format!("{:.1} ms", d.as_secs_f64() * 1000.0)
    } else {
        format!("{:.3} s", d.as_secs_f64())
    }
}

/// A start-and-turn section's figures, the harness against the raw side: outside `--quick` a
/// warm-up raw sample first (the first start of a binary pays for the page cache; neither side
/// should), then the bench's provisioning pairs interleaved; `<section>` (harness / raw) and
/// both sides' medians.
pub async fn harness_against_raw<A, B, FA, FB>(
    bench: &Bench,
    section: &str,
    harness: A,
    mut raw: B,
) -> Result<Vec<crate::report::Figure>, BenchError>
where
    A: FnMut() -> FA,
    B: FnMut() -> FB,
    FA: Future<Output = Result<Duration, BenchError>>,
    FB: Future<Output = Result<Duration, BenchError>>,
{
    use crate::report::Figure;
    if !bench.settings.quick {
        let took = raw().await?;
        progress(section, &format!("warm-up raw sample: {}", secs(took)));
    }
    let n = bench.settings.provisioning_pairs();
    let [harness, raw] = interleave(section, n, ["harness", "raw"], harness, raw).await?;
    Ok([
        Figure::ratio(section, &harness, &raw),
        Figure::median(&format!("{section}.harness"), &harness),
        Figure::median(&format!("{section}.raw"), &raw),
    ]
    .into_iter()
    .flatten()
    .collect())
}

/// Runs `n` samples of each side, interleaved A,B,B,A,A,B… so that drift (a machine that gets
/// busier or quieter, caches that warm up) lands on both sides alike.
pub async fn interleave<A, B, FA, FB>(
    section: &str,
    n: usize,
    names: [&str; 2],
    mut a: A,
    mut b: B,
) -> Result<[Vec<Duration>; 2], BenchError>
where
    A: FnMut() -> FA,
    B: FnMut() -> FB,
    FA: Future<Output = Result<Duration, BenchError>>,
    FB: Future<Output = Result<Duration, BenchError>>,
{
    let mut samples = [Vec::with_capacity(n), Vec::with_capacity(n)];
    for i in 0..n {
        let order = if i % 2 == 0 { [0, 1] } else { [1, 0] };
        for side in order {
            let took = if side == 0 { a().await? } else { b().await? };
            progress(
                section,
                &format!("{} {}/{n}: {}", names[side], i + 1, secs(took)),
            );
            samples[side].push(took);
        }
    }
    Ok(samples)
}
