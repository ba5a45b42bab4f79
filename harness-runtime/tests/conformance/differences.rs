//! Where the fixture agent differs from real OpenCode on purpose, field by field, with why.
//! A listed field is set aside when the fixture's transcript is compared; a listed difference
//! that no longer occurs fails, so the list cannot outlive what it excuses.

/// One deliberate difference.
pub(crate) struct Deliberate {
    /// The interaction, as `<group>::<interaction>`, or `*` for every interaction.
    pub(crate) interaction: &'static str,
    /// A JSON pointer into the transcript, e.g. `/steps/2/answer/parts`; a `*` segment matches
    /// any key or index (`/steps/*/answer/version`).
    pub(crate) field: &'static str,
    /// The value the fixture has there, where it is always the same: a field that differs in
    /// any other way is still a difference.
    pub(crate) fixture: Option<&'static str>,
    /// Why the fixture does not do what real OpenCode does.
    pub(crate) why: &'static str,
}

/// Why a session's `version` differs.
const VERSION_MARK: &str = "the fixture agent reports its version as 1.18.33+fixture (build \
    metadata: semver-equal to 1.18.33, so clients accept it) in its health, --version and the \
    sessions it makes, so a person reading an answer can tell which agent gave it";

/// What differs in every interaction: the version mark of each session answered, alone or in
/// a list.
pub(crate) const EVERYWHERE: &[Deliberate] = &[
    Deliberate {
        interaction: "*",
        field: "/steps/*/answer/version",
        fixture: Some("1.18.33+fixture"),
        why: VERSION_MARK,
    },
    Deliberate {
        interaction: "*",
        field: "/steps/*/answer/*/version",
        fixture: Some("1.18.33+fixture"),
        why: VERSION_MARK,
    },
];

/// Every group's deliberate differences (each group lists its own, beside its interactions).
pub(crate) fn all() -> impl Iterator<Item = &'static Deliberate> {
    [
        EVERYWHERE,
        crate::asks::DELIBERATE,
        crate::control::DELIBERATE,
        crate::errors::DELIBERATE,
        crate::messages::DELIBERATE,
        crate::prompts::DELIBERATE,
        crate::sessions::DELIBERATE,
        crate::structured::DELIBERATE,
        crate::tui::DELIBERATE,
    ]
    .into_iter()
    .flatten()
}

/// The deliberate differences of `interaction`.
pub(crate) fn of(interaction: &str) -> impl Iterator<Item = &'static Deliberate> + '_ {
    all().filter(move |d| d.interaction == "*" || d.interaction == interaction)
}
