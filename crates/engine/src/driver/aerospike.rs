//! YCSB's data model for Aerospike, on the official client crate.
//!
//! As YCSB's aerospike binding writes it, so a data set loaded by either
//! tool reads back in the other: one record per key in namespace
//! `as.namespace` and set `table` (`usertable`), the user key the YCSB key
//! string (the record's digest is the server's RIPEMD-160 of set and key,
//! computed by the client as Java's is), one bin per field holding the
//! value as a blob.
//!
//! | op | call | policy |
//! |---|---|---|
//! | read, all fields | `get(key, Bins::All)` | read |
//! | read, one field | `get(key, [field])` | read |
//! | insert | `put(key, every field)` | `CreateOnly`: an existing record is an error |
//! | update | `put(key, the changed field(s))` | `ReplaceOnly`: the record becomes those fields, a missing record is an error |
//! | read-modify-write | the read, then the update | |
//! | scan | unsupported, as in YCSB's binding | |
//!
//! A read that finds no record is a miss (YCSB calls it an error; kvbench
//! counts misses apart from errors for every system). Every call has
//! `max_retries` 0: a retry would hide a failure inside a longer latency,
//! and kvbench counts each failure.
//!
//! The crate allocates per request (the key's digest and value, the bins,
//! the record's map) and checks a connection out of a locked pool: unlike
//! the wire codecs, this path is not allocation-free, and its client CPU
//! per operation is measured beside Redis's in `bench/aerospike`.

use super::records::Records;
use crate::outcome::ErrorKind;
use crate::outcome::Outcome;
use aerospike::errors::ErrorKind as AsErrorKind;
use aerospike::{
    Bin, Bins, Client, Key, ReadPolicy, RecordExistsAction, ResultCode, Value, WritePolicy,
};
use kvbench_model::OpKind;
use kvbench_workload::{Op, WorkloadSpec};
use rand_core::RngCore;
use std::time::Duration;

/// The longest bin name the server accepts.
const MAX_BIN_NAME: usize = 15;
/// The longest set name the server accepts.
const MAX_SET_NAME: usize = 63;

/// Checks that `spec`'s field and table names fit Aerospike's limits.
///
/// # Errors
/// A message naming the property to change.
pub(super) fn check_names(spec: &WorkloadSpec) -> Result<(), String> {
    if let Some(i) = spec.field_count.checked_sub(1) {
        let longest = spec.field_name(i);
        if longest.len() > MAX_BIN_NAME {
            return Err(format!(
                "fieldnameprefix: aerospike bin names are at most {MAX_BIN_NAME} bytes; '{longest}' has {}",
                longest.len()
            ));
        }
    }
    if spec.table.is_empty() || spec.table.len() > MAX_SET_NAME {
        return Err(format!(
            "table: aerospike set names are 1 to {MAX_SET_NAME} bytes; '{}' has {}",
            spec.table,
            spec.table.len()
        ));
    }
    Ok(())
}

/// How an operation ended, with what the recorder needs for a failure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Done {
    /// A hit, an acknowledged write, or a miss.
    Outcome(Outcome),
    /// A failure: its kind and the client's message.
    Failed(ErrorKind, String),
}

/// The data model and policies of one phase.
#[derive(Debug, Clone)]
pub(crate) struct Model {
    namespace: String,
    set: String,
    bins: Vec<String>,
    read: ReadPolicy,
    insert: WritePolicy,
    update: WritePolicy,
}

