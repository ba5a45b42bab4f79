//! Provisioning against the real OpenCode (`npm ci` at the repo root): isolated roots, readiness,
//! stop/restart on the same root, teardown of roots, and the no-orphan machinery.
//!
//! Each real server costs seconds of CPU, so the tests are few and each checks several things.

use std::path::Path;
use std::time::{Duration, Instant};

use harness_runtime::client::CreateSession;
use harness_runtime::opencode::{Agent, AgentOptions, ProvisionError};
use harness_runtime::testing;
use harness_runtime::testing::OPENCODE_NOT_FOUND;
use harness_selftest::prerequisites::{Prerequisite::OpenCode, Test};
use harness_selftest::test;

use crate::support;
use support::{live, start};

/// The tests of this module, for the binary's `main`.
pub(crate) fn tests() -> Vec<Test> {
    vec![
        test!(not_found_error_says_what_to_do),
        test!(sessions_survive_a_restart_on_the_same_root_and_a_pass_removes_it).needs(OpenCode),
        test!(parallel_agents_are_isolated_and_failed_or_abandoned_roots_are_kept).needs(OpenCode),
        test!(an_invalid_config_is_ready_and_named_by_the_first_api_call).needs(OpenCode),
        test!(a_product_setting_breaking_the_model_wiring_fails_before_a_root_exists)
            .needs(OpenCode),
        test!(product_settings_outrank_a_project_file_which_outranks_nothing_of_the_wiring)
            .needs(OpenCode),
        test!(the_sweep_kills_a_detached_carrier),
        test!(the_reaper_sweeps_when_the_runner_pipe_closes),
        test!(runner_role).ignore(
            "entry point of the runner role, run by a_sigkilled_runner_leaves_no_carrier_behind",
        ),
        test!(a_sigkilled_runner_leaves_no_carrier_behind),
        test!(a_bare_root_has_an_agents_layout_and_hermetic_environment),
        test!(a_helper_role_runs_before_libtest_prints_anything),
    ]
}

/// This binary re-executed in a helper role prints nothing of libtest's: a shared workspace's
/// shell is the sandbox launcher, and a bash command's output must be the command's alone.
/// (The launcher is given no launch here, so it refuses and exits 125 without Landlock.)
fn a_helper_role_runs_before_libtest_prints_anything() {
    let (program, args) = support::agents::role_command();
    let output = std::process::Command::new(program)
        .args(args)
        .env(testing::ROLE_ENV, "sandbox")
        .env_remove("LIVE_SANDBOX_LAUNCH")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(125), "{stderr}");
    assert_eq!(String::from_utf8_lossy(&output.stdout), "", "{stderr}");
    assert!(stderr.contains("has no valid launch"), "{stderr}");
}

fn http() -> reqwest::Client {
    reqwest::Client::builder().no_proxy().build().unwrap()
}

/// The JSON answer of `request`, which must succeed.
async fn answer(request: reqwest::RequestBuilder) -> serde_json::Value {
    let response = request.send().await.unwrap().error_for_status().unwrap();
    response.json().await.unwrap()
}

async fn create_session(agent: &Agent) -> String {
    let session = answer(
        http()
            .post(format!("{}/session", agent.endpoint()))
            .json(&serde_json::json!({"title": "provisioning probe"})),
    )
    .await;
    session["id"].as_str().expect("session id").to_string()
}

