//! Gate point spellings: which of the five forms a name is, and whether a route pattern, event
//! type or product name can match anything. harness-runtime turns a problem into a `GateError`,
//! harness-macros into a compile error on the string; both word it with [`message`].

use crate::tables::{EVENT_TYPES, ROUTES, VERSION};

/// The client gate points' names (`gate = "abort"`), in the order of the runtime's
/// `GatePoint::ALL`, whose `GatePoint::name` reads them from here: one list for the attribute's
/// compile-time check and the runtime's points.
pub const CLIENT_POINTS: [&str; 8] = [
    "before_prompt",
    "prompt_delivered",
    "turn_collected",
    "abort",
    "get_session",
    "permission_reply",
    "question_reply",
    "stop",
];

/// The decision point of an exploration (`explore_points`) that is the scripted model's answers
/// to the agent: the agent's progress as a step of the schedule. Not a gate point.
pub const MODEL_POINT: &str = "model";

/// The wire, product and ACP forms, for error messages.
pub const FORMS: &str = "`request <METHOD> <route>`, `response <METHOD> <route>`, `event <type>`, \
     `product <name>`, `acp before|after <method>`, `acp update <kind>`";

/// What a gate name spells, checked.
#[derive(Debug)]
pub enum Spelled<'a> {
    /// No wire or product prefix: a client point's name, for the caller to look up.
    Client(&'a str),
    /// `request <METHOD> <route>`.
    Request(Route),
    /// `response <METHOD> <route>`.
    Response(Route),
    /// `event <type>`.
    Event(&'static str),
    /// `product <name>`.
    Product(&'a str),
    /// `acp before <method>`, `acp after <method>`, `acp update <kind>`.
    Acp(AcpSpelled),
}

/// A point on an ACP agent's traffic.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AcpSpelled {
    /// Before a message of the method is sent, or, coming from the agent, handled.
    Before(&'static str),
    /// After the answer to a request of the method arrived, before its caller sees it; or, the
    /// agent's request, after the harness answered it.
    After(&'static str),
    /// Before a `session/update` of the kind is handled.
    Update(&'static str),
}

/// A route pattern that fits at least one OpenCode route; only [`parse_route`] makes one.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Route {
    /// The method, as OpenCode's routes spell it.
    pub method: &'static str,
    /// The path as written.
    pub path: String,
    /// The path's segments, parsed.
    pub segments: Vec<Segment>,
    /// Indexes into `ROUTES` of every route the pattern fits.
    pub fits: Vec<usize>,
}

/// One path segment of a pattern or of an OpenCode route.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Segment {
    /// Text that must be the segment.
    Literal(String),
    /// `{name}`: one non-empty segment.
    Placeholder(String),
    /// A final `*`: one or more segments.
    Rest,
}

/// Why a spelling cannot match.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Problem {
    /// Not in the grammar; the reason says where.
    Malformed(String),
    /// A `{name}` that is neither `{id}` nor one of OpenCode's placeholders.
    UnknownPlaceholder(String),
    /// Well formed, but fits no route; the nearest route, spelled `METHOD /path`.
    NoSuchRoute(String),
    /// Not an event type; the nearest one.
    UnknownEventType(&'static str),
    /// A product point name outside `[a-z0-9_.-]+`.
    BadProductName,
    /// Not an ACP method; the nearest one.
    UnknownAcpMethod(&'static str),
    /// Not a `session/update` kind; the nearest one.
    UnknownAcpUpdate(&'static str),
}

/// Splits and checks a gate name in any of the five forms.
pub fn parse(spelling: &str) -> Result<Spelled<'_>, Problem> {
    let (kind, rest) = match spelling.split_once(' ') {
        Some((kind, rest)) => (kind, Some(rest)),
        None => (spelling, None),
    };
    let example = match kind {
        "request" => "`request <METHOD> <route>`, such as `request POST /session/{id}/abort`",
        "response" => "`response <METHOD> <route>`, such as `response POST /session/{id}/abort`",
        "event" => "`event <type>`, such as `event permission.asked`",
        "product" => "`product <name>`, such as `product before_save`",
        "acp" => {
            "`acp before <method>`, `acp after <method>` or `acp update <kind>`, such as \
             `acp before session/prompt` or `acp update tool_call`"
        }
        _ => return Ok(Spelled::Client(spelling)),
    };
    let Some(rest) = rest.filter(|rest| !rest.is_empty()) else {
        return Err(Problem::Malformed(format!("expected {example}")));
    };
    match kind {
        "request" => parse_route(rest, example).map(Spelled::Request),
        "response" => parse_route(rest, example).map(Spelled::Response),
        "event" => parse_event(rest, example).map(Spelled::Event),
        "acp" => parse_acp(rest, example).map(Spelled::Acp),
        _ => {
            check_product_name(rest)?;
            Ok(Spelled::Product(rest))
        }
    }
}

/// Checks `<METHOD> <route>`; `example` is the expected form, for a malformed one.
pub fn parse_route(text: &str, example: &str) -> Result<Route, Problem> {
    let malformed = |reason: String| Err(Problem::Malformed(reason));
    let Some((method, path)) = text.split_once(' ') else {
        return malformed(format!("expected {example}"));
    };
    if method.is_empty() || path.is_empty() || path.contains(char::is_whitespace) {
        return malformed(format!("expected {example}"));
    }
    if !method.bytes().all(|b| b.is_ascii_alphabetic()) {
        return malformed(format!("`{method}` is not an HTTP method"));
    }
    if method.bytes().any(|b| b.is_ascii_lowercase()) {
        return malformed(format!(
            "the method `{method}` must be uppercase: `{}`",
            method.to_ascii_uppercase()
        ));
    }
    if !path.starts_with('/') {
        return malformed(format!("the route `{path}` does not start with `/`"));
    }
    if path.contains(['?', '#']) {
        return malformed(format!(
            "the route `{path}` has a query string: gate on the path alone, without `?`"
        ));
    }
    let mut segments = Vec::new();
    let parts: Vec<&str> = path[1..].split('/').collect();
    for (index, part) in parts.iter().enumerate() {
        if part.is_empty() {
            return malformed(format!(
                "the route `{path}` has an empty segment: no `//`, no trailing `/`"
            ));
        }
        segments.push(if *part == "*" && index + 1 == parts.len() {
            Segment::Rest
        } else if let Some(name) = part.strip_prefix('{').and_then(|p| p.strip_suffix('}')) {
            if name.is_empty() || name.contains(['{', '}']) {
                return malformed(format!(
                    "the segment `{part}` is not a placeholder: write `{{id}}` or OpenCode's name"
                ));
            }
            if name != "id" && !placeholders().contains(&name) {
                return Err(Problem::UnknownPlaceholder(name.to_owned()));
            }
            Segment::Placeholder(name.to_owned())
        } else if part.contains(['{', '}', '*']) {
            return malformed(format!(
                "the segment `{part}` mixes a placeholder with text: a placeholder is a whole \
                 segment, such as `{{id}}`"
            ));
        } else {
            Segment::Literal((*part).to_owned())
        });
    }
    let method = ROUTES
        .iter()
        .map(|(m, _)| *m)
        .find(|m| *m == method)
        .unwrap_or("");
    let fits: Vec<usize> = ROUTES
        .iter()
        .enumerate()
        .filter(|(_, (m, p))| *m == method && fits(&segments, &route_segments(p)))
        .map(|(index, _)| index)
        .collect();
    if fits.is_empty() {
        let written = format!("{} {path}", text.split(' ').next().unwrap_or_default());
        return Err(Problem::NoSuchRoute(nearest_route(&written)));
    }
    Ok(Route {
        method,
        path: path.to_owned(),
        segments,
        fits,
    })
}

/// Checks `before|after <method>` or `update <kind>` against ACP's; `example` is the expected
/// form, for a malformed one.
pub fn parse_acp(text: &str, example: &str) -> Result<AcpSpelled, Problem> {
    let Some((when, name)) = text.split_once(' ') else {
        return Err(Problem::Malformed(format!("expected {example}")));
    };
    if name.is_empty() || name.contains(char::is_whitespace) {
        return Err(Problem::Malformed(format!("expected {example}")));
    }
    let nearest = |known: &[&'static str]| {
        known
            .iter()
            .min_by_key(|k| distance(k, name))
            .copied()
            .unwrap_or_default()
    };
    let find = |known: &[&'static str]| known.iter().find(|k| **k == name).copied();
    match when {
        "before" | "after" => {
            let method = find(&crate::acp::METHODS)
                .ok_or_else(|| Problem::UnknownAcpMethod(nearest(&crate::acp::METHODS)))?;
            Ok(match when {
                "before" => AcpSpelled::Before(method),
                _ => AcpSpelled::After(method),
            })
        }
        "update" => find(&crate::acp::UPDATES)
            .map(AcpSpelled::Update)
            .ok_or_else(|| Problem::UnknownAcpUpdate(nearest(&crate::acp::UPDATES))),
        _ => Err(Problem::Malformed(format!(
            "`{when}` is not `before`, `after` or `update`: expected {example}"
        ))),
    }
}

/// Checks an event type; `example` is the expected form, for a malformed one.
pub fn parse_event(text: &str, example: &str) -> Result<&'static str, Problem> {
    if text.contains(char::is_whitespace) {
        return Err(Problem::Malformed(format!("expected {example}")));
    }
    match EVENT_TYPES.iter().find(|known| **known == text) {
        Some(known) => Ok(known),
        None => Err(Problem::UnknownEventType(
            EVENT_TYPES
                .iter()
                .min_by_key(|known| distance(known, text))
                .copied()
                .unwrap_or_default(),
        )),
    }
}

/// A product point name: `[a-z0-9_.-]+`.
pub fn check_product_name(name: &str) -> Result<(), Problem> {
    let valid = !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"_.-".contains(&b));
    if valid {
        Ok(())
    } else {
        Err(Problem::BadProductName)
    }
}

/// Whether `name` is a gate point the runtime accepts, with its error message if not: a client
/// point's name (one of [`CLIENT_POINTS`]) or a wire, product or ACP spelling that can match.
/// The attribute's compile-time check; the runtime's `Gates::from_names` agrees (its tests
/// check both on good and bad names alike).
pub fn check(name: &str) -> Result<(), String> {
    match parse(name) {
        Ok(Spelled::Client(client)) if !CLIENT_POINTS.contains(&client) => Err(format!(
            "unknown gate point `{name}`: expected one of {}, or a wire, product or ACP point: {FORMS}",
            CLIENT_POINTS.join(", "),
        )),
        Ok(_) => Ok(()),
        Err(problem) => Err(message(name, &problem)),
    }
}

/// The error message for `problem` in `spelling` (as written: a gate name, a route, a name): the
/// attribute's compile error, and the text of the runtime's `GateError` for it.
pub fn message(spelling: &str, problem: &Problem) -> String {
    match problem {
        Problem::Malformed(reason) => format!("`{spelling}` is malformed: {reason}"),
        Problem::UnknownPlaceholder(name) => format!(
            "`{spelling}` has an unknown placeholder `{{{name}}}`: use `{{id}}` or one of \
             OpenCode's own: {}",
            placeholder_list()
        ),
        Problem::NoSuchRoute(nearest) => format!(
            "`{spelling}` fits no route of OpenCode {VERSION} (the nearest is `{nearest}`): \
             write its method and path, a `{{...}}` segment standing for any of its placeholders"
        ),
        Problem::UnknownEventType(nearest) => format!(
            "`{spelling}` names no event type of OpenCode {VERSION} (the nearest is `{nearest}`)"
        ),
        Problem::UnknownAcpMethod(nearest) => {
            format!("`{spelling}` names no ACP method (the nearest is `{nearest}`)")
        }
        Problem::UnknownAcpUpdate(nearest) => {
            format!("`{spelling}` names no kind of `session/update` (the nearest is `{nearest}`)")
        }
        Problem::BadProductName => format!(
            "`{spelling}` is not a product point name: use lowercase letters, digits, `_`, `.` \
             and `-`"
        ),
    }
}

/// The segments of a path: after the leading `/`, split on `/`.
pub fn route_segments(path: &str) -> Vec<Segment> {
    let parts: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    let last = parts.len() - 1;
    parts
        .iter()
        .enumerate()
        .map(|(index, part)| {
            if *part == "*" && index == last {
                Segment::Rest
            } else if part.starts_with('{') && part.ends_with('}') {
                Segment::Placeholder(part[1..part.len() - 1].to_owned())
            } else {
                Segment::Literal((*part).to_owned())
            }
        })
        .collect()
}

/// Whether a pattern fits a route: the same segments, a placeholder standing for a placeholder.
pub fn fits(pattern: &[Segment], route: &[Segment]) -> bool {
    pattern.len() == route.len()
        && pattern.iter().zip(route).all(|(p, r)| match (p, r) {
            (Segment::Literal(a), Segment::Literal(b)) => a == b,
            (Segment::Placeholder(_), Segment::Placeholder(_)) | (Segment::Rest, Segment::Rest) => {
                true
            }
            _ => false,
        })
}

/// Every placeholder name OpenCode's routes use, sorted, without duplicates.
fn placeholders() -> Vec<&'static str> {
    let mut names: Vec<&'static str> = ROUTES
        .iter()
        .flat_map(|(_, path)| path.split('/'))
        .filter_map(|part| part.strip_prefix('{').and_then(|p| p.strip_suffix('}')))
        .collect();
    names.sort_unstable();
    names.dedup();
    names
}

/// Every placeholder name but `id` (which the message offers first), braced and backticked.
pub fn placeholder_list() -> String {
    placeholders()
        .iter()
        .filter(|name| **name != "id")
        .map(|name| format!("`{{{name}}}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The route closest to `written` (`METHOD /path`), placeholders compared as equal.
fn nearest_route(written: &str) -> String {
    let normal = normalize(written);
    ROUTES
        .iter()
        .map(|(method, path)| format!("{method} {path}"))
        .min_by_key(|route| distance(&normalize(route), &normal))
        .unwrap_or_default()
}

/// Every `{...}` as `{}`.
fn normalize(route: &str) -> String {
    let mut out = String::with_capacity(route.len());
    let mut inside = false;
    for c in route.chars() {
        match c {
            '{' => {
                inside = true;
                out.push('{');
            }
            '}' => {
                inside = false;
                out.push('}');
            }
            _ if inside => {}
            _ => out.push(c),
        }
    }
    out
}

/// Levenshtein distance, by characters.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (above + 1)
                .min(row[j] + 1)
                .min(diagonal + usize::from(ca != *cb));
            diagonal = above;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn acp_points_are_checked_against_the_protocol() {
        assert!(matches!(
            parse("acp before session/prompt"),
            Ok(Spelled::Acp(AcpSpelled::Before("session/prompt")))
        ));
        assert!(matches!(
            parse("acp after session/request_permission"),
            Ok(Spelled::Acp(AcpSpelled::After(
                "session/request_permission"
            )))
        ));
        assert!(matches!(
            parse("acp update tool_call"),
            Ok(Spelled::Acp(AcpSpelled::Update("tool_call")))
        ));
        assert_eq!(
            parse("acp before session/promt").unwrap_err(),
            Problem::UnknownAcpMethod("session/prompt")
        );
        assert_eq!(
            parse("acp update tool_cal").unwrap_err(),
            Problem::UnknownAcpUpdate("tool_call")
        );
        for malformed in [
            "acp",
            "acp before",
            "acp during session/prompt",
            "acp update a b",
        ] {
            assert!(
                matches!(parse(malformed), Err(Problem::Malformed(_))),
                "{malformed}"
            );
        }
    }
}
