//! The products of one scenario: started through it, stopped and judged when it ends.

use std::sync::{Arc, Mutex};

use super::running::Target;
use super::{Product, ProductCommand, ProductError};
use crate::opencode::Agent;
use crate::redact::Redactor;

/// The products a scenario started.
#[derive(Debug, Default)]
pub(crate) struct ProductSlot {
    products: Mutex<Vec<Product>>,
}

impl ProductSlot {
    fn products(&self) -> std::sync::MutexGuard<'_, Vec<Product>> {
        self.products.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Starts `command` for `agent`, confined by the sandbox when the scenario's agents are,
    /// and keeps it for the scenario's end.
    pub(crate) fn start(
        &self,
        agent: &Agent,
        command: ProductCommand,
        redactor: &Arc<Redactor>,
    ) -> Result<Product, ProductError> {
        self.start_on(Target::of(agent), command, redactor)
    }

    /// Starts `command`, a product that is an ACP client, with the agent command reaching
    /// `relay`, and keeps it for the scenario's end.
    pub(crate) fn start_acp(
        &self,
        relay: &crate::acp::AcpRelay,
        command: ProductCommand,
        redactor: &Arc<Redactor>,
    ) -> Result<Product, ProductError> {
        self.start_on(Target::of_acp(relay), command, redactor)
    }

    fn start_on(
        &self,
        target: Target,
        command: ProductCommand,
        redactor: &Arc<Redactor>,
    ) -> Result<Product, ProductError> {
        // Under CI or LIVE_STRICT=1 a missing sandbox fails here, as it fails provisioning.
        let sandbox = crate::sandbox::current()
            .map_err(|failure| ProductError::Sandbox(redactor.redact(&failure)))?;
        let mut products = self.products();
        let product = Product::start(
            products.len() + 1,
            command,
            &target,
            sandbox.is_on(),
            redactor.clone(),
        )?;
        products.push(product.clone());
        Ok(product)
    }

    /// Stops every product, all at once, and judges each by how it was at this moment: the
    /// failures (one paragraph each), or `Ok` when every one ended as its scenario expected.
    pub(crate) async fn finish(&self) -> Result<(), String> {
        let products = std::mem::take(&mut *self.products());
        let verdicts = futures::future::join_all(products.iter().map(Product::finish)).await;
        let failures: Vec<String> = verdicts.into_iter().flatten().collect();
        if failures.is_empty() {
            Ok(())
        } else {
            Err(failures.join("\n\n"))
        }
    }
}

