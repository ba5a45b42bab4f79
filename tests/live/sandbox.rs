//! The sandbox: the model's bash commands attack what lies outside the scenario's
//! root — the runner's real home, the checkout, a temp dir, the runner's process, a loopback
//! port of someone else — and the kernel refuses each inside the tool, while the scenario's own
//! work in its workspace succeeds and nothing outside the root changes.
//!
//! OpenCode's own guard is switched off (`"*": "allow"`, no `external_directory: deny`): what
//! refuses here is Landlock, not OpenCode's reading of the command. (On a shared server the
//! harness still denies `external_directory` into the pool's directory beyond the scenario's
//! root; only the neighbour's paths lie there, and the bash attacks on them name them where
//! OpenCode does not look: in redirections and `unlink`.) Where agents run unconfined
//! (`LIVE_SANDBOX=0`, or no Landlock outside CI) these scenarios are skipped: they prove the sandbox.

use std::net::TcpListener;
use std::path::{Path, PathBuf};

use harness_runtime::client::{ToolStatus, Turn};
use harness_runtime::opencode::Agent;
use harness_runtime::prelude::*;

/// What the kernel answers a refused file access, and a refused signal.
const DENIED: &str = "Permission denied";
const NOT_PERMITTED: &str = "Operation not permitted";
/// What bash's `/dev/tcp` says when a connect is refused by the kernel (EACCES).
const CONNECT_DENIED: &str = "connect: Permission denied";

/// A directory the scenario makes outside its root, removed when dropped, with a file planted in
/// it whose content must not change (nor be read by the agent).
struct Planted {
    dir: PathBuf,
    secret: String,
}

impl Planted {
    /// `<parent>/.live-sandbox-<label>-<pid>-<nanos>/secret.txt`, its folder registered with the
    /// scenario's redactor as `placeholder` (a failure message quoting a tool's output names it).
    fn new(live: &Live, parent: &Path, label: &str, placeholder: &str) -> anyhow::Result<Self> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)?
            .as_nanos();
        let unique = format!("{}-{nanos}", std::process::id());
        let dir = parent.join(format!(".live-sandbox-{label}-{unique}"));
        std::fs::create_dir(&dir)?;
        let planted = Planted {
            dir: dir.canonicalize()?,
            secret: format!("planted-secret-{unique}"),
        };
        std::fs::write(planted.secret_file(), &planted.secret)?;
        live.redactor().add_path(&planted.dir, placeholder);
        Ok(planted)
    }

    fn secret_file(&self) -> PathBuf {
        self.dir.join("secret.txt")
    }

    /// Nothing but the planted file, unchanged.
    fn untouched(&self) -> anyhow::Result<()> {
        let mut entries: Vec<String> = std::fs::read_dir(&self.dir)?
            .map(|e| Ok(e?.file_name().to_string_lossy().into_owned()))
            .collect::<std::io::Result<_>>()?;
        entries.sort();
        anyhow::ensure!(
            entries == ["secret.txt"],
            "{} holds {entries:?}",
            self.dir.display()
        );
        let content = std::fs::read_to_string(self.secret_file())?;
        anyhow::ensure!(content == self.secret, "the planted file changed");
        Ok(())
    }
}

/// A planted directory in the real home and one in the temp dir (`<label>-home`,
/// `<label>-temp`): the two places a model-written command most often reaches for.
struct PlantedPair {
    home: Planted,
    temp: Planted,
}

impl PlantedPair {
    fn new(live: &Live, label: &str) -> anyhow::Result<Self> {
        let home = format!("{label}-home");
        let temp = format!("{label}-temp");
        Ok(PlantedPair {
            home: Planted::new(live, &real_home()?, &home, "[real-home-plant]")?,
            temp: Planted::new(live, &std::env::temp_dir(), &temp, "[temp-plant]")?,
        })
    }

    fn untouched(&self) -> anyhow::Result<()> {
        self.home.untouched()?;
        self.temp.untouched()
    }
}

