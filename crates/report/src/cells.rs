//! Stored runs grouped into cells: the runs that measured the same thing
//! (an experiment cell's iterations, or runs whose configurations differ in
//! nothing but the seed), with each metric summarised over them (mean,
//! standard deviation, Student's-t interval) and latency percentiles taken
//! from their histograms added together, never from averaged percentiles.

use kvbench_model::{LatencySummary, MarkKind, OpKind, RunConfig, RunRecord, RunStatus};
use kvbench_stats::hist::{merge_encoded, summarize};
use kvbench_stats::Summary;
use kvbench_workload::properties::{Origin, Properties};
use kvbench_workload::WorkloadSpec;
use std::collections::BTreeMap;

/// A stored run and, when an experiment made it, its cell there.
#[derive(Debug, Clone)]
pub struct Source {
    /// The run as stored.
    pub record: RunRecord,
    /// The experiment cell's key (a hash of its configuration).
    pub cell_key: Option<String>,
    /// The cell's place in the experiment's plan.
    pub cell_index: Option<u32>,
    /// The block (the experiment's iteration) the run belongs to: runs of
    /// one block at one place ran back to back, so they are compared as
    /// pairs (kvbench_stats::paired).
    pub block: Option<u32>,
}

/// One run's figures that verdicts pair across cells.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    /// Its block, when an experiment ran it.
    pub block: Option<u32>,
    /// Run-phase throughput (ops/s).
    pub throughput: f64,
    /// Server CPU per operation (us), when the server was local.
    pub server_cpu_us: Option<f64>,
    /// Why the noise canary calls the machine unusual during this run
    /// (crate::noise), or `None`.
    pub unusual: Option<String>,
    /// p50 and p99 (us) of the run's commonest operation.
    pub p50_us: Option<f64>,
    /// See `p50_us`.
    pub p99_us: Option<f64>,
    /// Each operation kind's throughput and p50 in this run.
    pub ops: Vec<SampleOp>,
    /// Server memory after the run phase (bytes; resident set, else what
    /// the server reports, summed over nodes).
    pub memory_after_run: Option<f64>,
}

/// One operation kind of one run.
#[derive(Debug, Clone, PartialEq)]
pub struct SampleOp {
    /// Which operation.
    pub op: OpKind,
    /// Ops/s of this kind in the run phase.
    pub throughput: f64,
    /// Its p50 (us).
    pub p50_us: f64,
    /// With a pipeline deeper than 1: its p50 divided by the depth, as
    /// papers that print "latency per request" of a pipeline give it.
    pub per_pipeline_p50_us: Option<f64>,
}

/// The runs of one cell, summarised.
#[derive(Debug, Clone)]
pub struct Cell {
    /// The system it ran as (`redis`): picks the colour.
    pub system: String,
    /// The server as measured: `redis 7.0.15 (jemalloc-5.3.0)`, with
    /// `[--io-threads 4]` when extra server arguments were given.
    pub label: String,
    /// `single`, `cluster of 3 masters x 0 replicas`, ...
    pub topology: String,
    /// Where the cell stands for comparisons: `single`, or `3 nodes` for
    /// any deployment of three servers (the papers set a Redis Cluster
    /// beside three client-hashed Memcached servers as "the cluster").
    pub place: String,
    /// The name of its line in a figure: the label, and for a multi-node
    /// place the topology (`redis 7.0.15, cluster of 3 masters`).
    pub series: String,
    /// The workload's name; a combined run's is `MAIN + WITH`
    /// (`altoros/complex + altoros/simple`), a workload of its own.
    pub workload: String,
    /// A combined run's second client group.
    pub companion: Option<CellCompanion>,
    /// Closed-loop clients.
    pub clients: u32,
    /// Requests in flight per connection.
    pub pipeline: u32,
    /// Offered rate of an open-loop cell.
    pub rate: Option<f64>,
    /// What else the cell held: records, value size, threads. Cells that
    /// differ here are drawn in separate figures.
    pub shape: String,
    /// The runs summarised (did not fail, and measured a run phase), in
    /// iteration order.
    pub runs: Vec<usize>,
    /// Ids of those runs.
    pub run_ids: Vec<i64>,
    /// Run-phase throughput over the runs (ops/s).
    pub throughput: Summary,
    /// Each summarised run's own figures, with its block, in run order.
    pub samples: Vec<Sample>,
    /// Per operation kind.
    pub ops: Vec<CellOp>,
    /// The kinds of its runs' marks and warnings, `redirects`, and `noisy`
    /// when iterations spread more than 5%: shown beside its numbers.
    pub flags: Vec<Flag>,
    /// Server memory at each probe stage, mean over the runs (bytes).
    pub memory: Memory,
    /// The raw dataset: records x fields x field length, or the sorted
    /// sets' members and scores, plus a combined run's second group's (bytes).
    pub dataset_bytes: u64,
    /// Server CPU per operation (us), when the server was local.
    pub server_cpu_us: Option<Summary>,
    /// kvbench's own CPU per operation (us).
    pub client_cpu_us: Option<Summary>,
    /// Order of first appearance (the experiment's plan when there is one).
    pub order: (u32, usize),
}

