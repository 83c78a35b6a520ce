//! What a workload is: the data set's shape, the operation mix, how keys,
//! fields, lengths and scans are chosen, the data model, and the YCSB
//! client settings a property file may carry.
//!
//! A [`WorkloadSpec`] is plain data with every default filled in; it is what
//! gets recorded with a run, and it is all a generator or an encoder needs.
//! It is built from YCSB properties by [`WorkloadSpec::from_properties`]
//! (in [`crate::ycsb`]); this module only holds it and checks it. No I/O.

use crate::command::CommandTemplate;
use crate::generator::{
    FieldLengthGenerator, HistogramGenerator, KeyDistribution, KeySpace, ZIPFIAN_CONSTANT,
};
use crate::keys::KeyNamer;
use kvbench_model::OpKind;
use std::fmt;
use std::ops::Range;
use std::sync::Arc;

/// The old name of [`KeyDistribution`], kept so existing code compiles.
pub type RequestDistribution = KeyDistribution;

/// How long each field value is (CoreWorkload's `fieldlengthdistribution`);
/// the longest length is always [`WorkloadSpec::field_length`].
#[derive(Debug, Clone, PartialEq)]
pub enum FieldLengthDistribution {
    /// Every value is `fieldlength` bytes.
    Constant,
    /// Uniform over `minfieldlength..=fieldlength`.
    Uniform {
        /// `minfieldlength`.
        min: u32,
    },
    /// Zipfian over `minfieldlength..=fieldlength`, the shortest most popular.
    Zipfian {
        /// `minfieldlength`.
        min: u32,
    },
    /// Drawn from the histogram file `fieldlengthhistogram`.
    Histogram {
        /// The file, as named in the properties (for the record).
        path: String,
        /// Its parsed contents.
        histogram: Arc<HistogramGenerator>,
    },
    /// memtier's `--data-size-list`: `(length, weight)` pairs from
    /// `kvbench.fieldlengths`; `fieldlength` is the longest of them.
    Weighted {
        /// The lengths and their weights, in the order given.
        sizes: Vec<(u32, u32)>,
    },
}

impl FieldLengthDistribution {
    /// The `fieldlengthdistribution` value.
    pub fn name(&self) -> &'static str {
        match self {
            FieldLengthDistribution::Constant => "constant",
            FieldLengthDistribution::Uniform { .. } => "uniform",
            FieldLengthDistribution::Zipfian { .. } => "zipfian",
            FieldLengthDistribution::Histogram { .. } => "histogram",
            FieldLengthDistribution::Weighted { .. } => "weighted",
        }
    }
}

/// How the kind of each operation is chosen (`kvbench.mix`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mix {
    /// YCSB's: each operation drawn at random with the proportions as weights.
    #[default]
    Random,
    /// memtier's `--ratio`: each client cycles through the kinds in a fixed
    /// order, each as many times in a row as its (whole-number) proportion:
    /// updates, inserts, reads, scans, read-modify-writes. `--ratio 1:10`
    /// is one update (SET) then ten reads (GET), over and over.
    Cycle,
}

impl Mix {
    /// The `kvbench.mix` value.
    pub fn name(self) -> &'static str {
        match self {
            Mix::Random => "random",
            Mix::Cycle => "cycle",
        }
    }

    /// The order [`Mix::Cycle`] issues kinds in (memtier: SETs, then GETs).
    pub const CYCLE_ORDER: [OpKind; OpKind::COUNT] = [
        OpKind::Update,
        OpKind::Insert,
        OpKind::Read,
        OpKind::Scan,
        OpKind::ReadModifyWrite,
        OpKind::Union,
        OpKind::Command1,
        OpKind::Command2,
        OpKind::Command3,
        OpKind::Command4,
        OpKind::Command5,
        OpKind::Command6,
        OpKind::Command7,
        OpKind::Command8,
    ];
}

/// How many records a scan reads (`scanlengthdistribution`), over
/// `minscanlength..=maxscanlength`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScanLengthDistribution {
    /// Uniform.
    Uniform,
    /// Zipfian, the shortest scan most popular.
    Zipfian,
}

impl ScanLengthDistribution {
    /// The `scanlengthdistribution` value.
    pub fn name(self) -> &'static str {
        match self {
            ScanLengthDistribution::Uniform => "uniform",
            ScanLengthDistribution::Zipfian => "zipfian",
        }
    }
}

/// How record numbers become key names (`insertorder`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InsertOrder {
    /// `user` + FNV hash of the record number: keys scattered.
    Hashed,
    /// `user` + the record number itself.
    Ordered,
}

