//! What became of a request, as the recorders count it: its outcome, the
//! kind of its failure, and the longest latency a histogram keeps. Apart
//! from the drivers that decide it and the recorders that count it, so
//! neither depends on the other.

/// Highest latency the histograms track, in nanoseconds (60 s).
pub const MAX_LATENCY_NS: u64 = 60_000_000_000;

/// The phase's latency histograms keep three significant digits: values
/// below 2,048 ns exact, every larger one within 0.1%.
pub(crate) const RUN_SIGFIG: u8 = 3;

/// A latency histogram of the phase's precision.
pub(crate) fn run_histogram() -> hdrhistogram::Histogram<u64> {
    // The bounds are constants that hdrhistogram accepts; failure here is a
    // programming error, not an input error.
    hdrhistogram::Histogram::new_with_bounds(1, MAX_LATENCY_NS, RUN_SIGFIG)
        .expect("valid histogram bounds")
}

/// What a reply means for the measurement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// A read hit or an acknowledged write: counted and timed.
    Ok,
    /// A read that found no record: counted apart, never timed.
    Miss,
    /// An error reply, a reply of the wrong shape, or (with `dataintegrity`)
    /// a value that is not the one written: counted apart, never timed.
    Error,
}

/// Why a request failed. Failures are counted by kind and never timed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The server answered with an error (`-ERR`, `SERVER_ERROR`, `NOT_STORED`, ...).
    ErrorReply,
    /// No reply within the timeout.
    Timeout,
    /// The server closed the connection.
    Closed,
    /// A socket error (reset, refused).
    Io,
    /// Bytes that are not the protocol.
    Protocol,
    /// A value read back is not the one written (`dataintegrity`).
    Integrity,
}

impl ErrorKind {
    pub(crate) const COUNT: usize = 6;
    pub(crate) const ALL: [ErrorKind; ErrorKind::COUNT] = [
        ErrorKind::ErrorReply,
        ErrorKind::Timeout,
        ErrorKind::Closed,
        ErrorKind::Io,
        ErrorKind::Protocol,
        ErrorKind::Integrity,
    ];

    /// The name used in the record.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::ErrorReply => "error_reply",
            ErrorKind::Timeout => "timeout",
            ErrorKind::Closed => "closed",
            ErrorKind::Io => "io",
            ErrorKind::Protocol => "protocol",
            ErrorKind::Integrity => "integrity",
        }
    }
}
