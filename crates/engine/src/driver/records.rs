//! What one workload's records look like on any system: key names, field
//! names and lengths, where values come from, and the sorted sets' shape.
//!
//! The protocol encoders (`redis`, `memcached`, `aerospike`) read this and
//! nothing of the `Driver`, so each depends on it alone and
//! the driver, which chooses among them, depends on all of them: no module
//! circle (issue 32). Like the driver, it must not allocate on the encoding
//! path; [`Records::check_values`] is the cold path `dataintegrity` takes.

use kvbench_workload::generator::FieldLengthGenerator;
use kvbench_workload::keys::KeyNamer;
use kvbench_workload::values::{fill_deterministic_value, ValuePool};
use kvbench_workload::{Layout, MemcachedUpdate, Rng, WorkloadSpec, ZsetShape};
use rand_core::{RngCore, SeedableRng};

/// A field read back: its name, and its value (`None`: not returned).
pub(super) type Cell = (Vec<u8>, Option<Vec<u8>>);

/// What kind of reply a request expects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Shape {
    /// A record (or nothing: a miss).
    Read,
    /// An acknowledgement (`OK`, `STORED`, or `ZADD`'s integer).
    Write,
    /// `ZRANGEBYSCORE`'s list of keys (empty is fine).
    KeyList,
    /// A command template's: any reply but an error.
    Any,
}

/// The records of one workload, as every encoder sees them.
#[derive(Debug, Clone)]
pub(crate) struct Records {
    pub(super) keys: KeyNamer,
    /// Memcached only: what goes before the key on the wire (`usertable-`).
    pub(super) memcached_prefix: Vec<u8>,
    pub(super) layout: Layout,
    pub(super) memcached_update: MemcachedUpdate,
    pub(super) read_all_fields: bool,
    pub(super) data_integrity: bool,
    pub(super) lengths: FieldLengthGenerator,
    /// `field0`..`fieldN-1` (per `fieldnameprefix`), so encoding never formats.
    pub(super) field_names: Vec<Vec<u8>>,
    /// The full record's JSON length when every value has the same length.
    pub(super) json_len: Option<usize>,
    /// Where random values are cut from (see [`ValuePool`]).
    pub(super) values: ValuePool,
    /// `sortedsets`: the sets' shape.
    pub(super) zsets: ZsetShape,
}

/// The value pool is the same in every run; which windows of it a run
/// writes follows the run's seed (each client's stream draws the offsets).
const VALUE_POOL_SEED: u64 = 0x6b76_6265_6e63_6800;

impl Records {
    /// The records of `spec` (which must have passed
    /// [`WorkloadSpec::validate`]), named by `keys`.
    pub(crate) fn new(spec: &WorkloadSpec, keys: KeyNamer) -> Records {
        let field_names: Vec<Vec<u8>> = (0..spec.field_count)
            .map(|i| spec.field_name(i).into_bytes())
            .collect();
        let lengths = spec
            .field_lengths()
            .unwrap_or(FieldLengthGenerator::Constant(u64::from(spec.field_length)));
        let max_len = lengths.max() as usize;
        let json_len = lengths
            .is_constant()
            .then(|| json_len(field_names.iter().map(|n| (n.len(), max_len))));
        // YCSB's Memcached binding stores a record under `table-key`
        // (`usertable-user123...`) while values (with dataintegrity) derive
        // from the bare key; the hash data model does the same, so YCSB can
        // read what kvbench loaded. Redis keys have no prefix in YCSB.
        let memcached_prefix = match spec.data_model.layout {
            Layout::Hash => format!("{}-", spec.table).into_bytes(),
            Layout::Plain | Layout::SortedSets => Vec::new(),
        };
        Records {
            keys,
            memcached_prefix,
            layout: spec.data_model.layout,
            memcached_update: spec.data_model.memcached_update,
            read_all_fields: spec.read_all_fields,
            data_integrity: spec.data_integrity,
            lengths,
            field_names,
            json_len,
            values: ValuePool::new(&mut Rng::seed_from_u64(VALUE_POOL_SEED)),
            zsets: spec.data_model.zsets,
        }
    }

    /// A field value: YCSB's deterministic value with `dataintegrity`,
    /// random characters otherwise.
    #[inline]
    pub(super) fn fill(&self, rng: &mut impl RngCore, key: &[u8], field: &[u8], out: &mut [u8]) {
        if self.data_integrity {
            fill_deterministic_value(key, field, out);
        } else {
            self.values.fill(rng, out);
        }
    }

    /// [`Records::fill`]'s `len` bytes, appended to `buf`: a random value is
    /// copied in without zeroing its place first.
    #[inline]
    pub(super) fn extend_value(
        &self,
        rng: &mut impl RngCore,
        key: &[u8],
        field: &[u8],
        buf: &mut Vec<u8>,
        len: usize,
    ) {
        if self.data_integrity {
            let start = buf.len();
            buf.resize(start + len, 0);
            fill_deterministic_value(key, field, &mut buf[start..]);
        } else {
            self.values.extend(rng, buf, len);
        }
    }

    /// Checks fields read back from record `key` against YCSB's
    /// deterministic values: every field returned must be one of the
    /// workload's and hold the value written for it.
    ///
    /// # Errors
    /// A description of the first difference, naming key and field.
    pub(crate) fn check_values(&self, key: &[u8], cells: Vec<Cell>) -> Result<(), String> {
        let key_text = String::from_utf8_lossy(key);
        if cells.is_empty() {
            return Err(format!("{key_text}: no field returned"));
        }
        let mut expected = Vec::new();
        for (name, value) in cells {
            let field = String::from_utf8_lossy(&name);
            let Some(value) = value else {
                return Err(format!("{key_text}: field {field} missing"));
            };
            expected.clear();
            expected.resize(self.lengths.max() as usize, 0);
            fill_deterministic_value(key, &name, &mut expected);
            if value != expected || !self.field_names.contains(&name) {
                return Err(format!(
                    "{key_text}: field {field} holds {:?}, expected {:?}",
                    String::from_utf8_lossy(&value),
                    String::from_utf8_lossy(&expected)
                ));
            }
        }
        Ok(())
    }
}

/// `{"name":"value",...}` length for `(name length, value length)` pairs.
pub(super) fn json_len(fields: impl Iterator<Item = (usize, usize)>) -> usize {
    let mut n = 0;
    let mut total = 2;
    for (name, value) in fields {
        total += name + 2 + 1 + value + 2;
        n += 1;
    }
    total + n.max(1) - 1
}

#[cfg(test)]
pub(super) mod tests {
    use kvbench_workload::{Properties, WorkloadSpec};

    /// A small workload: 2 fields of 8 bytes, 100 ordered records.
    pub(crate) fn spec(extra: &str) -> WorkloadSpec {
        let text =
            format!("fieldcount=2\nfieldlength=8\ninsertorder=ordered\nrecordcount=100\n{extra}");
        let props = Properties::parse(&text, "t").unwrap();
        WorkloadSpec::from_properties(&props).unwrap().0
    }
}