/// How a record is stored on the server (kvbench properties `kvbench.*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// YCSB's: a Redis hash of the fields, or a Memcached item holding a
    /// JSON object of them (`kvbench.datamodel=hash`, the default).
    Hash,
    /// One plain value per key: Redis `GET`/`SET`, Memcached `get`/`set` of
    /// the raw value; needs `fieldcount=1` (`kvbench.datamodel=plain`).
    Plain,
    /// Groups of sorted sets for `ZUNIONSTORE` (`kvbench.datamodel=sortedsets`,
    /// Redis family only): a record is one set of the shape in
    /// [`DataModel::zsets`], loaded with one `ZADD` (see [`crate::zsets`]).
    SortedSets,
}

/// What an update writes to Memcached (`kvbench.memcached.update`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemcachedUpdate {
    /// `set` of the whole record with fresh values: the record keeps every
    /// field (the default).
    Full,
    /// As YCSB's Memcached binding: `replace` with a JSON object of only the
    /// changed field(s), so the item shrinks to those fields.
    Ycsb,
}

/// The data model: how operations map onto server commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DataModel {
    /// Hash (YCSB's) or plain values.
    pub layout: Layout,
    /// Redis: also `ZADD _indices <hash> <key>` on every insert, as YCSB's
    /// Redis binding does so that scans can find keys
    /// (`kvbench.redis.index=ycsb|none`; default `ycsb` when the mix has
    /// scans, `none` otherwise). It doubles the commands an insert costs.
    pub redis_index: bool,
    /// Memcached update behaviour.
    pub memcached_update: MemcachedUpdate,
    /// The sorted sets' shape (`kvbench.zset.*`), used by `sortedsets`.
    pub zsets: crate::zsets::ZsetShape,
}

impl Default for DataModel {
    fn default() -> Self {
        DataModel {
            layout: Layout::Hash,
            redis_index: false,
            memcached_update: MemcachedUpdate::Full,
            zsets: crate::zsets::ZsetShape::default(),
        }
    }
}

/// Settings YCSB's `Client` (not its workload) reads from the same
/// properties, kept for the CLI: `operationcount` → the measured window,
/// `threadcount` → clients, `target` → the open-loop rate,
/// `maxexecutiontime` → a time limit. `None` where unset (or 0 for
/// `target` and `maxexecutiontime`, which YCSB reads as "no limit").
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ClientSpec {
    /// `operationcount`: operations in the run phase, across all clients.
    pub operation_count: Option<u64>,
    /// `threadcount`: YCSB client threads (kvbench: connections).
    pub thread_count: Option<u32>,
    /// `target`: total operations per second to offer.
    pub target: Option<u64>,
    /// `maxexecutiontime`: seconds after which the run phase stops.
    pub max_execution_time: Option<u64>,
}

