//! Blocking request/response exchanges for probes and readiness checks: a
//! short-lived connection, a timeout, and the proto crate's cold-path parsers.

use crate::TargetError;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

const PROBE_TIMEOUT: Duration = Duration::from_secs(5);

/// Sends `request` and reads until `parse` yields a value.
pub(crate) fn exchange<T>(
    addr: SocketAddr,
    request: &[u8],
    parse: impl Fn(&[u8]) -> Result<Option<T>, kvbench_proto::DecodeError>,
) -> Result<T, TargetError> {
    let err = |message: String| TargetError::Probe {
        addr: addr.to_string(),
        message,
    };
    let mut sock = TcpStream::connect_timeout(&addr, PROBE_TIMEOUT)
        .map_err(|e| err(format!("cannot connect: {e}")))?;
    sock.set_read_timeout(Some(PROBE_TIMEOUT))
        .map_err(|e| err(e.to_string()))?;
    sock.set_write_timeout(Some(PROBE_TIMEOUT))
        .map_err(|e| err(e.to_string()))?;
    sock.write_all(request)
        .map_err(|e| err(format!("write failed: {e}")))?;
    let mut buf = Vec::with_capacity(16 * 1024);
    let mut chunk = [0u8; 16 * 1024];
    loop {
        if let Some(v) = parse(&buf).map_err(|e| err(format!("malformed reply: {e}")))? {
            return Ok(v);
        }
        let n = sock
            .read(&mut chunk)
            .map_err(|e| err(format!("read failed: {e}")))?;
        if n == 0 {
            return Err(err("connection closed before a full reply".into()));
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}
