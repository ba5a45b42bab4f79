//! Overlapping secrets. The literal pass replaces leftmost-longest matches, one at a time: where
//! a secret overlaps the match chosen before it (another secret, itself again, a path, a port),
//! its uncovered part would survive (`key-XYZ` and `XYZ-2024` in `key-XYZ-2024` left `-2024`).
//! Such matches are widened over every overlapping secret occurrence and become `[secret]`.

/// A chosen match: byte range and what replaces it.
pub(crate) type Span<'a> = (usize, usize, &'a str);

/// Widens `chosen` (sorted, disjoint) over `secrets` (every occurrence, overlapping ones too):
/// a group of strictly overlapping ranges becomes one `[secret]` span, unless one chosen match
/// covers the whole group (a path containing a secret stays the path's placeholder).
pub(crate) fn widen<'a>(
    chosen: Vec<Span<'a>>,
    secrets: impl Iterator<Item = (usize, usize)>,
    secret: &'a str,
) -> Vec<Span<'a>> {
    // `None` marks a secret occurrence; chosen matches keep their replacement.
    let mut all: Vec<(usize, usize, Option<&'a str>)> = chosen
        .into_iter()
        .map(|(s, e, r)| (s, e, Some(r)))
        .collect();
    all.extend(secrets.map(|(s, e)| (s, e, None)));
    // Chosen first at equal ranges, so a group that is just one match keeps its replacement.
    all.sort_by_key(|&(s, e, r)| (s, std::cmp::Reverse(e), r.is_none()));
    let mut out: Vec<Span<'a>> = Vec::new();
    let mut group: Option<(usize, usize, Option<&'a str>, bool)> = None;
    for (s, e, r) in all {
        match &mut group {
            Some((_, end, _, widened)) if s < *end => {
                if e > *end {
                    *end = e;
                    *widened = true;
                }
            }
            _ => {
                if let Some(done) = group.take() {
                    out.push(close(done, secret));
                }
                group = Some((s, e, r, false));
            }
        }
    }
    if let Some(done) = group {
        out.push(close(done, secret));
    }
    out
}

fn close<'a>(
    (start, end, first, widened): (usize, usize, Option<&'a str>, bool),
    secret: &'a str,
) -> Span<'a> {
    match first {
        Some(replacement) if !widened => (start, end, replacement),
        _ => (start, end, secret),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn disjoint_matches_are_kept_and_overlaps_become_one_secret() {
        let chosen = vec![(0, 4, "[root]"), (6, 9, "[secret]"), (12, 14, "[port]")];
        // Inside the path; overlapping the secret chosen at 6; touching the port (not overlapping).
        let secrets = [(1, 3), (6, 9), (8, 11), (10, 12)].into_iter();
        assert_eq!(
            widen(chosen, secrets, "[secret]"),
            [(0, 4, "[root]"), (6, 12, "[secret]"), (12, 14, "[port]")]
        );
    }
}
