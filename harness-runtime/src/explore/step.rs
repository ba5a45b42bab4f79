//! What the scheduler holds: one step of a product's traffic with its agent, named for people
//! (its label) and for schedules (its thread, unique within a run).

use serde::Serialize;

use super::schedule::StepId;

/// Which kind of decision point a step is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum StepKind {
    /// A product's request, before the forwarder forwards it.
    Request,
    /// The agent's response, before the product gets it.
    Response,
    /// An event, before a product's event stream delivers it.
    Event,
    /// A pass of a named point in the product's own code.
    Product,
    /// The scripted model's answer to one of the agent's requests, before it goes: the agent's
    /// progress made a step.
    Model,
}

impl StepKind {
    /// The word the gate spellings start with.
    pub(crate) fn word(self) -> &'static str {
        match self {
            StepKind::Request => "request",
            StepKind::Response => "response",
            StepKind::Event => "event",
            StepKind::Product => "product",
            StepKind::Model => "model",
        }
    }
}

/// One held step.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct Step {
    pub(crate) kind: StepKind,
    /// For people: `request POST /session/{sessionID}/abort`, `event session.idle (stream 1)`,
    /// `product before_reply`.
    pub(crate) label: String,
    /// Unique within a run, the same in every run that does the same: `exchange POST
    /// /session/{sessionID}/abort #1` (a request and its response), `stream 1`, `product
    /// before_reply #2`. What a schedule's tag is made from, and what PCT gives a priority.
    pub(crate) thread: String,
    /// Its place in its thread, 1-based: a request 1, its response 2, a stream's events in
    /// the order they came.
    pub(crate) seq: u32,
}

impl Step {
    /// The `ordinal`th request of `method route` in the run (1-based).
    pub(crate) fn request(method: &str, route: &str, ordinal: u32) -> Step {
        Step {
            kind: StepKind::Request,
            label: format!("request {method} {route}"),
            thread: exchange(method, route, ordinal),
            seq: 1,
        }
    }

    /// The response to the `ordinal`th request of `method route`.
    pub(crate) fn response(method: &str, route: &str, ordinal: u32) -> Step {
        Step {
            kind: StepKind::Response,
            label: format!("response {method} {route}"),
            thread: exchange(method, route, ordinal),
            seq: 2,
        }
    }

    /// The `seq`th event, of `event_type`, on the `stream`th product event stream (1-based).
    pub(crate) fn event(stream: u32, seq: u32, event_type: &str) -> Step {
        Step {
            kind: StepKind::Event,
            label: format!("event {event_type} (stream {stream})"),
            thread: format!("stream {stream}"),
            seq,
        }
    }

    /// The `ordinal`th pass of the product point `name`.
    pub(crate) fn product(name: &str, ordinal: u32) -> Step {
        Step {
            kind: StepKind::Product,
            label: format!("product {name}"),
            thread: format!("product {name} #{ordinal}"),
            seq: 1,
        }
    }

    /// The scripted model's answer to the agent's `ordinal`th request (1-based; OpenCode's title
    /// requests are not counted: they pass at once).
    pub(crate) fn model(ordinal: u32) -> Step {
        Step {
            kind: StepKind::Model,
            label: format!("model answer {ordinal}"),
            thread: format!("model #{ordinal}"),
            seq: 1,
        }
    }

    /// How a schedule names it.
    pub(crate) fn id(&self) -> StepId {
        StepId {
            tag: super::schedule::tag(&self.thread),
            seq: self.seq,
        }
    }
}

fn exchange(method: &str, route: &str, ordinal: u32) -> String {
    format!("exchange {method} {route} #{ordinal}")
}
