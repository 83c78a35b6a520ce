//! What YCSB properties mean: CoreWorkload's properties (with YCSB's
//! defaults and value rules) and the `Client` settings, mapped onto a
//! [`WorkloadSpec`]; properties that belong to YCSB's client or database
//! bindings are recognised and set aside; anything else is reported by name.
//!
//! Parses values only; it must not decide how a run is scheduled (the CLI
//! does that with [`crate::spec::ClientSpec`]). The only I/O is reading a
//! `fieldlengthhistogram` file, through [`crate::properties::read_text`].

use crate::bounds;
use crate::command::CommandTemplate;
use crate::generator::{
    HistogramGenerator, KeyDistribution, EXPONENTIAL_FRAC_DEFAULT, EXPONENTIAL_PERCENTILE_DEFAULT,
    HOTSPOT_DATA_FRACTION_DEFAULT, HOTSPOT_OPN_FRACTION_DEFAULT, ZIPFIAN_CONSTANT,
};
use crate::properties::{read_text, Origin, Properties, PropertyError};
use crate::spec::{
    ClientSpec, CommandSpec, DataModel, FieldLengthDistribution, InsertOrder, Layout,
    MemcachedUpdate, Mix, ScanLengthDistribution, WorkloadSpec,
};
use crate::zsets::ZsetShape;
use kvbench_model::OpKind;
use std::fmt;
use std::path::Path;
use std::sync::Arc;