impl Drop for Planted {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A file the agent must not create, removed when dropped should it exist after all (a failed
/// sandbox must not leave litter in the checkout).
struct MustNotExist(PathBuf);

impl Drop for MustNotExist {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// The runner's real home (the agent's `HOME` is inside its root).
fn real_home() -> anyhow::Result<PathBuf> {
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .ok_or_else(|| anyhow::anyhow!("HOME is not set: there is no real home to attack"))
}

/// The checkout: the test crate's folder, where the suite's sources and snapshots live.
fn checkout() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A skip where agents run unconfined: `LIVE_SANDBOX=0`, or no Landlock locally (under `CI` or
/// `LIVE_STRICT=1` provisioning fails instead, as for any missing prerequisite).
fn sandbox_wanted(live: &mut Live) -> Result<(), Skipped> {
    if live.sandboxed() {
        Ok(())
    } else {
        Err(live.skip(
            "agents run unconfined here: LIVE_SANDBOX=0, or Landlock is unavailable (an agent's \
             progress line says which)",
        ))
    }
}

/// One attack: a bash command and the kernel's word it must fail with.
struct Attack {
    name: &'static str,
    command: String,
    refused_with: &'static str,
}

/// The output of the `index`-th bash call of `turn`, which must have completed (the command ran
/// and failed inside the tool; the tool itself did not error).
fn bash_output(turn: &Turn, index: usize) -> anyhow::Result<String> {
    let calls: Vec<_> = turn
        .tool_calls
        .iter()
        .filter(|c| c.tool == "bash")
        .collect();
    let call = calls
        .get(index)
        .ok_or_else(|| anyhow::anyhow!("no bash call #{index} in {:?}", turn.tool_calls))?;
    anyhow::ensure!(
        call.status == ToolStatus::Completed,
        "bash call #{index} ended {:?}: {:?}",
        call.status,
        call.output
    );
    Ok(call.output.clone().unwrap_or_default())
}

/// Each attack's bash output (the turn's first tool calls, in order) says it was refused: by
/// attack name, what refused it.
fn refusals(
    live: &Live,
    turn: &Turn,
    attacks: &[Attack],
) -> anyhow::Result<serde_json::Map<String, serde_json::Value>> {
    let mut refused = serde_json::Map::new();
    for (index, attack) in attacks.iter().enumerate() {
        let output = bash_output(turn, index)?;
        anyhow::ensure!(
            output.contains(attack.refused_with),
            "`{}` was not refused with {:?}; the tool said: {}",
            attack.name,
            attack.refused_with,
            live.redactor().redact(&output)
        );
        refused.insert(attack.name.into(), json!(attack.refused_with));
    }
    Ok(refused)
}

/// The evidence of a scenario whose attacks were refused: its turn, what refused each attack,
/// and what it checked after (`last`, under its name), asserted.
fn assert_refused_evidence(
    live: &mut Live,
    turn: &Turn,
    refused: serde_json::Map<String, serde_json::Value>,
    (name, last): (&str, serde_json::Value),
) {
    live.evidence().record_turn(turn);
    live.evidence()
        .record("refused", serde_json::Value::Object(refused));
    live.evidence().record(name, last);
    live.assert_evidence();
}

/// Runs `attacks` as the agent's bash calls, then `work` (the scenario's own, made from the port
/// the agent reaches its model at), with OpenCode's own guard off (`"*": "allow"`), so only the
/// kernel refuses; each attack must fail inside its tool with its word. Returns the agent, the
/// turn, and each attack's word for the evidence.
async fn attack_then_work(
    live: &mut Live,
    attacks: &[Attack],
    work: impl FnOnce(u16) -> String,
) -> anyhow::Result<(Agent, Turn, serde_json::Map<String, serde_json::Value>)> {
    let agent = live
        .opencode_with(AgentOptions::default().permission(json!({"*": "allow"})))
        .await?;
    // Known once provisioned: a warm workspace reaches the model through its own stable port.
    let model_port = live
        .model()
        .base_url()
        .rsplit(':')
        .next()
        .and_then(|rest| rest.split('/').next())
        .and_then(|port| port.parse::<u16>().ok())
        .ok_or_else(|| anyhow::anyhow!("no port in the model's base URL"))?;
    let work = work(model_port);
    for attack in attacks {
        live.model().reply(Reply::tool_call(
            "bash",
            json!({"command": attack.command, "description": attack.name}),
        ));
    }
    live.model()
        .reply(Reply::tool_call(
            "bash",
            json!({"command": work, "description": "the scenario's own work"}),
        ))
        .reply(Reply::text("Done."));

    let session = agent.create_session().await?;
    let turn = session.prompt("Try to get out, then do the work.").await?;
    anyhow::ensure!(turn.error().is_none(), "turn failed: {:?}", turn.error());

    let refused = refusals(live, &turn, attacks)?;
    Ok((agent, turn, refused))
}

/// On a server of its own and on a shared one alike (there the workspace's shell confines the
/// commands to the scenario's root and model port, within the server's pool-wide confinement).
#[live_agent_test(timeout = "180s")]
async fn bash_attacks_outside_the_root_are_refused(live: &mut Live) -> anyhow::Result<()> {
    sandbox_wanted(live)?;
    let planted = PlantedPair::new(live, "attack")?;
    let (home, temp) = (&planted.home, &planted.temp);
    let checkout_file =
        MustNotExist(checkout().join(format!(".live-sandbox-attack-{}.txt", std::process::id())));
    let listener = TcpListener::bind("127.0.0.1:0")?;
    listener.set_nonblocking(true)?;
    let foreign_port = listener.local_addr()?.port();
    let redactor = live.redactor().clone();
    redactor.add_port(foreign_port);

    let runner = std::process::id();
    let attacks = [
        Attack {
            name: "write into the real home",
            command: format!("echo pwned > {}/written.txt", home.dir.display()),
            refused_with: DENIED,
        },
        Attack {
            name: "write into the checkout",
            command: format!("echo pwned > {}", checkout_file.0.display()),
            refused_with: DENIED,
        },
        Attack {
            name: "write into a temp dir outside the root",
            command: format!("echo pwned > {}/written.txt", temp.dir.display()),
            refused_with: DENIED,
        },
        Attack {
            name: "write from a command detached into its own session",
            command: format!(
                "setsid -w bash -c 'echo pwned > {}/detached.txt'",
                temp.dir.display()
            ),
            refused_with: DENIED,
        },
        Attack {
            name: "read a file planted in the real home",
            command: format!("cat {}", home.secret_file().display()),
            refused_with: DENIED,
        },
        Attack {
            name: "kill the runner",
            command: format!("kill -TERM {runner}"),
            refused_with: NOT_PERMITTED,
        },
        Attack {
            name: "connect to a loopback port that is not the scenario's",
            command: format!("bash -c 'exec 3<>/dev/tcp/127.0.0.1/{foreign_port}'"),
            refused_with: CONNECT_DENIED,
        },
    ];
    // The scenario's own work: a file in its workspace, and a connect to its own model.
    let work = |model_port| {
        format!(
            "echo done > work.txt && cat work.txt && \
             bash -c 'exec 3<>/dev/tcp/127.0.0.1/{model_port}' && echo reached-own-model"
        )
    };
    let (agent, turn, refused) = attack_then_work(live, &attacks, work).await?;
    let own = bash_output(&turn, attacks.len())?;
    anyhow::ensure!(
        own.contains("done") && own.contains("reached-own-model"),
        "the scenario's own work failed: {}",
        redactor.redact(&own)
    );
    let work_file = std::fs::read_to_string(agent.workspace().join("work.txt"))?;
    anyhow::ensure!(work_file == "done\n", "work.txt holds {work_file:?}");

    // Nothing outside the root changed, and nothing reached what was refused.
    planted.untouched()?;
    anyhow::ensure!(
        !checkout_file.0.exists(),
        "the agent wrote into the checkout: {}",
        checkout_file.0.display()
    );
    anyhow::ensure!(
        matches!(listener.accept(), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock),
        "the foreign port got a connection"
    );
    let seen_by_model = serde_json::to_string(
        &live
            .model()
            .requests()
            .iter()
            .map(|r| r.raw.clone())
            .collect::<Vec<_>>(),
    )?;
    anyhow::ensure!(
        !seen_by_model.contains(&home.secret),
        "the planted secret reached the model"
    );

    assert_refused_evidence(
        live,
        &turn,
        refused,
        (
            "after",
            json!({
                "work.txt": work_file,
                "planted files untouched": true,
                "checkout untouched": true,
                "foreign port connected to": false,
            }),
        ),
    );
    Ok(())
}

/// The scenario widens its agent's sandbox: a read-only path can be read but not written, a
/// writable one written; the rest stays refused.
#[live_agent_test(timeout = "180s")]
async fn paths_added_by_the_options_are_allowed_and_no_more(live: &mut Live) -> anyhow::Result<()> {
    sandbox_wanted(live)?;
    let readable = Planted::new(live, &std::env::temp_dir(), "readable", "[readable]")?;
    let writable = Planted::new(live, &std::env::temp_dir(), "writable", "[writable]")?;
    let redactor = live.redactor().clone();
    let commands = [
        format!("cat {}", readable.secret_file().display()),
        format!("echo pwned > {}/written.txt", readable.dir.display()),
        format!("echo allowed > {}/written.txt", writable.dir.display()),
    ];
    for command in &commands {
        live.model().reply(Reply::tool_call(
            "bash",
            json!({"command": command, "description": "widened"}),
        ));
    }
    live.model().reply(Reply::text("Done."));

    let options = AgentOptions::default()
        .permission(json!({"*": "allow"}))
        .read_only(&readable.dir)
        .writable(&writable.dir);
    let agent = live.opencode_with(options).await?;
    let session = agent.create_session().await?;
    let turn = session.prompt("Use the paths you were given.").await?;
    anyhow::ensure!(turn.error().is_none(), "turn failed: {:?}", turn.error());

    let read = bash_output(&turn, 0)?;
    anyhow::ensure!(
        read.contains(&readable.secret),
        "the read-only path could not be read: {}",
        redactor.redact(&read)
    );
    let refused = bash_output(&turn, 1)?;
    anyhow::ensure!(
        refused.contains(DENIED),
        "a read-only path was writable: {}",
        redactor.redact(&refused)
    );
    readable.untouched()?;
    let written = std::fs::read_to_string(writable.dir.join("written.txt"))?;
    anyhow::ensure!(
        written == "allowed\n",
        "the writable path holds {written:?}"
    );

    live.evidence().record_turn(&turn);
    live.evidence().record(
        "paths",
        json!({"read-only: read": true, "read-only: write refused": true, "writable: written": written}),
    );
    live.assert_evidence();
    Ok(())
}

/// The fixture agent runs confined too: the command its tool hook runs (a child of the agent,
/// as a tool's would be) is refused outside the root and works inside it.
#[live_agent_test(agent = "fixture", timeout = "60s")]
async fn the_fixture_agent_is_confined_too(live: &mut Live) -> anyhow::Result<()> {
    sandbox_wanted(live)?;
    let planted = PlantedPair::new(live, "fixture")?;
    let (home, temp) = (&planted.home, &planted.temp);
    let agent = live.opencode().await?;
    let script = format!(
        "echo pwned > {temp}/written.txt; cat {secret}; kill -TERM {runner}; \
         echo ok > {workspace}/fixture-work.txt",
        temp = temp.dir.display(),
        secret = home.secret_file().display(),
        runner = std::process::id(),
        workspace = agent.workspace().display(),
    );
    let home_dir = agent.root().join("home");
    std::fs::write(
        home_dir.join("tool-command.json"),
        json!({"argv": ["bash", "-c", script], "cwd": agent.workspace()}).to_string(),
    )?;
    let session = agent.create_session().await?;
    let _turn = session.prompt("run the tool").await?;

    let result: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(home_dir.join("tool-result.json"))?)?;
    let stderr = result["stderr"].as_str().unwrap_or_default();
    anyhow::ensure!(
        stderr.matches(DENIED).count() == 2 && stderr.contains(NOT_PERMITTED),
        "the fixture's tool command was not refused twice and its kill not refused: {}",
        live.redactor().redact(stderr)
    );
    anyhow::ensure!(
        !stderr.contains(&home.secret),
        "the planted secret was read"
    );
    let work = std::fs::read_to_string(agent.workspace().join("fixture-work.txt"))?;
    anyhow::ensure!(work == "ok\n", "fixture-work.txt holds {work:?}");
    planted.untouched()?;
    live.evidence().record(
        "fixture tool command",
        json!({
            "exit code": result["code"],
            "refused with": [DENIED, DENIED, NOT_PERMITTED],
            "workspace file": work,
        }),
    );
    live.assert_evidence();
    Ok(())
}

/// A shared server is confined to the pool's directory, and a leasing scenario's bash commands
/// further to its own root: they cannot write into the real home or a temp dir, read the planted
/// file or kill the runner, and its own workspace (inside the pool's directory) works.
#[live_agent_test(timeout = "180s", isolation = "shared")]
async fn a_shared_server_is_confined_to_the_pool(live: &mut Live) -> anyhow::Result<()> {
    sandbox_wanted(live)?;
    let planted = PlantedPair::new(live, "shared")?;
    let (home, temp) = (&planted.home, &planted.temp);
    let attacks = [
        Attack {
            name: "write into the real home",
            command: format!("echo pwned > {}/written.txt", home.dir.display()),
            refused_with: DENIED,
        },
        Attack {
            name: "write into a temp dir outside the pool",
            command: format!("echo pwned > {}/written.txt", temp.dir.display()),
            refused_with: DENIED,
        },
        Attack {
            name: "read a file planted in the real home",
            command: format!("cat {}", home.secret_file().display()),
            refused_with: DENIED,
        },
        Attack {
            name: "kill the runner",
            command: format!("kill -TERM {}", std::process::id()),
            refused_with: NOT_PERMITTED,
        },
    ];
    let (agent, turn, refused) =
        attack_then_work(live, &attacks, |_| "echo done > work.txt".into()).await?;
    bash_output(&turn, attacks.len())?;
    let work = std::fs::read_to_string(agent.workspace().join("work.txt"))?;
    anyhow::ensure!(work == "done\n", "work.txt holds {work:?}");
    planted.untouched()?;

    assert_refused_evidence(live, &turn, refused, ("work.txt", json!(work)));
    Ok(())
}

/// A directory shaped like a concurrent scenario's root beside this scenario's (on a shared
/// server: in the pool's directory, where every lessee's root is; on a server of its own: in the
/// temp dir, where the other scenarios' roots are), with its workspace and a file in it.
struct Neighbour {
    planted: Planted,
}

impl Neighbour {
    fn beside(live: &Live, agent: &Agent) -> anyhow::Result<Self> {
        let parent = agent
            .root()
            .parent()
            .ok_or_else(|| anyhow::anyhow!("the agent's root has no parent"))?;
        let planted = Planted::new(live, parent, "neighbour", "[neighbour]")?;
        Ok(Neighbour { planted })
    }

    fn file(&self, name: &str) -> PathBuf {
        self.planted.dir.join(name)
    }
}

/// Two scenarios on one shared server's pool must not reach into each other's workspace: this
/// one's bash commands cannot create, change or remove a file in a concurrent scenario's, while
/// its own workspace works. The same holds on a server of its own. OpenCode's `write` tool is
/// tried too: it writes from the server's own process, so on a shared server the kernel holds
/// it only to the pool's directory; the harness denies it OpenCode's `external_directory`
/// permission into the pool there (`docs/sandbox.md`).
#[live_agent_test(timeout = "180s")]
async fn a_scenario_cannot_write_into_a_concurrent_scenarios_workspace(
    live: &mut Live,
) -> anyhow::Result<()> {
    sandbox_wanted(live)?;
    let agent = live
        .opencode_with(AgentOptions::default().permission(json!({"*": "allow"})))
        .await?;
    let neighbour = Neighbour::beside(live, &agent)?;
    let secret = neighbour.planted.secret_file();
    let attacks = [
        Attack {
            name: "create a file in the neighbour's workspace",
            command: format!("echo pwned > {}", neighbour.file("written.txt").display()),
            refused_with: DENIED,
        },
        Attack {
            name: "change the neighbour's file",
            command: format!("echo pwned >> {}", secret.display()),
            refused_with: DENIED,
        },
        Attack {
            name: "remove the neighbour's file",
            // `unlink`, not `rm`: OpenCode asks `external_directory` for `rm`'s path arguments,
            // which the pool's guard denies on a shared server before the kernel is reached.
            command: format!("unlink {}", secret.display()),
            refused_with: DENIED,
        },
    ];
    for attack in &attacks {
        live.model().reply(Reply::tool_call(
            "bash",
            json!({"command": attack.command, "description": attack.name}),
        ));
    }
    let tool_file = neighbour.file("tool-written.txt");
    let _tool_file_guard = MustNotExist(tool_file.clone());
    live.model()
        .reply(Reply::tool_call(
            "write",
            json!({"filePath": tool_file, "content": "pwned"}),
        ))
        .reply(Reply::tool_call(
            "bash",
            json!({"command": "echo done > work.txt", "description": "the scenario's own work"}),
        ))
        .reply(Reply::text("Done."));
    let session = agent.create_session().await?;
    let turn = session
        .prompt("Write into the other scenario's workspace, then do your own work.")
        .await?;
    anyhow::ensure!(turn.error().is_none(), "turn failed: {:?}", turn.error());

    let refused = refusals(live, &turn, &attacks)?;
    let write = turn
        .tool_calls
        .iter()
        .find(|c| c.tool == "write")
        .ok_or_else(|| anyhow::anyhow!("no write call in {:?}", turn.tool_calls))?;
    anyhow::ensure!(
        write.status == ToolStatus::Error && !tool_file.exists(),
        "the write tool wrote into the neighbour's workspace ({:?}): {}",
        write.status,
        live.redactor()
            .redact(&write.output.clone().unwrap_or_default())
    );
    bash_output(&turn, attacks.len())?;
    let work = std::fs::read_to_string(agent.workspace().join("work.txt"))?;
    anyhow::ensure!(work == "done\n", "work.txt holds {work:?}");
    neighbour.planted.untouched()?;

    assert_refused_evidence(
        live,
        &turn,
        refused,
        (
            "after",
            json!({
                "work.txt": work,
                "neighbour untouched": true,
                "write tool into the neighbour": "error",
            }),
        ),
    );
    Ok(())
}