async fn session_status(agent: &Agent, id: &str) -> u16 {
    http()
        .get(format!("{}/session/{id}", agent.endpoint()))
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

/// A detached `sleep` carrying `token`, like a bash-tool command that left OpenCode's session.
fn detached_sleep(token: &str) {
    let status = std::process::Command::new("setsid")
        .args(["-f", "sleep", "600"])
        .env(testing::OWNER_ENV, token)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    let deadline = Instant::now() + Duration::from_secs(10);
    while testing::carriers(token).is_empty() {
        assert!(
            Instant::now() < deadline,
            "the detached sleep never appeared"
        );
        std::thread::yield_now();
    }
}

fn not_found_error_says_what_to_do() {
    assert_eq!(OPENCODE_NOT_FOUND, "opencode not found: run `npm ci`");
    assert_eq!(
        ProvisionError::OpenCodeNotFound.to_string(),
        OPENCODE_NOT_FOUND
    );
    if let Ok(found) = testing::find_opencode(Path::new(env!("CARGO_MANIFEST_DIR"))) {
        assert!(found.is_file());
    }
}

#[tokio::main(flavor = "current_thread")]
async fn sessions_survive_a_restart_on_the_same_root_and_a_pass_removes_it() {
    let mut live = live("provisioning::restart");
    let agent = start(&mut live).await.unwrap();
    let token = testing::owner_token(&agent);
    let root = agent.root().to_path_buf();
    assert!(root.join("workspace").is_dir());
    assert!(agent.is_running());
    assert!(
        !testing::carriers(&token).is_empty(),
        "the server carries the owner mark"
    );

    let id = create_session(&agent).await;
    assert_eq!(session_status(&agent, &id).await, 200);
    assert!(root.join("opencode/database/opencode.db").is_file());
    // The server's output is in the root and in the redacted tail.
    let tail = agent.log_tail(100);
    assert!(
        tail.contains("listening on http://127.0.0.1:[port]"),
        "{tail}"
    );
    assert!(!tail.contains(&agent.port().to_string()), "{tail}");
    let stdout = std::fs::read_to_string(root.join("opencode.stdout.log")).unwrap();
    assert!(stdout.contains("listening on"));

    // A stray descendant that left the process group dies with the server.
    detached_sleep(&token);
    let port = agent.port();
    agent.stop().await.unwrap();
    assert!(!agent.is_running());
    assert!(
        testing::carriers(&token).is_empty(),
        "nothing carries the mark after stop"
    );
    assert!(
        http()
            .get(format!("{}/global/health", agent.endpoint()))
            .send()
            .await
            .is_err(),
        "the endpoint closed with its process"
    );

    agent.restart().await.unwrap();
    assert_eq!(agent.port(), port, "a free port is kept across restarts");
    assert_eq!(
        session_status(&agent, &id).await,
        200,
        "the session persisted"
    );
    assert_eq!(agent.root(), root);

    testing::finish_agents(&mut live, true).await.unwrap();
    assert!(testing::carriers(&token).is_empty());
    assert!(!root.exists(), "a pass removes the root");
}

#[tokio::main(flavor = "current_thread")]
async fn parallel_agents_are_isolated_and_failed_or_abandoned_roots_are_kept() {
    let mut a = live("provisioning::parallel-a");
    let mut b = live("provisioning::parallel-b");
    let (agent_a, agent_b) = tokio::join!(start(&mut a), start(&mut b));
    let (agent_a, agent_b) = (agent_a.unwrap(), agent_b.unwrap());
    assert_ne!(agent_a.root(), agent_b.root());
    assert_ne!(agent_a.port(), agent_b.port());
    assert_ne!(
        testing::owner_token(&agent_a),
        testing::owner_token(&agent_b)
    );

    // Separate databases: a session of one server is unknown to the other.
    let id = create_session(&agent_a).await;
    assert_eq!(session_status(&agent_a, &id).await, 200);
    assert_eq!(session_status(&agent_b, &id).await, 404);

    let (root_a, token_a) = (agent_a.root().to_path_buf(), testing::owner_token(&agent_a));
    let (root_b, token_b) = (agent_b.root().to_path_buf(), testing::owner_token(&agent_b));
    drop((agent_a, agent_b));

    // A failed scenario: stopped, root kept for the evidence.
    testing::finish_agents(&mut a, false).await.unwrap();
    assert!(testing::carriers(&token_a).is_empty());
    assert!(
        root_a.join("opencode.stderr.log").is_file(),
        "a failure keeps the root"
    );

    // A scenario whose finish never ran (its runtime died): dropping the context kills
    // synchronously and keeps the root, since the outcome is unknown.
    detached_sleep(&token_b);
    drop(b);
    assert!(testing::carriers(&token_b).is_empty());
    assert!(root_b.is_dir());

    std::fs::remove_dir_all(root_a).unwrap();
    std::fs::remove_dir_all(root_b).unwrap();
}

#[tokio::main(flavor = "current_thread")]
async fn an_invalid_config_is_ready_and_named_by_the_first_api_call() {
    let mut live = live("provisioning::invalid-config");
    // Readiness is health only; OpenCode validates the config when the first API call boots
    // its instance, and says which key is wrong at once, where a readiness poll would wait.
    let options = AgentOptions::default()
        .ready_ceiling(Duration::from_secs(240))
        .config(serde_json::json!({"model": 5}));
    let agent = live.opencode_with(options).await.unwrap();
    let asked = Instant::now();
    let error = agent
        .client()
        .create_session(&CreateSession::titled("invalid config"))
        .await
        .unwrap_err();
    assert!(asked.elapsed() < Duration::from_secs(30), "{error}");
    assert_eq!(error.status(), Some(400), "{error}");
    assert_eq!(error.error_name(), Some("ConfigInvalidError"), "{error}");
    assert!(error.to_string().contains("model"), "{error}");
    testing::finish_agents(&mut live, true).await.unwrap();
}

fn the_sweep_kills_a_detached_carrier() {
    let token = testing::new_token();
    detached_sleep(&token);
    assert_eq!(testing::sweep(&token), 1);
    assert!(testing::carriers(&token).is_empty());
}

/// The runner's SIGKILL, as the reaper sees it: its pipe closes. Everything it was told about dies.
fn the_reaper_sweeps_when_the_runner_pipe_closes() {
    let (program, args) = support::agents::role_command();
    let mut reaper = testing::Reaper::spawn(&program, &args).unwrap();
    let token = testing::new_token();
    reaper.register(&token).unwrap();
    detached_sleep(&token);
    assert!(
        reaper.close_and_wait(Duration::from_secs(20)),
        "the reaper exited"
    );
    assert!(testing::carriers(&token).is_empty());
}

/// The "runner" of `a_sigkilled_runner_leaves_no_carrier_behind`: registers a token with its
/// reaper, leaves a detached carrier, says so, and waits to be killed.
fn runner_role() {
    let Ok(token) = std::env::var("PROVISIONING_TEST_TOKEN") else {
        return;
    };
    let (program, args) = support::agents::role_command();
    testing::use_role_command(program, args);
    testing::register_with_reaper(&token).unwrap();
    detached_sleep(&token);
    println!("carrier started");
    let mut line = String::new();
    let _ = std::io::stdin().read_line(&mut line); // blocks until SIGKILL
}

fn a_sigkilled_runner_leaves_no_carrier_behind() {
    use std::io::BufRead;
    let token = testing::new_token();
    let mut runner = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "provisioning::runner_role",
            "--ignored",
            "--nocapture",
            "-q",
        ])
        .env("PROVISIONING_TEST_TOKEN", &token)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut stdout = std::io::BufReader::new(runner.stdout.take().unwrap());
    let mut line = String::new();
    while !line.contains("carrier started") {
        line.clear();
        assert!(
            stdout.read_line(&mut line).unwrap() > 0,
            "the runner role ended early"
        );
    }
    assert!(!testing::carriers(&token).is_empty());
    runner.kill().unwrap(); // SIGKILL: no destructor, no teardown runs in the runner
    runner.wait().unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while !testing::carriers(&token).is_empty() {
        assert!(
            Instant::now() < deadline,
            "the reaper did not sweep after the runner died"
        );
        std::thread::sleep(Duration::from_millis(20)); // no signal to wait on: another process sweeps
    }
}