/// Why a cell's numbers deserve a second look, shown beside them; read by
/// kind, never from a sentence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flag {
    /// One of its runs has a mark or warning of this kind.
    Mark(MarkKind),
    /// Cluster redirects (MOVED or ASK) were followed in one of its runs.
    Redirects,
    /// Its iterations' throughput spread more than 5%.
    Noisy,
}

impl Flag {
    /// The flag's name, as the report shows it.
    pub fn name(self) -> &'static str {
        match self {
            Flag::Mark(kind) => kind.name(),
            Flag::Redirects => "redirects",
            Flag::Noisy => "noisy",
        }
    }

    /// A flag that puts a comparison's verdict in doubt: the client was the
    /// limit, the iterations or the seconds varied, operations failed, or
    /// the schedule was not kept.
    pub fn doubts_a_verdict(self) -> bool {
        matches!(
            self,
            Flag::Noisy
                | Flag::Mark(
                    MarkKind::ClientBound
                        | MarkKind::Unstable
                        | MarkKind::Errors
                        | MarkKind::Overloaded
                )
        )
    }
}

impl Cell {
    /// Its flags' names, for a figure's points and the tables.
    pub fn flag_names(&self) -> Vec<String> {
        self.flags.iter().map(|f| f.name().to_string()).collect()
    }
}

/// What a combined run's workload name adds to its main workload's.
fn with_suffix(with: &str) -> String {
    format!(" + {with}")
}

impl Cell {
    /// The main group's workload: [`workload`](Self::workload) without a
    /// combined run's ` + WITH`.
    pub fn main_workload(&self) -> &str {
        match &self.companion {
            Some(w) => self
                .workload
                .strip_suffix(&with_suffix(&w.workload))
                .unwrap_or(&self.workload),
            None => &self.workload,
        }
    }
}

/// The second client group of a combined run (`--with`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CellCompanion {
    /// Its workload, as a cell of it alone names it.
    pub workload: String,
    /// Its connections.
    pub clients: u32,
    /// Requests each of them kept in flight.
    pub pipeline: u32,
}

/// One operation kind over a cell's runs.
#[derive(Debug, Clone)]
pub struct CellOp {
    /// Which operation.
    pub op: OpKind,
    /// Run by a combined run's second client group.
    pub with: bool,
    /// Each run's throughput of this kind.
    pub throughput: Summary,
    /// Each run's own p50 and p99, summarised (for interval bars).
    pub p50_us: Summary,
    /// See `p50_us`.
    pub p99_us: Summary,
    /// Percentiles of every request of every run together.
    pub merged: LatencySummary,
    /// The latency spectrum of every request together: (nines, percentile, us).
    pub spectrum: Vec<(f64, f64, f64)>,
}

/// Server memory at the probe stages, what the server itself reports and
/// the process's resident set, summed over nodes.
#[derive(Debug, Clone, Default)]
pub struct Memory {
    /// (stage, server-reported bytes, resident bytes).
    pub stages: Vec<(String, Option<f64>, Option<f64>)>,
}

