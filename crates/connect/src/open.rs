//! One ready connection: TCP, then the TLS handshake, then AUTH and SELECT,
//! so that whoever gets the stream (a probe, a cluster discovery, a
//! benchmark connection) sends its first request to a server that will
//! answer it. Blocking for the cold path and the io_uring loop (which
//! takes the plain socket over), async for the tokio loop (the only one
//! that runs TLS, through tokio-rustls).
//!
//! Every error is one line that names the step that failed, and never the
//! password.

use crate::{Secret, Tls};
use kvbench_proto::resp::{self, Value};
use rustls::{ClientConnection, StreamOwned};
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};

/// How to open a connection to any node of a target.
#[derive(Debug, Clone, Default)]
pub struct Access {
    /// ACL user; `None` is the default user.
    pub user: Option<String>,
    /// Sent with AUTH when set.
    pub password: Option<Secret>,
    /// Redis logical database; SELECTed when not 0.
    pub db: u32,
    /// `rediss://`.
    pub tls: Option<Tls>,
    /// Aerospike: the namespace the records go to (the URL's path, or the
    /// private server's); `None` for every other system.
    pub namespace: Option<String>,
}

/// Why a connection could not be made ready. The message leaves the address
/// out (every caller puts it first) and never holds the password.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    /// TCP connect failed (refused, unreachable, timed out).
    #[error("{source}")]
    Connect {
        /// Where.
        addr: SocketAddr,
        /// Why.
        source: io::Error,
    },
    /// The TLS handshake failed (certificate not trusted, wrong name, not TLS).
    #[error("TLS handshake failed: {message}")]
    Tls {
        /// Where.
        addr: SocketAddr,
        /// rustls's reason.
        message: String,
    },
    /// The server refused AUTH or SELECT.
    #[error("{step} refused: {message}")]
    Refused {
        /// Where.
        addr: SocketAddr,
        /// `AUTH as user 'app'`, `SELECT 2`.
        step: String,
        /// The server's error reply.
        message: String,
    },
    /// Sending or receiving failed during set-up.
    #[error("{step}: {source}")]
    Io {
        /// Where.
        addr: SocketAddr,
        /// What was being done.
        step: &'static str,
        /// Why.
        source: io::Error,
    },
}

impl ConnectError {
    /// The address the error concerns.
    pub fn addr(&self) -> SocketAddr {
        match self {
            ConnectError::Connect { addr, .. }
            | ConnectError::Tls { addr, .. }
            | ConnectError::Refused { addr, .. }
            | ConnectError::Io { addr, .. } => *addr,
        }
    }
}

/// No TLS, no AUTH, database 0: how kvbench reaches a server it started.
pub const PLAIN: Access = Access {
    user: None,
    password: None,
    db: 0,
    tls: None,
    namespace: None,
};

impl Access {
    /// [`PLAIN`], owned.
    pub fn plain() -> Access {
        Access::default()
    }

    /// True for `rediss://`.
    pub fn is_tls(&self) -> bool {
        self.tls.is_some()
    }

    /// The commands sent on every new connection, and their names (for errors).
    fn prelude(&self) -> (Vec<u8>, Vec<String>) {
        let mut buf = Vec::new();
        let mut steps = Vec::new();
        if self.namespace.is_some() {
            // Aerospike: its client library logs in itself; kvbench's own
            // connections to it (info probes) send no RESP commands.
            return (buf, steps);
        }
        if let Some(password) = &self.password {
            match &self.user {
                Some(user) => {
                    resp::encode_command(
                        &mut buf,
                        &[b"AUTH", user.as_bytes(), password.expose().as_bytes()],
                    );
                    steps.push(format!("AUTH as user '{user}'"));
                }
                None => {
                    resp::encode_command(&mut buf, &[b"AUTH", password.expose().as_bytes()]);
                    steps.push("AUTH".to_string());
                }
            }
        }
        if self.db != 0 {
            let db = self.db.to_string();
            resp::encode_command(&mut buf, &[b"SELECT", db.as_bytes()]);
            steps.push(format!("SELECT {db}"));
        }
        (buf, steps)
    }
}

