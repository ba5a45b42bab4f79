//! Route patterns (`POST /session/{id}/abort`): checked against OpenCode's routes, matched
//! against the requests a product sends.

use std::fmt;
use std::hash::{Hash, Hasher};
use std::str::FromStr;
use std::sync::OnceLock;

use super::GateError;
use harness_opencode_api::spelling::{self, Route, Segment};
use harness_opencode_api::tables::ROUTES;

/// A method and a path pattern that fits a route of OpenCode's HTTP API, such as
/// `POST /session/{id}/abort`.
///
/// A path segment is literal or a placeholder: `{id}`, or one of OpenCode's own names
/// (`{sessionID}`, `{requestID}`, ...), each standing for any placeholder of OpenCode's path in
/// that position. The method is uppercase; there is no query string. A pattern must fit a route
/// of the OpenCode version the harness was built against (its OpenAPI), so a typo is an error
/// rather than a gate that never opens.
///
/// ```
/// use harness_runtime::gates::RoutePattern;
///
/// let abort = RoutePattern::parse("POST /session/{id}/abort").unwrap();
/// assert!(abort.matches("POST", "/session/ses_1/abort"));
/// assert!(abort.matches("POST", "/session/ses_1/abort?directory=/tmp/ws"));
/// assert!(!abort.matches("GET", "/session/ses_1/abort"));
/// assert_eq!(abort.to_string(), "POST /session/{id}/abort");
///
/// let typo = RoutePattern::parse("POST /session/{id}/abrt").unwrap_err();
/// assert!(typo.to_string().contains("the nearest is `POST /session/{sessionID}/abort`"));
/// ```
#[derive(Clone, Debug)]
pub struct RoutePattern {
    route: Route,
}

impl RoutePattern {
    /// Parses `<METHOD> <path>`. The error names the pattern and what is wrong: malformed
    /// (lowercase method, no leading `/`, a query string, an empty segment), an unknown
    /// placeholder, or no OpenCode route it fits (naming the nearest).
    pub fn parse(route: &str) -> Result<RoutePattern, GateError> {
        spelling::parse_route(
            route,
            "`<METHOD> <route>`, such as `POST /session/{id}/abort`",
        )
        .map(|route| RoutePattern { route })
        .map_err(|problem| GateError::from_problem(route, problem))
    }

    /// Wraps a route [`spelling::parse`] checked.
    pub(super) fn from_route(route: Route) -> RoutePattern {
        RoutePattern { route }
    }

    /// The method, uppercase (`POST`).
    pub fn method(&self) -> &str {
        self.route.method
    }

    /// The path pattern as written (`/session/{id}/abort`).
    pub fn path(&self) -> &str {
        &self.route.path
    }

    /// Whether a request with `method` to `path` (a query string is ignored) is one this
    /// pattern names: the same method and number of segments, literal segments equal, a
    /// placeholder matching one non-empty segment. A path OpenCode serves with a literal route
    /// is that route's: `GET /session/{id}` does not match `GET /session/status`.
    pub fn matches(&self, method: &str, path: &str) -> bool {
        let path = path.split(['?', '#']).next().unwrap_or_default();
        if method != self.route.method || !segments_match(&self.route.segments, path) {
            return false;
        }
        let literal = self
            .route
            .segments
            .iter()
            .all(|segment| matches!(segment, Segment::Literal(_)));
        literal || resolve(method, path).is_some_and(|index| self.route.fits.contains(&index))
    }
}

/// The OpenCode route template (`/session/{sessionID}/abort`) that serves `method` and `path`
/// (a query string is ignored), if OpenCode has one: where several fit, the one whose first
/// differing segment is literal, as OpenCode's router picks.
pub(crate) fn route_template(method: &str, path: &str) -> Option<&'static str> {
    let path = path.split(['?', '#']).next().unwrap_or_default();
    resolve(method, path).map(|index| ROUTES[index].1)
}

