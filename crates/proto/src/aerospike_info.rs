//! Aerospike's info protocol (cold path: readiness, version, memory and
//! statistics probes): a request names values, one per line; the reply
//! gives `name\tvalue` lines. Both are framed by an 8-byte header: version
//! 2, type 1 (info), and the body's length as a 48-bit big-endian number.
//!
//! The parsers allocate (they return the names and values); the hot path
//! never uses this protocol.

use crate::DecodeError;
use std::collections::BTreeMap;

/// Header version byte of the protocol.
const VERSION: u8 = 2;
/// Header type byte of an info message.
const INFO: u8 = 1;
/// Header length.
pub const HEADER: usize = 8;
/// Largest info reply accepted: the biggest real ones (`statistics`, a
/// namespace's) are a few kilobytes.
pub const MAX_BODY: usize = 16 * 1024 * 1024;

/// Appends a request for `names` (e.g. `build`, `statistics`,
/// `namespace/test`); no names asks for the server's default set.
pub fn encode_request(buf: &mut Vec<u8>, names: &[&str]) {
    let body: usize = names.iter().map(|n| n.len() + 1).sum();
    buf.push(VERSION);
    buf.push(INFO);
    buf.extend_from_slice(&(body as u64).to_be_bytes()[2..]);
    for n in names {
        buf.extend_from_slice(n.as_bytes());
        buf.push(b'\n');
    }
}

/// The body's length from a complete header.
fn body_len(header: &[u8]) -> Result<usize, DecodeError> {
    if header[0] != VERSION || header[1] != INFO {
        return Err(DecodeError::Protocol);
    }
    let mut len = [0u8; 8];
    len[2..].copy_from_slice(&header[2..HEADER]);
    let len = u64::from_be_bytes(len);
    if len > MAX_BODY as u64 {
        return Err(DecodeError::TooLarge);
    }
    Ok(len as usize)
}

/// An info reply's names and values.
pub type Info = BTreeMap<String, String>;

/// One reply: each `name\tvalue` line as a pair (a name without a tab has
/// the empty value), and the bytes consumed; `Ok(None)` until the whole
/// message is in `buf`.
///
/// # Errors
/// A header that is not an info message's, a body above [`MAX_BODY`], or a
/// body that is not UTF-8.
pub fn parse_reply(buf: &[u8]) -> Result<Option<(Info, usize)>, DecodeError> {
    if buf.len() < HEADER {
        return Ok(None);
    }
    let len = body_len(buf)?;
    let Some(body) = buf.get(HEADER..HEADER + len) else {
        return Ok(None);
    };
    let text = std::str::from_utf8(body).map_err(|_| DecodeError::Protocol)?;
    let mut out = BTreeMap::new();
    for line in text.split('\n').filter(|l| !l.is_empty()) {
        let (name, value) = line.split_once('\t').unwrap_or((line, ""));
        out.insert(name.to_string(), value.to_string());
    }
    Ok(Some((out, HEADER + len)))
}

/// A `k=v;k=v` value (`statistics`, `namespace/NAME`) as pairs; an item
/// without `=` is kept with the empty value.
pub fn parse_pairs(value: &str) -> BTreeMap<String, String> {
    value
        .split(';')
        .filter(|item| !item.is_empty())
        .map(|item| {
            let (k, v) = item.split_once('=').unwrap_or((item, ""));
            (k.to_string(), v.to_string())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_is_framed_with_its_body_length() {
        let mut buf = Vec::new();
        encode_request(&mut buf, &["build", "namespace/test"]);
        assert_eq!(&buf[..8], &[2, 1, 0, 0, 0, 0, 0, 21]);
        assert_eq!(&buf[8..], b"build\nnamespace/test\n");
    }

    fn reply(body: &[u8]) -> Vec<u8> {
        let mut buf = vec![2, 1];
        buf.extend_from_slice(&(body.len() as u64).to_be_bytes()[2..]);
        buf.extend_from_slice(body);
        buf
    }

    #[test]
    fn a_reply_gives_each_name_and_value_once_complete() {
        let buf = reply(b"build\t8.1.0.0\nnamespace/test\tobjects=3;data_used_bytes=100\n");
        for cut in 0..buf.len() {
            assert_eq!(parse_reply(&buf[..cut]), Ok(None), "{cut} bytes");
        }
        let (map, used) = parse_reply(&buf).expect("valid").expect("complete");
        assert_eq!(used, buf.len());
        assert_eq!(map["build"], "8.1.0.0");
        let ns = parse_pairs(&map["namespace/test"]);
        assert_eq!(ns["objects"], "3");
        assert_eq!(ns["data_used_bytes"], "100");
    }

    #[test]
    fn foreign_and_oversized_messages_are_refused() {
        assert_eq!(
            parse_reply(&[2, 3, 0, 0, 0, 0, 0, 0]),
            Err(DecodeError::Protocol),
            "type 3 is a data message"
        );
        assert_eq!(
            parse_reply(&[2, 1, 0, 0, 0xff, 0, 0, 0]),
            Err(DecodeError::TooLarge)
        );
        assert_eq!(parse_reply(&reply(&[0xff])), Err(DecodeError::Protocol));
    }
}