/// Every property kvbench reads, with its default as YCSB (or kvbench, for
/// `kvbench.*` and `zipfian.constant`) spells it and what it means. The
/// documentation (docs/workloads.md) lists each of them; a test checks it.
pub const PROPERTIES: &[(&str, &str, &str)] = &[
    (
        "recordcount",
        "1000",
        "records loaded before the run (YCSB: 0, see docs)",
    ),
    (
        "operationcount",
        "(unset)",
        "operations in the run phase, across all clients",
    ),
    ("fieldcount", "10", "fields per record"),
    (
        "fieldlength",
        "100",
        "bytes per field value (the longest, when lengths vary)",
    ),
    (
        "fieldlengthdistribution",
        "constant",
        "constant, uniform, zipfian, histogram or weighted",
    ),
    (
        "minfieldlength",
        "1",
        "shortest value for uniform and zipfian lengths",
    ),
    (
        "fieldlengthhistogram",
        "hist.txt",
        "histogram file for fieldlengthdistribution=histogram",
    ),
    ("fieldnameprefix", "field", "field i is named prefix + i"),
    (
        "table",
        "usertable",
        "YCSB's table name; Memcached keys are table-key, as YCSB's binding writes them",
    ),
    (
        "readallfields",
        "true",
        "reads fetch every field (else one at random)",
    ),
    (
        "writeallfields",
        "false",
        "updates write every field (else one at random)",
    ),
    (
        "dataintegrity",
        "false",
        "values derived from key and field, checked on reads",
    ),
    ("readproportion", "0.95", "weight of reads"),
    ("updateproportion", "0.05", "weight of updates"),
    ("insertproportion", "0.0", "weight of inserts"),
    ("scanproportion", "0.0", "weight of scans"),
    (
        "readmodifywriteproportion",
        "0.0",
        "weight of read-modify-writes",
    ),
    (
        "requestdistribution",
        "uniform",
        "uniform, zipfian, latest, hotspot, sequential, exponential; kvbench: clientsequential, parallel, gaussian",
    ),
    (
        "hotspotdatafraction",
        "0.2",
        "hotspot: share of keys that are hot",
    ),
    (
        "hotspotopnfraction",
        "0.8",
        "hotspot: share of operations on hot keys",
    ),
    (
        "exponential.percentile",
        "95",
        "exponential: percent of draws within exponential.frac",
    ),
    (
        "exponential.frac",
        "0.8571428571",
        "exponential: share of recordcount those draws fall in",
    ),
    ("minscanlength", "1", "shortest scan"),
    ("maxscanlength", "1000", "longest scan"),
    ("scanlengthdistribution", "uniform", "uniform or zipfian"),
    ("insertorder", "hashed", "hashed or ordered key names"),
    ("insertstart", "0", "first record number loaded and read"),
    (
        "insertcount",
        "recordcount - insertstart",
        "records loaded from insertstart",
    ),
    ("zeropadding", "1", "minimum digits of a key's number"),
    (
        "kvbench.keyprefix",
        "user",
        "what every record key starts with (YCSB's user)",
    ),
    (
        "threadcount",
        "(unset)",
        "YCSB client threads: kvbench's clients",
    ),
    (
        "target",
        "0",
        "total operations per second (0: as fast as possible)",
    ),
    (
        "maxexecutiontime",
        "0",
        "seconds the run phase may last (0: no limit)",
    ),
    (
        "workload",
        "site.ycsb.workloads.CoreWorkload",
        "must name CoreWorkload",
    ),
    (
        "zipfian.constant",
        "0.99",
        "kvbench: theta of zipfian and latest key choice",
    ),
    (
        "kvbench.datamodel",
        "hash",
        "hash (YCSB's), plain (one value per key) or sortedsets (ZUNIONSTORE groups)",
    ),
    (
        "kvbench.zunionstoreproportion",
        "0",
        "weight of ZUNIONSTORE of a group of sorted sets (sortedsets only)",
    ),
    ("kvbench.zset.sets", "4", "sortedsets: sets per group, the union's inputs"),
    ("kvbench.zset.members", "20000", "sortedsets: members per set"),
    (
        "kvbench.redis.index",
        "ycsb if scanproportion > 0, else none",
        "ZADD _indices on insert",
    ),
    (
        "kvbench.memcached.update",
        "full",
        "full (rewrite the record) or ycsb (replace changed fields)",
    ),
    (
        "kvbench.fieldlengths",
        "(unset)",
        "weighted lengths as memtier's --data-size-list: 100:3,1000:1",
    ),
    (
        "kvbench.mix",
        "random",
        "random (YCSB) or cycle (memtier's --ratio: updates, then reads, in a row)",
    ),
    (
        "kvbench.writedistribution",
        "requestdistribution",
        "how updates choose keys, when not as reads (memtier's SET pattern)",
    ),
    (
        "kvbench.gaussian.median",
        "middle of the key range",
        "gaussian: the centre key number",
    ),
    (
        "kvbench.gaussian.stddev",
        "a sixth of the key range",
        "gaussian: the spread in keys",
    ),
    (
        "kvbench.loadfraction",
        "1",
        "load this share of recordcount (what YCSB calls recordcount)",
    ),
    (
        "kvbench.mode",
        "ycsb",
        "ycsb, or cache-aside: a read that misses waits kvbench.cacheaside.penalty, then sets the record",
    ),
    (
        "kvbench.cacheaside.penalty",
        "1ms",
        "cache-aside: the backend's time per miss, fixed (1ms) or lognormal:P50:P99",
    ),
    (
        "kvbench.command.N",
        "(unset)",
        "command template N (1 to 8): a RESP command with __key__, __data__ and __score__ placeholders (memtier's --command)",
    ),
    (
        "kvbench.command.N.ratio",
        "1",
        "template N's weight in the mix (with kvbench.mix=cycle: how many in a row)",
    ),
    (
        "kvbench.command.N.keypattern",
        "R",
        "how template N's __key__ is chosen: S, R, G or P, as memtier's --command-key-pattern",
    ),
];

/// Properties of YCSB's `Client`, measurement and exporter code, and
/// CoreWorkload settings kvbench has no use for: recognised and ignored, with
/// a note.
pub const IGNORED: &[&str] = &[
    "db",
    "exporter",
    "exportfile",
    "dotransactions",
    "status",
    "status.interval",
    "label",
    "measurementtype",
    "measurement.interval",
    "measurement.trackjvm",
    "measurement.histogram.verbose",
    "measurement.raw.output_file",
    "measurement.raw.no_summary",
    "histogram.buckets",
    "hdrhistogram.percentiles",
    "hdrhistogram.fileoutput",
    "hdrhistogram.output.path",
    "timeseries.granularity",
    "reportlatencyforeacherror",
    "latencytrackederrors",
    "core_workload_insertion_retry_interval",
];

/// Name prefixes of YCSB database-binding and tracing properties
/// (`redis.host`, `memcached.hosts`, ...): recognised and ignored, with a note.
pub const IGNORED_PREFIXES: &[&str] = &[
    "redis.",
    "memcached.",
    "basicdb.",
    "htrace.",
    "hdrhistogram.",
    "measurement.",
];

