//! Where the fixture agent differs from real OpenCode on purpose, field by field, with why.
//! A listed field is set aside when the fixture's transcript is compared; a listed difference
//! that no longer occurs fails, so the list cannot outlive what it excuses.

/// One deliberate difference.
pub(crate) struct Deliberate {
    /// The interaction, as `<group>::<interaction>`.
    pub(crate) interaction: &'static str,
    /// A JSON pointer into the transcript, e.g. `/steps/2/answer/parts`.
    pub(crate) field: &'static str,
    /// Why the fixture does not do what real OpenCode does.
    pub(crate) why: &'static str,
}

/// Every group's deliberate differences (each group lists its own, beside its interactions).
pub(crate) fn all() -> impl Iterator<Item = &'static Deliberate> {
    [
        crate::asks::DELIBERATE,
        crate::control::DELIBERATE,
        crate::errors::DELIBERATE,
        crate::messages::DELIBERATE,
        crate::model::DELIBERATE,
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
    all().filter(move |d| d.interaction == interaction)
}
