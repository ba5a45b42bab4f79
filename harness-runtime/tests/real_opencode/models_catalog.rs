//! The empty models catalog the harness gives agents with its own configs (scripted model,
//! cassette replay) changes nothing a client of real OpenCode sees, and real OpenCode does read
//! it: without it, every workspace pays ~0.8 s of CPU for a provider list it cannot show.

use std::time::Duration;

use harness_runtime::opencode::{Agent, AgentOptions};
use harness_runtime::testing::ModelSlot;
use harness_selftest::prerequisites::{Prerequisite::OpenCode, Test};
use harness_selftest::test;
use serde_json::Value;

use crate::support;
use support::agents::patient;

/// The tests of this module, for the binary's `main`.
pub(crate) fn tests() -> Vec<Test> {
    vec![test!(the_empty_catalog_is_read_and_invisible_to_the_harness_configs).needs(OpenCode)]
}

/// What OpenCode reads instead of its bundled catalog; a missing file falls back to it.
const CATALOG_ENV: &str = "OPENCODE_MODELS_PATH";

/// The routes whose answers come from the catalog and the config.
const ROUTES: [&str; 4] = ["/provider", "/config/providers", "/config", "/agent"];

/// `route`'s body with the agent's root (in paths the config shows) made neutral.
async fn body(agent: &Agent, route: &str) -> String {
    // Bounded: a server that stops answering fails the test, naming the route.
    let response = reqwest::Client::builder()
        .no_proxy()
        .timeout(harness_runtime::scaled(Duration::from_secs(30)))
        .build()
        .unwrap()
        .get(format!("{}{route}", agent.endpoint()))
        .send()
        .await
        .unwrap_or_else(|e| panic!("GET {route}: {e}"));
    assert!(response.status().is_success(), "GET {route}: {response:?}");
    let text = response.text().await.unwrap();
    text.replace(&agent.root().display().to_string(), "[root]")
}

/// The ids of the providers `GET /provider` lists.
async fn provider_ids(agent: &Agent) -> Vec<String> {
    let all: Value = serde_json::from_str(&body(agent, "/provider").await).unwrap();
    let mut ids: Vec<String> = all["all"]
        .as_array()
        .expect("`all` in GET /provider")
        .iter()
        .map(|p| p["id"].as_str().unwrap().to_string())
        .collect();
    ids.sort();
    ids
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn the_empty_catalog_is_read_and_invisible_to_the_harness_configs() {
    let mut live = support::live("models_catalog::invisible");
    // A scripted model's config, as `live.opencode()` writes it (no turn is run here).
    let mut model = ModelSlot::default();
    let mut unfiltered = model.opencode_config(serde_json::json!({"*": "allow"}));
    unfiltered
        .as_object_mut()
        .unwrap()
        .remove("enabled_providers");
    // An empty catalog of the test's own, in the agent's sandbox (`read_only`).
    let dir = tempfile::tempdir().unwrap();
    let empty_file = dir.path().join("models.json");
    std::fs::write(&empty_file, "{}").unwrap();
    let missing = "/nonexistent/models-catalog.json";

    // The harness's choice for the scenario's scripted model (the empty catalog), against
    // OpenCode's own (`AgentOptions::env` has the last word).
    let spared = support::start(&mut live)
        .await
        .expect("provision the agent with the empty catalog");
    let bundled = live
        .opencode_with(patient(AgentOptions::default().env(CATALOG_ENV, missing)))
        .await
        .expect("provision the agent with the bundled catalog");
    // Without `enabled_providers` the catalog shows: once bundled, once an empty one.
    let shown = live
        .opencode_with(patient(AgentOptions::default().config(unfiltered.clone())))
        .await
        .expect("provision the agent showing the bundled catalog");
    let shown_empty = live
        .opencode_with(
            patient(AgentOptions::default())
                .config(unfiltered)
                .read_only(dir.path())
                .env(CATALOG_ENV, empty_file.display().to_string()),
        )
        .await
        .expect("provision the agent showing the empty catalog");

    for route in ROUTES {
        assert_eq!(
            body(&spared, route).await,
            body(&bundled, route).await,
            "GET {route} differs between the empty and the bundled catalog"
        );
    }
    assert_eq!(
        provider_ids(&spared).await,
        [harness_runtime::testing::PROVIDER_ID]
    );
    // The harness did hand it its empty catalog, through the variable `shown_empty` proves read.
    let pid = spared.pid().expect("the agent runs");
    let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap();
    let catalog_path = environ
        .split(|b| *b == 0)
        .filter_map(|entry| std::str::from_utf8(entry).ok())
        .find_map(|entry| entry.strip_prefix(&format!("{CATALOG_ENV}=")))
        .map(str::to_string)
        .unwrap_or_else(|| panic!("{CATALOG_ENV} is not in the agent's environment"));
    assert_eq!(std::fs::read_to_string(&catalog_path).unwrap(), "{}");

    // The catalog is real and large, and the harness's providers are not in it (the scripted
    // one shows only because the config defines it: its models are the config's alone)...
    let catalog = provider_ids(&shown).await;
    assert!(catalog.len() > 20, "the bundled catalog lists {catalog:?}");
    assert!(!catalog.iter().any(|id| id == "cassette"), "{catalog:?}");
    let listed: Value = serde_json::from_str(&body(&shown, "/provider").await).unwrap();
    let scripted = listed["all"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["id"] == harness_runtime::testing::PROVIDER_ID)
        .expect("the scripted provider is listed");
    let models: Vec<&String> = scripted["models"].as_object().unwrap().keys().collect();
    assert_eq!(models, [harness_runtime::testing::MODEL_ID]);
    // ...and OpenCode reads an empty catalog instead of it.
    assert_eq!(
        provider_ids(&shown_empty).await,
        [harness_runtime::testing::PROVIDER_ID]
    );

    harness_runtime::testing::finish_agents(&mut live, true)
        .await
        .expect("stop the agents and remove their roots");
}
