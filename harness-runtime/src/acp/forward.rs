//! The agent command a product that is an ACP client runs (`acp-forward`, this binary in a
//! helper role): its stdin and stdout, forwarded byte for byte to the scenario's relay on
//! loopback, which passes every line through the gates to the real agent.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpStream};
use std::process::ExitCode;

/// Runs the forward: connects to `LIVE_ACP_FORWARD`, copies stdin to it and it to stdout until
/// either side ends. Exit 0 when the relay closed the connection, 1 with a message on stderr
/// when it could not be reached.
pub(crate) fn run_forward() -> ExitCode {
    let Some(address) = crate::settings::acp_forward() else {
        eprintln!("acp-forward: LIVE_ACP_FORWARD is not set: the harness starts this command");
        return ExitCode::from(1);
    };
    let stream = match TcpStream::connect(&address) {
        Ok(stream) => stream,
        Err(e) => {
            eprintln!(
                "acp-forward: could not reach the scenario's ACP agent at {address}: {e}; \
                 it lives only while its scenario runs"
            );
            return ExitCode::from(1);
        }
    };
    let Ok(mut to_relay) = stream.try_clone() else {
        eprintln!("acp-forward: could not share the connection");
        return ExitCode::from(1);
    };
    // The client's messages: when it closes stdin, the relay sees the end of them.
    let _ = std::thread::Builder::new()
        .name("acp-forward-in".into())
        .spawn(move || {
            let mut stdin = std::io::stdin().lock();
            let mut buf = [0u8; 8192];
            loop {
                match stdin.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        if to_relay.write_all(&buf[..n]).is_err() {
                            break;
                        }
                    }
                }
            }
            let _ = to_relay.shutdown(Shutdown::Write);
        });
    let mut from_relay = stream;
    let mut stdout = std::io::stdout().lock();
    let mut buf = [0u8; 8192];
    loop {
        match from_relay.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                if stdout
                    .write_all(&buf[..n])
                    .and_then(|()| stdout.flush())
                    .is_err()
                {
                    break;
                }
            }
        }
    }
    ExitCode::SUCCESS
}