/// Checks the prelude's replies in `buf`: `Ok(true)` when all arrived and
/// were accepted, `Ok(false)` when more bytes are needed.
fn check_replies(addr: SocketAddr, steps: &[String], buf: &[u8]) -> Result<bool, ConnectError> {
    let mut at = 0;
    for step in steps {
        let parsed = resp::parse_value(&buf[at..]).map_err(|e| ConnectError::Refused {
            addr,
            step: step.clone(),
            message: format!("undecodable reply: {e}"),
        })?;
        let Some((value, used)) = parsed else {
            return Ok(false);
        };
        at += used;
        if let Value::Error(message) = value {
            return Err(ConnectError::Refused {
                addr,
                step: step.clone(),
                message,
            });
        }
    }
    Ok(true)
}

/// A blocking connection, plain or TLS.
pub enum Stream {
    /// TCP.
    Plain(TcpStream),
    /// TLS over TCP.
    Tls(Box<StreamOwned<ClientConnection, TcpStream>>),
}

impl Stream {
    /// The socket, for a loop that drives it itself; `None` for TLS, whose
    /// bytes only rustls can produce.
    pub fn into_plain(self) -> Option<TcpStream> {
        match self {
            Stream::Plain(s) => Some(s),
            Stream::Tls(_) => None,
        }
    }

    /// The TCP socket underneath.
    pub fn tcp(&self) -> &TcpStream {
        match self {
            Stream::Plain(s) => s,
            Stream::Tls(s) => s.get_ref(),
        }
    }
}

/// A blocking read or write that a signal interrupted is simply repeated
/// (`read_exact` and `write_all` do that, a bare `read` does not): the
/// callers wait for whole replies, and EINTR is no reason to give one up.
fn again<T>(mut op: impl FnMut() -> io::Result<T>) -> io::Result<T> {
    loop {
        match op() {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            other => return other,
        }
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Plain(s) => again(|| s.read(buf)),
            Stream::Tls(s) => again(|| s.read(buf)),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Plain(s) => again(|| s.write(buf)),
            Stream::Tls(s) => again(|| s.write(buf)),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        match self {
            Stream::Plain(s) => s.flush(),
            Stream::Tls(s) => s.flush(),
        }
    }
}

/// Opens a ready blocking connection to `addr`, with `timeout` for the
/// connect and for each read and write (left set on the stream).
///
/// # Errors
/// [`ConnectError`] naming the step that failed.
pub fn open(addr: SocketAddr, access: &Access, timeout: Duration) -> Result<Stream, ConnectError> {
    let io = |step: &'static str| move |source| ConnectError::Io { addr, step, source };
    let tcp = TcpStream::connect_timeout(&addr, timeout)
        .map_err(|source| ConnectError::Connect { addr, source })?;
    // Requests are written whole; Nagle would only add delay.
    tcp.set_nodelay(true).map_err(io("set TCP_NODELAY"))?;
    tcp.set_read_timeout(Some(timeout))
        .and_then(|()| tcp.set_write_timeout(Some(timeout)))
        .map_err(io("set timeouts"))?;
    let mut stream = match &access.tls {
        None => Stream::Plain(tcp),
        Some(tls) => {
            let conn = ClientConnection::new(tls.config.clone(), tls.server_name.clone()).map_err(
                |e| ConnectError::Tls {
                    addr,
                    message: e.to_string(),
                },
            )?;
            let mut s = StreamOwned::new(conn, tcp);
            while s.conn.is_handshaking() {
                again(|| s.conn.complete_io(&mut s.sock)).map_err(|e| tls_error(addr, e))?;
            }
            Stream::Tls(Box::new(s))
        }
    };
    let (request, steps) = access.prelude();
    if !steps.is_empty() {
        stream.write_all(&request).map_err(io("send AUTH/SELECT"))?;
        stream.flush().map_err(io("send AUTH/SELECT"))?;
        let mut buf = Vec::new();
        let mut chunk = [0u8; 4096];
        while !check_replies(addr, &steps, &buf)? {
            let n = stream
                .read(&mut chunk)
                .map_err(io("read AUTH/SELECT reply"))?;
            if n == 0 {
                return Err(io("read AUTH/SELECT reply")(
                    io::ErrorKind::UnexpectedEof.into(),
                ));
            }
            buf.extend_from_slice(&chunk[..n]);
        }
    }
    Ok(stream)
}

