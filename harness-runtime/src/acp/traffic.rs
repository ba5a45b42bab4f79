//! What passes on an ACP agent's stdio, line by line: which method each message is, the gates
//! at `acp before|after <method>` and `acp update <kind>`, and how many of each passed.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use harness_opencode_api::spelling::AcpSpelled;
use serde_json::Value;

use super::client_side::ClientSide;
use crate::gates::Gates;

/// One message, as far as routing and gating read it.
struct Head {
    /// The JSON-RPC id, as text (`"7"`, `"\"uuid\""`), of a request or a response.
    id: Option<String>,
    /// The method of a request or notification; `None` for a response.
    method: Option<String>,
    /// A `session/update`'s kind.
    update: Option<String>,
}

impl Head {
    fn read(line: &str) -> Option<Head> {
        let value: Value = serde_json::from_str(line).ok()?;
        Some(Head {
            id: value.get("id").map(Value::to_string),
            method: value["method"].as_str().map(str::to_string),
            update: value["params"]["update"]["sessionUpdate"]
                .as_str()
                .map(str::to_string),
        })
    }
}

/// The traffic of one agent's connection.
pub(crate) struct Traffic {
    gates: Arc<Gates>,
    client_side: Arc<ClientSide>,
    /// Requests the harness sent, by id: the method their answer is for.
    sent: Mutex<HashMap<String, String>>,
    /// Requests the agent sent, by id: the method the harness's answer is for.
    received: Mutex<HashMap<String, String>>,
    counts: Mutex<BTreeMap<String, u64>>,
    /// Faults: methods whose messages are held this long before their `before` gates.
    delays: Mutex<Vec<(&'static str, Duration)>>,
    /// Turns true when the scenario drops the connection.
    dropped: tokio::sync::watch::Sender<bool>,
}

impl Traffic {
    pub(crate) fn new(gates: Arc<Gates>, client_side: Arc<ClientSide>) -> Self {
        Self {
            gates,
            client_side,
            sent: Mutex::default(),
            received: Mutex::default(),
            counts: Mutex::default(),
            delays: Mutex::default(),
            dropped: tokio::sync::watch::Sender::new(false),
        }
    }

    /// Holds every later message of `method` (either direction) `by` before it passes.
    pub(crate) fn delay(&self, method: &'static str, by: Duration) {
        lock(&self.delays).push((method, by));
    }

    /// Ends the connection: the agent's output is no longer read and its input closes.
    pub(crate) fn drop_connection(&self) {
        self.dropped.send_replace(true);
    }

    /// Turns true once the connection was dropped.
    pub(crate) fn dropped(&self) -> tokio::sync::watch::Receiver<bool> {
        self.dropped.subscribe()
    }

    /// How many messages of each kind passed: `→ session/prompt`, `← session/update tool_call`,
    /// `← answer session/prompt`.
    pub(crate) fn counts(&self) -> BTreeMap<String, u64> {
        lock(&self.counts).clone()
    }

    fn count(&self, what: String) {
        *lock(&self.counts).entry(what).or_default() += 1;
    }

    /// A line the agent sent, before the SDK handles it: counted, then passed through the gates
    /// before its method (and its update's kind), or after the answered request's method.
    pub(crate) async fn received_from_agent(&self, line: &str) {
        self.client_side.read_line(line);
        let Some(head) = Head::read(line) else { return };
        match (&head.method, &head.id) {
            (Some(method), id) => {
                if let Some(id) = id {
                    lock(&self.received).insert(id.clone(), method.clone());
                }
                match &head.update {
                    Some(kind) => self.count(format!("← {method} {kind}")),
                    None => self.count(format!("← {method}")),
                }
                self.pass(AcpSpelled::Before, method).await;
                if let Some(kind) = &head.update {
                    if let Some(kind) = known(&harness_opencode_api::acp::UPDATES, kind) {
                        self.gates.pass_acp(AcpSpelled::Update(kind)).await;
                    }
                }
            }
            (None, Some(id)) => {
                let Some(method) = lock(&self.sent).remove(id) else {
                    return;
                };
                self.count(format!("← answer {method}"));
                self.pass(AcpSpelled::After, &method).await;
            }
            (None, None) => {}
        }
    }

    /// A line the harness is about to send: counted, then passed through the gates before its
    /// method. Returns the method of the agent's request it answers, if it is an answer, for
    /// [`sent_to_agent`](Self::sent_to_agent).
    pub(crate) async fn sending_to_agent(&self, line: &str) -> Option<String> {
        let head = Head::read(line)?;
        match (&head.method, &head.id) {
            (Some(method), id) => {
                if let Some(id) = id {
                    lock(&self.sent).insert(id.clone(), method.clone());
                }
                self.count(format!("→ {method}"));
                self.pass(AcpSpelled::Before, method).await;
                None
            }
            (None, Some(id)) => {
                let method = lock(&self.received).remove(id)?;
                self.count(format!("→ answer {method}"));
                Some(method)
            }
            (None, None) => None,
        }
    }

