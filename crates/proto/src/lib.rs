//! Wire codecs for kvbench's hot path: RESP (Redis, Valkey, KeyDB, Dragonfly) and
//! the classic memcache text protocol; and Aerospike's info protocol, for
//! its probes only.
//!
//! Encoders append to a caller-owned `Vec<u8>` so the engine can reuse one send
//! buffer per connection; parsers read a borrowed `&[u8]` and report "not enough
//! bytes yet" as `Ok(None)` so the caller simply reads more and retries.
//!
//! This crate must not own sockets, clocks or threads, and the hot-path parsers
//! (`resp::parse_reply`, `memcache_text::parse_reply`) must not allocate: they
//! return a small `Copy` summary instead of payload copies, so the measurement
//! loop pays only for scanning bytes. Allocating `parse_value` / `parse_stats` /
//! `parse_values` exist for cold paths (probes, verification) only.
#![deny(missing_docs)]

pub mod aerospike_info;
mod dec;
pub mod memcache_text;
pub mod resp;

/// `b` up to its first line end (the whole of `b` without one).
fn first_line(b: &[u8]) -> &[u8] {
    let end = b.iter().position(|&c| c == b'\r' || c == b'\n');
    &b[..end.unwrap_or(b.len())]
}

/// Largest declared length (bulk string, aggregate count, memcache data block)
/// accepted. Anything above is treated as a corrupt stream rather than a reason
/// to wait for half a gigabyte of input.
pub const MAX_LEN: usize = 512 * 1024 * 1024;

/// Why a byte stream cannot be decoded. `Copy` and allocation-free so that the
/// hot path can return it without cost; once returned, the connection's stream
/// position is unknown and the caller should drop the connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// Framing is malformed: unknown type byte, bad or negative length, a line
    /// not ending in CRLF, a data block not followed by CRLF, an unexpected line.
    #[error("malformed protocol framing")]
    Protocol,
    /// A declared length exceeds [`MAX_LEN`], or a line grew past the line limit
    /// without a terminator; waiting for more input would only grow the buffer.
    #[error("declared length or line exceeds the protocol limit")]
    TooLarge,
    /// Aggregates are nested deeper than [`resp::MAX_DEPTH`].
    #[error("reply nesting too deep")]
    NestingTooDeep,
}
