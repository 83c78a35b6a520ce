//! How kvbench reaches a server: a target's URL, its credentials (kept in a
//! [`Secret`]), its TLS settings, and the opening of one ready connection.
//! Probes, cluster discovery and the engine all open connections here, so
//! a password or a certificate is handled in one place.
//!
//! This crate must not know workloads, topologies or measurements: it
//! parses, connects, shakes hands and authenticates, nothing else.
#![deny(missing_docs)]

mod fit;
mod open;
mod secret;
mod tls;
mod url;

pub use open::{
    exchange, exchange_on, open, open_async, Access, AsyncStream, ConnectError, Stream, PLAIN,
};
pub use secret::Secret;
pub use tls::{Tls, TlsError, TlsMaterial, TlsOptions};
pub use url::{Family, HostPort, Shape, TargetUrl, UrlError, DEFAULT_NAMESPACE};
