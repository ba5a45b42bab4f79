//! The relay's client against a local HTTPS server whose CA the test makes: trusted only
//! through the roots named as `SSL_CERT_FILE` would name them, refused without, HTTP/2 when
//! offered, one connection for several requests.

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::body::Body;
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use tokio::net::TcpListener;

use super::*;

/// The Messages API's first frame, as a provider streams it.
const FRAME: &str = "event: message_start\ndata: {\"type\":\"message_start\"}\n\n";

/// A CA, and a certificate for `localhost` signed by it.
struct Pki {
    ca_pem: String,
    leaf: CertificateDer<'static>,
    key: PrivateKeyDer<'static>,
}

fn pki() -> Pki {
    let mut ca = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    ca.distinguished_name
        .push(rcgen::DnType::CommonName, "harness relay test CA");
    let ca_key = rcgen::KeyPair::generate().unwrap();
    let ca = ca.self_signed(&ca_key).unwrap();
    let leaf_key = rcgen::KeyPair::generate().unwrap();
    let leaf = rcgen::CertificateParams::new(vec!["localhost".to_owned()])
        .unwrap()
        .signed_by(&leaf_key, &ca, &ca_key)
        .unwrap();
    Pki {
        ca_pem: ca.pem(),
        leaf: leaf.der().clone(),
        key: PrivatePkcs8KeyDer::from(leaf_key.serialize_der()).into(),
    }
}

/// A server answering every request with [`FRAME`] as an event stream, offering `alpn`; returns
/// its port and the count of connections it accepted.
async fn serve(pki: &Pki, alpn: &[&[u8]]) -> (u16, Arc<AtomicUsize>) {
    // rustls's one provider here (ring, as reqwest's), picked from its features.
    let mut config = rustls::ServerConfig::builder()
        .with_no_client_auth()
        .with_single_cert(vec![pki.leaf.clone()], pki.key.clone_key())
        .unwrap();
    config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let connections = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&connections);
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            counted.fetch_add(1, Ordering::SeqCst);
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                // A client refusing the certificate ends the handshake: nothing to serve.
                let Ok(tls) = acceptor.accept(tcp).await else {
                    return;
                };
                let h2 = tls.get_ref().1.alpn_protocol() == Some(b"h2");
                let service = service_fn(|_request| async {
                    let response = hyper::Response::builder()
                        .header("content-type", "text/event-stream")
                        .body(Body::from(FRAME))
                        .unwrap();
                    Ok::<_, Infallible>(response)
                });
                let io = TokioIo::new(tls);
                let _ = if h2 {
                    hyper::server::conn::http2::Builder::new(TokioExecutor::new())
                        .serve_connection(io, service)
                        .await
                } else {
                    hyper::server::conn::http1::Builder::new()
                        .serve_connection(io, service)
                        .await
                };
            });
        }
    });
    (port, connections)
}

/// `roots` naming only the test's CA, as `SSL_CERT_FILE` would.
fn ca_file(pki: &Pki) -> (tempfile::TempDir, Roots) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("ca.pem");
    std::fs::write(&file, &pki.ca_pem).unwrap();
    let env = |name: &str| (name == CERT_FILE_ENV).then(|| file.display().to_string());
    let roots = Roots::from_env(&env);
    assert_eq!(roots.file.as_deref(), Some(file.as_path()));
    (dir, roots)
}

const TIMEOUT: Duration = Duration::from_secs(10);

