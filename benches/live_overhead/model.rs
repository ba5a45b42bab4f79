//! `model.first_chunk`: the scripted model's time from sending a streamed chat completion to
//! the first body chunk, over real loopback HTTP (what OpenCode waits for before any delta).

use std::time::{Duration, Instant};

use harness_runtime::model::{Matcher, Rule};
use harness_runtime::prelude::*;
use harness_runtime::testing::MODEL_ID;
use harness_runtime::testing::ModelSlot;

use crate::common::{Bench, BenchError, progress, secs};
use crate::report::Figure;

const SECTION: &str = "model";

pub async fn measure(bench: &Bench) -> Result<Vec<Figure>, BenchError> {
    let slot = ModelSlot::default();
    let model = slot.model().map_err(BenchError::harness)?;
    model.rule(Rule::when(Matcher::any()).reply(Reply::text("one two three four").in_deltas(4)));
    let url = format!("{}/chat/completions", model.base_url());
    let n = bench.settings.samples * 10;
    first_chunk(bench, &url).await?; // connection set-up and lazy init stay out of the figure
    let mut samples = Vec::with_capacity(n);
    for _ in 0..n {
        samples.push(first_chunk(bench, &url).await?);
    }
    let median = crate::report::median(&samples).unwrap_or_default();
    progress(
        SECTION,
        &format!("{n} requests, median first chunk {}", secs(median)),
    );
    if !model.misses().is_empty() {
        return Err(BenchError::Harness(
            "the scripted model missed a request".into(),
        ));
    }
    Ok(Figure::median("model.first_chunk", &samples)
        .into_iter()
        .collect())
}

async fn first_chunk(bench: &Bench, url: &str) -> Result<Duration, BenchError> {
    let body = json!({
        "model": MODEL_ID,
        "stream": true,
        "messages": [{"role": "user", "content": "count to four"}],
    });
    let started = Instant::now();
    let mut response = bench
        .http
        .post(url)
        .json(&body)
        .timeout(harness_runtime::scaled(Duration::from_secs(30)))
        .send()
        .await
        .and_then(reqwest::Response::error_for_status)
        .map_err(|e| BenchError::Raw(format!("POST chat/completions: {e}")))?;
    let chunk = response
        .chunk()
        .await
        .map_err(|e| BenchError::Raw(format!("reading the completion: {e}")))?;
    let took = started.elapsed();
    if chunk.is_none_or(|c| c.is_empty()) {
        return Err(BenchError::Raw("the completion had an empty body".into()));
    }
    // Read the rest so the connection is reused cleanly by the next sample.
    while let Ok(Some(_)) = response.chunk().await {}
    Ok(took)
}
