//! Number generators with the semantics of YCSB core 0.17.0's
//! `site.ycsb.generator` package, and the CoreWorkload key chooser built on
//! them. Nothing here does I/O.
//!
//! Every generator takes the random source as an argument instead of owning
//! one: YCSB draws from an unseeded `ThreadLocalRandom`, whereas kvbench gives
//! each client its own seeded stream ([`crate::rng`]) so a run can be repeated.
//! Random bits become numbers exactly as in Java ([`next_double`]), so for
//! the same uniform draws every generator returns what YCSB's would.
//! What YCSB shares between client threads (the insert counter behind
//! `latest`, the acknowledged-insert counter, the `sequential` position) is
//! shared here too, through atomics; everything else is per client.

mod chooser;
mod counter;
mod discrete;
mod exponential;
mod field_length;
mod histogram;
mod hotspot;
mod java_random;
mod memtier;
mod number;
mod scrambled_zipfian;
mod sequential;
mod skewed_latest;
mod uniform;
mod zipfian;

pub use chooser::{expected_new_keys, KeyChooser, KeyDistribution, KeySpace};
pub use counter::{AcknowledgedCounterGenerator, CounterGenerator, LastValue, WINDOW_SIZE};
pub use discrete::DiscreteGenerator;
pub use exponential::{
    ExponentialGenerator, EXPONENTIAL_FRAC_DEFAULT, EXPONENTIAL_PERCENTILE_DEFAULT,
};
pub use field_length::FieldLengthGenerator;
pub use histogram::HistogramGenerator;
pub use hotspot::{
    HotspotIntegerGenerator, HOTSPOT_DATA_FRACTION_DEFAULT, HOTSPOT_OPN_FRACTION_DEFAULT,
};
pub use java_random::{next_double, next_long};
pub use memtier::{ClientSequence, GaussianKeys};
pub use number::{DistError, NumberGenerator};
pub use scrambled_zipfian::{ScrambledZipfianGenerator, ITEM_COUNT, USED_ZIPFIAN_CONSTANT, ZETAN};
pub use sequential::SequentialGenerator;
pub use skewed_latest::SkewedLatestGenerator;
pub use uniform::UniformLongGenerator;
pub use zipfian::{zeta, zeta_incremental, ZipfianGenerator, ZIPFIAN_CONSTANT};

// Shared by the generators (a child module sees its parent's imports).
use number::{check_fraction, interval};
