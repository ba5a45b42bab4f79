//! Which steps are decision points: by default every request, response and product point pass,
//! the events about sessions and the scripted model's answers; a scenario's `explore_points` narrow it (the runner turns
//! their gate spellings into a [`Focus::only`]).

/// The event families about sessions: their events are decision points by default. Events about
/// the server itself (`server.*`, `plugin.added`, `catalog.updated`, …: a workspace's first
/// request loads its plugins, some fifty events) are delivered in order but only count as
/// activity, unless `explore_points` names them.
const SESSION_EVENTS: [&str; 5] = ["session.", "message.", "permission.", "question.", "todo."];

/// A step at a decision point, as the focus sees it.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Point<'a> {
    /// A product's request of `method path`.
    Request { method: &'a str, path: &'a str },
    /// The agent's response to it.
    Response { method: &'a str, path: &'a str },
    /// An event of this type on a product's stream.
    Event(&'a str),
    /// A pass of the product point of this name.
    Product(&'a str),
    /// The scripted model's answer to an agent's request.
    Model,
}

type Holds = Box<dyn Fn(&Point<'_>) -> bool + Send + Sync>;

/// Which steps the scheduler holds.
pub(crate) struct Focus {
    only: Option<Holds>,
}

impl std::fmt::Debug for Focus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.only.is_some() {
            "Focus::only(..)"
        } else {
            "Focus::all()"
        })
    }
}

impl Focus {
    /// Every request, response and product point pass, the events about sessions, and the
    /// scripted model's answers.
    pub(crate) fn all() -> Focus {
        Focus { only: None }
    }

    /// The steps `holds` accepts.
    pub(crate) fn only(holds: impl Fn(&Point<'_>) -> bool + Send + Sync + 'static) -> Focus {
        Focus {
            only: Some(Box::new(holds)),
        }
    }

    /// Whether a step at `point` is a decision point.
    pub(crate) fn holds(&self, point: &Point<'_>) -> bool {
        match (&self.only, point) {
            (Some(holds), _) => holds(point),
            (None, Point::Event(event_type)) => SESSION_EVENTS
                .iter()
                .any(|family| event_type.starts_with(family)),
            (None, _) => true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn by_default_only_events_about_sessions_are_held() {
        let all = Focus::all();
        assert!(all.holds(&Point::Event("permission.asked")));
        assert!(all.holds(&Point::Event("message.part.updated")));
        assert!(!all.holds(&Point::Event("plugin.added")));
        assert!(!all.holds(&Point::Event("server.connected")));
        assert!(all.holds(&Point::Product("before_reply")));
        let only = Focus::only(|point| matches!(point, Point::Event("plugin.added")));
        assert!(only.holds(&Point::Event("plugin.added")));
        assert!(!only.holds(&Point::Product("before_reply")));
        assert!(all.holds(&Point::Model));
        assert!(!only.holds(&Point::Model));
    }
}