#[tokio::test]
async fn a_ca_named_by_ssl_cert_file_is_trusted_over_http2_and_one_connection() {
    let pki = pki();
    let (port, connections) = serve(&pki, &[b"h2", b"http/1.1"]).await;
    let (_dir, roots) = ca_file(&pki);
    let client = client(&roots, TIMEOUT).unwrap();
    let url = format!("https://localhost:{port}/v1/messages");
    for _ in 0..3 {
        let response = client.post(&url).body("{}").send().await.unwrap();
        assert_eq!(response.version(), reqwest::Version::HTTP_2);
        assert_eq!(response.headers()["content-type"], "text/event-stream");
        assert_eq!(response.text().await.unwrap(), FRAME);
    }
    assert_eq!(connections.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_server_without_http2_is_spoken_to_in_http1_on_one_connection() {
    let pki = pki();
    let (port, connections) = serve(&pki, &[b"http/1.1"]).await;
    let (_dir, roots) = ca_file(&pki);
    let client = client(&roots, TIMEOUT).unwrap();
    let url = format!("https://localhost:{port}/v1/messages");
    for _ in 0..2 {
        let response = client.post(&url).body("{}").send().await.unwrap();
        assert_eq!(response.version(), reqwest::Version::HTTP_11);
        assert_eq!(response.text().await.unwrap(), FRAME);
    }
    assert_eq!(connections.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn without_the_ca_the_handshake_fails_naming_the_host_and_ssl_cert_file() {
    let pki = pki();
    let (port, _) = serve(&pki, &[b"h2", b"http/1.1"]).await;
    // The platform's roots: the test's CA is not among them.
    let client = client(&Roots::default(), TIMEOUT).unwrap();
    let url = format!("https://localhost:{port}/v1/messages?key=canary-query-key");
    let error = client.post(&url).body("{}").send().await.unwrap_err();
    let sent = send_error(&url, &error);
    assert!(sent.tls);
    let message = sent.message;
    assert!(
        message.starts_with("localhost: the TLS handshake failed: ")
            && message.ends_with("set SSL_CERT_FILE to the CA's PEM"),
        "{message}"
    );
    assert!(
        !message.contains("canary") && !message.contains("/v1"),
        "{message}"
    );
}

#[test]
fn unusable_root_files_are_errors_naming_the_variable() {
    let error = |roots: Roots| client(&roots, TIMEOUT).unwrap_err().to_string();
    let dir = tempfile::tempdir().unwrap();
    let missing = Roots {
        file: Some(dir.path().join("nope.pem")),
        dir: None,
    };
    let message = error(missing);
    assert!(
        message.contains(": SSL_CERT_FILE names ") && message.contains("cannot be read"),
        "{message}"
    );
    let empty = dir.path().join("empty.pem");
    std::fs::write(&empty, "not a certificate\n").unwrap();
    let message = error(Roots {
        file: Some(empty),
        dir: None,
    });
    assert!(message.contains("name no PEM certificate"), "{message}");
    let message = error(Roots {
        file: None,
        dir: Some(dir.path().join("no-folder")),
    });
    assert!(message.contains(": SSL_CERT_DIR names "), "{message}");
    // A folder: its PEM files are taken, the rest skipped.
    std::fs::write(dir.path().join("ca.pem"), pki().ca_pem).unwrap();
    client(
        &Roots {
            file: None,
            dir: Some(dir.path().to_owned()),
        },
        TIMEOUT,
    )
    .unwrap();
    // Empty values are unset.
    assert_eq!(Roots::from_env(&|_| Some(String::new())), Roots::default());
}

/// A TLS front for the plain-HTTP server at `backend` (`127.0.0.1:<port>`), as a hosted
/// provider's: HTTP/1.1 only (the bytes pass through to a server speaking HTTP/1.1).
async fn tls_front(pki: &Pki, backend: String) -> u16 {
    let mut config = rustls::ServerConfig::builder()
        .with_no_client_auth()
        .with_single_cert(vec![pki.leaf.clone()], pki.key.clone_key())
        .unwrap();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let (acceptor, backend) = (acceptor.clone(), backend.clone());
            tokio::spawn(async move {
                let Ok(mut tls) = acceptor.accept(tcp).await else {
                    return;
                };
                let Ok(mut plain) = tokio::net::TcpStream::connect(&backend).await else {
                    return;
                };
                let _ = tokio::io::copy_bidirectional(&mut tls, &mut plain).await;
            });
        }
    });
    port
}

mod recording {
    use super::super::super::test_support::*;
    use super::*;
    use crate::model::Reply;

    /// The scripted upstream behind a TLS front at `https://localhost:<port>/v1`, and the
    /// user's config naming it with the canary key.
    async fn hosted(
        pki: &Pki,
    ) -> (
        crate::model::ModelSlot,
        crate::model::ScriptedModel,
        serde_json::Value,
    ) {
        let (slot, upstream) = upstream();
        let backend = upstream
            .base_url()
            .trim_start_matches("http://")
            .trim_end_matches("/v1")
            .to_owned();
        let port = tls_front(pki, backend).await;
        let config = user_config(
            &format!("https://localhost:{port}/v1"),
            "@ai-sdk/openai-compatible",
        );
        (slot, upstream, config)
    }

    #[tokio::test]
    async fn a_recording_through_https_trusts_the_ca_of_ssl_cert_file_and_keeps_no_key() {
        let pki = pki();
        let (_slot, upstream, config) = hosted(&pki).await;
        let dir = tempfile::tempdir().unwrap();
        let ca = dir.path().join("ca.pem");
        std::fs::write(&ca, &pki.ca_pem).unwrap();
        let env = |name: &str| (name == CERT_FILE_ENV).then(|| ca.display().to_string());
        let path = cassette_path(dir.path());
        let (mut recording, relay_config) = Side::recording_with(&path, &config, &env);
        assert!(
            relay_config["provider"]["real"]["options"]["baseURL"]
                .as_str()
                .unwrap()
                .starts_with("http://127.0.0.1:")
        );
        upstream.reply(Reply::text("Hello over TLS!").in_deltas(2));
        let body = chat(&recording.workspace(), "Say hello", &["bash"], true);
        let received = send(&chat_url(&relay_config, "real"), &body).await.unwrap();
        assert_eq!(received.status, 200, "{received:?}");
        let text: String = received
            .events()
            .iter()
            .filter_map(|e| {
                e.pointer("/choices/0/delta/content")?
                    .as_str()
                    .map(str::to_owned)
            })
            .collect();
        assert_eq!(text, "Hello over TLS!");
        // The request reached the upstream through the TLS front.
        let seen = upstream.requests();
        assert_eq!(seen.len(), 1);
        recording.finish(true).unwrap();
        let text = cassette_text(&path);
        let cassette: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            cassette["interactions"].as_array().map(Vec::len),
            Some(1),
            "{text}"
        );
        assert_no_canary(&text);
        for line in recording.progress.borrow().iter() {
            assert_no_canary(line);
        }
    }

    #[tokio::test]
    async fn a_relay_env_given_to_the_slot_names_the_ca_without_the_process_env() {
        let pki = pki();
        let (_slot, upstream, config) = hosted(&pki).await;
        let dir = tempfile::tempdir().unwrap();
        let ca = dir.path().join("ca.pem");
        std::fs::write(&ca, &pki.ca_pem).unwrap();
        let ca_path = ca.display().to_string();
        let env = crate::model::slot::RelayEnv(Arc::new(move |name: &str| {
            (name == CERT_FILE_ENV).then(|| ca_path.clone())
        }));
        let path = cassette_path(dir.path());
        let (mut recording, relay_config) = Side::recording_with_slot_env(&path, &config, env);
        upstream.reply(Reply::text("trusted"));
        let body = chat(&recording.workspace(), "Say hello", &["bash"], true);
        let received = send(&chat_url(&relay_config, "real"), &body).await.unwrap();
        assert_eq!(received.status, 200, "{received:?}");
        assert_eq!(upstream.requests().len(), 1);
        recording.finish(true).unwrap();
        assert!(path.exists());
    }

    #[tokio::test]
    async fn without_the_ca_the_recording_fails_naming_the_host_and_ssl_cert_file() {
        let pki = pki();
        let (_slot, upstream, config) = hosted(&pki).await;
        let dir = tempfile::tempdir().unwrap();
        let path = cassette_path(dir.path());
        let (mut recording, relay_config) = Side::recording_with(&path, &config, &|_| None);
        let body = chat(&recording.workspace(), "Say hello", &["bash"], true);
        // OpenCode gets a 400 saying what to set: no retry mends an untrusted certificate.
        let received = send(&chat_url(&relay_config, "real"), &body)
            .await
            .expect("the relay answers");
        let answer = String::from_utf8_lossy(&received.body);
        assert!(
            received.status == 400 && answer.contains("set SSL_CERT_FILE to the CA's PEM"),
            "{} {answer}",
            received.status
        );
        assert!(upstream.requests().is_empty());
        let error = recording.finish(true).unwrap_err().to_string();
        assert!(
            error.contains("localhost: the TLS handshake failed")
                && error.contains("set SSL_CERT_FILE to the CA's PEM")
                && error.contains("no cassette written"),
            "{error}"
        );
        assert_no_canary(&error);
        assert!(!path.exists());
    }
}
