//! A system kvbench does not start, as `--target` and its password and TLS
//! flags resolved it (the binary's `target.rs` checks the flags before
//! anything runs).
//!
//! The password lives only in the [`Access`] handed to connections; what is
//! printed or stored is [`Target::redacted`].

use kvbench_connect::{Access, TargetUrl, TlsMaterial};
use kvbench_model::{Endpoints, TopologyKind};
use std::net::SocketAddr;
use std::sync::Arc;

/// A resolved target.
#[derive(Debug, Clone)]
pub struct Target {
    url: TargetUrl,
    /// Every host of the URL (a cluster's seeds, a pool's nodes), resolved.
    pub addrs: Vec<SocketAddr>,
    /// How to open a connection to any of its nodes.
    pub access: Arc<Access>,
    /// The TLS settings with their files read, for workers that cannot
    /// read them (`--workers`); `None` without TLS.
    pub tls_material: Option<TlsMaterial>,
}

/// What kvbench may change on a target, from the safety flags.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Safety {
    /// `--flush`: empty the database before loading.
    pub flush: bool,
    /// `--allow-existing`: load among keys that are already there.
    pub allow_existing: bool,
    /// `--cleanup`: delete the keys each run wrote.
    pub cleanup: bool,
}

impl Target {
    /// A target at `addrs`, the resolved hosts of `url`.
    pub fn new(
        url: TargetUrl,
        addrs: Vec<SocketAddr>,
        access: Access,
        tls_material: Option<TlsMaterial>,
    ) -> Target {
        Target {
            url,
            addrs,
            access: Arc::new(access),
            tls_material,
        }
    }

    /// The URL as it may be printed and stored (password as `***`).
    pub fn redacted(&self) -> String {
        self.url.redacted()
    }

    /// How the target is deployed.
    pub fn topology(&self) -> TopologyKind {
        self.url.shape.topology()
    }

    /// Where clients start, as the URL says: a cluster's seeds, a pool's
    /// nodes, a Sentinel group's sentinels, or the one server.
    pub fn endpoints(&self) -> Endpoints {
        self.url.endpoints(&self.addrs)
    }
}