/// A fully specified workload. Field names follow YCSB's properties; the
/// default (`WorkloadSpec::default()`) is CoreWorkload's defaults.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkloadSpec {
    /// Preset name or property file path(s), for the record.
    pub name: String,
    /// `recordcount`: records present when the run starts; the run's inserts
    /// are numbered from here.
    pub record_count: u64,
    /// `fieldcount`: fields per record.
    pub field_count: u32,
    /// `fieldlength`: bytes per field value; the longest for a
    /// non-constant [`field_length_distribution`](Self::field_length_distribution).
    pub field_length: u32,
    /// `fieldlengthdistribution` (with `minfieldlength`, `fieldlengthhistogram`).
    pub field_length_distribution: FieldLengthDistribution,
    /// `fieldnameprefix`: field `i` is named prefix + `i`.
    pub field_name_prefix: String,
    /// `table`: YCSB's table name. YCSB's Memcached binding stores each
    /// record under `table-key`; kvbench does the same (hash data model),
    /// so YCSB can read what kvbench loaded.
    pub table: String,
    /// `readallfields`: reads (and scans, and read-modify-writes) fetch every
    /// field rather than one chosen at random.
    pub read_all_fields: bool,
    /// `writeallfields`: updates write every field rather than one.
    pub write_all_fields: bool,
    /// `dataintegrity`: values derived from key and field, checked on reads.
    pub data_integrity: bool,
    /// `readproportion`.
    pub read_proportion: f64,
    /// `updateproportion`.
    pub update_proportion: f64,
    /// `insertproportion`.
    pub insert_proportion: f64,
    /// `scanproportion`.
    pub scan_proportion: f64,
    /// `readmodifywriteproportion`.
    pub read_modify_write_proportion: f64,
    /// `kvbench.zunionstoreproportion`: weight of `ZUNIONSTORE` (sorted sets only).
    pub union_proportion: f64,
    /// `kvbench.command.N` (1 to 8): command templates, each an operation
    /// kind of its own ([`OpKind::command`]) weighted by its ratio.
    pub commands: Vec<CommandSpec>,
    /// `requestdistribution` (with `hotspot*`, `exponential.*` parameters).
    pub request_distribution: KeyDistribution,
    /// `kvbench.writedistribution`: how updates choose their key, when not
    /// as reads do (memtier's `--key-pattern SET:GET` sets both apart).
    pub write_distribution: Option<KeyDistribution>,
    /// `kvbench.mix`: kinds drawn at random (YCSB) or cycled (memtier).
    pub mix: Mix,
    /// `zipfian.constant` (kvbench): theta of `zipfian` and `latest` key choice.
    pub zipfian_constant: f64,
    /// `minscanlength`.
    pub min_scan_length: u32,
    /// `maxscanlength`.
    pub max_scan_length: u32,
    /// `scanlengthdistribution`.
    pub scan_length_distribution: ScanLengthDistribution,
    /// `insertorder`.
    pub insert_order: InsertOrder,
    /// `insertstart`: first record number this workload loads and reads.
    pub insert_start: u64,
    /// `insertcount`: records loaded from `insert_start` (default: the rest).
    pub insert_count: u64,
    /// `zeropadding`: minimum digits of a key's number part.
    pub zero_padding: u32,
    /// `kvbench.keyprefix`: what every record key starts with (YCSB's
    /// `user`); on a shared server, what tells kvbench's keys from others'.
    pub key_prefix: String,
    /// The `kvbench.*` data-model settings.
    pub data_model: DataModel,
    /// The YCSB client settings.
    pub client: ClientSpec,
    /// `kvbench.mode=cache-aside`: a read that misses waits this penalty
    /// (the backend) and then sets the record, as an application would.
    pub cache_aside: Option<crate::cache_aside::Penalty>,
}

impl Default for WorkloadSpec {
    /// CoreWorkload's defaults, with 1,000 records (see docs/workloads.md:
    /// YCSB's own default of 0 means "load nothing, read 2^31 keys").
    fn default() -> Self {
        WorkloadSpec {
            name: String::new(),
            record_count: 1000,
            field_count: 10,
            field_length: 100,
            field_length_distribution: FieldLengthDistribution::Constant,
            field_name_prefix: "field".to_owned(),
            table: "usertable".to_owned(),
            read_all_fields: true,
            write_all_fields: false,
            data_integrity: false,
            read_proportion: 0.95,
            update_proportion: 0.05,
            insert_proportion: 0.0,
            scan_proportion: 0.0,
            read_modify_write_proportion: 0.0,
            union_proportion: 0.0,
            commands: Vec::new(),
            request_distribution: KeyDistribution::Uniform,
            write_distribution: None,
            mix: Mix::Random,
            zipfian_constant: ZIPFIAN_CONSTANT,
            min_scan_length: 1,
            max_scan_length: 1000,
            scan_length_distribution: ScanLengthDistribution::Uniform,
            insert_order: InsertOrder::Hashed,
            insert_start: 0,
            insert_count: 1000,
            zero_padding: 1,
            key_prefix: "user".to_owned(),
            data_model: DataModel::default(),
            client: ClientSpec::default(),
            cache_aside: None,
        }
    }
}

/// Why a spec cannot run: the property at fault and what is wrong.
#[derive(Debug, Clone, PartialEq)]
pub struct SpecError {
    /// The YCSB (or `kvbench.*`) property name.
    pub property: &'static str,
    /// What is wrong with it.
    pub message: String,
}

impl SpecError {
    fn new(property: &'static str, message: impl Into<String>) -> Self {
        SpecError {
            property,
            message: message.into(),
        }
    }
}

/// A refusal of `property`, as the checks return it.
fn refuse(property: &'static str, message: String) -> Result<(), SpecError> {
    Err(SpecError::new(property, message))
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.property, self.message)
    }
}

impl std::error::Error for SpecError {}