/// A scenario context for `name` on a server of its own, whatever `LIVE_ISOLATION` says.
fn live_on_own_server(name: &str) -> harness_runtime::Live {
    let (program, args) = support::agents::role_command();
    testing::use_role_command(program, args);
    testing::live(testing::ScenarioInfo {
        name: name.to_string(),
        options: harness_runtime::__private::ScenarioOptions {
            isolation: Some(harness_runtime::Isolation::Server),
            ..harness_runtime::__private::ScenarioOptions::DEFAULT
        },
        manifest_dir: std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")),
        snapshot_assertion: harness_runtime::testing::snapshot_assertion!(),
    })
}

#[tokio::main(flavor = "current_thread")]
async fn a_product_setting_breaking_the_model_wiring_fails_before_a_root_exists() {
    let mut live = live_on_own_server("provisioning::product-config-refused");
    let options = AgentOptions::default().product_config(serde_json::json!({
        "provider": {testing::PROVIDER_ID: {"options": {"baseURL": "http://127.0.0.1:9/v1"}}},
    }));
    let error = live.opencode_with(options).await.unwrap_err();
    let key = format!("provider.{}", testing::PROVIDER_ID);
    assert!(
        matches!(&error, ProvisionError::ProductConfig { key: named, .. } if *named == key),
        "{error}"
    );
    assert!(
        error
            .to_string()
            .starts_with(&format!("the product config cannot set `{key}`: ")),
        "{error}"
    );
    // Refused before a root was made: there is nothing to keep or remove.
    testing::finish_agents(&mut live, false).await.unwrap();
}

