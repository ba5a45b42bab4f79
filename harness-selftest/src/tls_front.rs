//! An HTTPS front for a plain-HTTP upstream: a hosted provider as the relay meets one, with a
//! certificate authority generated for the test and trusted only where a test says so
//! (`SSL_CERT_FILE` naming [`TlsFront::ca_file`]).
//!
//! Each connection's TLS is ended here and its bytes spliced to the plain upstream, so the
//! scripted model behind it answers every API it speaks, over HTTPS, unchanged. A connection the
//! upstream resets ends without TLS's `close_notify`: the client sees a broken connection, as it
//! would from a provider that dropped it. ALPN offers HTTP/1.1 only (the scripted model's), unless
//! the front is started offering others ([`TlsFront::start_offering`]).

use std::io::Write;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::Path;
use std::sync::Arc;

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair, KeyUsagePurpose, SanType};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::AbortHandle;
use tokio_rustls::TlsAcceptor;

/// A running front: its address, the CA that signed its certificate, and its accept task.
pub struct TlsFront {
    addr: SocketAddr,
    ca: tempfile::NamedTempFile,
    task: AbortHandle,
}

impl TlsFront {
    /// Starts a front on 127.0.0.1 for `upstream`, on the current tokio runtime, with a new CA.
    pub fn start(upstream: SocketAddr) -> Self {
        Self::start_offering(upstream, &[b"http/1.1"])
    }

    /// Starts a front as [`start`](Self::start) does, offering the ALPN protocols `alpn` in its
    /// order of preference: with `h2` among them, a client may speak HTTP/2, which passes to
    /// `upstream` as it is (the upstream speaks HTTP/2 with prior knowledge).
    pub fn start_offering(upstream: SocketAddr, alpn: &[&[u8]]) -> Self {
        let (ca_pem, chain, key) = certificates();
        let mut ca = tempfile::Builder::new()
            .prefix("live-test-ca-")
            .suffix(".pem")
            .tempfile()
            .expect("a temp file for the test CA");
        ca.write_all(ca_pem.as_bytes())
            .expect("the test CA is written");
        // ring, deprecated in rustls 0.23.48 for lacking post-quantum key exchange, which a
        // loopback test CA does not need; aws-lc would cost a C build in every CI run.
        #[allow(deprecated)]
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .expect("ring supports the default protocol versions")
            .with_no_client_auth()
            .with_single_cert(chain, key)
            .expect("the generated certificate and key match");
        config.alpn_protocols = alpn.iter().map(|protocol| protocol.to_vec()).collect();
        let acceptor = TlsAcceptor::from(Arc::new(config));
        let listener = std::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .expect("the front binds a loopback port");
        listener
            .set_nonblocking(true)
            .expect("the front's listener is non-blocking");
        let addr = listener.local_addr().expect("the front has an address");
        let listener = TcpListener::from_std(listener).expect("the front listens on tokio");
        let task = tokio::spawn(accept_loop(listener, acceptor, upstream)).abort_handle();
        Self { addr, ca, task }
    }

    /// Its address: `https://<addr>` reaches the upstream.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The PEM file of the CA that signed its certificate (for `SSL_CERT_FILE`).
    pub fn ca_file(&self) -> &Path {
        self.ca.path()
    }
}

impl Drop for TlsFront {
    /// Stops accepting; connections in flight end with the runtime that runs them.
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn accept_loop(listener: TcpListener, acceptor: TlsAcceptor, upstream: SocketAddr) {
    let mut connections = tokio::task::JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                if let Ok((stream, _)) = accepted {
                    connections.spawn(splice(stream, acceptor.clone(), upstream));
                }
            }
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
}

/// Ends the client's TLS and copies bytes both ways until either side closes.
async fn splice(stream: TcpStream, acceptor: TlsAcceptor, upstream: SocketAddr) {
    let Ok(mut tls) = acceptor.accept(stream).await else {
        // A client that does not trust the CA gives up during the handshake: its own error says so.
        return;
    };
    let Ok(mut plain) = TcpStream::connect(upstream).await else {
        return;
    };
    let _ = tokio::io::copy_bidirectional(&mut tls, &mut plain).await;
}

/// A new CA (its PEM) and a certificate it signed for 127.0.0.1 and `localhost`, with its key.
fn certificates() -> (String, Vec<CertificateDer<'static>>, PrivateKeyDer<'static>) {
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).expect("CA parameters");
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(DnType::CommonName, "live-agent harness test CA");
    ca_params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let ca_key = KeyPair::generate().expect("a CA key");
    let ca = ca_params.self_signed(&ca_key).expect("the CA signs itself");
    let mut leaf_params =
        CertificateParams::new(vec!["localhost".to_owned()]).expect("leaf parameters");
    leaf_params
        .subject_alt_names
        .push(SanType::IpAddress(IpAddr::V4(Ipv4Addr::LOCALHOST)));
    leaf_params
        .distinguished_name
        .push(DnType::CommonName, "127.0.0.1");
    let leaf_key = KeyPair::generate().expect("a leaf key");
    let leaf = leaf_params
        .signed_by(&leaf_key, &ca, &ca_key)
        .expect("the CA signs the leaf");
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(leaf_key.serialize_der()));
    (ca.pem(), vec![leaf.der().clone(), ca.der().clone()], key)
}
