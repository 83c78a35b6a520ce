//! Seeded, deterministic generators of keys, values and operations with
//! YCSB semantics. This crate does no I/O: it turns a [`WorkloadSpec`] and a
//! seed into a stream of protocol-neutral [`Op`]s, and the engine turns those
//! into requests.
//!
//! - [`keys`]: record number → key name, exactly as YCSB builds it;
//! - [`dist`]: YCSB's number generators (uniform, zipfian, latest, ...);
//! - [`values`]: field contents written straight into a send buffer;
//! - [`rng`]: one disjoint seeded stream per client;
//! - [`spec`]: what a workload is, and the papers' presets;
//! - [`stream`]: a client's operation stream.
#![deny(missing_docs)]

pub mod dist;
pub mod keys;
pub mod op;
pub mod rng;
pub mod spec;
pub mod stream;
pub mod values;

pub use op::Op;
pub use rng::{client_rngs, purpose_seed, Rng};
pub use spec::{preset, Preset, RequestDistribution, SpecError, WorkloadSpec, PRESETS};
pub use stream::OpStream;
