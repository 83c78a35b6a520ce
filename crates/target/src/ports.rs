//! Free loopback ports. The OS picks a free port for a socket bound to port 0;
//! we read it back and release it for the server. Another process could take
//! it in between, so callers retry a start that fails with "address in use".

use std::net::{Ipv4Addr, TcpListener};

/// A port on 127.0.0.1 that was free a moment ago.
///
/// # Errors
/// The OS error when no socket can be bound.
pub fn free_port() -> std::io::Result<u16> {
    let l = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?;
    Ok(l.local_addr()?.port())
}