    /// After the harness's answer to the agent's `method` request was written.
    pub(crate) async fn sent_to_agent(&self, answered: &str) {
        self.pass(AcpSpelled::After, answered).await;
    }

    async fn pass(&self, at: fn(&'static str) -> AcpSpelled, method: &str) {
        // Methods outside ACP v1 (an agent's own extensions) have no gate spelling.
        let Some(method) = known(&harness_opencode_api::acp::METHODS, method) else {
            return;
        };
        let point = at(method);
        if let AcpSpelled::Before(_) = point {
            let delay: Duration = lock(&self.delays)
                .iter()
                .filter(|(delayed, _)| *delayed == method)
                .map(|(_, by)| *by)
                .sum();
            if !delay.is_zero() {
                crate::timeline::note(crate::timeline::Lane::Wire, "acp delay", || {
                    format!("{method} held {delay:?}")
                });
                tokio::time::sleep(delay).await;
            }
        }
        self.gates.pass_acp(point).await;
    }
}

/// `name` as one of ACP v1's methods, for a fault; the error names the nearest.
pub(crate) fn method(name: &str) -> Result<&'static str, super::AcpError> {
    match crate::gates::AcpPoint::parse(&format!("acp before {name}")) {
        Ok(crate::gates::AcpPoint(AcpSpelled::Before(method))) => Ok(method),
        Ok(_) => Err(super::AcpError::Fault(format!(
            "`{name}` is not an ACP method"
        ))),
        Err(e) => Err(super::AcpError::Fault(e.to_string())),
    }
}

fn known(list: &[&'static str], name: &str) -> Option<&'static str> {
    list.iter().find(|known| **known == name).copied()
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::gates::AcpPoint;

    fn traffic() -> (Arc<Gates>, Traffic) {
        let gates = Arc::new(Gates::default());
        let side = Arc::new(ClientSide::new(std::path::Path::new("/")));
        (gates.clone(), Traffic::new(gates, side))
    }

    #[tokio::test]
    async fn a_request_is_paused_before_it_is_sent_and_its_answer_before_the_caller_sees_it() {
        let (gates, traffic) = traffic();
        let before = gates.arm(AcpPoint::parse("acp before session/prompt").unwrap());
        let after = gates.arm(AcpPoint::parse("acp after session/prompt").unwrap());
        let request = r#"{"jsonrpc":"2.0","id":"a","method":"session/prompt","params":{}}"#;
        let answer = r#"{"jsonrpc":"2.0","id":"a","result":{"stopReason":"end_turn"}}"#;
        let sending = traffic.sending_to_agent(request);
        tokio::pin!(sending);
        let within = Duration::from_secs(5);
        tokio::select! {
            _ = &mut sending => panic!("passed an armed gate"),
            entered = before.wait_until_entered_within(within) => entered.unwrap(),
        }
        before.release();
        assert_eq!(sending.await, None);
        let answering = traffic.received_from_agent(answer);
        tokio::pin!(answering);
        tokio::select! {
            () = &mut answering => panic!("passed an armed gate"),
            entered = after.wait_until_entered_within(within) => entered.unwrap(),
        }
        after.release();
        answering.await;
        let counts = traffic.counts();
        assert_eq!(counts["→ session/prompt"], 1);
        assert_eq!(counts["← answer session/prompt"], 1);
    }

    #[tokio::test]
    async fn the_nth_update_of_a_kind_is_paused_and_the_agents_requests_are_answered_through() {
        let (gates, traffic) = traffic();
        let second = gates.arm_nth(
            AcpPoint::parse("acp update tool_call").unwrap(),
            std::num::NonZeroU32::new(2).unwrap(),
        );
        let update = r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call"}}}"#;
        traffic.received_from_agent(update).await;
        assert!(!second.is_entered());
        let paused = traffic.received_from_agent(update);
        tokio::pin!(paused);
        tokio::select! {
            () = &mut paused => panic!("passed the second tool_call"),
            entered = second.wait_until_entered_within(Duration::from_secs(5)) => entered.unwrap(),
        }
        second.release();
        paused.await;
        // The agent's request and the harness's answer to it.
        let asked = r#"{"jsonrpc":"2.0","id":0,"method":"session/request_permission","params":{}}"#;
        traffic.received_from_agent(asked).await;
        let answer = r#"{"jsonrpc":"2.0","id":0,"result":{}}"#;
        assert_eq!(
            traffic.sending_to_agent(answer).await.as_deref(),
            Some("session/request_permission")
        );
        assert_eq!(traffic.counts()["← session/update tool_call"], 2);
        assert_eq!(traffic.client_side.updates_read(), 2);
    }
}
