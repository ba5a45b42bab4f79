//! Which reply answers a request: matchers, rules, the queue of replies, and the choice among them.

use std::collections::VecDeque;
use std::fmt;
use std::sync::Arc;

use super::recording::{Answer, ModelRequest};
use super::reply::{Body, Reply, STRUCTURED_OUTPUT_TOOL};

/// A predicate over a request, with a description for diagnostics.
#[derive(Clone)]
pub struct Matcher {
    description: String,
    test: Arc<dyn Fn(&ModelRequest) -> bool + Send + Sync>,
}

impl fmt::Debug for Matcher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.description)
    }
}

impl Matcher {
    /// A matcher from a closure; `description` names it in diagnostics.
    pub fn custom(
        description: impl Into<String>,
        test: impl Fn(&ModelRequest) -> bool + Send + Sync + 'static,
    ) -> Self {
        Self {
            description: description.into(),
            test: Arc::new(test),
        }
    }

    /// Every request.
    pub fn any() -> Self {
        Self::custom("any request", |_| true)
    }

    /// Requests that offer tool `name`.
    pub fn offers_tool(name: impl Into<String>) -> Self {
        let name = name.into();
        Self::custom(format!("offers tool {name:?}"), move |r| {
            r.offers_tool(&name)
        })
    }

    /// Requests for a `json_schema` format prompt (they offer `StructuredOutput`).
    pub fn wants_structured_output() -> Self {
        Self::custom("offers the StructuredOutput tool", |r| {
            r.offers_tool(STRUCTURED_OUTPUT_TOOL)
        })
    }

    /// Requests whose last user message contains `needle`.
    pub fn last_user_text_contains(needle: impl Into<String>) -> Self {
        let needle = needle.into();
        Self::custom(format!("last user text contains {needle:?}"), move |r| {
            r.last_user_text
                .as_deref()
                .is_some_and(|t| t.contains(&needle))
        })
    }

    /// Requests whose last message is a tool result (the follow-up after a tool ran).
    pub fn follows_tool_result() -> Self {
        Self::custom("follows a tool result", ModelRequest::follows_tool_result)
    }

    /// Requests matching both.
    pub fn and(self, other: Matcher) -> Self {
        let description = format!("{} and {}", self.description, other.description);
        Self::custom(description, move |r| (self.test)(r) && (other.test)(r))
    }

    /// Whether `request` matches.
    pub fn matches(&self, request: &ModelRequest) -> bool {
        (self.test)(request)
    }
}

/// `!matcher`: requests not matching it.
impl std::ops::Not for Matcher {
    type Output = Matcher;

    fn not(self) -> Matcher {
        let description = format!("not ({})", self.description);
        Matcher::custom(description, move |r| !(self.test)(r))
    }
}

/// Answers matching requests with a reply: every time, or `times(n)` times.
///
/// ```
/// use harness_runtime::model::{Matcher, Reply, Rule};
/// let rule = Rule::when(Matcher::offers_tool("bash")).reply(Reply::text("ok")).times(2);
/// ```
#[derive(Clone, Debug)]
pub struct Rule {
    matcher: Matcher,
    reply: Option<Reply>,
    remaining: Option<usize>,
}

impl Rule {
    /// A rule for requests matching `matcher`; give it a reply with [`Rule::reply`].
    pub fn when(matcher: Matcher) -> Self {
        Self {
            matcher,
            reply: None,
            remaining: None,
        }
    }

    /// The reply sent to every matching request.
    pub fn reply(mut self, reply: Reply) -> Self {
        self.reply = Some(reply);
        self
    }

    /// Answers only the next `n` matching requests (then the rule is spent).
    pub fn times(mut self, n: usize) -> Self {
        self.remaining = Some(n);
        self
    }
}

/// The mutable script and recording, behind the model's lock.
#[derive(Debug, Default)]
pub(crate) struct Script {
    queue: VecDeque<Reply>,
    rules: Vec<Rule>,
    pub(crate) requests: Vec<ModelRequest>,
}

impl Script {
    pub(crate) fn push(&mut self, reply: Reply) {
        self.queue.push_back(reply);
    }

    pub(crate) fn add_rule(&mut self, rule: Rule) {
        self.rules.push(rule);
    }

    pub(crate) fn pending(&self) -> usize {
        self.queue.len()
    }

    /// Chooses the reply for `request`, records the request with how it was answered, and
    /// returns the reply (`None` for a miss, or for a reply calling a tool the request does
    /// not offer). Order: title safety net, rules in the order they were added (specific
    /// routing wins), then the queue.
    pub(crate) fn decide(&mut self, mut request: ModelRequest) -> Option<Reply> {
        request.seq = self.requests.len();
        let mut chosen = self.choose(&request);
        if let Choice::Rule(_, reply) | Choice::Queue(reply) = &chosen
            && let Some(tool) = unoffered_tool(&request, reply)
        {
            chosen = Choice::UnofferedTool(tool, reply.clone());
        }
        request.answer = match &chosen {
            Choice::Title(_) => Answer::Title,
            Choice::Rule(index, reply) => Answer::Rule {
                index: *index,
                reply: reply.describe(),
            },
            Choice::Queue(reply) => Answer::Queue {
                reply: reply.describe(),
            },
            Choice::UnofferedTool(tool, reply) => Answer::UnofferedTool {
                reply: reply.describe(),
                tool: tool.clone(),
            },
            Choice::Miss => Answer::Miss,
        };
        self.requests.push(request);
        match chosen {
            Choice::Title(r) | Choice::Rule(_, r) | Choice::Queue(r) => Some(r),
            Choice::UnofferedTool(..) | Choice::Miss => None,
        }
    }