impl Model {
    /// The model for `driver`'s workload (set from `spec.table`) in
    /// `namespace`, every call bounded by `timeout`.
    pub(crate) fn new(
        driver: &Records,
        spec: &WorkloadSpec,
        namespace: &str,
        timeout: Duration,
    ) -> Model {
        let ms = u32::try_from(timeout.as_millis())
            .unwrap_or(u32::MAX)
            .max(1);
        let mut read = ReadPolicy::default();
        read.base_policy.total_timeout = ms;
        read.base_policy.socket_timeout = ms;
        read.base_policy.max_retries = 0;
        let write = |action| {
            let mut w = WritePolicy::default();
            w.base_policy.total_timeout = ms;
            w.base_policy.socket_timeout = ms;
            w.base_policy.max_retries = 0;
            w.record_exists_action = action;
            w
        };
        Model {
            namespace: namespace.to_string(),
            set: spec.table.clone(),
            bins: driver
                .field_names
                .iter()
                .map(|n| String::from_utf8_lossy(n).into_owned())
                .collect(),
            read,
            insert: write(RecordExistsAction::CreateOnly),
            update: write(RecordExistsAction::ReplaceOnly),
        }
    }

    /// The record of YCSB key `key`.
    pub(crate) fn key(&self, key: &[u8]) -> Result<Key, String> {
        Key::new(
            self.namespace.clone(),
            self.set.clone(),
            Value::from(String::from_utf8_lossy(key).into_owned()),
        )
        .map_err(|e| format!("key {}: {e}", String::from_utf8_lossy(key)))
    }

    /// The bins a read of `field` (all when `None`) asks for.
    pub(crate) fn read_bins(&self, field: Option<u32>) -> Bins {
        match field {
            Some(f) => Bins::Some(vec![self.bins[f as usize].clone()]),
            None => Bins::All,
        }
    }

    /// The bins a write of `field` (all when `None`) sends, with values
    /// drawn as for every other system.
    pub(crate) fn write_bins(
        &self,
        driver: &Records,
        key: &[u8],
        field: Option<u32>,
        rng: &mut impl RngCore,
    ) -> Vec<Bin> {
        let fields = match field {
            Some(f) => f as usize..f as usize + 1,
            None => 0..self.bins.len(),
        };
        fields
            .map(|i| {
                let mut value = vec![0u8; driver.lengths.sample(rng)];
                driver.fill(rng, key, &driver.field_names[i], &mut value);
                Bin::new(self.bins[i].clone(), Value::Blob(value))
            })
            .collect()
    }

    /// What `op` sends: the read's bins and the write's bins, drawn now (a
    /// read-modify-write draws both, the read's field first as YCSB does).
    pub(crate) fn prepare(
        &self,
        driver: &Records,
        op: &Op,
        key: &[u8],
        rng: &mut impl RngCore,
    ) -> Result<Request, String> {
        let record = self.key(key)?;
        let (read, write) = match op.kind {
            OpKind::Read => (Some(self.read_bins(op.field)), None),
            OpKind::ReadModifyWrite => (
                Some(self.read_bins(op.read_field)),
                Some(self.write_bins(driver, key, op.field, rng)),
            ),
            OpKind::Update => (None, Some(self.write_bins(driver, key, op.field, rng))),
            OpKind::Insert => (None, Some(self.write_bins(driver, key, None, rng))),
            other => return Err(format!("aerospike: {other} is not supported")),
        };
        Ok(Request {
            kind: op.kind,
            field: op.fields_read(),
            key: record,
            read,
            write,
        })
    }

    /// Runs `req` on `client` to its end. With `dataintegrity`, a read's
    /// values are checked against the values YCSB writes.
    pub(crate) async fn execute(&self, client: &Client, driver: &Records, req: Request) -> Done {
        if let Some(bins) = req.read {
            match client.get(&self.read, &req.key, bins).await {
                Ok(record) if driver.data_integrity => {
                    if let Err(why) = self.verify(driver, &req.key, req.field, record.bins) {
                        return Done::Failed(ErrorKind::Integrity, format!("integrity: {why}"));
                    }
                }
                Ok(_) => {}
                Err(e) if e.server_result_code() == Some(ResultCode::KeyNotFoundError) => {
                    return Done::Outcome(Outcome::Miss);
                }
                Err(e) => return failed(&e),
            }
        }
        if let Some(bins) = req.write {
            let policy = match req.kind {
                OpKind::Insert => &self.insert,
                _ => &self.update,
            };
            if let Err(e) = client.put(policy, &req.key, &bins).await {
                return failed(&e);
            }
        }
        Done::Outcome(Outcome::Ok)
    }