/// The property of each weight of [`WorkloadSpec::weights`], in order: the
/// proportions of YCSB's kinds and `ZUNIONSTORE`, then the templates' ratios.
pub const PROPORTIONS: [&str; OpKind::COUNT] = [
    "readproportion",
    "updateproportion",
    "insertproportion",
    "scanproportion",
    "readmodifywriteproportion",
    "kvbench.zunionstoreproportion",
    "kvbench.command.1.ratio",
    "kvbench.command.2.ratio",
    "kvbench.command.3.ratio",
    "kvbench.command.4.ratio",
    "kvbench.command.5.ratio",
    "kvbench.command.6.ratio",
    "kvbench.command.7.ratio",
    "kvbench.command.8.ratio",
];

/// The key-pattern property of each command template, for messages.
pub(crate) const COMMAND_KEY_PATTERNS: [&str; OpKind::COMMANDS] = [
    "kvbench.command.1.keypattern",
    "kvbench.command.2.keypattern",
    "kvbench.command.3.keypattern",
    "kvbench.command.4.keypattern",
    "kvbench.command.5.keypattern",
    "kvbench.command.6.keypattern",
    "kvbench.command.7.keypattern",
    "kvbench.command.8.keypattern",
];

/// A command template of the workload (`kvbench.command.N`, memtier's
/// `--command` with `--command-ratio` and `--command-key-pattern`).
#[derive(Debug, Clone, PartialEq)]
pub struct CommandSpec {
    /// The command.
    pub template: CommandTemplate,
    /// `kvbench.command.N.ratio`: its weight in the mix (with
    /// `kvbench.mix=cycle`, how many in a row, as memtier sends them).
    pub ratio: f64,
    /// `kvbench.command.N.keypattern`: how its `__key__` is chosen.
    pub keys: KeyDistribution,
}

impl WorkloadSpec {
    /// The mix as YCSB's weights, in [`OpKind`] order (read, update, insert,
    /// scan, read-modify-write: also the order YCSB adds them in).
    pub fn weights(&self) -> [f64; OpKind::COUNT] {
        let mut w = [0.0; OpKind::COUNT];
        w[..OpKind::COUNT - OpKind::COMMANDS].copy_from_slice(&[
            self.read_proportion,
            self.update_proportion,
            self.insert_proportion,
            self.scan_proportion,
            self.read_modify_write_proportion,
            self.union_proportion,
        ]);
        for (i, c) in self.commands.iter().enumerate().take(OpKind::COMMANDS) {
            if let Some(kind) = OpKind::command(i) {
                w[kind.index()] = c.ratio;
            }
        }
        w
    }

    /// The kinds the mix can draw (weight above 0), in [`OpKind`] order.
    pub fn kinds(&self) -> impl Iterator<Item = OpKind> {
        OpKind::ALL
            .into_iter()
            .zip(self.weights())
            .filter(|&(_, w)| w > 0.0)
            .map(|(k, _)| k)
    }

    /// The share of operations of `kind` (its weight over the sum).
    pub fn share(&self, kind: OpKind) -> f64 {
        let w = self.weights();
        w[kind.index()] / w.iter().sum::<f64>()
    }

    /// The record numbers the load phase inserts:
    /// `insertstart .. insertstart + insertcount`.
    pub fn load_range(&self) -> Range<u64> {
        self.insert_start..self.insert_start + self.insert_count
    }

    /// Record number to key name, per `insertorder` and `zeropadding`.
    pub fn key_namer(&self) -> KeyNamer {
        KeyNamer::new(
            self.insert_order == InsertOrder::Ordered,
            self.zero_padding as usize,
        )
        .with_prefix(self.key_prefix.clone())
    }

    /// What the key chooser is sized from; `operationcount` (0 when unset,
    /// as for a time-bound run) feeds the Zipfian's insert-range fudge.
    pub fn key_space(&self) -> KeySpace {
        KeySpace {
            record_count: self.record_count,
            insert_start: self.insert_start,
            insert_count: self.insert_count,
            operation_count: self.client.operation_count.unwrap_or(0),
            insert_proportion: self.insert_proportion,
            zipfian_constant: self.zipfian_constant,
        }
    }

    /// The name of field `i` (`field0`, ...).
    pub fn field_name(&self, i: u32) -> String {
        format!("{}{i}", self.field_name_prefix)
    }

