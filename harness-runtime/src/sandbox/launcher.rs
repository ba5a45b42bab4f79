//! The sandbox launcher role: confine this process with the launch's policy, then become the
//! agent with `exec` (same pid, process group and owner mark: the runner's ownership holds).

use std::os::unix::process::CommandExt;
use std::process::ExitCode;

use super::{Launch, kernel};

/// What the launcher exits with when it could not confine (the agent never ran).
const NOT_CONFINED: u8 = 125;
/// What it exits with when the program could not be run.
const NOT_RUN: u8 = 127;

/// The launcher's `main`, reached through `HARNESS_RUNTIME_ROLE=sandbox`: reads its launch,
/// confines itself (a single-threaded process: nothing else runs unconfined), and `exec`s the
/// program. Returns only on failure, having said why on stderr (the agent's log).
pub(crate) fn run_launcher() -> ExitCode {
    let launch = match Launch::from_env() {
        Ok(launch) => launch,
        Err(e) => {
            eprintln!("live sandbox: {e}");
            return ExitCode::from(NOT_CONFINED);
        }
    };
    if let Err(e) = kernel::restrict(&launch.policy) {
        eprintln!("live sandbox: could not confine the agent: {e}");
        return ExitCode::from(NOT_CONFINED);
    }
    let error = launch.program_command().exec();
    eprintln!(
        "live sandbox: could not run {}: {error}",
        launch.program.display()
    );
    ExitCode::from(NOT_RUN)
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use std::net::TcpListener;
    use std::path::Path;
    use std::process::{Output, Stdio};

    use super::super::{Policy, kernel};
    use super::*;

    /// Runs `script` with bash through the launcher (this unit-test binary in the sandbox role),
    /// confined to the system's part, writes beneath `root` and TCP connect to `ports`.
    fn confined(root: &Path, ports: &[u16], script: &str) -> (Output, u32) {
        let mut policy = Policy::system();
        policy.allow_write(root);
        for port in ports {
            policy.allow_connect(*port);
        }
        let launch = Launch {
            program: "bash".into(),
            args: vec!["-c".into(), script.into()],
            role: None,
            policy,
        };
        let mut command = Launch::launcher_command().unwrap();
        command
            .current_dir(root)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        launch.hand_over(&mut command).unwrap();
        let child = command.spawn().unwrap();
        let pid = child.id();
        (child.wait_with_output().unwrap(), pid)
    }

    /// The kernel's Landlock ABI; `None` (the test does not run) where Landlock is missing, a
    /// failure under CI or LIVE_STRICT=1.
    fn landlock_abi() -> Option<u32> {
        let abi = kernel::abi();
        let missing = abi.err().map(|why| {
            format!(
                "this test needs Landlock: {why} (Linux 5.13 or newer, `landlock` among the \
                 active LSMs)"
            )
        });
        crate::settings::unit_test_runs(missing)
            .then(|| abi.ok())
            .flatten()
    }

    /// Each attack fails with the kernel's error inside the sandbox, while the same process
    /// writes in its root and reaches the port it was given; the program keeps the launcher's
    /// pid (it was `exec`ed, not spawned).
    #[test]
    fn the_launched_program_is_confined_and_keeps_the_pid() {
        let Some(abi) = landlock_abi() else { return };
        let root = tempfile::tempdir().unwrap();
        let root_path = root.path().canonicalize().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let secret = outside.path().join("secret.txt");
        std::fs::write(&secret, "s3cret").unwrap();
        let allowed = TcpListener::bind("127.0.0.1:0").unwrap();
        let other = TcpListener::bind("127.0.0.1:0").unwrap();
        other.set_nonblocking(true).unwrap();
        let allowed_port = allowed.local_addr().unwrap().port();
        let other_port = other.local_addr().unwrap().port();
        let script = format!(
            "echo \"pid $$\"; \
             echo in > inside.txt && echo wrote-inside; \
             echo x > {outside}/planted.txt || echo write-refused; \
             cat {secret} || echo read-refused; \
             kill -0 {runner} || echo kill-refused; \
             (exec 3<>/dev/tcp/127.0.0.1/{allowed_port}) && echo connect-allowed; \
             (exec 3<>/dev/tcp/127.0.0.1/{other_port}) || echo connect-refused",
            outside = outside.path().display(),
            secret = secret.display(),
            runner = std::process::id(),
        );
        let (output, pid) = confined(&root_path, &[allowed_port], &script);
        let stdout = String::from_utf8_lossy(&output.stdout);
        let stderr = String::from_utf8_lossy(&output.stderr);
        let all = format!("stdout:\n{stdout}\nstderr:\n{stderr}");
        assert!(output.status.success(), "{all}");
        assert!(stdout.contains(&format!("pid {pid}")), "{all}");
        assert!(stdout.contains("wrote-inside"), "{all}");
        assert_eq!(
            std::fs::read_to_string(root_path.join("inside.txt")).unwrap(),
            "in\n"
        );
        assert!(stdout.contains("write-refused"), "{all}");
        assert!(!outside.path().join("planted.txt").exists());
        assert!(
            stdout.contains("read-refused") && !stdout.contains("s3cret"),
            "{all}"
        );
        assert!(stderr.matches("Permission denied").count() >= 2, "{all}");
        if abi >= 4 {
            assert!(stdout.contains("connect-allowed"), "{all}");
            assert!(stdout.contains("connect-refused"), "{all}");
            assert!(other.accept().is_err(), "the refused port got a connection");
        }
        if abi >= 6 {
            assert!(stdout.contains("kill-refused"), "{all}");
            assert!(stderr.contains("Operation not permitted"), "{all}");
        }
    }

    /// A launch that cannot be read never runs anything unconfined.
    #[test]
    fn a_launcher_without_its_launch_runs_nothing() {
        let mut command = Launch::launcher_command().unwrap();
        let output = command
            .env(
                crate::settings::ROLE,
                crate::settings::Role::SandboxLauncher.value(),
            )
            .env_remove(crate::settings::SANDBOX_LAUNCH)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains("the sandbox launcher has no valid launch in LIVE_SANDBOX_LAUNCH"),
            "{stderr}"
        );
    }
}