/// One request and its one complete reply, on a fresh ready connection:
/// the cold path's queries (probes, `CLUSTER SLOTS`). `parse` returns the
/// value and the bytes it used, or `None` while the reply is incomplete; a
/// reply growing past `max_reply` bytes is refused rather than buffered.
/// Errors are plain messages; the caller knows which server they concern.
///
/// # Errors
/// A message naming the step that failed (set-up, send, receive, decode).
pub fn exchange<T, E: std::fmt::Display>(
    addr: SocketAddr,
    access: &Access,
    timeout: Duration,
    request: &[u8],
    max_reply: usize,
    parse: impl FnMut(&[u8]) -> Result<Option<(T, usize)>, E>,
) -> Result<T, String> {
    let mut stream = open(addr, access, timeout).map_err(|e| e.to_string())?;
    exchange_on(&mut stream, request, max_reply, parse)
}

/// As [`exchange`], on a connection the caller keeps for several queries
/// (one request, its one reply, then the next).
///
/// # Errors
/// A message naming the step that failed (send, receive, decode).
pub fn exchange_on<T, E: std::fmt::Display>(
    stream: &mut Stream,
    request: &[u8],
    max_reply: usize,
    mut parse: impl FnMut(&[u8]) -> Result<Option<(T, usize)>, E>,
) -> Result<T, String> {
    stream
        .write_all(request)
        .and_then(|()| stream.flush())
        .map_err(|e| format!("send: {e}"))?;
    let mut buf = Vec::with_capacity(16 * 1024);
    let mut chunk = [0u8; 16 * 1024];
    loop {
        let n = match stream.read(&mut chunk) {
            Ok(n) => n,
            // A signal (a child server exiting, Ctrl-C's handler thread)
            // interrupted the wait, not the connection: read again, as
            // write_all does for the send.
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(format!("receive: {e}")),
        };
        if n == 0 {
            return Err(format!(
                "connection closed after {} bytes of an incomplete reply",
                buf.len()
            ));
        }
        buf.extend_from_slice(&chunk[..n]);
        match parse(&buf) {
            Ok(Some((value, _))) => return Ok(value),
            Ok(None) if buf.len() < max_reply => {}
            Ok(None) => return Err(format!("reply larger than {max_reply} bytes")),
            Err(e) => {
                let preview = String::from_utf8_lossy(&buf[..buf.len().min(120)]);
                return Err(format!("undecodable reply: {e}: {preview:?}"));
            }
        }
    }
}

/// rustls reports handshake failures as `InvalidData` I/O errors; the
/// inner error is the useful part ("invalid peer certificate: UnknownIssuer").
fn tls_error(addr: SocketAddr, e: io::Error) -> ConnectError {
    let message = match e.get_ref() {
        Some(inner) => inner.to_string(),
        None if e.kind() == io::ErrorKind::UnexpectedEof => {
            "the server closed the connection (is it a TLS port?)".to_string()
        }
        None => e.to_string(),
    };
    ConnectError::Tls { addr, message }
}

/// A connection for the tokio loop, plain or TLS.
pub enum AsyncStream {
    /// TCP.
    Plain(tokio::net::TcpStream),
    /// TLS over TCP.
    Tls(Box<tokio_rustls::client::TlsStream<tokio::net::TcpStream>>),
}

impl AsyncStream {
    /// The address of the server at the other end.
    ///
    /// # Errors
    /// When the socket is no longer connected.
    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        match self {
            AsyncStream::Plain(s) => s.peer_addr(),
            AsyncStream::Tls(s) => s.get_ref().0.peer_addr(),
        }
    }
}