    /// The length generator for field values.
    ///
    /// # Errors
    /// A [`SpecError`] for lengths [`validate`](Self::validate) refuses.
    pub fn field_lengths(&self) -> Result<FieldLengthGenerator, SpecError> {
        let max = u64::from(self.field_length);
        let bad = |e: crate::generator::DistError| SpecError::new("minfieldlength", e.to_string());
        Ok(match &self.field_length_distribution {
            FieldLengthDistribution::Constant => FieldLengthGenerator::Constant(max),
            FieldLengthDistribution::Uniform { min } => {
                FieldLengthGenerator::uniform(u64::from(*min), max).map_err(bad)?
            }
            FieldLengthDistribution::Zipfian { min } => {
                FieldLengthGenerator::zipfian(u64::from(*min), max).map_err(bad)?
            }
            FieldLengthDistribution::Histogram { histogram, .. } => {
                FieldLengthGenerator::Histogram(Arc::clone(histogram))
            }
            FieldLengthDistribution::Weighted { sizes } => FieldLengthGenerator::weighted(sizes)
                .map_err(|e| SpecError::new("kvbench.fieldlengths", e.to_string()))?,
        })
    }

    /// The longest field value any record can have.
    pub fn max_field_length(&self) -> u64 {
        match &self.field_length_distribution {
            FieldLengthDistribution::Histogram { histogram, .. } => histogram.max(),
            FieldLengthDistribution::Weighted { sizes } => sizes
                .iter()
                .map(|&(len, _)| u64::from(len))
                .max()
                .unwrap_or(0),
            _ => u64::from(self.field_length),
        }
    }

    /// Checks everything a run depends on; the message names the property.
    ///
    /// # Errors
    /// A [`SpecError`] naming the first property at fault.
    pub fn validate(&self) -> Result<(), SpecError> {
        self.check_sizes()?;
        self.check_operations()?;
        self.check_keys()?;
        self.check_data_model()?;
        // Whatever the dist module would still refuse (e.g. a hot set of no keys).
        self.field_lengths()?;
        Ok(())
    }

    /// The counts within their bounds, a record a server accepts, and
    /// field lengths and names that can be generated and sent.
    fn check_sizes(&self) -> Result<(), SpecError> {
        use crate::bounds::{self, check};
        let ranges = [
            ("recordcount", self.record_count, bounds::MAX_RECORDS),
            (
                "fieldcount",
                u64::from(self.field_count),
                u64::from(bounds::MAX_FIELD_COUNT),
            ),
            (
                "fieldlength",
                u64::from(self.field_length),
                u64::from(bounds::MAX_FIELD_LENGTH),
            ),
            (
                "operationcount",
                self.client.operation_count.unwrap_or(1),
                bounds::MAX_OPERATIONS,
            ),
            (
                "maxscanlength",
                u64::from(self.max_scan_length),
                u64::from(bounds::MAX_SCAN_LENGTH),
            ),
        ];
        for (property, value, max) in ranges {
            check(value, 1, max).or_else(|m| refuse(property, m))?;
        }
        if self.record_bytes() > bounds::MAX_RECORD_BYTES {
            return refuse(
                "fieldlength",
                format!(
                    "a record of fieldcount ({}) x fieldlength ({}) = {} bytes is more than {} \
                     (Redis refuses a value above 512 MB)",
                    self.field_count,
                    self.max_field_length(),
                    self.record_bytes(),
                    bounds::MAX_RECORD_BYTES
                ),
            );
        }
        match &self.field_length_distribution {
            FieldLengthDistribution::Uniform { min } | FieldLengthDistribution::Zipfian { min } => {
                if *min == 0 || *min > self.field_length {
                    return refuse(
                        "minfieldlength",
                        format!(
                            "must be between 1 and fieldlength ({}), got {min}",
                            self.field_length
                        ),
                    );
                }
            }
            FieldLengthDistribution::Histogram { .. }
            | FieldLengthDistribution::Constant
            | FieldLengthDistribution::Weighted { .. } => {}
        }
        if let Some(c) = self
            .field_name_prefix
            .chars()
            .find(|c| !c.is_ascii_graphic() || *c == '"' || *c == '\\')
        {
            return refuse(
                "fieldnameprefix",
                format!(
                    "{c:?} is not allowed: field names must be printable ASCII without \
                     spaces, quotes or backslashes (they go into JSON and commands unescaped)"
                ),
            );
        }
        Ok(())
    }