/// The index in `ROUTES` of the most specific route serving `method` and `path`.
fn resolve(method: &str, path: &str) -> Option<usize> {
    static PARSED: OnceLock<Vec<Vec<Segment>>> = OnceLock::new();
    let parsed = PARSED.get_or_init(|| {
        ROUTES
            .iter()
            .map(|(_, path)| spelling::route_segments(path))
            .collect()
    });
    ROUTES
        .iter()
        .zip(parsed)
        .enumerate()
        .filter(|(_, ((m, _), segments))| *m == method && segments_match(segments, path))
        // Literal before placeholder before rest, segment by segment.
        .min_by_key(|(_, (_, segments))| {
            segments
                .iter()
                .map(|segment| match segment {
                    Segment::Literal(_) => 0u8,
                    Segment::Placeholder(_) => 1,
                    Segment::Rest => 2,
                })
                .collect::<Vec<_>>()
        })
        .map(|(index, _)| index)
}

/// Whether a concrete path (with its leading `/`) has the pattern's segments.
fn segments_match(pattern: &[Segment], path: &str) -> bool {
    let Some(path) = path.strip_prefix('/') else {
        return false;
    };
    let mut parts = path.split('/');
    for (index, segment) in pattern.iter().enumerate() {
        match segment {
            Segment::Rest => {
                debug_assert_eq!(index + 1, pattern.len(), "a rest segment is the last");
                // One or more non-empty segments remain.
                let rest: Vec<&str> = parts.by_ref().collect();
                return !rest.is_empty() && rest.iter().all(|part| !part.is_empty());
            }
            Segment::Literal(literal) => {
                if parts.next() != Some(literal.as_str()) {
                    return false;
                }
            }
            Segment::Placeholder(_) => {
                if parts.next().is_none_or(str::is_empty) {
                    return false;
                }
            }
        }
    }
    parts.next().is_none()
}

impl PartialEq for RoutePattern {
    fn eq(&self, other: &Self) -> bool {
        self.route.method == other.route.method && self.route.path == other.route.path
    }
}

impl Eq for RoutePattern {}

impl Hash for RoutePattern {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.route.method.hash(state);
        self.route.path.hash(state);
    }
}

impl fmt::Display for RoutePattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.route.method, self.route.path)
    }
}

impl FromStr for RoutePattern {
    type Err = GateError;

    fn from_str(route: &str) -> Result<Self, Self::Err> {
        RoutePattern::parse(route)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_literal_route_wins_over_a_placeholder() {
        assert_eq!(
            route_template("GET", "/session/status"),
            Some("/session/status")
        );
        assert_eq!(
            route_template("GET", "/session/ses_1?directory=/x"),
            Some("/session/{sessionID}")
        );
        let any = RoutePattern::parse("GET /session/{id}").unwrap();
        assert!(any.matches("GET", "/session/ses_1"));
        assert!(!any.matches("GET", "/session/status"));
        assert!(!any.matches("GET", "/session/"));
        assert!(!any.matches("GET", "/session/ses_1/"));
        assert!(!any.matches("GET", "/session"));
        assert!(
            RoutePattern::parse("GET /session/status")
                .unwrap()
                .matches("GET", "/session/status")
        );
    }

    #[test]
    fn a_rest_segment_matches_one_or_more_segments() {
        let read = RoutePattern::parse("GET /api/fs/read/*").unwrap();
        assert!(read.matches("GET", "/api/fs/read/a"));
        assert!(read.matches("GET", "/api/fs/read/a/b.txt"));
        assert!(!read.matches("GET", "/api/fs/read"));
        assert!(!read.matches("GET", "/api/fs/read/"));
        assert_eq!(
            route_template("GET", "/api/fs/read/a/b"),
            Some("/api/fs/read/*")
        );
    }

    #[test]
    fn unknown_paths_have_no_template() {
        assert_eq!(route_template("GET", "/nowhere"), None);
        assert_eq!(route_template("HEAD", "/session"), None);
        assert_eq!(route_template("GET", "relative"), None);
    }
}
