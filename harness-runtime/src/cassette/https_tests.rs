//! The relay's client against a local HTTPS server (a plain one behind a [`TlsFront`], whose CA
//! is made for the test): trusted only through the roots named as `SSL_CERT_FILE` would name
//! them, refused without, HTTP/2 when offered, one connection for several requests.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::body::Body;
use harness_selftest::tls_front::TlsFront;
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo};
use tokio::net::TcpListener;

use super::*;

/// The Messages API's first frame, as a provider streams it.
const FRAME: &str = "event: message_start\ndata: {\"type\":\"message_start\"}\n\n";

/// A server answering every request with [`FRAME`] as an event stream, behind a TLS front with a
/// CA of its own offering `alpn`; the front, and the count of connections the server accepted
/// (one per connection the front's handshake let through). With `h2` offered a client speaks
/// HTTP/2, which the front passes on as it is: the server behind it speaks HTTP/2 then.
async fn serve(alpn: &[&[u8]]) -> (TlsFront, Arc<AtomicUsize>) {
    let h2 = alpn.contains(&&b"h2"[..]);
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let connections = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&connections);
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            counted.fetch_add(1, Ordering::SeqCst);
            tokio::spawn(async move {
                let service = service_fn(|_request| async {
                    let response = hyper::Response::builder()
                        .header("content-type", "text/event-stream")
                        .body(Body::from(FRAME))
                        .unwrap();
                    Ok::<_, Infallible>(response)
                });
                let io = TokioIo::new(tcp);
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
    (TlsFront::start_offering(addr, alpn), connections)
}

/// `roots` naming only the front's CA, as `SSL_CERT_FILE` would.
fn ca_file(front: &TlsFront) -> Roots {
    let file = front.ca_file();
    let env = |name: &str| (name == CERT_FILE_ENV).then(|| file.display().to_string());
    let roots = Roots::from_env(&env);
    assert_eq!(roots.file.as_deref(), Some(file));
    roots
}

const TIMEOUT: Duration = Duration::from_secs(10);

#[tokio::test]
async fn a_ca_named_by_ssl_cert_file_is_trusted_over_http2_and_one_connection() {
    let (front, connections) = serve(&[b"h2", b"http/1.1"]).await;
    let client = client(&ca_file(&front), TIMEOUT).unwrap();
    let url = format!("https://localhost:{}/v1/messages", front.addr().port());
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
    let (front, connections) = serve(&[b"http/1.1"]).await;
    let client = client(&ca_file(&front), TIMEOUT).unwrap();
    let url = format!("https://localhost:{}/v1/messages", front.addr().port());
    for _ in 0..2 {
        let response = client.post(&url).body("{}").send().await.unwrap();
        assert_eq!(response.version(), reqwest::Version::HTTP_11);
        assert_eq!(response.text().await.unwrap(), FRAME);
    }
    assert_eq!(connections.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn without_the_ca_the_handshake_fails_naming_the_host_and_ssl_cert_file() {
    let (front, _) = serve(&[b"h2", b"http/1.1"]).await;
    // The platform's roots: the front's CA is not among them.
    let client = client(&Roots::default(), TIMEOUT).unwrap();
    let url = format!(
        "https://localhost:{}/v1/messages?key=canary-query-key",
        front.addr().port()
    );
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

#[tokio::test]
async fn unusable_root_files_are_errors_naming_the_variable() {
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
    // A CA's PEM, from a front nothing connects to.
    let front = TlsFront::start(SocketAddr::from(([127, 0, 0, 1], 9)));
    std::fs::copy(front.ca_file(), dir.path().join("ca.pem")).unwrap();
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

mod recording {
    use super::super::super::test_support::*;
    use super::*;
    use crate::model::Reply;

    /// The scripted upstream behind a TLS front (HTTP/1.1 only, as a hosted provider's
    /// passing its bytes to a server speaking HTTP/1.1) at `https://localhost:<port>/v1`, and
    /// the user's config naming it with the canary key.
    fn hosted() -> (
        crate::model::ModelSlot,
        crate::model::ScriptedModel,
        TlsFront,
        serde_json::Value,
    ) {
        let (slot, upstream) = upstream();
        let backend: SocketAddr = upstream
            .base_url()
            .trim_start_matches("http://")
            .trim_end_matches("/v1")
            .parse()
            .unwrap();
        let front = TlsFront::start(backend);
        let config = user_config(
            &format!("https://localhost:{}/v1", front.addr().port()),
            "@ai-sdk/openai-compatible",
        );
        (slot, upstream, front, config)
    }

    #[tokio::test]
    async fn a_recording_through_https_trusts_the_ca_of_ssl_cert_file_and_keeps_no_key() {
        let (_slot, upstream, front, config) = hosted();
        let dir = tempfile::tempdir().unwrap();
        let ca = front.ca_file();
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
        let (_slot, upstream, front, config) = hosted();
        let dir = tempfile::tempdir().unwrap();
        let ca_path = front.ca_file().display().to_string();
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
        let (_slot, upstream, _front, config) = hosted();
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