impl Drop for ProductSlot {
    /// The fallback when `finish` did not run (a panic in the runtime, a killed runtime): kill
    /// synchronously.
    fn drop(&mut self) {
        for product in self.products().drain(..) {
            product.kill_blocking();
        }
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use std::path::Path;
    use std::time::Duration;

    use super::*;
    use crate::product::ProductExit;

    /// A scenario root with a workspace, as an agent's, removed on drop.
    struct Root {
        dir: tempfile::TempDir,
        target: Target,
    }

    impl Root {
        fn new() -> Self {
            let dir = tempfile::tempdir().unwrap();
            let root = dir.path().canonicalize().unwrap();
            std::fs::create_dir(root.join("workspace")).unwrap();
            let target = Target {
                env: vec![(crate::product::AGENT_URL_ENV, "http://127.0.0.1:9".into())],
                port: 9,
                read_only: Vec::new(),
                workspace: root.join("workspace"),
                root,
            };
            Root { dir, target }
        }

        fn path(&self) -> &Path {
            self.dir.path()
        }
    }

    fn redactor(root: &Root) -> Arc<Redactor> {
        let redactor = Arc::new(Redactor::for_scenario());
        redactor.add_path(&root.target.workspace, "[workspace]");
        redactor.add_path(&root.target.root, "[root]");
        redactor
    }

    fn sh(script: &str) -> ProductCommand {
        ProductCommand::new("sh").args(["-c", script])
    }

    fn start(slot: &ProductSlot, root: &Root, command: ProductCommand) -> Product {
        start_confined(slot, root, command, false)
    }

    fn start_confined(
        slot: &ProductSlot,
        root: &Root,
        command: ProductCommand,
        confined: bool,
    ) -> Product {
        let mut products = slot.products();
        let product = Product::start(
            products.len() + 1,
            command,
            &root.target,
            confined,
            redactor(root),
        )
        .unwrap();
        products.push(product.clone());
        product
    }

    const CEILING: Duration = Duration::from_secs(20);

    /// The product runs in its agent's workspace with the agent's URL and directory, its own
    /// HOME and TMPDIR in the root, and nothing of the harness's own variables; its output is
    /// captured by stream, redacted, and in log files.
    #[tokio::test]
    async fn a_product_gets_its_agent_and_its_output_is_captured_redacted() {
        let root = Root::new();
        let slot = ProductSlot::default();
        let script = "echo \"cwd $PWD\"; echo \"url $LIVE_AGENT_URL dir $LIVE_AGENT_DIRECTORY\"; \
                      echo \"home $HOME tmp $TMPDIR\"; echo \"key $APP_API_KEY\" >&2; \
                      echo \"owner ${LIVE_HARNESS_OWNER:+set} role ${HARNESS_RUNTIME_ROLE:-none}\"";
        let product = start(
            &slot,
            &root,
            sh(script).env("APP_API_KEY", "hunter2-app-key"),
        );
        let exit = product.wait_within(CEILING).await.unwrap();
        assert!(exit.success() && !exit.stopped(), "{exit}");
        assert_eq!(
            product.stdout(),
            "cwd [workspace]\nurl http://127.0.0.1:[port] dir [workspace]\n\
             home [root]/product-1/home tmp [root]/product-1/tmp\nowner set role none"
        );
        assert_eq!(product.stderr(), "key [secret]");
        assert!(product.output().lines().any(|l| l == "key [secret]"));
        // The two pipes are read apart: their lines interleave in arrival order.
        let output = product.output();
        assert_eq!(output.lines().count(), 5, "{output}");
        assert_eq!(product.tail(5), output);
        assert_eq!(product.tail(1), output.lines().last().unwrap());
        let log = std::fs::read_to_string(root.path().join("product-1/stderr.log")).unwrap();
        assert_eq!(
            log, "key hunter2-app-key\n",
            "the log file is the raw output"
        );
        assert!(!product.is_running() && product.pid().is_none());
        assert_eq!(slot.finish().await, Ok(()));
    }

    /// Non-zero, or still running at the end: a failure naming it with its output's tail,
    /// unless expected; either way it is stopped, and a detached descendant is swept.
    #[tokio::test]
    async fn the_end_judges_each_product_by_what_the_scenario_expected() {
        let root = Root::new();
        let slot = ProductSlot::default();
        let failed = start(&slot, &root, sh("echo 'boom in' $PWD >&2; exit 3"));
        let running = start(
            &slot,
            &root,
            sh("setsid -f sleep 600 </dev/null >/dev/null 2>&1; echo up; exec sleep 600"),
        );
        let expected_failure = start(&slot, &root, sh("exit 4"));
        expected_failure.expect_failure();
        let expected_running = start(&slot, &root, sh("echo up; exec sleep 600"));
        expected_running.expect_running();
        let unexpected_success = start(&slot, &root, sh("true"));
        unexpected_success.expect_failure();
        let stopped = start(&slot, &root, sh("echo up; exec sleep 600"));

        assert_eq!(failed.wait_within(CEILING).await.unwrap().code(), Some(3));
        for product in [&running, &expected_running, &stopped] {
            product.wait_for_output("up", CEILING).await.unwrap();
        }
        expected_failure.wait_within(CEILING).await.unwrap();
        unexpected_success.wait_within(CEILING).await.unwrap();
        let exit = stopped.stop().await.unwrap();
        assert!(exit.stopped() && exit.signal() == Some(15), "{exit}");
        assert_eq!(stopped.wait_within(CEILING).await.unwrap(), exit);

        let token = running.inner_token_for_test();
        let message = slot.finish().await.unwrap_err();
        let paragraphs: Vec<&str> = message.split("\n\n").collect();
        assert_eq!(paragraphs.len(), 3, "{message}");
        assert!(
            paragraphs[0].starts_with(
                "product 1 (sh) exited with exit status: 3; call product.expect_failure() if"
            ),
            "{message}"
        );
        assert!(
            paragraphs[0].ends_with("its output ended:\nboom in [workspace]"),
            "{message}"
        );
        assert!(
            paragraphs[1].starts_with("product 2 (sh) was still running at the scenario's end"),
            "{message}"
        );
        assert!(paragraphs[1].contains("\ncommand: sh -c "), "{message}");
        assert!(
            paragraphs[2].starts_with(
                "product 5 (sh) was expected to fail (expect_failure), but it exited with exit \
                 status: 0"
            ),
            "{message}"
        );
        assert!(!running.is_running() && !expected_running.is_running());
        assert!(
            crate::process::carriers(&[token]).is_empty(),
            "the detached sleep was swept"
        );
        assert_eq!(slot.finish().await, Ok(()), "nothing left to judge");
    }

    /// A product expected to run that exited anyway fails the scenario.
    #[tokio::test]
    async fn a_product_expected_to_run_that_exited_fails_the_end() {
        let root = Root::new();
        let slot = ProductSlot::default();
        let product = start(&slot, &root, sh("exit 0"));
        product.expect_running();
        product.wait_within(CEILING).await.unwrap();
        let message = slot.finish().await.unwrap_err();
        assert!(
            message.starts_with(
                "product 1 (sh) was expected to run until the scenario's end (expect_running), \
                 but it exited before: exit status: 0"
            ),
            "{message}"
        );
    }

    /// Waiting with a ceiling: a running product is left running with its tail in the error;
    /// a line that never comes ends at the ceiling, or at once when the product exited.
    #[tokio::test]
    async fn waits_end_at_their_ceiling_or_at_the_exit_saying_so() {
        let root = Root::new();
        let slot = ProductSlot::default();
        let sleeper = start(&slot, &root, sh("echo waiting; exec sleep 600"));
        sleeper
            .wait_for_output("wait", CEILING)
            .await
            .expect("an earlier line counts");
        let err = sleeper
            .wait_within(Duration::from_millis(100))
            .await
            .unwrap_err();
        assert!(matches!(err, ProductError::StillRunning { .. }), "{err}");
        assert!(
            err.to_string().ends_with("its output ended:\nwaiting"),
            "{err}"
        );
        assert!(sleeper.is_running());
        let err = sleeper
            .wait_for_output("never", Duration::from_millis(100))
            .await
            .unwrap_err();
        assert!(
            err.to_string()
                .starts_with("product 1 (sh) printed no line containing \"never\" within 100ms;"),
            "{err}"
        );

        let quitter = start(&slot, &root, sh("echo bye; exit 2"));
        let started = std::time::Instant::now();
        let err = quitter
            .wait_for_output("never", Duration::from_secs(60))
            .await
            .unwrap_err();
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "waited for the ceiling"
        );
        assert!(
            err.to_string().contains(
                "printed no line containing \"never\" before it exited (exit status: 2); its \
                 output ended:\nbye"
            ),
            "{err}"
        );
        sleeper.expect_running();
        quitter.expect_failure();
        assert_eq!(slot.finish().await, Ok(()));
    }

