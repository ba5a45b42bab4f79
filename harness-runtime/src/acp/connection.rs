//! The ACP connection to one agent: the SDK's client, run on a task of the scenario's runtime,
//! with the client side's handlers; scenario code sends requests through the handle it returns.

use std::sync::Arc;

use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    ReadTextFileRequest, RequestPermissionRequest, SessionNotification, WriteTextFileRequest,
};
use agent_client_protocol::{Agent, Client, ConnectTo};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use super::client_side::ClientSide;

/// A live connection: its handle, and the task that runs it until closed.
pub(crate) struct Connection {
    pub(crate) to_agent: ConnectionTo<Agent>,
    close: Option<oneshot::Sender<()>>,
    task: JoinHandle<()>,
}

impl Connection {
    /// Runs the SDK's client over `transport`, answering the agent through `client_side`.
    /// `None` when the connection ended before it was up (the agent closed its output).
    pub(crate) async fn open(
        transport: impl ConnectTo<Client> + 'static,
        client_side: Arc<ClientSide>,
    ) -> Option<Self> {
        let (handle_tx, handle_rx) = oneshot::channel();
        let (close, closed) = oneshot::channel::<()>();
        let (updates, permissions, reads, writes) = (
            client_side.clone(),
            client_side.clone(),
            client_side.clone(),
            client_side,
        );
        let task = tokio::spawn(async move {
            let _ = Client
                .v1()
                .on_receive_notification(
                    async move |notification: SessionNotification, _cx| {
                        updates.on_update(notification);
                        Ok(())
                    },
                    agent_client_protocol::on_receive_notification!(),
                )
                .on_receive_request(
                    async move |request: RequestPermissionRequest, responder, _cx| match permissions
                        .on_permission(&request)
                    {
                        Some(response) => responder.respond(response),
                        None => {
                            permissions.hold(Box::new(responder));
                            Ok(())
                        }
                    },
                    agent_client_protocol::on_receive_request!(),
                )
                .on_receive_request(
                    async move |request: ReadTextFileRequest, responder, _cx| {
                        responder
                            .respond_with_result(reads.read_text_file(&request).map_err(refused))
                    },
                    agent_client_protocol::on_receive_request!(),
                )
                .on_receive_request(
                    async move |request: WriteTextFileRequest, responder, _cx| {
                        responder
                            .respond_with_result(writes.write_text_file(&request).map_err(refused))
                    },
                    agent_client_protocol::on_receive_request!(),
                )
                .connect_with(transport, async move |to_agent: ConnectionTo<Agent>| {
                    let _ = handle_tx.send(to_agent);
                    // Open until the harness closes it (or the agent's output ends).
                    let _ = closed.await;
                    Ok(())
                })
                .await;
        });
        let to_agent = handle_rx.await.ok()?;
        Some(Self {
            to_agent,
            close: Some(close),
            task,
        })
    }

    /// Closes the connection and waits for its task.
    pub(crate) async fn close(mut self) {
        if let Some(close) = self.close.take() {
            let _ = close.send(());
        }
        let ceiling = crate::settings::scaled(std::time::Duration::from_secs(5));
        if tokio::time::timeout(ceiling, &mut self.task).await.is_err() {
            self.task.abort();
        }
    }
}

/// A client-side refusal, as the JSON-RPC error the agent gets.
fn refused(reason: String) -> agent_client_protocol::Error {
    agent_client_protocol::Error::invalid_params().data(serde_json::Value::String(reason))
}