    /// The operation mix: proportions that make one, command templates
    /// that fit, and scans of a length there can be.
    fn check_operations(&self) -> Result<(), SpecError> {
        let proportions = PROPORTIONS.into_iter().zip(self.weights());
        for (p, w) in proportions.clone() {
            if !(w.is_finite() && w >= 0.0) {
                return refuse(p, format!("must be a non-negative number, got {w}"));
            }
        }
        let total: f64 = self.weights().iter().sum();
        if !(total > 0.0 && total.is_finite()) {
            return refuse(
                "readproportion",
                "the operation proportions are all zero (set readproportion, updateproportion, \
                 insertproportion, scanproportion or readmodifywriteproportion)"
                    .into(),
            );
        }
        if self.commands.len() > OpKind::COMMANDS {
            return refuse(
                "kvbench.command.1",
                format!(
                    "at most {} command templates, got {}",
                    OpKind::COMMANDS,
                    self.commands.len()
                ),
            );
        }
        if self.mix == Mix::Cycle {
            if let Some((p, w)) = proportions
                .clone()
                .find(|(_, w)| w.fract() != 0.0 || *w > 1e6)
            {
                return refuse(
                    p,
                    format!(
                        "must be a whole number of at most 1000000 with kvbench.mix=cycle \
                         (how many in a row, as memtier's --ratio), got {w}"
                    ),
                );
            }
        }
        if self.min_scan_length == 0 || self.min_scan_length > self.max_scan_length {
            return refuse(
                "minscanlength",
                format!(
                    "must be between 1 and maxscanlength ({}), got {}",
                    self.max_scan_length, self.min_scan_length
                ),
            );
        }
        Ok(())
    }

    /// The keys the operations pick: the insert range within the records,
    /// and each key distribution's parameters.
    fn check_keys(&self) -> Result<(), SpecError> {
        if self.insert_count == 0 {
            return refuse("insertcount", "must be at least 1".into());
        }
        let end = self.insert_start.checked_add(self.insert_count);
        if !matches!(end, Some(end) if end <= self.record_count) {
            return refuse(
                "insertcount",
                format!(
                    "insertstart ({}) + insertcount ({}) exceeds recordcount ({}) \
                     (YCSB: \"recordcount must be bigger than insertstart + insertcount\")",
                    self.insert_start, self.insert_count, self.record_count
                ),
            );
        }
        if !(0.0..1.0).contains(&self.zipfian_constant) {
            return refuse(
                "zipfian.constant",
                format!(
                    "must be at least 0 and below 1, got {}",
                    self.zipfian_constant
                ),
            );
        }
        for (property, dist) in [
            ("requestdistribution", Some(self.request_distribution)),
            ("kvbench.writedistribution", self.write_distribution),
        ] {
            if let Some(KeyDistribution::Gaussian { median, stddev }) = dist {
                let (min, max) = (self.insert_start, self.insert_start + self.insert_count - 1);
                if let Err(e) = crate::generator::GaussianKeys::new(min, max, median, stddev) {
                    let p = match e {
                        crate::generator::DistError::InvalidParameter { name, .. } => name,
                        _ => property,
                    };
                    return refuse(p, e.to_string());
                }
            }
            if matches!(
                dist,
                Some(KeyDistribution::Latest | KeyDistribution::Exponential { .. })
            ) && property == "kvbench.writedistribution"
            {
                return refuse(
                    property,
                    "latest and exponential follow inserts; use them as requestdistribution".into(),
                );
            }
        }
        match self.request_distribution {
            KeyDistribution::Hotspot {
                data_fraction,
                opn_fraction,
            } => {
                for (p, v) in [
                    ("hotspotdatafraction", data_fraction),
                    ("hotspotopnfraction", opn_fraction),
                ] {
                    if !(0.0..=1.0).contains(&v) {
                        return refuse(p, format!("must be between 0 and 1, got {v}"));
                    }
                }
            }
            KeyDistribution::Exponential { percentile, frac } => {
                if !(percentile > 0.0 && percentile < 100.0) {
                    return refuse(
                        "exponential.percentile",
                        format!("must be above 0 and below 100, got {percentile}"),
                    );
                }
                if !(frac > 0.0 && frac.is_finite()) {
                    return refuse("exponential.frac", format!("must be above 0, got {frac}"));
                }
            }
            KeyDistribution::Latest if self.record_count < 2 => {
                return refuse(
                    "recordcount",
                    "requestdistribution=latest needs at least 2 records".into(),
                );
            }
            _ => {}
        }
        Ok(())
    }