/// What OpenCode reports for the workspace of an agent with product settings and a project
/// `opencode.json`: the product's outrank the project's (both are read), and neither touches
/// the scripted model.
#[tokio::main(flavor = "current_thread")]
async fn product_settings_outrank_a_project_file_which_outranks_nothing_of_the_wiring() {
    let mut live = live_on_own_server("provisioning::product-config-layers");
    let options =
        support::agents::patient(AgentOptions::default().product_config(serde_json::json!({
            "username": "product",
            "instructions": ["PRODUCT.md"],
            "snapshot": true,
        })));
    let agent = live.opencode_with(options).await.unwrap();
    // Before the first request: OpenCode reads a directory's config when its instance starts.
    let project = serde_json::json!({
        "username": "project",
        "instructions": ["PROJECT.md"],
        "default_agent": "plan",
        "model": "anthropic/claude-sonnet-4",
        "provider": {testing::PROVIDER_ID: {"options": {"baseURL": "http://127.0.0.1:9/v1"}}},
    });
    std::fs::write(agent.workspace().join("opencode.json"), project.to_string()).unwrap();
    let config = answer(
        http()
            .get(format!("{}/config", agent.endpoint()))
            .query(&[("directory", agent.workspace())]),
    )
    .await;
    assert_eq!(config["username"], "product", "{config}");
    assert_eq!(
        config["instructions"],
        serde_json::json!(["PROJECT.md", "PRODUCT.md"]),
        "{config}"
    );
    assert_eq!(
        config["default_agent"], "plan",
        "the project's own key: {config}"
    );
    assert_eq!(config["snapshot"], true, "{config}");
    let scripted = format!("{}/{}", testing::PROVIDER_ID, testing::MODEL_ID);
    assert_eq!(config["model"], scripted.as_str(), "{config}");
    let base_url = &config["provider"][testing::PROVIDER_ID]["options"]["baseURL"];
    assert_ne!(base_url, "http://127.0.0.1:9/v1", "{config}");
    testing::finish_agents(&mut live, true).await.unwrap();
}

/// The benchmark's raw side runs a bare server in the same conditions as an agent.
fn a_bare_root_has_an_agents_layout_and_hermetic_environment() {
    let config = serde_json::json!({"share": "disabled"});
    let bare = testing::bare_root("bench::raw", &config).unwrap();
    assert!(bare.workspace.is_dir() && bare.workspace.starts_with(&bare.root));
    let env = |name: &str| {
        bare.env
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
            .unwrap_or_else(|| panic!("{name} is not set"))
    };
    assert_eq!(env("OPENCODE_CONFIG_CONTENT"), config.to_string());
    assert!(Path::new(&env("OPENCODE_DB")).starts_with(&bare.root));
    assert!(Path::new(&env("HOME")).starts_with(&bare.root));
    assert_eq!(env("OPENCODE_DISABLE_AUTOUPDATE"), "1");
    std::fs::remove_dir_all(&bare.root).unwrap();
}