impl Memory {
    /// Bytes at `stage`, resident set first (what the machine pays), else
    /// what the server reports.
    pub fn at(&self, stage: &str) -> Option<f64> {
        self.stages
            .iter()
            .find(|(s, _, _)| s == stage)
            .and_then(|(_, server, rss)| rss.or(*server))
    }
}

/// Points of a spectrum per nine.
const SPECTRUM_PER_NINE: u32 = 10;

/// Groups `sources` into cells, in the order of their first run (plan order
/// for an experiment). Failed runs, and runs without a run phase, count in
/// no cell.
///
/// # Errors
/// When a stored histogram cannot be decoded.
pub fn group(sources: &[Source]) -> Result<Vec<Cell>, String> {
    let mut by_key: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    let mut first: BTreeMap<String, (u32, usize)> = BTreeMap::new();
    for (i, s) in sources.iter().enumerate() {
        let r = &s.record;
        if r.status == RunStatus::Failed || r.run.is_none() {
            continue;
        }
        let key = match &s.cell_key {
            Some(k) => format!("cell {k}"),
            None => format!("config {}", config_key(r)),
        };
        first
            .entry(key.clone())
            .or_insert((s.cell_index.unwrap_or(u32::MAX), i));
        by_key.entry(key).or_default().push(i);
    }
    let unusual = crate::noise::unusual(sources);
    let mut cells = Vec::new();
    for (key, runs) in by_key {
        let order = first.get(&key).copied().unwrap_or((u32::MAX, usize::MAX));
        cells.push(cell(sources, &unusual, runs, order)?);
    }
    cells.sort_by_key(|c| c.order);
    Ok(cells)
}

/// The configuration without what differs between iterations of one cell
/// (the seed and where it came from) or only explains a default.
pub(crate) fn config_key(r: &RunRecord) -> String {
    let mut v = serde_json::to_value(&r.config).unwrap_or_default();
    if let Some(o) = v.as_object_mut() {
        for k in ["seed", "seed_source", "threads_reason"] {
            o.remove(k);
        }
    }
    format!(
        "{v} {}",
        crate::format::server_label(r.config.system, &r.environment)
    )
}

fn cell(
    sources: &[Source],
    unusual: &[Option<String>],
    runs: Vec<usize>,
    order: (u32, usize),
) -> Result<Cell, String> {
    let recs: Vec<&RunRecord> = runs.iter().map(|&i| &sources[i].record).collect();
    let r0 = recs[0];
    let c = &r0.config;
    let phases: Vec<_> = recs.iter().filter_map(|r| r.run.as_ref()).collect();
    let throughput = summary(phases.iter().map(|p| p.throughput));
    let ops = cell_ops(&phases)?;
    let flags = cell_flags(&recs, &throughput);
    let Names {
        label,
        topology,
        place,
        series,
        shape,
    } = names(r0);
    Ok(Cell {
        system: c.system.as_str().to_string(),
        label,
        topology,
        place,
        series,
        workload: match &c.companion {
            Some(w) => format!("{}{}", c.workload, with_suffix(&w.workload)),
            None => c.workload.clone(),
        },
        companion: c.companion.as_ref().map(|w| CellCompanion {
            workload: w.workload.clone(),
            clients: w.clients,
            pipeline: w.pipeline,
        }),
        clients: c.clients,
        pipeline: c.pipeline,
        rate: c.rate,
        shape,
        run_ids: recs.iter().filter_map(|r| r.id).collect(),
        samples: samples(sources, unusual, &runs),
        throughput,
        ops,
        flags,
        memory: memory(&recs),
        dataset_bytes: dataset_bytes(c),
        server_cpu_us: opt_summary(
            recs.iter()
                .filter_map(|r| r.cpu.as_ref().and_then(|c| c.server_us_per_op)),
        ),
        client_cpu_us: opt_summary(
            recs.iter()
                .filter_map(|r| r.cpu.as_ref().and_then(|c| c.client_us_per_op)),
        ),
        order,
        runs,
    })
}

