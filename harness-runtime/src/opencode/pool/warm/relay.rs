//! A seat's stable model port: the seat's config names it, so the instance booted with that
//! config serves every lessee; while a lease lasts it forwards to the lessee's model (scripted,
//! or a cassette's replay), and at release it drops every connection, so nothing of one
//! scenario's model traffic reaches the next. OpenCode opens a new connection on the next
//! request (tested by the `isolation::warm_*` scenarios).

use std::sync::{Arc, OnceLock};

use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::AbortHandle;

/// The pool's background runtime: the relays (and a seat's re-boot) outlive the scenario whose
/// runtime leased them.
pub(crate) fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("live-warm-seats")
            .enable_all()
            .build()
            .unwrap_or_else(|e| panic!("the warm seats' runtime could not start: {e}"))
    })
}

/// A loopback port forwarding to the current lessee's model port, if any.
#[derive(Debug)]
pub(crate) struct ModelRelay {
    port: u16,
    /// The lessee's model port; every change (a new lessee, the release) drops the connections
    /// made before it.
    target: Arc<watch::Sender<Option<u16>>>,
    accept: AbortHandle,
}

impl ModelRelay {
    /// Binds `127.0.0.1:0` and forwards nowhere until [`point_to`](Self::point_to).
    pub(crate) fn start() -> std::io::Result<Self> {
        let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
        listener.set_nonblocking(true)?;
        let port = listener.local_addr()?.port();
        let target = Arc::new(watch::Sender::new(None));
        let watched = target.clone();
        let runtime = runtime();
        let listener = {
            let _entered = runtime.enter();
            TcpListener::from_std(listener)?
        };
        let accept = runtime
            .spawn(async move {
                loop {
                    let Ok((inbound, _)) = listener.accept().await else {
                        continue;
                    };
                    tokio::spawn(forward(inbound, watched.subscribe()));
                }
            })
            .abort_handle();
        Ok(ModelRelay {
            port,
            target,
            accept,
        })
    }

    /// The port the seat's config names.
    pub(crate) fn port(&self) -> u16 {
        self.port
    }

    /// Forwards to `model_port` from now on.
    pub(crate) fn point_to(&self, model_port: u16) {
        self.target.send_replace(Some(model_port));
    }

    /// Forwards nowhere, and drops every connection made so far.
    pub(crate) fn cut(&self) {
        self.target.send_replace(None);
    }
}

impl Drop for ModelRelay {
    fn drop(&mut self) {
        self.cut();
        self.accept.abort();
    }
}

/// One connection: to the target of the moment it was accepted, until either side closes or
/// the target changes. Without a target it is closed at once (the model is unreachable, as a
/// stopped model is).
async fn forward(mut inbound: TcpStream, mut target: watch::Receiver<Option<u16>>) {
    let Some(port) = *target.borrow_and_update() else {
        return;
    };
    let Ok(mut outbound) = TcpStream::connect(("127.0.0.1", port)).await else {
        return;
    };
    tokio::select! {
        _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound) => {}
        _ = target.changed() => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    async fn echo_once(listener: &TcpListener) {
        let (mut stream, _) = listener.accept().await.unwrap();
        let mut buf = [0u8; 5];
        stream.read_exact(&mut buf).await.unwrap();
        stream.write_all(&buf).await.unwrap();
        // Held open: only the relay's cut may end it.
        let _ = stream.read(&mut buf).await;
    }

    #[tokio::test]
    async fn forwards_to_the_lessee_and_cuts_at_release() {
        let relay = ModelRelay::start().unwrap();
        let model = TcpListener::bind("127.0.0.1:0").await.unwrap();
        relay.point_to(model.local_addr().unwrap().port());
        let served = tokio::spawn(async move { echo_once(&model).await });
        let mut client = TcpStream::connect(("127.0.0.1", relay.port()))
            .await
            .unwrap();
        client.write_all(b"hello").await.unwrap();
        let mut buf = [0u8; 5];
        client.read_exact(&mut buf).await.unwrap();
        assert_eq!(&buf, b"hello");
        relay.cut();
        let mut rest = Vec::new();
        let closed = tokio::time::timeout(
            std::time::Duration::from_secs(5),
            client.read_to_end(&mut rest),
        )
        .await;
        assert!(matches!(closed, Ok(Ok(0))), "{closed:?}");
        served.await.unwrap();
        // Between leases nothing answers.
        let mut late = TcpStream::connect(("127.0.0.1", relay.port()))
            .await
            .unwrap();
        let read = tokio::time::timeout(
            std::time::Duration::from_secs(5),
            late.read_to_end(&mut rest),
        )
        .await;
        assert!(matches!(read, Ok(Ok(0)) | Ok(Err(_))), "{read:?}");
    }
}