    /// Checks a record read back against the deterministic values.
    fn verify(
        &self,
        driver: &Records,
        key: &Key,
        field: Option<u32>,
        mut bins: aerospike::IndexMap<String, Value>,
    ) -> Result<(), String> {
        let user_key = match key.user_key() {
            Some(Value::String(s)) => s.clone().into_bytes(),
            _ => return Err("the record's key is not a string".into()),
        };
        let wanted: Vec<usize> = match field {
            Some(f) => vec![f as usize],
            None => (0..self.bins.len()).collect(),
        };
        let mut cells = Vec::with_capacity(wanted.len() + bins.len());
        for i in wanted {
            let value = match bins.shift_remove(&self.bins[i]) {
                Some(Value::Blob(v)) => Some(v),
                Some(other) => Some(format!("{other}").into_bytes()),
                None => None,
            };
            cells.push((self.bins[i].clone().into_bytes(), value));
        }
        // A bin the workload never writes is a difference too.
        for (name, value) in bins {
            cells.push((name.into_bytes(), Some(format!("{value}").into_bytes())));
        }
        driver.check_values(&user_key, cells)
    }
}

/// One operation's calls, built before it is sent (the crate takes owned
/// keys and bins).
pub(crate) struct Request {
    kind: OpKind,
    field: Option<u32>,
    key: Key,
    read: Option<Bins>,
    write: Option<Vec<Bin>>,
}

/// A failed call as the recorder counts it: timeouts apart from server
/// error codes, connection trouble apart from both.
/// "Timeout after 1 tries" wraps the attempt's own error (a node that
/// could not be chosen, a refused connection): the innermost one says what
/// went wrong.
fn failed(e: &aerospike::Error) -> Done {
    let mut root = e;
    while let Some(inner) =
        std::error::Error::source(root).and_then(|s| s.downcast_ref::<aerospike::Error>())
    {
        root = inner;
    }
    let kind = match root.kind() {
        AsErrorKind::Timeout => ErrorKind::Timeout,
        AsErrorKind::Server { rc, .. } if *rc == ResultCode::Timeout => ErrorKind::Timeout,
        AsErrorKind::Server { .. } => ErrorKind::ErrorReply,
        AsErrorKind::Connection
        | AsErrorKind::ConnectionPoolEmpty
        | AsErrorKind::NoMoreConnections
        | AsErrorKind::InvalidNode => ErrorKind::Io,
        _ => ErrorKind::Protocol,
    };
    // The message, its sub-errors and its causes, on one line.
    let text = e.to_string();
    let parts: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    Done::Failed(kind, parts.join("; "))
}

#[cfg(test)]
mod tests {
    use super::super::records::tests::spec;
    use super::*;
    use kvbench_workload::Rng;
    use rand_core::SeedableRng;

    fn model(extra: &str) -> (Records, Model) {
        let s = spec(extra);
        check_names(&s).unwrap();
        let d = Records::new(&s, s.key_namer());
        let m = Model::new(&d, &s, "ycsb", Duration::from_millis(1500));
        (d, m)
    }

    fn op(kind: OpKind, field: Option<u32>, read_field: Option<u32>) -> Op {
        Op {
            kind,
            keynum: 7,
            field,
            read_field,
            scan_length: 0,
            client: 0,
        }
    }

    fn bin_names(bins: &[Bin]) -> Vec<&str> {
        bins.iter().map(|b| b.name.as_str()).collect()
    }