/// Each operation kind of a cell over its runs: throughput and percentiles
/// summarised, latencies from the runs' histograms merged.
fn cell_ops(phases: &[&kvbench_model::PhaseResult]) -> Result<Vec<CellOp>, String> {
    let mut ops = Vec::new();
    for op in op_kinds(phases.iter().flat_map(|p| p.ops.iter().map(|o| o.op))) {
        let results: Vec<_> = phases
            .iter()
            .filter_map(|p| p.ops.iter().find(|o| o.op == op))
            .collect();
        let Some(merged) = merge_encoded(results.iter().map(|o| o.histogram.as_str()))? else {
            continue;
        };
        ops.push(CellOp {
            op,
            with: results.iter().any(|o| o.with),
            throughput: summary(phases.iter().map(|p| {
                p.ops
                    .iter()
                    .find(|o| o.op == op)
                    .map_or(0.0, |o| o.throughput)
            })),
            p50_us: summary(results.iter().map(|o| o.latency.p50_us)),
            p99_us: summary(results.iter().map(|o| o.latency.p99_us)),
            merged: summarize(&merged),
            spectrum: kvbench_stats::hist::spectrum(&merged, SPECTRUM_PER_NINE),
        });
    }
    Ok(ops)
}

/// What a cell's runs were marked or warned with, once each, redirects,
/// and whether its throughput was noisy over its runs.
fn cell_flags(recs: &[&RunRecord], throughput: &Summary) -> Vec<Flag> {
    let mut flags: Vec<Flag> = Vec::new();
    for r in recs {
        let redirected = r
            .run
            .as_ref()
            .is_some_and(|p| p.redirects_moved + p.redirects_ask > 0);
        let kinds = r
            .marks
            .iter()
            .chain(&r.warnings)
            .map(|m| Flag::Mark(m.kind()));
        for f in kinds.chain(redirected.then_some(Flag::Redirects)) {
            if !flags.contains(&f) {
                flags.push(f);
            }
        }
    }
    if throughput.n > 1 && throughput.noisy() {
        flags.push(Flag::Noisy);
    }
    flags
}

/// How a cell is named in tables and figures.
struct Names {
    label: String,
    topology: String,
    place: String,
    series: String,
    shape: String,
}

/// A cell's names, from its first run's configuration.
fn names(r0: &RunRecord) -> Names {
    let c = &r0.config;
    let mut label = crate::format::server_label(c.system, &r0.environment);
    if !c.server_args.is_empty() {
        label.push_str(&format!(" [{}]", c.server_args.join(" ")));
    }
    // An eviction study's cells differ by limit and policy: each its line.
    if let Some(limit) = &c.max_memory {
        label.push_str(&format!(
            " [{limit}, {}]",
            c.eviction.as_deref().unwrap_or("default")
        ));
    }
    let topology = match crate::format::topology_label(c) {
        t if t.is_empty() => "single".to_string(),
        t => t.trim_start_matches(" | ").to_string(),
    };
    let value = record_bytes(c);
    let threads = format!(
        "{} thread{}",
        c.threads,
        if c.threads == 1 { "" } else { "s" }
    );
    let data = if crate::format::sorted_sets(c) {
        crate::format::dataset(c)
    } else {
        format!(
            "{} records x {} B",
            crate::format::count(c.records),
            crate::format::count(value),
        )
    };
    // A combined run's server also held the second group's data.
    let shape = match &c.companion {
        Some(w) => format!(
            "{data} + {} records of {}, {threads}",
            crate::format::count(w.records),
            w.workload
        ),
        None => format!("{data}, {threads}"),
    };
    let (place, series) = if topology == "single" {
        ("single".to_string(), label.clone())
    } else {
        (format!("{} nodes", c.nodes), format!("{label}, {topology}"))
    };
    Names {
        label,
        topology,
        place,
        series,
        shape,
    }
}

