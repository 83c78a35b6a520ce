//! Starts, stops and probes the systems under test (Redis, Valkey,
//! Memcached, and any server speaking their protocols).
//!
//! A [`Server`] is a guard around a private server process: started in the
//! foreground on a free loopback port, in a fresh temporary directory, with
//! every setting that differs from the server's defaults recorded as a
//! [`Setting`]. Dropping the guard stops the process and removes the directory;
//! the process also dies if kvbench itself is killed. With `--netns` each
//! process starts in a network namespace of its own instead ([`netns`]).
//!
//! This crate must not generate load: everything here is cold path (blocking
//! sockets, one short-lived connection per probe). It must never leave a server
//! process running, never touch a server it did not start, and never report a
//! number it could not read (such fields stay `None`).
#![deny(missing_docs)]

pub mod aerospike;
mod binary;
pub mod canary;
mod cluster;
mod deployment;
mod env;
mod error;
mod eviction;
pub mod fault;
mod max_memory;
pub mod netns;
mod pool;
mod ports;
mod probe;
mod process;
mod proxy;
mod remote;
mod sentinel;
mod server;
mod shape;
mod spec;
mod start;
mod system;
pub mod workdir;

pub use binary::{binary_version, find_binary};
pub use cluster::Cluster;
pub use deployment::Deployment;
pub use env::{machine_environment, process_cpu_seconds};
pub use error::ServerError;
pub use eviction::Eviction;
pub use kvbench_model::{Environment, Probe, Protocol, Setting, SystemKind, TopologyKind};
pub use max_memory::MaxMemory;
pub use netns::{Host, Hosts, Link, NetnsError, Network};
pub use pool::Pool;
pub use probe::CpuTimes;
pub use process::{Ending, ProcessGuard};
pub use proxy::Proxied;
pub use remote::RemoteServer;
pub use sentinel::SentinelGroup;
pub use server::{Server, ServerVersion};
pub use shape::{Shape, MAX_NODES};
pub use spec::{DataSize, ServerSpec};
pub use start::{start, Plan, StartError};
pub use system::redis::cmdstat;
pub use system::{
    check_eviction, check_extra_args, check_faults, check_limit, check_max_memory, check_topology,
    connection_limit, data_bytes, default_eviction, idle_bytes, memory_limit_mb, private_namespace,
};
