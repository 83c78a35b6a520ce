//! The protocol-neutral operation the engine translates into wire requests.
//!
//! Generators produce [`Op`]s; the engine's drivers turn them into RESP or
//! memcache bytes. Keeping this neutral is what lets one workload definition
//! drive every system identically. An `Op` is small and `Copy`: it carries
//! choices (which record, which field, how long a scan), never bytes.

use kvbench_model::OpKind;

/// One operation to issue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Op {
    /// What to do.
    pub kind: OpKind,
    /// The record number (for a scan: the start record); the key name is
    /// derived from it by [`crate::keys::KeyNamer`].
    pub keynum: u64,
    /// The one field this operation touches, or `None` for all fields:
    /// for a read or a scan the field read (`readallfields=false`), for an
    /// update or the write half of a read-modify-write the field written
    /// (`writeallfields=false`). Always `None` for an insert.
    pub field: Option<u32>,
    /// Read-modify-write only: the field its read half reads (`None`: all).
    /// YCSB draws it separately from the field written.
    pub read_field: Option<u32>,
    /// Scan only: how many records to read (at least 1); 0 otherwise.
    pub scan_length: u32,
    /// The client whose stream drew it: a `ZUNIONSTORE` writes into that
    /// client's own destination key, so clients never share one.
    pub client: u32,
}

impl Op {
    /// An insert of record `keynum`, every field (what the load phase sends).
    pub fn insert(keynum: u64) -> Op {
        Op {
            kind: OpKind::Insert,
            keynum,
            field: None,
            read_field: None,
            scan_length: 0,
            client: 0,
        }
    }

    /// The field the operation's read (if any) fetches: [`field`](Self::field)
    /// for reads and scans, [`read_field`](Self::read_field) for a
    /// read-modify-write, `None` otherwise.
    pub fn fields_read(&self) -> Option<u32> {
        match self.kind {
            OpKind::Read | OpKind::Scan => self.field,
            OpKind::ReadModifyWrite => self.read_field,
            _ => None,
        }
    }
}
