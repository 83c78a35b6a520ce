//! Statistics over what kvbench measured, kept apart from measuring and
//! from rendering (as criterion keeps its analysis apart from its reports):
//! [`paired`] for verdicts between alternatives measured in the same
//! blocks, [`summary`] for repeated iterations of one cell, [`stability`] for the
//! per-second figures of one run, [`hist`] for the stored latency
//! histograms (sums, percentiles, spectra).

pub mod cache;
pub mod hist;
pub mod paired;
pub mod server_time;
pub mod stability;
pub mod summary;

pub use stability::{assess, Stability};
pub use summary::Summary;