    /// What the data model allows: cache-aside, data integrity, sorted
    /// sets' groups and operation, plain values' one field, the index scans
    /// need.
    fn check_data_model(&self) -> Result<(), SpecError> {
        let proportions = PROPORTIONS.into_iter().zip(self.weights());
        if self.cache_aside.is_some()
            && (self.read_proportion == 0.0 || self.data_model.layout == Layout::SortedSets)
        {
            return refuse(
                "kvbench.mode",
                "cache-aside fills the records reads miss: it needs reads (readproportion > 0) of hashes or plain values".into(),
            );
        }
        if self.data_integrity
            && self.field_length_distribution != FieldLengthDistribution::Constant
        {
            return refuse(
                "dataintegrity",
                "needs fieldlengthdistribution=constant (YCSB: \"Must have constant field size \
                 to check data integrity.\")"
                    .into(),
            );
        }
        if self.data_model.layout == Layout::SortedSets {
            let z = self.data_model.zsets;
            if z.sets == 0 || z.members == 0 {
                let p = if z.sets == 0 {
                    "kvbench.zset.sets"
                } else {
                    "kvbench.zset.members"
                };
                return refuse(p, "must be at least 1".into());
            }
            if let Some((p, _)) = proportions
                .clone()
                .find(|&(p, w)| w > 0.0 && p != "kvbench.zunionstoreproportion")
            {
                return refuse(
                    p,
                    "must be 0 with kvbench.datamodel=sortedsets: its operation is ZUNIONSTORE \
                     (kvbench.zunionstoreproportion)"
                        .into(),
                );
            }
            if !self.record_count.is_multiple_of(u64::from(z.sets))
                || self.insert_start != 0
                || self.insert_count != self.record_count
            {
                return refuse(
                    "recordcount",
                    format!(
                        "must be whole groups of kvbench.zset.sets ({}) sets, all loaded, with \
                         kvbench.datamodel=sortedsets; got {} from insertstart {} (e.g. {})",
                        z.sets,
                        self.record_count,
                        self.insert_start,
                        u64::from(z.sets) * (self.record_count / u64::from(z.sets)).max(1)
                    ),
                );
            }
        } else if self.union_proportion > 0.0 {
            return refuse(
                "kvbench.zunionstoreproportion",
                "needs kvbench.datamodel=sortedsets (the sets a union reads)".into(),
            );
        }
        if self.data_model.layout == Layout::Plain {
            if self.field_count != 1 {
                return refuse(
                    "fieldcount",
                    format!(
                        "must be 1 with kvbench.datamodel=plain (one value per key), got {}",
                        self.field_count
                    ),
                );
            }
            if self.scan_proportion > 0.0 {
                return refuse(
                    "scanproportion",
                    "must be 0 with kvbench.datamodel=plain: plain values have no index to scan"
                        .into(),
                );
            }
        } else if self.scan_proportion > 0.0 && !self.data_model.redis_index {
            return refuse(
                "kvbench.redis.index",
                "scans find keys through the index: with scanproportion > 0 it must be ycsb".into(),
            );
        }
        Ok(())
    }

    /// The records one unit of the data set takes: 1, or for sorted sets
    /// a whole group (`recordcount` must be a multiple of it).
    pub fn records_unit(&self) -> u64 {
        if self.data_model.layout == Layout::SortedSets {
            return u64::from(self.data_model.zsets.sets.max(1));
        }
        1
    }

    /// Bytes of user data in the largest possible record (field values
    /// only); for constant lengths, every record's size.
    pub fn record_bytes(&self) -> u64 {
        if self.data_model.layout == Layout::SortedSets {
            // A member name (`m` and up to 7 digits) and its 8-byte score.
            return u64::from(self.data_model.zsets.members) * 16;
        }
        u64::from(self.field_count) * self.max_field_length()
    }

    /// What operations of `kind` are called in tables: a command
    /// template's command name (`ZADD`), else the kind's own name.
    pub fn op_name(&self, kind: OpKind) -> &str {
        kind.command_index()
            .and_then(|i| self.commands.get(i))
            .map_or(kind.as_str(), |c| c.template.name.as_str())
    }

