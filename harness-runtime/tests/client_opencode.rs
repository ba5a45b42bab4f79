//! The client against a real `opencode serve` (no model: the provider points at a closed port).
//!
//! The spawn helper below is temporary and test-only; provisioning replaces it.

use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use harness_runtime::client::{
    Client, ClientError, CreateSession, Event, PermissionAction, Prompt,
};
use harness_runtime::evidence::Redactor;
use serde_json::json;

struct OpenCode {
    child: Child,
    base: String,
    _root: tempfile::TempDir,
}

impl Drop for OpenCode {
    fn drop(&mut self) {
        // The server runs in its own process group: end the group, then reap.
        let pgid = nix::unistd::Pid::from_raw(self.child.id() as i32);
        let _ = nix::sys::signal::killpg(pgid, nix::sys::signal::Signal::SIGKILL);
        let _ = self.child.wait();
    }
}

fn opencode_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../node_modules/.bin/opencode")
}

fn start_opencode() -> OpenCode {
    let root = tempfile::tempdir().unwrap();
    let r = root.path();
    for d in [
        "home",
        "config/opencode/node_modules",
        "data",
        "cache",
        "state",
        "tmp",
        "ws",
    ] {
        std::fs::create_dir_all(r.join(d)).unwrap();
    }
    // Stops the background plugin install (it fails offline after about 70 s).
    std::fs::write(
        r.join("config/opencode/package.json"),
        r#"{"dependencies":{"@opencode-ai/plugin":"*"}}"#,
    )
    .unwrap();
    std::fs::write(
        r.join("config/opencode/package-lock.json"),
        r#"{"packages":{"":{"dependencies":{"@opencode-ai/plugin":"*"}}}}"#,
    )
    .unwrap();
    let config = json!({"autoupdate":false,"share":"disabled","enabled_providers":["ollama"],
        "provider":{"ollama":{"npm":"@ai-sdk/openai-compatible","name":"Ollama",
            "options":{"baseURL":"http://127.0.0.1:9/v1"},
            "models":{"m":{"name":"m","tool_call":true}}}},
        "model":"ollama/m","permission":{"edit":"ask","bash":"ask","webfetch":"ask"}});
    let mut cmd = Command::new(opencode_bin());
    cmd.args(["serve", "--hostname", "127.0.0.1", "--port", "0"])
        .current_dir(r.join("ws"))
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", r.join("home"))
        .env("XDG_CONFIG_HOME", r.join("config"))
        .env("XDG_DATA_HOME", r.join("data"))
        .env("XDG_CACHE_HOME", r.join("cache"))
        .env("XDG_STATE_HOME", r.join("state"))
        .env("TMPDIR", r.join("tmp"))
        .env("OPENCODE_DB", r.join("data/opencode.db"))
        .env("OPENCODE_CONFIG_CONTENT", config.to_string())
        .env("OPENCODE_DISABLE_MODELS_FETCH", "1")
        .env("OPENCODE_DISABLE_AUTOUPDATE", "1")
        .env("OPENCODE_DISABLE_SHARE", "1")
        .env("OPENCODE_AUTO_SHARE", "false")
        .env("OPENCODE_DISABLE_LSP_DOWNLOAD", "1")
        .env("OPENCODE_DISABLE_EXTERNAL_SKILLS", "1")
        .env("OPENCODE_DISABLE_CLAUDE_CODE", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .process_group(0);
    let mut child = cmd.spawn().expect("spawn opencode");
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { return };
            if let Some(url) = line.split("listening on ").nth(1) {
                let _ = tx.send(url.trim().to_string());
            }
        }
    });
    let ceiling = Duration::from_secs(90);
    let mut server = OpenCode {
        child,
        base: String::new(),
        _root: root,
    };
    server.base = rx
        .recv_timeout(ceiling)
        .unwrap_or_else(|_| panic!("opencode did not print its listening line within {ceiling:?}"));
    server
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_against_real_opencode() {
    if !opencode_bin().exists() {
        panic!("node_modules/.bin/opencode is missing: run npm install at the workspace root");
    }
    let server = start_opencode();
    let redactor = Arc::new(Redactor::for_scenario());
    let client = Client::new(server.base.clone(), redactor);

    let health = client.health().await.expect("health");
    assert!(health.healthy);
    assert_eq!(health.version, "1.18.33");

    // The subscription's first frame is server.connected (checked inside subscribe).
    let mut events = client.subscribe().await.expect("subscribe");

    let created = client
        .create_session(&CreateSession::titled("client test").rule(
            "bash",
            "*",
            PermissionAction::Ask,
        ))
        .await
        .expect("create");
    assert!(created.id().starts_with("ses_"));
    assert_eq!(created.info().title, "client test");

    // The subscription sees it.
    loop {
        match events.next_event().await.expect("event") {
            Some(Event::SessionCreated { session_id, .. }) if session_id == created.id() => break,
            Some(_) => {}
            None => panic!("stream ended"),
        }
    }

    let fetched = client.get_session(created.id()).await.expect("get");
    assert_eq!(fetched.id, created.id());
    let listed = client.list_sessions().await.expect("list");
    assert!(listed.iter().any(|s| s.id == created.id()));
    assert!(created.messages().await.expect("messages").is_empty());

    let missing = client
        .get_session("ses_doesnotexist000000000000")
        .await
        .unwrap_err();
    assert_eq!(missing.status(), Some(404), "{missing}");
    assert_eq!(missing.error_name(), Some("NotFoundError"), "{missing}");
    assert!(missing.is_not_found());

    assert!(
        client.statuses().await.expect("statuses").is_empty(),
        "all idle"
    );
    assert!(client.permissions().await.expect("permissions").is_empty());
    assert!(client.questions().await.expect("questions").is_empty());
    assert!(created.abort().await.expect("abort on idle"));

    // A reply to an unknown permission is a typed 404, not a fallback success.
    let err = client
        .reply_permission(
            created.id(),
            "per_unknown",
            harness_runtime::client::PermissionReply::Once,
            None,
        )
        .await
        .unwrap_err();
    assert!(err.is_not_found(), "{err}");

    // A turn that cannot reach a model: retries; abort it once the first retry shows, then the
    // turn completes (idle) with no error.
    let session = created.clone();
    let turn = tokio::spawn(async move {
        session
            .prompt_with(Prompt::new("hello").with_ceiling(Duration::from_secs(90)))
            .await
    });
    loop {
        match events.next_event().await.expect("event") {
            Some(Event::SessionStatus { session_id, status }) if session_id == created.id() => {
                if matches!(status, harness_runtime::client::SessionStatus::Retry { .. }) {
                    break;
                }
            }
            Some(_) => {}
            None => panic!("stream ended"),
        }
    }
    assert!(created.abort().await.expect("abort"));
    let turn = turn.await.unwrap().expect("aborted turn collected");
    assert_eq!(turn.messages.len(), 1, "{turn:?}");
    assert!(turn.messages[0].info.time.completed.is_some());
    assert!(turn.trace.iter().any(|t| t == "session.status"));

    // A format prompt makes the message list unavailable: typed error, no 400 surprise.
    let structured = client
        .create_session(&CreateSession::titled("structured"))
        .await
        .unwrap();
    let s2 = structured.clone();
    let pending = tokio::spawn(async move {
        s2.prompt_with(
            Prompt::new("x")
                .json_schema(json!({"type":"object","properties":{"a":{"type":"string"}}}))
                .with_ceiling(Duration::from_secs(90)),
        )
        .await
    });
    loop {
        match events.next_event().await.expect("event") {
            Some(Event::SessionStatus { session_id, .. }) if session_id == structured.id() => break,
            Some(_) => {}
            None => panic!("stream ended"),
        }
    }
    assert!(matches!(
        structured.messages().await,
        Err(ClientError::MessagesUnavailableAfterStructuredPrompt { .. })
    ));
    structured.abort().await.unwrap();
    let _ = pending.await.unwrap().expect("aborted structured turn");

    assert!(created.delete().await.expect("delete"));
    assert!(
        client
            .get_session(created.id())
            .await
            .unwrap_err()
            .is_not_found()
    );
    assert!(client.dispose().await.expect("dispose"));
    drop(server);
}
