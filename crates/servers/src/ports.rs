//! Picks a free loopback TCP port for a private server.
//!
//! It must not keep the port: the socket is closed before the server binds, so
//! another process can take the port in between. The caller handles that race
//! by retrying when the server reports "address already in use", and by
//! checking that whoever answers on the port is its own child (pid check).

use std::io;
use std::net::{Ipv4Addr, TcpListener};

/// A port the kernel considered free a moment ago, on 127.0.0.1.
pub(crate) fn free_loopback_port() -> io::Result<u16> {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?;
    Ok(listener.local_addr()?.port())
}

#[cfg(test)]
mod tests {
    #[test]
    fn gives_a_nonzero_port() {
        let port = super::free_loopback_port().expect("bind 127.0.0.1:0");
        assert_ne!(port, 0);
    }
}
