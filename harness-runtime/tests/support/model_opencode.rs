//! Temporary test support: a hermetic real `opencode serve` pointed at a config, until the
//! process helper's provisioning lands. Killed (with its process group) on drop.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};
use serde_json::{Value, json};

/// One running `opencode serve` with its own root (HOME, XDG dirs, TMPDIR, DB, workspace).
pub struct OpenCode {
    child: Child,
    pub base: String,
    pub workspace: PathBuf,
    http: reqwest::Client,
    root: tempfile::TempDir,
}

fn opencode_bin() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../node_modules/.bin/opencode")
}

impl OpenCode {
    /// Starts OpenCode with `config` as `OPENCODE_CONFIG_CONTENT` and waits for its
    /// `listening on` line (ceiling 90 s: startup is CPU-bound on a shared machine).
    pub async fn start(config: &Value) -> Result<Self> {
        let root = tempfile::Builder::new().prefix("model-e2e-").tempdir()?;
        let dir = |name: &str| -> Result<PathBuf> {
            let path = root.path().join(name);
            std::fs::create_dir_all(&path)?;
            Ok(path)
        };
        let home = dir("home")?;
        let config_home = dir("config")?;
        let workspace = dir("ws")?;
        // Pre-seeded plugin dir: stops the background npm install of @opencode-ai/plugin.
        let plugin_dir = config_home.join("opencode");
        std::fs::create_dir_all(plugin_dir.join("node_modules"))?;
        std::fs::write(
            plugin_dir.join("package.json"),
            r#"{"dependencies":{"@opencode-ai/plugin":"*"}}"#,
        )?;
        std::fs::write(
            plugin_dir.join("package-lock.json"),
            r#"{"packages":{"":{"dependencies":{"@opencode-ai/plugin":"*"}}}}"#,
        )?;
        let stderr = std::fs::File::create(root.path().join("stderr.log"))?;
        let mut command = Command::new(opencode_bin());
        command
            .args(["serve", "--hostname", "127.0.0.1", "--port", "0"])
            .current_dir(&workspace)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &home)
            .env("XDG_CONFIG_HOME", &config_home)
            .env("XDG_DATA_HOME", dir("data")?)
            .env("XDG_CACHE_HOME", dir("cache")?)
            .env("XDG_STATE_HOME", dir("state")?)
            .env("TMPDIR", dir("tmp")?)
            .env("OPENCODE_DB", root.path().join("opencode.db"))
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
            .stderr(Stdio::from(stderr));
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        let mut child = command.spawn().context("spawning opencode serve")?;
        let stdout = child.stdout.take().expect("stdout is piped");
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        // A thread drains stdout for the server's whole life so its pipe never fills.
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        let mut server = Self {
            child,
            base: String::new(),
            workspace,
            http: reqwest::Client::new(),
            root,
        };
        let wait = async {
            while let Some(line) = rx.recv().await {
                if let Some(rest) = line.split("listening on ").nth(1) {
                    return Ok(rest.trim().to_string());
                }
            }
            Err(anyhow!("opencode exited before listening"))
        };
        match tokio::time::timeout(Duration::from_secs(90), wait).await {
            Ok(Ok(base)) => server.base = base,
            Ok(Err(e)) => bail!("{e}; stderr: {}", server.stderr_tail()),
            Err(_) => bail!(
                "opencode did not listen within 90 s; stderr: {}",
                server.stderr_tail()
            ),
        }
        Ok(server)
    }

    /// The last 2 KB of OpenCode's stderr, for failure messages.
    pub fn stderr_tail(&self) -> String {
        let text = std::fs::read_to_string(self.root.path().join("stderr.log")).unwrap_or_default();
        let start = text.len().saturating_sub(2048);
        text.get(start..).unwrap_or_default().to_string()
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}?directory={}", self.base, self.workspace.display())
    }

    async fn post(&self, path: &str, body: Value) -> Result<Value> {
        let response = self
            .http
            .post(self.url(path))
            .json(&body)
            .timeout(Duration::from_secs(180))
            .send()
            .await?;
        let status = response.status();
        let text = response.text().await?;
        if !status.is_success() {
            bail!("POST {path} answered {status}: {text}");
        }
        Ok(serde_json::from_str(&text)?)
    }

    /// Creates a session with a title (so no title-generation request is made).
    pub async fn create_session(&self, title: &str) -> Result<String> {
        let session = self.post("/session", json!({"title": title})).await?;
        Ok(session["id"].as_str().context("session id")?.to_string())
    }

    /// A blocking prompt: returns `{info, parts}` when the turn ends.
    pub async fn prompt(&self, session: &str, body: Value) -> Result<Value> {
        self.post(&format!("/session/{session}/message"), body)
            .await
    }
}

impl Drop for OpenCode {
    fn drop(&mut self) {
        let pid = nix::unistd::Pid::from_raw(self.child.id() as i32);
        let _ = nix::sys::signal::killpg(pid, nix::sys::signal::Signal::SIGKILL);
        let _ = self.child.wait();
    }
}