/// Workload classes whose properties kvbench implements.
const CORE_WORKLOAD: &[&str] = &[
    "site.ycsb.workloads.CoreWorkload",
    "com.yahoo.ycsb.workloads.CoreWorkload",
];

/// What a [`Warning`] is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WarningKind {
    /// No YCSB or kvbench component reads this property: probably a typo.
    Unknown,
    /// A YCSB client or binding property kvbench has no use for (a note).
    Ignored,
    /// A CoreWorkload setting kvbench does not implement; it has no effect.
    Unsupported,
}

/// Something about the properties worth telling the user, but not fatal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    /// Where the property was set.
    pub origin: Origin,
    /// The property.
    pub property: String,
    /// Which kind of warning.
    pub kind: WarningKind,
    /// What kvbench does about it.
    pub message: String,
}

impl Warning {
    /// True for notes ([`WarningKind::Ignored`]): expected in a YCSB file
    /// written for YCSB's client, not a sign of a mistake.
    pub fn is_note(&self) -> bool {
        self.kind == WarningKind::Ignored
    }
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}: {}", self.origin, self.property, self.message)
    }
}

/// Reads the values out of a [`Properties`], remembering which names were used.
struct Reader<'a> {
    props: &'a Properties,
}

impl<'a> Reader<'a> {
    fn err(&self, name: &str, message: String) -> PropertyError {
        PropertyError {
            origin: Some(self.props.get(name).map_or_else(
                || Origin::Unset {
                    source: self.props.source_name(),
                },
                |e| e.origin.clone(),
            )),
            property: Some(name.to_owned()),
            message,
        }
    }

    fn raw(&self, name: &str) -> Option<&'a str> {
        self.props.value(name)
    }

    /// A whole number (`Integer.parseInt`/`Long.parseLong`, without their
    /// upper bounds).
    fn u64(&self, name: &str, default: u64) -> Result<u64, PropertyError> {
        match self.raw(name) {
            None => Ok(default),
            Some(text) => parse_u64(text).map_err(|m| self.err(name, m)),
        }
    }

    /// `value`, refused above `max` ([`crate::bounds`]).
    fn at_most(&self, name: &str, value: u64, max: u64) -> Result<u64, PropertyError> {
        if value <= max {
            Ok(value)
        } else {
            Err(self.err(
                name,
                format!("{value} is more than {max}, the most kvbench takes"),
            ))
        }
    }

    fn u32(&self, name: &str, default: u32) -> Result<u32, PropertyError> {
        let v = self.u64(name, u64::from(default))?;
        u32::try_from(v)
            .map_err(|_| self.err(name, format!("{v} is too large (at most {})", u32::MAX)))
    }

    fn opt_u64(&self, name: &str) -> Result<Option<u64>, PropertyError> {
        self.raw(name)
            .map(|t| parse_u64(t).map_err(|m| self.err(name, m)))
            .transpose()
    }

    /// A number (`Double.parseDouble`).
    fn f64(&self, name: &str, default: f64) -> Result<f64, PropertyError> {
        match self.raw(name) {
            None => Ok(default),
            Some(text) => parse_f64(text).map_err(|m| self.err(name, m)),
        }
    }

    /// `true`/`false` in any case. YCSB's `Boolean.parseBoolean` reads any
    /// other text as false; kvbench refuses it as a likely mistake.
    fn bool(&self, name: &str, default: bool) -> Result<bool, PropertyError> {
        match self.raw(name) {
            None => Ok(default),
            Some(t) if t.eq_ignore_ascii_case("true") => Ok(true),
            Some(t) if t.eq_ignore_ascii_case("false") => Ok(false),
            Some(t) => Err(self.err(name, format!("\"{t}\" is not true or false"))),
        }
    }

    /// One of `choices`, exactly (YCSB compares case-sensitively).
    fn choice(
        &self,
        name: &str,
        default: &'static str,
        choices: &[&'static str],
    ) -> Result<&'static str, PropertyError> {
        match self.raw(name) {
            None => Ok(default),
            Some(t) => choices.iter().copied().find(|c| *c == t).ok_or_else(|| {
                self.err(
                    name,
                    format!("\"{t}\" is not one of: {}", choices.join(", ")),
                )
            }),
        }
    }

    fn fraction(&self, name: &str, default: f64) -> Result<f64, PropertyError> {
        let v = self.f64(name, default)?;
        if (0.0..=1.0).contains(&v) {
            Ok(v)
        } else {
            Err(self.err(name, format!("{v} is not between 0 and 1")))
        }
    }
}

