//! Seeded, deterministic generators of keys, values and operations with
//! YCSB semantics, and the YCSB property files that describe them. This
//! crate does no I/O except reading the files a user names (a property
//! file, a field-length histogram), in one function ([`input::read_file`],
//! bounded, regular files only, which the binary uses for its files too): it
//! turns properties into a [`WorkloadSpec`], and a spec and a seed into
//! streams of protocol-neutral [`Op`]s; the engine turns those into requests.
//!
//! - [`input`]: reading a named file, bounded;
//! - [`properties`]: Java `.properties` syntax, with file/line provenance;
//! - [`ycsb`]: what CoreWorkload's properties mean ([`WorkloadSpec::from_properties`]);
//! - [`spec`]: what a workload is, checked;
//! - [`presets`]: built-in workloads, written as properties;
//! - [`keys`]: record number → key name, exactly as YCSB builds it;
//! - [`generator`]: YCSB's number generators (uniform, zipfian, latest, ...);
//! - [`values`]: field contents written straight into a send buffer;
//! - [`rng`]: one disjoint seeded stream per client;
//! - [`stream`]: a run's shared generators and each client's operation stream;
//! - [`zsets`]: the sorted sets of the `ZUNIONSTORE` workload;
//! - [`command`]: command templates (memtier's `--command`);
//! - [`bounds`]: the largest numbers a workload may ask for.
#![deny(missing_docs)]

pub mod bounds;
pub mod cache_aside;
pub mod command;
pub mod generator;
pub mod input;
pub mod keys;
pub mod op;
pub mod presets;
pub mod properties;
pub mod rng;
pub mod spec;
pub mod stream;
pub mod values;
pub mod ycsb;
pub mod zsets;

pub use op::Op;
pub use presets::{preset, Preset, PRESETS};
pub use properties::{Origin, Properties, PropertyError};
pub use rng::{client_rngs, purpose_seed, Rng};
pub use spec::{
    ClientSpec, CommandSpec, DataModel, FieldLengthDistribution, InsertOrder, Layout,
    MemcachedUpdate, Mix, RequestDistribution, ScanLengthDistribution, SpecError, WorkloadSpec,
};
pub use stream::{InsertSpace, OpStream, Workload};
pub use ycsb::{Warning, WarningKind};
pub use zsets::ZsetShape;