    /// The report's `product` lane holds its start, every line it printed, its exit and the
    /// sweep after it, in the order they happened, complete once the end returned.
    #[test]
    fn the_report_shows_the_products_life_and_output_on_its_lane() {
        use crate::timeline::{Collector, Lane, install_on_this_thread};
        let collector = Collector::new();
        let on_workers = collector.clone();
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .on_thread_start(move || install_on_this_thread(Some(on_workers.clone())))
            .build()
            .unwrap();
        install_on_this_thread(Some(collector.clone()));
        let root = Root::new();
        let slot = ProductSlot::default();
        runtime.block_on(async {
            let product = start(&slot, &root, sh("echo hello; echo 'in' $PWD; exit 0"));
            product.wait_within(CEILING).await.unwrap();
            slot.finish().await.unwrap();
        });
        install_on_this_thread(None);
        let entries: Vec<(String, String)> = collector
            .take()
            .entries
            .into_iter()
            .filter(|e| e.lane == Lane::Product)
            .map(|e| (e.kind, e.text))
            .collect();
        // The exit is seen by another thread than the lines: it may come before the last.
        let (exited, mut entries): (Vec<_>, Vec<_>) =
            entries.into_iter().partition(|(kind, _)| kind == "exited");
        assert_eq!(exited, [("exited".into(), "exit status: 0".into())]);
        let kinds: Vec<&str> = entries.iter().map(|(kind, _)| kind.as_str()).collect();
        assert_eq!(
            kinds,
            ["started", "stdout", "stdout", "swept"],
            "{entries:?}"
        );
        assert!(
            entries[0].1.starts_with("sh -c \"echo hello;"),
            "{entries:?}"
        );
        assert_eq!(entries[1].1, "product 1 (sh): hello");
        // Raw on the timeline: the report redacts every text once, when it writes.
        let workspace = root.target.workspace.display();
        assert_eq!(entries[2].1, format!("product 1 (sh): in {workspace}"));
        let swept = entries.pop().unwrap().1;
        assert!(swept.starts_with("exit status: 0; swept 0"), "{swept}");
    }