    /// One line describing the workload's key parameters, for listings.
    pub fn summary(&self) -> String {
        let mut mix = Vec::new();
        for (kind, w) in OpKind::ALL.iter().zip(self.weights()) {
            if w > 0.0 {
                mix.push(format!(
                    "{} {}",
                    self.op_name(*kind),
                    round(self.share(*kind) * 100.0)
                ));
            }
        }
        let lengths = match &self.field_length_distribution {
            FieldLengthDistribution::Constant => format!("{} B", self.field_length),
            FieldLengthDistribution::Uniform { min } => {
                format!("{min}..{} B uniform", self.field_length)
            }
            FieldLengthDistribution::Zipfian { min } => {
                format!("{min}..{} B zipfian", self.field_length)
            }
            FieldLengthDistribution::Histogram { path, .. } => format!("histogram {path}"),
            FieldLengthDistribution::Weighted { sizes } => {
                sizes
                    .iter()
                    .map(|(len, w)| format!("{len}:{w}"))
                    .collect::<Vec<_>>()
                    .join(",")
                    + " B weighted"
            }
        };
        let keys = match self.write_distribution {
            Some(w) if w != self.request_distribution => {
                format!("reads {}, updates {w}", self.request_distribution)
            }
            _ => self.request_distribution.to_string(),
        };
        let mut s = format!(
            "{} x {lengths}, {}%, {keys}",
            self.field_count,
            mix.join(" / "),
        );
        if self.mix == Mix::Cycle {
            s.push_str(", cycled");
        }
        if self.scan_proportion > 0.0 {
            s.push_str(&format!(
                ", scans {}..{} {}",
                self.min_scan_length,
                self.max_scan_length,
                self.scan_length_distribution.name()
            ));
        }
        if self.data_model.layout == Layout::Plain {
            s.push_str(", plain values");
        }
        if self.data_model.layout == Layout::SortedSets {
            let z = self.data_model.zsets;
            s = format!(
                "{} sorted sets of {} members per group, {}%, {keys}",
                z.sets,
                z.members,
                mix.join(" / ")
            );
        }
        if self.record_count != 1000 {
            s.push_str(&format!(", {} records", self.record_count));
        }
        s
    }
}

fn round(x: f64) -> String {
    let r = (x * 100.0).round() / 100.0;
    if r.fract() == 0.0 {
        format!("{r:.0}")
    } else {
        format!("{r}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_coreworkloads_and_valid() {
        let s = WorkloadSpec::default();
        s.validate().unwrap();
        assert_eq!(s.weights()[..6], [0.95, 0.05, 0.0, 0.0, 0.0, 0.0]);
        assert_eq!(s.load_range(), 0..1000);
        assert_eq!(s.record_bytes(), 1000);
        assert_eq!(s.field_name(3), "field3");
        assert_eq!(s.key_namer().key(0), "user6284781860667377211");
        assert_eq!(s.summary(), "10 x 100 B, read 95 / update 5%, uniform");
    }

    #[test]
    fn validation_names_the_property() {
        let check = |f: &dyn Fn(&mut WorkloadSpec), property: &str| {
            let mut s = WorkloadSpec::default();
            f(&mut s);
            let e = s.validate().unwrap_err();
            assert_eq!(e.property, property, "{e}");
        };
        check(&|s| s.record_count = 0, "recordcount");
        check(&|s| s.field_count = 0, "fieldcount");
        check(&|s| s.field_length = 0, "fieldlength");
        check(
            &|s| s.field_length_distribution = FieldLengthDistribution::Uniform { min: 101 },
            "minfieldlength",
        );
        check(&|s| s.field_name_prefix = "f d".into(), "fieldnameprefix");
        check(&|s| s.read_proportion = -1.0, "readproportion");
        check(
            &|s| {
                s.read_proportion = 0.0;
                s.update_proportion = 0.0
            },
            "readproportion",
        );
        check(&|s| s.min_scan_length = 0, "minscanlength");
        check(&|s| s.insert_start = 1, "insertcount");
        check(&|s| s.zipfian_constant = 1.0, "zipfian.constant");
        check(
            &|s| {
                s.request_distribution = KeyDistribution::Exponential {
                    percentile: 100.0,
                    frac: 0.5,
                }
            },
            "exponential.percentile",
        );
        check(
            &|s| {
                s.data_integrity = true;
                s.field_length_distribution = FieldLengthDistribution::Zipfian { min: 1 };
            },
            "dataintegrity",
        );
        check(&|s| s.data_model.layout = Layout::Plain, "fieldcount");
        check(&|s| s.scan_proportion = 0.5, "kvbench.redis.index");
        let e = WorkloadSpec {
            record_count: 0,
            ..WorkloadSpec::default()
        }
        .validate()
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "recordcount: must be between 1 and 1000000000000, got 0"
        );
    }

    #[test]
    fn weights_above_one_are_weights_as_in_ycsb() {
        let s = WorkloadSpec {
            read_proportion: 95.0,
            update_proportion: 5.0,
            ..WorkloadSpec::default()
        };
        s.validate().unwrap();
        assert!((s.share(OpKind::Read) - 0.95).abs() < 1e-12);
    }
}
