//! The load engine: connections, pipelining, closed-loop scheduling, timing
//! and recording.
//!
//! ```text
//! phase (workers, window edges) ─► conn (closed loop per connection)
//!     ─► driver (Op → bytes, reply → Outcome) ─► recorder (histograms, counts)
//! ```
//!
//! The engine knows nothing about which server binary runs or how it was
//! started (that is `kvbench-servers`), and it never prints: progress and
//! window edges reach the caller through [`events::Observer`].
#![deny(missing_docs)]

pub mod bufring;
pub mod cleanup;
mod client;
mod conn;
pub mod cpu;
pub mod driver;
pub mod events;
mod library;
pub mod limits;
pub mod phase;
pub mod recorder;
pub mod route;
pub mod schedule;
pub mod series;
pub mod share;
pub mod timer;
pub mod union_check;
pub mod uring;

pub use events::{Observer, OpSecond, Progress, SecondStats, Silent};
pub use phase::{
    run_phase, run_share, CutShort, Io, PhaseConfig, PhaseKind, PhaseOutput, Rate, Window,
};
pub use route::Topology;
pub use schedule::Arrival;
pub use share::{Share, Slice, StartAt};

use std::net::SocketAddr;

/// Why a phase could not run.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// A connection could not be opened; nothing was measured.
    #[error("cannot connect to {addr}: {message}")]
    Connect {
        /// The server address.
        addr: SocketAddr,
        /// What the OS said.
        message: String,
    },
    /// The stop flag was raised (Ctrl-C).
    #[error("interrupted")]
    Interrupted,
    /// Settings the engine cannot run with.
    #[error("{0}")]
    Config(String),
}
