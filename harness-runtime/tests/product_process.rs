//! Products that are programs, started through a scenario context against the fixture agent: a
//! Node product on `@opencode-ai/sdk` reaches its agent through `LIVE_AGENT_URL` (confined by the
//! sandbox where agents are: its script and the checkout's `node_modules` readable, nothing else
//! outside its agent's root), and the scenario's end fails on a product that did not end as
//! expected, naming it with its output's tail, after stopping every product.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use harness_runtime::product::ProductCommand;
use harness_runtime::testing::{self, FinishError, MissingPrerequisite};

mod fixture_live;

use fixture_live::live;

fn sh(script: &str) -> ProductCommand {
    ProductCommand::new("sh").args(["-c", script])
}

const CEILING: Duration = Duration::from_secs(60);

/// Whether node and the SDK are installed (`npm ci` at the repository root); where they are
/// not, the test says so and ends (failed under `CI` or `LIVE_STRICT=1`).
fn node_with_the_sdk() -> bool {
    let checkout = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let missing = if Command::new("node").arg("--version").output().is_err() {
        Some("node is not on PATH")
    } else if !checkout.join("node_modules/@opencode-ai/sdk").is_dir() {
        Some("@opencode-ai/sdk is not installed: run `npm ci` at the repository root")
    } else {
        None
    };
    match missing.map(MissingPrerequisite::decide) {
        None => true,
        Some(MissingPrerequisite::Skip(reason)) => {
            eprintln!("skipped: {reason}");
            false
        }
        Some(MissingPrerequisite::Fail(message)) => panic!("{message}"),
    }
}

/// The SDK product creates and lists a session in its agent's directory through the agent's
/// forwarder, writes its workspace, and (sandboxed) cannot read a file outside everything it was given; the end
/// judges it a success and removes the root.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_product_on_the_sdk_drives_its_agent_through_the_url_it_is_given() {
    if !node_with_the_sdk() {
        return;
    }
    let mut live = live("product_process::node_sdk");
    let agent = live.opencode().await.unwrap();
    let outside = tempfile::tempdir().unwrap();
    let planted = outside.path().join("planted.txt");
    std::fs::write(&planted, "planted secret").unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/product_process/session.mjs");

    let product = live
        .start_product(
            &agent,
            ProductCommand::new("node").arg(&script).arg(&planted),
        )
        .await
        .unwrap();
    let exit = product.wait_within(CEILING).await.unwrap();
    let output = product.output();
    assert!(exit.success(), "{exit}: {output}");
    let stdout = product.stdout();
    for line in [
        "created: made by the product",
        "listed: made by the product",
        "wrote its workspace",
    ] {
        assert!(stdout.lines().any(|l| l == line), "{line}: {output}");
    }
    let refused = if live.sandboxed() {
        "outside: EACCES"
    } else {
        "outside: read"
    };
    assert!(stdout.lines().any(|l| l == refused), "{refused}: {output}");
    assert_eq!(
        std::fs::read_to_string(agent.workspace().join("product.txt")).unwrap(),
        "written by the product\n"
    );
    // Through the agent's forwarder: the wire logged the product's requests.
    let requests: Vec<(String, String, Option<u16>)> = live
        .wire()
        .requests()
        .into_iter()
        .map(|r| (r.method, r.route, r.status))
        .collect();
    assert_eq!(
        requests,
        [
            ("POST".to_string(), "/session".to_string(), Some(200)),
            ("GET".to_string(), "/session".to_string(), Some(200)),
        ]
    );
    let root = agent.root().to_path_buf();
    testing::finish(&mut live, true).await.unwrap();
    assert!(!root.exists(), "a pass removes the root");
}

/// A product that failed and one still running fail the end, each named with its output's
/// tail; both are stopped, the agents too, and the root is kept for the diagnosis.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_end_fails_on_a_product_that_did_not_end_as_expected() {
    let mut live = live("product_process::verdict");
    let agent = live.opencode().await.unwrap();
    live.secret("hunter2-product");
    let failed = live
        .start_product(
            &agent,
            sh("echo \"no session at $LIVE_AGENT_URL with hunter2-product\" >&2; exit 3"),
        )
        .await
        .unwrap();
    let running = live
        .start_product(&agent, sh("echo serving; exec sleep 600").name("server"))
        .await
        .unwrap();
    let expected = live
        .start_product(&agent, sh("echo watching; exec sleep 600"))
        .await
        .unwrap();
    expected.expect_running();
    assert_eq!(failed.wait_within(CEILING).await.unwrap().code(), Some(3));
    running.wait_for_output("serving", CEILING).await.unwrap();

    let root = agent.root().to_path_buf();
    let err = testing::finish(&mut live, true).await.unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, FinishError::Product(_)), "{text}");
    assert!(
        text.starts_with(
            "product 1 (sh) exited with exit status: 3; call product.expect_failure()"
        ),
        "{text}"
    );
    // (A test binary's helper role prints libtest's `running 1 test` before the product runs.)
    assert!(
        text.contains("its output ended:\n")
            && text.contains("\nno session at http://127.0.0.1:[port] with [secret]\n"),
        "{text}"
    );
    assert!(
        text.contains("\n\nproduct 2 (server) was still running at the scenario's end"),
        "{text}"
    );
    assert!(!text.contains("product 3"), "{text}");
    assert!(!running.is_running() && !expected.is_running());
    assert!(!agent.is_running());
    assert!(root.exists(), "a failed end keeps the root");
    std::fs::remove_dir_all(&root).unwrap();
}
