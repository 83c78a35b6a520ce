//! Picks a free loopback TCP port for a private server.
//!
//! It must not keep the port: the socket is closed before the server binds, so
//! another process can take the port in between. The caller handles that race
//! by retrying when the server reports "address already in use", and by
//! checking that whoever answers on the port is its own child (pid check).

use crate::ServerError;
use std::io;
use std::net::{Ipv4Addr, TcpListener};

/// Start attempts when the port picked was taken before the server bound it.
const START_ATTEMPTS: usize = 5;

/// Why one start attempt failed.
pub(crate) enum Attempt {
    /// Lost the race for a port: try again with fresh ones.
    PortTaken(ServerError),
    Failed(ServerError),
}

impl Attempt {
    /// `PortTaken` when `taken`, else `Failed`.
    pub(crate) fn of(e: ServerError, taken: bool) -> Attempt {
        if taken {
            Attempt::PortTaken(e)
        } else {
            Attempt::Failed(e)
        }
    }
}

/// Runs `once` (a start on freshly picked ports) until it succeeds, fails
/// for another reason, or has lost the race for a port [`START_ATTEMPTS`]
/// times; the error is the last attempt's.
pub(crate) fn retry_taken<T>(
    mut once: impl FnMut() -> Result<T, Attempt>,
) -> Result<T, ServerError> {
    let mut attempt = 1;
    loop {
        match once() {
            Ok(t) => return Ok(t),
            Err(Attempt::PortTaken(_)) if attempt < START_ATTEMPTS => attempt += 1,
            Err(Attempt::PortTaken(e) | Attempt::Failed(e)) => return Err(e),
        }
    }
}

/// A Redis Cluster node also listens on its port + 10000 (the cluster
/// bus), so it refuses a port above this one. Every private server gets a
/// port at most this high, with its bus port free too, so any of them can
/// be a cluster node whatever the machine's `ip_local_port_range`.
pub(crate) const MAX_PORT: u16 = u16::MAX - BUS_OFFSET;
const BUS_OFFSET: u16 = 10_000;
/// Ports the kernel hands out above [`MAX_PORT`] are drawn again, this
/// many times at most.
const ATTEMPTS: usize = 200;

/// A port the kernel considered free a moment ago, on 127.0.0.1, at most
/// [`MAX_PORT`], whose cluster bus port was free too.
pub(crate) fn free_loopback_port() -> io::Result<u16> {
    for _ in 0..ATTEMPTS {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?;
        let port = listener.local_addr()?.port();
        if port <= MAX_PORT && TcpListener::bind((Ipv4Addr::LOCALHOST, port + BUS_OFFSET)).is_ok() {
            return Ok(port);
        }
    }
    Err(io::Error::new(
        io::ErrorKind::AddrNotAvailable,
        format!("no free loopback port at most {MAX_PORT} (with port + {BUS_OFFSET} free) in {ATTEMPTS} tries"),
    ))
}

#[cfg(test)]
mod tests {
    #[test]
    fn gives_ports_a_cluster_node_can_take() {
        for _ in 0..200 {
            let port = super::free_loopback_port().expect("bind 127.0.0.1:0");
            assert!(port != 0 && port <= super::MAX_PORT, "{port}");
        }
    }
}