/// memtier's `--data-size-list` syntax: `size:weight[,size:weight...]`.
pub fn parse_weighted(text: &str) -> Result<Vec<(u32, u32)>, String> {
    let mut out = Vec::new();
    for item in text.split(',') {
        let item = item.trim();
        let parsed = item.split_once(':').and_then(|(len, weight)| {
            Some((
                len.trim().parse::<u32>().ok()?,
                weight.trim().parse::<u32>().ok()?,
            ))
        });
        match parsed {
            Some((len, weight)) if len > 0 && weight > 0 => out.push((len, weight)),
            _ => {
                return Err(format!(
                    "\"{item}\" is not SIZE:WEIGHT with both at least 1 (e.g. 100:3,1000:1)"
                ))
            }
        }
    }
    Ok(out)
}

fn parse_u64(text: &str) -> Result<u64, String> {
    let digits = text.strip_prefix('+').unwrap_or(text);
    if let Some(neg) = digits.strip_prefix('-') {
        if !neg.is_empty() && neg.bytes().all(|b| b.is_ascii_digit()) {
            return Err(format!("\"{text}\" must not be negative"));
        }
    }
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("\"{text}\" is not a whole number"));
    }
    digits
        .parse()
        .map_err(|_| format!("\"{text}\" is too large"))
}

/// Java's `Double.parseDouble` for the decimal forms people write: optional
/// sign, digits with an optional point and exponent, an optional `d`/`f`
/// suffix; surrounding blanks ignored. Infinity and NaN are refused.
fn parse_f64(text: &str) -> Result<f64, String> {
    let t = text.trim();
    let t = t.strip_suffix(['d', 'D', 'f', 'F']).unwrap_or(t);
    let numeric = !t.is_empty()
        && t.bytes()
            .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-'))
        && t.bytes().any(|b| b.is_ascii_digit());
    match t.parse::<f64>() {
        Ok(v) if numeric && v.is_finite() => Ok(v),
        _ => Err(format!("\"{text}\" is not a number")),
    }
}

