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
mod error;
pub mod events;
mod library;
pub mod limits;
mod nanos;
pub mod outage;
mod outcome;
pub mod phase;
pub mod recorder;
pub mod reopen;
pub mod retry;
pub mod route;
mod runs;
pub mod schedule;
pub mod series;
pub mod share;
pub mod timer;
pub mod union_check;
pub mod uring;

pub use error::EngineError;
pub use events::{Observer, OpSecond, Progress, SecondStats, Silent};
pub use library::connections_per_node;
pub use phase::{
    replay, run_phase, run_share, CutShort, Io, PhaseConfig, PhaseKind, PhaseOutput, Rate, Replay,
    Window,
};
pub use reopen::Backoff;
pub use retry::Retry;
pub use route::Topology;
pub use schedule::Arrival;
pub use share::{Share, Slice, StartAt};