/// Each run of a cell as one sample, with its block and the noise canary's
/// note when its block was unusual.
fn samples(sources: &[Source], unusual: &[Option<String>], runs: &[usize]) -> Vec<Sample> {
    runs.iter()
        .filter_map(|&i| {
            let r = &sources[i].record;
            r.run.as_ref().map(|p| {
                let main = p.ops.iter().max_by_key(|o| o.completed);
                Sample {
                    block: sources[i].block,
                    throughput: p.throughput,
                    server_cpu_us: r.cpu.as_ref().and_then(|c| c.server_us_per_op),
                    unusual: unusual.get(i).cloned().flatten(),
                    p50_us: main.map(|o| o.latency.p50_us).filter(|v| *v > 0.0),
                    p99_us: main.map(|o| o.latency.p99_us).filter(|v| *v > 0.0),
                    ops: p
                        .ops
                        .iter()
                        .map(|o| SampleOp {
                            op: o.op,
                            throughput: o.throughput,
                            p50_us: o.latency.p50_us,
                            per_pipeline_p50_us: o.per_pipeline.as_ref().map(|l| l.p50_us),
                        })
                        .collect(),
                    memory_after_run: memory(&[r]).at("after_run"),
                }
            })
        })
        .collect()
}

/// Raw bytes per record: field count x length, or for sorted sets what the
/// workload itself counts (members and scores), read from the recorded
/// properties so that the memory overhead is measured against the right
/// size.
fn record_bytes(c: &RunConfig) -> u64 {
    let fields = c.field_count as u64 * c.field_length as u64;
    if !crate::format::sorted_sets(c) {
        return fields;
    }
    spec_record_bytes(&c.workload_properties).unwrap_or(fields)
}

/// Bytes per record of the workload `properties` define.
fn spec_record_bytes(properties: &[(String, String)]) -> Option<u64> {
    let mut props = Properties::new();
    for (name, value) in properties {
        props.set(name, value, Origin::CommandLine);
    }
    WorkloadSpec::from_properties(&props)
        .ok()
        .map(|(spec, _)| spec.record_bytes())
}

/// The raw data of a cell's server: its records, and a combined run's
/// second group's.
fn dataset_bytes(c: &RunConfig) -> u64 {
    let main = c.records.saturating_mul(record_bytes(c));
    let with = c.companion.as_ref().map_or(0, |w| {
        w.records
            .saturating_mul(spec_record_bytes(&w.workload_properties).unwrap_or(0))
    });
    main.saturating_add(with)
}

fn summary(values: impl Iterator<Item = f64>) -> Summary {
    let v: Vec<f64> = values.collect();
    Summary::of(&v).unwrap_or(Summary {
        n: 0,
        mean: 0.0,
        sd: 0.0,
        ci95: None,
    })
}

fn opt_summary(values: impl Iterator<Item = f64>) -> Option<Summary> {
    let v: Vec<f64> = values.collect();
    Summary::of(&v)
}

/// Mean memory per stage over the runs that probed it; a run on a kept
/// server has no load stages, so a stage is averaged over those that have it.
fn memory(recs: &[&RunRecord]) -> Memory {
    let mut stages = Vec::new();
    for stage in ["before_load", "after_load", "before_run", "after_run"] {
        let probes: Vec<_> = recs
            .iter()
            .filter_map(|r| r.probes.iter().find(|p| p.stage == stage))
            .collect();
        if probes.is_empty() {
            continue;
        }
        let mean = |f: &dyn Fn(&kvbench_model::Probe) -> Option<u64>| {
            let v: Vec<f64> = probes
                .iter()
                .filter_map(|p| f(p))
                .map(|b| b as f64)
                .collect();
            (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
        };
        stages.push((
            stage.to_string(),
            mean(&|p| p.server_memory_bytes),
            mean(&|p| p.rss_bytes),
        ));
    }
    Memory { stages }
}

/// The operation with the most completions across `cells`: the one a
/// table or spectrum of them shows, the same for every row.
pub fn main_op(cells: &[&Cell]) -> Option<OpKind> {
    let mut total: BTreeMap<u8, (OpKind, f64)> = BTreeMap::new();
    for c in cells {
        for o in &c.ops {
            total.entry(o.op as u8).or_insert((o.op, 0.0)).1 += o.throughput.mean;
        }
    }
    total
        .values()
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(op, _)| *op)
}

/// The distinct operation kinds of `ops`, in YCSB's order.
pub fn op_kinds(ops: impl Iterator<Item = OpKind>) -> Vec<OpKind> {
    let mut v: Vec<OpKind> = ops.collect();
    v.sort_by_key(|k| *k as u8);
    v.dedup();
    v
}