impl WorkloadSpec {
    /// Builds a spec from YCSB properties with CoreWorkload's semantics and
    /// defaults, then [`validate`](Self::validate)s it. Returns the warnings
    /// too: unknown properties (by name, with a suggestion), YCSB client and
    /// binding properties set aside (notes), and unsupported settings.
    ///
    /// The only I/O: with `fieldlengthdistribution=histogram`, the histogram
    /// file is read (relative to the working directory, as YCSB does).
    ///
    /// # Errors
    /// One line naming the file, line and property, e.g.
    /// `workloads/x: line 12: readproportion: "0.9x" is not a number`.
    pub fn from_properties(
        props: &Properties,
    ) -> Result<(WorkloadSpec, Vec<Warning>), PropertyError> {
        let r = Reader { props };
        let warnings = classify(props);

        if let Some(class) = r.raw("workload") {
            if !CORE_WORKLOAD.contains(&class) {
                return Err(r.err(
                    "workload",
                    format!(
                        "\"{class}\" is not supported: kvbench implements CoreWorkload only \
                         ({})",
                        CORE_WORKLOAD[0]
                    ),
                ));
            }
        }

        let (record_count, insert_start, insert_count) = r.records()?;
        let (field_length, field_length_distribution) = r.field_lengths()?;
        let request_distribution = r.request_distribution()?;

        let scan_proportion = r.f64("scanproportion", 0.0)?;
        let commands = r.commands()?;
        let spec = WorkloadSpec {
            name: props.source_name(),
            record_count,
            field_count: r.at_most(
                "fieldcount",
                u64::from(r.u32("fieldcount", 10)?),
                u64::from(bounds::MAX_FIELD_COUNT),
            )? as u32,
            field_length,
            field_length_distribution,
            field_name_prefix: r.raw("fieldnameprefix").unwrap_or("field").to_owned(),
            table: r.raw("table").unwrap_or("usertable").to_owned(),
            read_all_fields: r.bool("readallfields", true)?,
            write_all_fields: r.bool("writeallfields", false)?,
            data_integrity: r.bool("dataintegrity", false)?,
            read_proportion: r.f64("readproportion", 0.95)?,
            update_proportion: r.f64("updateproportion", 0.05)?,
            insert_proportion: r.f64("insertproportion", 0.0)?,
            scan_proportion,
            read_modify_write_proportion: r.f64("readmodifywriteproportion", 0.0)?,
            union_proportion: r.f64("kvbench.zunionstoreproportion", 0.0)?,
            commands,
            request_distribution,
            write_distribution: match r.raw("kvbench.writedistribution") {
                Some(_) => Some(r.key_distribution("kvbench.writedistribution")?),
                None => None,
            },
            mix: match r.choice("kvbench.mix", "random", &["random", "cycle"])? {
                "cycle" => Mix::Cycle,
                _ => Mix::Random,
            },
            zipfian_constant: r.f64("zipfian.constant", ZIPFIAN_CONSTANT)?,
            min_scan_length: r.u32("minscanlength", 1)?,
            max_scan_length: r.at_most(
                "maxscanlength",
                u64::from(r.u32("maxscanlength", 1000)?),
                u64::from(bounds::MAX_SCAN_LENGTH),
            )? as u32,
            scan_length_distribution: match r.choice(
                "scanlengthdistribution",
                "uniform",
                &["uniform", "zipfian"],
            )? {
                "zipfian" => ScanLengthDistribution::Zipfian,
                _ => ScanLengthDistribution::Uniform,
            },
            insert_order: match r.choice("insertorder", "hashed", &["hashed", "ordered"])? {
                "ordered" => InsertOrder::Ordered,
                _ => InsertOrder::Hashed,
            },
            insert_start,
            insert_count,
            zero_padding: r.u32("zeropadding", 1)?,
            key_prefix: r.key_prefix()?,
            data_model: r.data_model(scan_proportion)?,
            client: r.client()?,
            cache_aside: r.cache_aside()?,
        };
        spec.validate().map_err(|e| r.err(e.property, e.message))?;
        Ok((spec, warnings))
    }
}

