//! The relay's HTTP client to the real provider: HTTPS through rustls, HTTP/1.1 or HTTP/2 (as
//! the server offers by ALPN), one connection pool per relay.
//!
//! The roots it trusts: the platform's, or only those of `SSL_CERT_FILE`/`SSL_CERT_DIR` when one
//! is set (the variables OpenSSL and rustls-native-certs read; a private gateway's CA goes
//! there). OpenCode never needs them: it talks plain HTTP to the relay.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::error::CassetteError;

/// A PEM file of the roots to trust instead of the platform's.
pub(crate) const CERT_FILE_ENV: &str = "SSL_CERT_FILE";
/// A folder of PEM files of the roots to trust instead of the platform's.
pub(crate) const CERT_DIR_ENV: &str = "SSL_CERT_DIR";

/// Which roots the client trusts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Roots {
    /// `SSL_CERT_FILE`.
    pub(crate) file: Option<PathBuf>,
    /// `SSL_CERT_DIR`.
    pub(crate) dir: Option<PathBuf>,
}

impl Roots {
    /// The roots `env` names (`SSL_CERT_FILE`, `SSL_CERT_DIR`; empty values are unset).
    pub(crate) fn from_env(env: &dyn Fn(&str) -> Option<String>) -> Self {
        let path = |name: &str| env(name).filter(|v| !v.is_empty()).map(PathBuf::from);
        Self {
            file: path(CERT_FILE_ENV),
            dir: path(CERT_DIR_ENV),
        }
    }

    /// The certificates of the named file and folder; `None` when neither is named (the
    /// platform's roots then).
    fn certificates(&self) -> Result<Option<Vec<reqwest::Certificate>>, CassetteError> {
        if self.file.is_none() && self.dir.is_none() {
            return Ok(None);
        }
        let mut certificates = Vec::new();
        if let Some(file) = &self.file {
            certificates.extend(pem_file(file, CERT_FILE_ENV)?);
        }
        if let Some(dir) = &self.dir {
            let entries = std::fs::read_dir(dir).map_err(|e| {
                CassetteError::Upstream(format!(
                    "{CERT_DIR_ENV} names {}, which cannot be read as a folder: {e}; point it at \
                     a folder of PEM certificates or unset it",
                    dir.display()
                ))
            })?;
            // A certificate folder holds other files too (hash links, CRLs): those are skipped.
            for entry in entries.flatten() {
                if let Ok(found) = pem_file(&entry.path(), CERT_DIR_ENV) {
                    certificates.extend(found);
                }
            }
        }
        if certificates.is_empty() {
            return Err(CassetteError::Upstream(format!(
                "{CERT_FILE_ENV}/{CERT_DIR_ENV} name no PEM certificate (file: {}, folder: {}); \
                 point {CERT_FILE_ENV} at the CA's PEM or unset both to trust the platform's roots",
                shown(self.file.as_deref()),
                shown(self.dir.as_deref()),
            )));
        }
        Ok(Some(certificates))
    }
}

/// The platform's roots, read once per process (parsing them is not free, and they do not change
/// during a run).
fn platform_roots() -> Result<Vec<reqwest::Certificate>, CassetteError> {
    static PLATFORM: std::sync::OnceLock<Result<Vec<reqwest::Certificate>, String>> =
        std::sync::OnceLock::new();
    PLATFORM
        .get_or_init(|| {
            let found = rustls_native_certs::load_native_certs();
            let certificates: Vec<reqwest::Certificate> = found
                .certs
                .iter()
                .filter_map(|der| reqwest::Certificate::from_der(der.as_ref()).ok())
                .collect();
            if certificates.is_empty() {
                let why = found
                    .errors
                    .first()
                    .map_or_else(|| "none is installed".to_owned(), ToString::to_string);
                return Err(format!(
                    "found no root certificate of this machine to trust the provider's with \
                     ({why}); install the platform's CA certificates (e.g. the ca-certificates \
                     package) or point {CERT_FILE_ENV} at a PEM bundle"
                ));
            }
            Ok(certificates)
        })
        .clone()
        .map_err(CassetteError::Upstream)
}

fn shown(path: Option<&Path>) -> String {
    path.map_or_else(|| "unset".into(), |p| p.display().to_string())
}

/// The certificates of the PEM file `path`, named by the variable `var`.
fn pem_file(path: &Path, var: &str) -> Result<Vec<reqwest::Certificate>, CassetteError> {
    let bytes = std::fs::read(path).map_err(|e| {
        CassetteError::Upstream(format!(
            "{var} names {}, which cannot be read: {e}; point it at the CA's PEM or unset it",
            path.display()
        ))
    })?;
    reqwest::Certificate::from_pem_bundle(&bytes).map_err(|e| {
        CassetteError::Upstream(format!(
            "{var} names {}, which is not a PEM certificate bundle: {e}",
            path.display()
        ))
    })
}

/// The relay's client, trusting `roots`, giving up on a connection after `connect_timeout`.
pub(crate) fn client(
    roots: &Roots,
    connect_timeout: Duration,
) -> Result<reqwest::Client, CassetteError> {
    let mut builder = reqwest::Client::builder()
        .connect_timeout(connect_timeout)
        // The upstream is named by the user's config, not by proxy variables.
        .no_proxy()
        .use_rustls_tls();
    // Only the named roots, as OpenSSL does with SSL_CERT_FILE; else the platform's.
    let certificates = match roots.certificates()? {
        Some(named) => named,
        None => platform_roots()?,
    };
    for certificate in certificates {
        builder = builder.add_root_certificate(certificate);
    }
    builder
        .build()
        .map_err(|e| CassetteError::Upstream(format!("could not build the HTTP client: {e}")))
}

/// What went wrong sending to `url`, without its path or query (the address may be a
/// secret's part; the host is named so a TLS failure can be acted on): the innermost cause, and
/// for an untrusted certificate what to do. `tls` when the handshake failed: a setup problem
/// to report, not a fault of the provider to record.
pub(crate) fn send_error(url: &str, error: &reqwest::Error) -> SendError {
    let mut cause: &dyn std::error::Error = error;
    let mut chain = Vec::new();
    while let Some(source) = cause.source() {
        chain.push(source.to_string());
        cause = source;
    }
    let innermost = cause.to_string();
    let host = reqwest::Url::parse(url)
        .ok()
        .and_then(|url| url.host_str().map(str::to_owned))
        .unwrap_or_else(|| "the upstream".into());
    let tls = chain.iter().any(|c| {
        let c = c.to_ascii_lowercase();
        c.contains("certificate") || c.contains("tls") || c.contains("handshake")
    });
    let what = if error.is_timeout() {
        "timed out"
    } else if tls {
        "the TLS handshake failed"
    } else if error.is_connect() {
        "could not connect"
    } else {
        "the connection failed"
    };
    let advice = if innermost.contains("UnknownIssuer") || innermost.contains("unknown issuer") {
        format!(
            "; its certificate is signed by a CA this machine does not trust: set \
             {CERT_FILE_ENV} to the CA's PEM"
        )
    } else {
        String::new()
    };
    SendError {
        message: format!("{host}: {what}: {innermost}{advice}"),
        tls,
    }
}

/// A request that got no answer.
#[derive(Debug)]
pub(crate) struct SendError {
    /// The host, what failed, why and what to do.
    pub(crate) message: String,
    /// The TLS handshake failed.
    pub(crate) tls: bool,
}

#[cfg(test)]
#[path = "https_tests.rs"]
mod tests;
