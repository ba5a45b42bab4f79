//! `relayed_turn`: the `turn` section's turn (`session.prompt`, a fresh session each time)
//! through the recording relay to an HTTPS upstream, against the same turn sent by OpenCode
//! straight to that upstream, samples interleaved. The upstream is a scripted model behind a
//! TLS front whose CA is made for this run: the relay trusts it through the environment given
//! to its scenario (`SSL_CERT_FILE`, not set in this process), OpenCode on the direct side
//! through `NODE_EXTRA_CA_CERTS` (its sandbox may read the CA's file). Both agents get the same
//! options and a server of their own; the relay records every relayed turn into a cassette in a
//! temp dir, as a recording does.

use std::net::SocketAddr;
use std::time::Duration;

use harness_runtime::model::{Matcher, Rule};
use harness_runtime::opencode::{Agent, AgentOptions};
use harness_runtime::prelude::*;
use harness_runtime::testing::{self, CassettePlan, ModelSlot, PROVIDER_ID};
use harness_selftest::tls_front::TlsFront;

use crate::common::{Bench, BenchError, OWN_SERVER, finish, interleave, progress};
use crate::report::Figure;
use crate::turn::{REPLY, harness_turn};

const SECTION: &str = "relayed_turn";

pub async fn measure(bench: &Bench) -> Result<Vec<Figure>, BenchError> {
    let n = bench.settings.turn_pairs();
    let dir = tempfile::tempdir().map_err(|e| BenchError::io("create a temp dir", e))?;
    let mut upstream = ModelSlot::default();
    let model = upstream.model().map_err(BenchError::harness)?;
    model.rule(Rule::when(Matcher::any()).reply(Reply::text(REPLY)));
    let addr: SocketAddr = model
        .base_url()
        .trim_start_matches("http://")
        .trim_end_matches("/v1")
        .parse()
        .map_err(|e| BenchError::Harness(format!("the scripted model's address: {e}")))?;
    let front = TlsFront::start(addr);
    bench.redactor.add_port(front.addr().port());
    // The scripted model's own config, as a user's config naming a hosted provider would be,
    // reached over HTTPS.
    let options = AgentOptions::default();
    let mut config = upstream.opencode_config(options.permission_config().clone());
    config["provider"][PROVIDER_ID]["options"]["baseURL"] =
        format!("https://{}/v1", front.addr()).into();
    let ca = front.ca_file().to_path_buf();
    let options = options
        .config(config)
        .env("NODE_EXTRA_CA_CERTS", ca.display().to_string())
        .read_only(&ca);

    let mut direct = bench.live("bench::relayed_turn_direct", OWN_SERVER);
    let ca_for_relay = ca.display().to_string();
    let mut relayed = testing::live_with_cassette_env(
        bench.info("bench::relayed_turn", OWN_SERVER),
        CassettePlan::Record(dir.path().join("bench__relayed_turn.json")),
        move |name| (name == "SSL_CERT_FILE").then(|| ca_for_relay.clone()),
    );
    let measured = async {
        let direct_agent = direct
            .opencode_with(options.clone())
            .await
            .map_err(BenchError::harness)?;
        let relayed_agent = relayed
            .opencode_with(options.clone())
            .await
            .map_err(BenchError::harness)?;
        if direct_agent.is_shared() || relayed_agent.is_shared() {
            return Err(BenchError::NotOwnServer(SECTION));
        }
        bench.redactor.add_port(direct_agent.port());
        bench.redactor.add_port(relayed_agent.port());
        measure_on(&relayed_agent, &direct_agent, n).await
    }
    .await;
    let relayed_requests = relayed.model().requests().len();
    let relayed_finished = testing::finish(&mut relayed, measured.is_ok())
        .await
        .map_err(BenchError::harness);
    let direct_finished = finish(direct, measured.is_ok()).await;
    let figures = measured?;
    relayed_finished?;
    direct_finished?;
    // Every turn of both sides reached the upstream once, the relayed ones through the relay.
    let seen = upstream
        .model()
        .map_err(BenchError::harness)?
        .requests()
        .len();
    let expected = n + 1;
    if seen != 2 * expected || relayed_requests != expected {
        return Err(BenchError::Harness(format!(
            "for {expected} turns per side, the upstream saw {seen} requests and the relay {relayed_requests}"
        )));
    }
    progress(
        SECTION,
        &format!("the upstream saw {seen} requests over HTTPS"),
    );
    drop(front);
    Ok(figures)
}

async fn measure_on(relayed: &Agent, direct: &Agent, n: usize) -> Result<Vec<Figure>, BenchError> {
    // The first prompt loads the provider (seconds): a warm-up turn per side.
    harness_turn(relayed).await?;
    harness_turn(direct).await?;
    let [relay, straight]: [Vec<Duration>; 2] = interleave(
        SECTION,
        n,
        ["relayed", "direct"],
        || harness_turn(relayed),
        || harness_turn(direct),
    )
    .await?;
    Ok([
        Figure::ratio("relayed_turn", &relay, &straight),
        Figure::median("relayed_turn.relayed", &relay),
        Figure::median("relayed_turn.direct", &straight),
    ]
    .into_iter()
    .flatten()
    .collect())
}