impl Reader<'_> {
    /// `recordcount` (scaled by `kvbench.loadfraction`), `insertstart` and
    /// `insertcount` (the rest of the records from `insertstart`).
    fn records(&self) -> Result<(u64, u64, u64), PropertyError> {
        let load_fraction = self.f64("kvbench.loadfraction", 1.0)?;
        if !(load_fraction > 0.0 && load_fraction <= 1.0) {
            return Err(self.err(
                "kvbench.loadfraction",
                format!("{load_fraction} is not above 0 and at most 1"),
            ));
        }
        let nominal_records = self.u64("recordcount", 1000)?;
        if nominal_records == 0 {
            return Err(self.err(
                "recordcount",
                "must be at least 1 (YCSB's 0 loads nothing and reads 2^31 keys)".into(),
            ));
        }
        self.at_most("recordcount", nominal_records, bounds::MAX_RECORDS)?;
        let record_count = (nominal_records as f64 * load_fraction) as u64;
        if record_count == 0 {
            return Err(self.err(
                "kvbench.loadfraction",
                format!("loads no record of recordcount={nominal_records}"),
            ));
        }
        let insert_start = self.u64("insertstart", 0)?;
        let insert_count = match self.opt_u64("insertcount")? {
            Some(n) => n,
            None => record_count.checked_sub(insert_start).ok_or_else(|| {
                self.err(
                    "insertstart",
                    format!("{insert_start} is beyond recordcount ({record_count})"),
                )
            })?,
        };
        Ok((record_count, insert_start, insert_count))
    }

    /// The longest field and how lengths are drawn
    /// (`fieldlengthdistribution`; a weighted list's longest size is the
    /// longest field).
    fn field_lengths(&self) -> Result<(u32, FieldLengthDistribution), PropertyError> {
        let mut field_length = self.u32("fieldlength", 100)?;
        self.at_most(
            "fieldlength",
            u64::from(field_length),
            u64::from(bounds::MAX_FIELD_LENGTH),
        )?;
        let min_field_length = self.u32("minfieldlength", 1)?;
        let field_length_distribution = match self.choice(
            "fieldlengthdistribution",
            "constant",
            &["constant", "uniform", "zipfian", "histogram", "weighted"],
        )? {
            "weighted" => {
                let text = self.raw("kvbench.fieldlengths").ok_or_else(|| {
                    self.err(
                        "fieldlengthdistribution",
                        "weighted needs kvbench.fieldlengths (e.g. 100:3,1000:1)".into(),
                    )
                })?;
                let sizes =
                    parse_weighted(text).map_err(|m| self.err("kvbench.fieldlengths", m))?;
                field_length = sizes.iter().map(|&(len, _)| len).max().unwrap_or(1);
                FieldLengthDistribution::Weighted { sizes }
            }
            "uniform" => FieldLengthDistribution::Uniform {
                min: min_field_length,
            },
            "zipfian" => FieldLengthDistribution::Zipfian {
                min: min_field_length,
            },
            "histogram" => {
                let path = self
                    .raw("fieldlengthhistogram")
                    .unwrap_or("hist.txt")
                    .to_owned();
                let text = read_text(Path::new(&path)).map_err(|e| {
                    self.err_or("fieldlengthhistogram", "fieldlengthdistribution", e.message)
                })?;
                let histogram = HistogramGenerator::parse(&text).map_err(|m| {
                    self.err_or(
                        "fieldlengthhistogram",
                        "fieldlengthdistribution",
                        format!("{path}: {m}"),
                    )
                })?;
                FieldLengthDistribution::Histogram {
                    path,
                    histogram: Arc::new(histogram),
                }
            }
            _ => FieldLengthDistribution::Constant,
        };
        Ok((field_length, field_length_distribution))
    }

    /// `requestdistribution` with its parameters.
    fn request_distribution(&self) -> Result<KeyDistribution, PropertyError> {
        Ok(
            match self.choice(
                "requestdistribution",
                "uniform",
                &[
                    "uniform",
                    "zipfian",
                    "latest",
                    "hotspot",
                    "sequential",
                    "exponential",
                    "clientsequential",
                    "parallel",
                    "gaussian",
                ],
            )? {
                "gaussian" | "clientsequential" | "parallel" => {
                    self.key_distribution("requestdistribution")?
                }
                "zipfian" => KeyDistribution::Zipfian,
                "latest" => KeyDistribution::Latest,
                "sequential" => KeyDistribution::Sequential,
                "hotspot" => KeyDistribution::Hotspot {
                    data_fraction: self
                        .fraction("hotspotdatafraction", HOTSPOT_DATA_FRACTION_DEFAULT)?,
                    opn_fraction: self
                        .fraction("hotspotopnfraction", HOTSPOT_OPN_FRACTION_DEFAULT)?,
                },
                "exponential" => KeyDistribution::Exponential {
                    percentile: self
                        .f64("exponential.percentile", EXPONENTIAL_PERCENTILE_DEFAULT)?,
                    frac: self.f64("exponential.frac", EXPONENTIAL_FRAC_DEFAULT)?,
                },
                _ => KeyDistribution::Uniform,
            },
        )
    }

    /// The data model, its Redis scan index on by default when the workload
    /// scans.
    fn data_model(&self, scan_proportion: f64) -> Result<DataModel, PropertyError> {
        let layout = match self.choice(
            "kvbench.datamodel",
            "hash",
            &["hash", "plain", "sortedsets"],
        )? {
            "plain" => Layout::Plain,
            "sortedsets" => Layout::SortedSets,
            _ => Layout::Hash,
        };
        let index_default = if scan_proportion > 0.0 {
            "ycsb"
        } else {
            "none"
        };
        let redis_index =
            self.choice("kvbench.redis.index", index_default, &["ycsb", "none"])? == "ycsb";
        let memcached_update =
            match self.choice("kvbench.memcached.update", "full", &["full", "ycsb"])? {
                "ycsb" => MemcachedUpdate::Ycsb,
                _ => MemcachedUpdate::Full,
            };
        Ok(DataModel {
            layout,
            redis_index,
            memcached_update,
            zsets: ZsetShape {
                sets: self.u32("kvbench.zset.sets", 4)?,
                members: self.u32("kvbench.zset.members", 20_000)?,
            },
        })
    }

    /// What YCSB's client would have been told: operation count, threads,
    /// target rate, time limit.
    fn client(&self) -> Result<ClientSpec, PropertyError> {
        let threads = self.opt_u64("threadcount")?;
        let thread_count = match threads {
            Some(0) => return Err(self.err("threadcount", "must be at least 1".into())),
            Some(n) => Some(self.at_most("threadcount", n, u64::from(bounds::MAX_CLIENTS))? as u32),
            None => None,
        };
        Ok(ClientSpec {
            operation_count: self
                .opt_u64("operationcount")?
                .map(|n| self.at_most("operationcount", n, bounds::MAX_OPERATIONS))
                .transpose()?,
            thread_count,
            target: self
                .opt_u64("target")?
                .filter(|&t| t > 0)
                .map(|t| self.at_most("target", t, bounds::MAX_RATE))
                .transpose()?,
            max_execution_time: self.opt_u64("maxexecutiontime")?.filter(|&t| t > 0),
        })
    }

    /// `kvbench.keyprefix`, `user` by default.
    fn key_prefix(&self) -> Result<String, PropertyError> {
        Ok(match self.raw("kvbench.keyprefix") {
            None => "user".to_string(),
            Some(p) if !p.is_empty() && p.bytes().all(|b| b.is_ascii_graphic()) => p.to_string(),
            Some(_) => {
                return Err(self.err(
                    "kvbench.keyprefix",
                    "must be printable ASCII without spaces".into(),
                ))
            }
        })
    }

    /// `kvbench.mode=cache-aside` and its miss penalty.
    fn cache_aside(&self) -> Result<Option<crate::cache_aside::Penalty>, PropertyError> {
        Ok(
            match self.choice("kvbench.mode", "ycsb", &["ycsb", "cache-aside"])? {
                "cache-aside" => Some(
                    crate::cache_aside::Penalty::parse(
                        self.raw("kvbench.cacheaside.penalty").unwrap_or("1ms"),
                    )
                    .map_err(|m| self.err("kvbench.cacheaside.penalty", m))?,
                ),
                _ => None,
            },
        )
    }

    /// `kvbench.command.1` to `.8`, with their ratios and key patterns,
    /// numbered from 1 without gaps (the number is the template's kind).
    fn commands(&self) -> Result<Vec<CommandSpec>, PropertyError> {
        let mut out = Vec::new();
        for n in 1..=OpKind::COMMANDS {
            let name = format!("kvbench.command.{n}");
            let (ratio, pattern) = (format!("{name}.ratio"), format!("{name}.keypattern"));
            let Some(text) = self.raw(&name) else {
                if let Some(orphan) = [&ratio, &pattern]
                    .into_iter()
                    .find(|p| self.raw(p).is_some())
                {
                    return Err(self.err(orphan, format!("set, but {name} is not")));
                }
                continue;
            };
            if out.len() + 1 != n {
                return Err(self.err(
                    &name,
                    format!(
                        "set without kvbench.command.{}: number the templates from 1, without gaps",
                        out.len() + 1
                    ),
                ));
            }
            let template = CommandTemplate::parse(text).map_err(|e| self.err(&name, e.0))?;
            let keys = match self.raw(&pattern) {
                None => KeyDistribution::Uniform,
                Some(letter) => {
                    let mut chars = letter.trim().chars();
                    let one = chars.next().filter(|_| chars.next().is_none());
                    one.and_then(|c| KeyDistribution::from_memtier(c.to_ascii_uppercase()))
                        .ok_or_else(|| {
                            self.err(
                                &pattern,
                                format!("\"{letter}\" is not one of S, R, G, P (memtier's key patterns)"),
                            )
                        })?
                }
            };
            out.push(CommandSpec {
                template,
                ratio: self.f64(&ratio, 1.0)?,
                keys,
            });
        }
        Ok(out)
    }

    /// The key distribution `name` (`requestdistribution` or
    /// `kvbench.writedistribution`) names, with its parameters; the
    /// YCSB-only ones take their defaults here.
    fn key_distribution(&self, name: &str) -> Result<KeyDistribution, PropertyError> {
        let value = self.raw(name).unwrap_or("uniform");
        let dist: KeyDistribution = value.parse().map_err(|m| self.err(name, m))?;
        Ok(match dist {
            KeyDistribution::Gaussian { .. } => KeyDistribution::Gaussian {
                median: self.f64("kvbench.gaussian.median", 0.0)?,
                stddev: self.f64("kvbench.gaussian.stddev", 0.0)?,
            },
            other => other,
        })
    }

    /// An error attributed to `first` if it was set, else to `second`.
    fn err_or(&self, first: &str, second: &str, message: String) -> PropertyError {
        if self.props.contains(first) {
            self.err(first, message)
        } else {
            self.err(second, message)
        }
    }
}