    /// A program that cannot be started says which and why, confined or not.
    #[tokio::test]
    async fn a_missing_program_is_a_spawn_error_naming_it() {
        let root = Root::new();
        for confined in [false, true] {
            let err = Product::start(
                1,
                ProductCommand::new("/no/such/product").arg("--flag"),
                &root.target,
                confined,
                redactor(&root),
            )
            .unwrap_err();
            let text = err.to_string();
            assert!(
                text.starts_with("could not start product 1 (product) (/no/such/product --flag): "),
                "{text}"
            );
        }
    }

    /// Dropping the slot without `finish` kills what runs (the runtime-less fallback).
    #[test]
    fn dropping_the_slot_kills_its_products() {
        let root = Root::new();
        let runtime = tokio::runtime::Runtime::new().unwrap();
        let slot = ProductSlot::default();
        let product = runtime.block_on(async {
            let product = start(&slot, &root, sh("echo up; exec sleep 600"));
            product.wait_for_output("up", CEILING).await.unwrap();
            product
        });
        let token = product.inner_token_for_test();
        drop(slot);
        assert!(!product.is_running());
        assert!(crate::process::carriers(&[token]).is_empty());
    }

    /// Confined: the product writes in its root, reads its script, and is refused outside.
    #[tokio::test]
    async fn a_confined_product_works_in_its_root_and_is_refused_outside() {
        let sandbox = crate::sandbox::current().unwrap_or_else(|failure| panic!("{failure}"));
        let missing = (!sandbox.is_on())
            .then(|| format!("this test needs the sandbox: {}", sandbox.line(None)));
        if !crate::settings::unit_test_runs(missing) {
            return;
        }
        let root = Root::new();
        let program = tempfile::tempdir().unwrap();
        let script = program.path().join("product.sh");
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret.txt"), "s3cret").unwrap();
        std::fs::write(
            &script,
            format!(
                "echo in > inside.txt && echo wrote-inside\n\
                 cat {secret} || echo read-refused\n\
                 echo x > {outside}/planted.txt || echo write-refused\n",
                secret = outside.path().join("secret.txt").display(),
                outside = outside.path().display(),
            ),
        )
        .unwrap();
        let slot = ProductSlot::default();
        let product = start_confined(&slot, &root, ProductCommand::new("sh").arg(&script), true);
        let exit = product.wait_within(CEILING).await.unwrap();
        let output = product.output();
        assert!(exit.success(), "{exit}: {output}");
        for expected in ["wrote-inside", "read-refused", "write-refused"] {
            assert!(output.contains(expected), "{expected}: {output}");
        }
        assert!(!output.contains("s3cret"), "{output}");
        assert!(root.target.workspace.join("inside.txt").is_file());
        assert!(!outside.path().join("planted.txt").exists());
        assert_eq!(slot.finish().await, Ok(()));
    }

    /// `ProductExit` reads like the exit status it holds.
    #[test]
    fn an_exit_displays_its_status_and_whether_it_was_stopped() {
        use std::os::unix::process::ExitStatusExt;
        let exit = ProductExit::for_test(std::process::ExitStatus::from_raw(3 << 8), false);
        assert_eq!(exit.to_string(), "exit status: 3");
        assert_eq!(
            (exit.code(), exit.signal(), exit.success()),
            (Some(3), None, false)
        );
        let stopped = ProductExit::for_test(std::process::ExitStatus::from_raw(15), true);
        assert_eq!(stopped.to_string(), "signal: 15 (SIGTERM) (stopped)");
    }
}
