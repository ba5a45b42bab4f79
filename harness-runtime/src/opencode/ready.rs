//! Readiness: the listening line, then `GET /global/health` 200 — what a hand-written start
//! loop waits for, so provisioning costs what the server's start costs.
//!
//! No API call is part of it: the first one boots OpenCode's per-directory instance (0.25 to
//! 0.6 s of CPU) and is where an invalid config is reported (`400 ConfigInvalidError`, a typed
//! API error at once), where a readiness poll would only see a non-200 until its ceiling.

use std::process::ExitStatus;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tokio::sync::watch;

use crate::process::OwnedChild;
use crate::timeline::{self, Lane};

/// Why a start did not become ready.
#[derive(Debug)]
pub(crate) enum NotReady {
    /// The process exited first.
    Exited(ExitStatus),
    /// The ceiling passed while this step was pending.
    Timeout(&'static str),
}

const LINE: &str = "the `listening on http://127.0.0.1:<port>` line on stdout";
const HEALTH: &str = "`GET /global/health` to answer 200";

/// How often health is asked again once the server said it listens: it answers 30 to 60 ms
/// after the line, and a route that cheap costs nothing to ask often.
const POLL: Duration = Duration::from_millis(20);
/// One readiness request's own ceiling: a hung request must not eat the whole budget.
const REQUEST: Duration = Duration::from_secs(5);

async fn answers_200(http: &reqwest::Client, url: &str) -> bool {
    matches!(
        http.get(url).timeout(REQUEST).send().await,
        Ok(response) if response.status() == reqwest::StatusCode::OK
    )
}

async fn poll_until_200(http: &reqwest::Client, url: &str) {
    let mut tick = tokio::time::interval(POLL);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        if answers_200(http, url).await {
            return;
        }
    }
}

/// The exit status once the process exited; `None` when the watch closed without one.
pub(crate) async fn exited(exit: &mut watch::Receiver<Option<ExitStatus>>) -> Option<ExitStatus> {
    exit.wait_for(Option::is_some).await.ok().and_then(|s| *s)
}

/// Waits until the server is ready and returns the port it really listens on.
pub(crate) async fn wait_ready(
    child: &OwnedChild,
    mut port: watch::Receiver<Option<u16>>,
    http: &reqwest::Client,
    ceiling: Duration,
) -> Result<u16, NotReady> {
    // Atomic, and no watch guard held across an await: the start future stays `Send`, so a
    // scenario may provision from a spawned task.
    let line_seen = AtomicBool::new(false);
    let pending = || {
        if line_seen.load(Ordering::SeqCst) {
            HEALTH
        } else {
            LINE
        }
    };
    let mut exit = child.exit_watch();
    let steps = async {
        let seen = port.wait_for(Option::is_some).await.map(|p| *p);
        let Ok(Some(port)) = seen else {
            // stdout closed without the line: the exit (or the ceiling) decides.
            return std::future::pending().await;
        };
        line_seen.store(true, Ordering::SeqCst);
        timeline::note(Lane::Provisioning, "listening line", || {
            format!("127.0.0.1:{port}")
        });
        poll_until_200(http, &format!("http://127.0.0.1:{port}/global/health")).await;
        timeline::note(Lane::Provisioning, "health 200", String::new);
        port
    };
    tokio::select! {
        port = steps => Ok(port),
        status = exited(&mut exit) => match status {
            Some(status) => Err(NotReady::Exited(status)),
            None => Err(NotReady::Timeout(pending())),
        },
        () = tokio::time::sleep(ceiling) => Err(NotReady::Timeout(pending())),
    }
}