/// The warnings and notes for every property set: unknown names (with the
/// closest known name), ignored client/binding settings, unsupported ones.
fn classify(props: &Properties) -> Vec<Warning> {
    let mut out = Vec::new();
    for e in props.iter() {
        let name = e.name.as_str();
        let warn = |kind, message: String| Warning {
            origin: e.origin.clone(),
            property: name.to_owned(),
            kind,
            message,
        };
        if PROPERTIES.iter().any(|(p, _, _)| *p == name) {
            continue;
        }
        if let Some(n) = command_number(name) {
            if !(1..=OpKind::COMMANDS).contains(&n) {
                out.push(warn(
                    WarningKind::Unknown,
                    format!(
                        "unknown property, ignored (command templates are numbered 1 to {})",
                        OpKind::COMMANDS
                    ),
                ));
            }
            continue;
        }
        if name == "core_workload_insertion_retry_limit" {
            if e.value.trim() != "0" {
                out.push(warn(
                    WarningKind::Unsupported,
                    "not supported: kvbench retries no insert by itself (it counts the error); --max-retries retries every failed request"
                        .into(),
                ));
            }
            continue;
        }
        if IGNORED.contains(&name) || IGNORED_PREFIXES.iter().any(|p| name.starts_with(p)) {
            out.push(warn(
                WarningKind::Ignored,
                "a YCSB client or database-binding setting; kvbench ignores it".into(),
            ));
            continue;
        }
        let hint = closest(name)
            .map(|k| format!(" (did you mean {k}?)"))
            .unwrap_or_default();
        out.push(warn(
            WarningKind::Unknown,
            format!("unknown property, ignored{hint}"),
        ));
    }
    out
}