    #[test]
    fn operations_map_to_ycsbs_records_and_bins() {
        let (d, m) = model("");
        let mut rng = Rng::seed_from_u64(1);
        let prepare = |o: Op, rng: &mut Rng| m.prepare(&d, &o, b"user7", rng).unwrap();

        let r = prepare(op(OpKind::Read, None, None), &mut rng);
        assert_eq!(r.key.namespace(), "ycsb");
        assert_eq!(r.key.set_name(), "usertable");
        assert_eq!(r.key.user_key(), Some(&Value::from("user7")));
        assert!(matches!(r.read, Some(Bins::All)));
        assert!(r.write.is_none());

        let r = prepare(op(OpKind::Read, Some(1), None), &mut rng);
        assert!(matches!(&r.read, Some(Bins::Some(names)) if names == &["field1"]));

        let r = prepare(op(OpKind::Insert, None, None), &mut rng);
        let bins = r.write.unwrap();
        assert_eq!(bin_names(&bins), ["field0", "field1"]);
        for b in &bins {
            assert!(matches!(&b.value, Value::Blob(v) if v.len() == 8), "{b:?}");
        }
        assert!(r.read.is_none());

        let r = prepare(op(OpKind::Update, Some(0), None), &mut rng);
        assert_eq!(bin_names(r.write.as_deref().unwrap()), ["field0"]);

        // A read-modify-write reads one field and writes another, as drawn.
        let r = prepare(op(OpKind::ReadModifyWrite, Some(1), Some(0)), &mut rng);
        assert!(matches!(&r.read, Some(Bins::Some(names)) if names == &["field0"]));
        assert_eq!(bin_names(r.write.as_deref().unwrap()), ["field1"]);

        let scan = Op {
            scan_length: 5,
            ..op(OpKind::Scan, None, None)
        };
        assert!(m.prepare(&d, &scan, b"user7", &mut rng).is_err());
    }

    #[test]
    fn policies_are_ycsbs_and_never_retry() {
        let (_, m) = model("");
        assert_eq!(
            m.insert.record_exists_action,
            RecordExistsAction::CreateOnly
        );
        assert_eq!(
            m.update.record_exists_action,
            RecordExistsAction::ReplaceOnly
        );
        for base in [
            &m.read.base_policy,
            &m.insert.base_policy,
            &m.update.base_policy,
        ] {
            assert_eq!(base.max_retries, 0);
            assert_eq!(base.total_timeout, 1500);
        }
    }

    #[test]
    fn names_aerospike_cannot_hold_are_refused_up_front() {
        let s = spec("fieldnameprefix=averyverylongname\n");
        let e = check_names(&s).unwrap_err();
        assert!(e.starts_with("fieldnameprefix:"), "{e}");
        let s = spec(&format!("table={}\n", "t".repeat(64)));
        assert!(check_names(&s).unwrap_err().starts_with("table:"));
        assert!(check_names(&spec("")).is_ok());
    }

    #[test]
    fn integrity_checks_every_bin_read_back() {
        let (d, m) = model("dataintegrity=true\n");
        let key = m.key(b"user7").unwrap();
        let mut rng = Rng::seed_from_u64(2);
        let written = m.write_bins(&d, b"user7", None, &mut rng);
        let record = |bins: &[Bin]| -> aerospike::IndexMap<String, Value> {
            bins.iter()
                .map(|b| (b.name.clone(), b.value.clone()))
                .collect()
        };
        assert_eq!(m.verify(&d, &key, None, record(&written)), Ok(()));
        assert_eq!(m.verify(&d, &key, Some(1), record(&written[1..])), Ok(()));
        // A changed byte, a missing bin, a bin never written.
        let mut changed = written.clone();
        changed[0].value = Value::Blob(b"XXXXXXXX".to_vec());
        let e = m.verify(&d, &key, None, record(&changed)).unwrap_err();
        assert!(e.contains("field0"), "{e}");
        let e = m.verify(&d, &key, None, record(&written[..1])).unwrap_err();
        assert!(e.contains("field1 missing"), "{e}");
        let mut extra = written.clone();
        extra.push(Bin::new("other", Value::Blob(b"x".to_vec())));
        assert!(m.verify(&d, &key, None, record(&extra)).is_err());
    }
}
