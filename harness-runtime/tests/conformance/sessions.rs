//! Sessions: create with each body field, list with its filters and cursors, get, update,
//! delete.

use serde_json::json;

use crate::differences::Deliberate;

/// Where the fixture differs from real OpenCode here on purpose.
pub(crate) const DELIBERATE: &[Deliberate] = &[];

interaction!(
    /// `POST /session` with a title, then `GET /session/{id}`.
    create_titled(talk) {
        let created = talk.post("/session", json!({"title": "conformance"})).await?;
        let id = created.str("/id")?;
        talk.get(&format!("/session/{id}")).await?;
    }
);
