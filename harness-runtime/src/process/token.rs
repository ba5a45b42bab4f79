//! Owner tokens: the mark every spawned agent and all its descendants carry in their environment.

/// The variable that carries the owner token. Descendants inherit it even when they detach into
/// their own session, which is what makes the sweep find them.
pub(crate) use crate::settings::OWNER as OWNER_ENV;

/// A fresh token, unique across runners and agents: pid plus 96 random bits. Fixed length, so no
/// token is a prefix of another, and the sweep compares whole `NAME=value` entries anyway.
pub(crate) fn new_token() -> String {
    let mut bytes = [0u8; 12];
    if getrandom::fill(&mut bytes).is_err() {
        // No OS randomness: fall back to the clock, which is still unique within this runner.
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default();
        bytes.copy_from_slice(&nanos.to_le_bytes()[..12]);
    }
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!("live-{}-{hex}", std::process::id())
}

#[cfg(test)]
mod tests {
    #[test]
    fn tokens_are_unique_and_fixed_length() {
        let a = super::new_token();
        let b = super::new_token();
        assert_ne!(a, b);
        assert_eq!(a.len(), b.len());
        assert!(a.starts_with(&format!("live-{}-", std::process::id())));
    }
}