impl AsyncRead for AsyncStream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            AsyncStream::Plain(s) => Pin::new(s).poll_read(cx, buf),
            AsyncStream::Tls(s) => Pin::new(s.as_mut()).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for AsyncStream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            AsyncStream::Plain(s) => Pin::new(s).poll_write(cx, buf),
            AsyncStream::Tls(s) => Pin::new(s.as_mut()).poll_write(cx, buf),
        }
    }
    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            AsyncStream::Plain(s) => Pin::new(s).poll_flush(cx),
            AsyncStream::Tls(s) => Pin::new(s.as_mut()).poll_flush(cx),
        }
    }
    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            AsyncStream::Plain(s) => Pin::new(s).poll_shutdown(cx),
            AsyncStream::Tls(s) => Pin::new(s.as_mut()).poll_shutdown(cx),
        }
    }
}

/// [`open`] for the tokio loop. A plain connection is opened by [`open`] on
/// tokio's blocking pool (so a worker reopening a lost connection goes on
/// driving its others meanwhile) and handed to tokio; a TLS one shakes
/// hands through tokio-rustls, since a finished rustls session cannot be
/// moved into it.
///
/// # Errors
/// [`ConnectError`] naming the step that failed.
pub async fn open_async(
    addr: SocketAddr,
    access: &Access,
    timeout: Duration,
) -> Result<AsyncStream, ConnectError> {
    let io = |step: &'static str| move |source| ConnectError::Io { addr, step, source };
    let Some(tls) = &access.tls else {
        let owned = access.clone();
        let tcp = tokio::task::spawn_blocking(move || open(addr, &owned, timeout))
            .await
            .map_err(|e| io("open")(io::Error::other(e.to_string())))??
            .into_plain()
            .ok_or_else(|| io("open")(io::ErrorKind::Unsupported.into()))?;
        tcp.set_nonblocking(true).map_err(io("set non-blocking"))?;
        let tcp = tokio::net::TcpStream::from_std(tcp).map_err(io("register with tokio"))?;
        return Ok(AsyncStream::Plain(tcp));
    };
    let timed_out = || io::Error::new(io::ErrorKind::TimedOut, format!("no answer in {timeout:?}"));
    let tcp = tokio::time::timeout(timeout, tokio::net::TcpStream::connect(addr))
        .await
        .unwrap_or_else(|_| Err(timed_out()))
        .map_err(|source| ConnectError::Connect { addr, source })?;
    tcp.set_nodelay(true).map_err(io("set TCP_NODELAY"))?;
    let connector = tokio_rustls::TlsConnector::from(tls.config.clone());
    let handshake = connector.connect(tls.server_name.clone(), tcp);
    let tls_stream = tokio::time::timeout(timeout, handshake)
        .await
        .unwrap_or_else(|_| Err(timed_out()))
        .map_err(|e| tls_error(addr, e))?;
    let mut stream = AsyncStream::Tls(Box::new(tls_stream));
    let (request, steps) = access.prelude();
    if !steps.is_empty() {
        let exchange = async {
            stream
                .write_all(&request)
                .await
                .map_err(io("send AUTH/SELECT"))?;
            stream.flush().await.map_err(io("send AUTH/SELECT"))?;
            let mut buf = Vec::new();
            let mut chunk = [0u8; 4096];
            while !check_replies(addr, &steps, &buf)? {
                let n = stream
                    .read(&mut chunk)
                    .await
                    .map_err(io("read AUTH/SELECT reply"))?;
                if n == 0 {
                    return Err(io("read AUTH/SELECT reply")(
                        io::ErrorKind::UnexpectedEof.into(),
                    ));
                }
                buf.extend_from_slice(&chunk[..n]);
            }
            Ok(())
        };
        tokio::time::timeout(timeout, exchange)
            .await
            .unwrap_or_else(|_| Err(io("read AUTH/SELECT reply")(timed_out())))?;
    }
    Ok(stream)
}