/// N of `kvbench.command.N`, `.N.ratio` or `.N.keypattern`.
fn command_number(name: &str) -> Option<usize> {
    let rest = name.strip_prefix("kvbench.command.")?;
    let number = rest
        .strip_suffix(".ratio")
        .or_else(|| rest.strip_suffix(".keypattern"))
        .unwrap_or(rest);
    number.parse().ok()
}

/// The known property name nearest to `name`, when it is near enough to be
/// a typo (edit distance at most 2, or 3 for long names).
fn closest(name: &str) -> Option<&'static str> {
    let limit = if name.len() > 12 { 3 } else { 2 };
    PROPERTIES
        .iter()
        .map(|(p, _, _)| *p)
        .chain(IGNORED.iter().copied())
        .map(|p| (edit_distance(name, p), p))
        .filter(|(d, _)| *d <= limit)
        .min()
        .map(|(_, p)| p)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_parse_as_java_would() {
        assert_eq!(parse_u64("+12"), Ok(12));
        assert_eq!(parse_u64("-3").unwrap_err(), "\"-3\" must not be negative");
        assert_eq!(
            parse_u64("1e3").unwrap_err(),
            "\"1e3\" is not a whole number"
        );
        assert_eq!(parse_u64("").unwrap_err(), "\"\" is not a whole number");
        assert!(parse_u64("99999999999999999999999").is_err());
        for (t, v) in [
            ("0.5", 0.5),
            (".5", 0.5),
            ("1.", 1.0),
            ("1e-2", 0.01),
            ("2d", 2.0),
            (" 3 ", 3.0),
            ("+1", 1.0),
        ] {
            assert_eq!(parse_f64(t), Ok(v), "{t}");
        }
        for t in ["0.9x", "NaN", "Infinity", "inf", "", "-", "e5"] {
            assert_eq!(
                parse_f64(t).unwrap_err(),
                format!("\"{t}\" is not a number")
            );
        }
    }

    #[test]
    fn typos_get_suggestions() {
        assert_eq!(closest("readproprtion"), Some("readproportion"));
        assert_eq!(closest("recordcont"), Some("recordcount"));
        assert_eq!(closest("requestdistrib"), None);
        assert_eq!(closest("xyz"), None);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
    }
}