    /// Records `request` answered by something other than the script (a cassette, the relay),
    /// numbering it; returns it as recorded.
    pub(crate) fn record(&mut self, mut request: ModelRequest, answer: Answer) -> ModelRequest {
        request.seq = self.requests.len();
        request.answer = answer;
        self.requests.push(request.clone());
        request
    }

    fn choose(&mut self, request: &ModelRequest) -> Choice {
        if request.is_title_request() {
            return Choice::Title(Reply::text("Scripted session"));
        }
        for (index, rule) in self.rules.iter_mut().enumerate() {
            if rule.remaining == Some(0) || !rule.matcher.matches(request) {
                continue;
            }
            let Some(reply) = rule.reply.clone() else {
                continue;
            };
            if let Some(n) = rule.remaining.as_mut() {
                *n -= 1;
            }
            return Choice::Rule(index, reply);
        }
        match self.queue.pop_front() {
            Some(reply) => Choice::Queue(reply),
            None => Choice::Miss,
        }
    }
}

/// The first tool `reply` calls that `request` does not offer: OpenCode would refuse the call
/// (a script mistake, since a real model only calls what it is offered).
fn unoffered_tool(request: &ModelRequest, reply: &Reply) -> Option<String> {
    let Body::Answer { calls, .. } = &reply.body else {
        return None;
    };
    calls
        .iter()
        .find(|call| !request.offers_tool(&call.name))
        .map(|call| call.name.clone())
}

enum Choice {
    Title(Reply),
    Rule(usize, Reply),
    Queue(Reply),
    /// A rule's or the queue's reply, spent, that calls this tool the request does not offer.
    UnofferedTool(String, Reply),
    Miss,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::recording::Api;
    use serde_json::json;

    fn request(text: &str, tools: &[&str]) -> ModelRequest {
        let tools: Vec<_> = tools
            .iter()
            .map(|t| json!({"type": "function", "function": {"name": t}}))
            .collect();
        ModelRequest::parse(
            0,
            Api::OpenAi,
            json!({"model": "m", "tools": tools, "messages": [{"role": "user", "content": text}]}),
        )
    }

    #[test]
    fn rules_win_over_the_queue_and_spend_their_count() {
        let mut script = Script::default();
        script.push(Reply::text("queued"));
        script.add_rule(
            Rule::when(Matcher::last_user_text_contains("deploy"))
                .reply(Reply::text("rule"))
                .times(1),
        );
        assert!(matches!(
            script.decide(request("please deploy", &["bash"])).unwrap().body,
            crate::model::reply::Body::Answer { ref text, .. } if text == "rule"
        ));
        assert!(matches!(
            script.decide(request("please deploy", &["bash"])).unwrap().body,
            crate::model::reply::Body::Answer { ref text, .. } if text == "queued"
        ));
        assert!(script.decide(request("again", &["bash"])).is_none());
        let answers: Vec<_> = script.requests.iter().map(|r| r.answer.clone()).collect();
        assert!(matches!(answers[0], Answer::Rule { index: 0, .. }));
        assert!(matches!(answers[1], Answer::Queue { .. }));
        assert_eq!(answers[2], Answer::Miss);
    }

    #[test]
    fn a_reply_calling_a_tool_not_offered_is_spent_and_recorded_as_a_script_mistake() {
        let mut script = Script::default();
        script.add_rule(
            Rule::when(Matcher::last_user_text_contains("fetch"))
                .reply(Reply::tool_call("webfetch", serde_json::json!({})))
                .times(1),
        );
        script.push(Reply::tool_call("bash", serde_json::json!({})));
        assert!(script.decide(request("fetch it", &["bash"])).is_none());
        assert!(script.decide(request("fetch it", &[])).is_none());
        assert_eq!(script.pending(), 0, "both replies are spent");
        let answers: Vec<_> = script.requests.iter().map(|r| r.answer.clone()).collect();
        assert_eq!(
            answers,
            vec![
                Answer::UnofferedTool {
                    reply: "tool calls [webfetch]".into(),
                    tool: "webfetch".into()
                },
                Answer::UnofferedTool {
                    reply: "tool calls [bash]".into(),
                    tool: "bash".into()
                },
            ]
        );
    }

    #[test]
    fn matchers_combine() {
        let m = Matcher::offers_tool("bash").and(!Matcher::follows_tool_result());
        assert!(m.matches(&request("x", &["bash"])));
        assert!(!m.matches(&request("x", &["read"])));
        assert_eq!(
            format!("{m:?}"),
            "offers tool \"bash\" and not (follows a tool result)"
        );
    }
}
