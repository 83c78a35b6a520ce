//! The experiment file: TOML read into typed structs that keep where each
//! value sits in the file, so that every error, from the TOML parser or from
//! a later check, names the file, the line and the key.
//!
//! It only reads the file and checks its shape; `cells.rs` decides what runs.

use kvbench_run::UsageError;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::ops::Range;
use std::path::{Path, PathBuf};
use toml::Spanned;

/// An experiment file as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExperimentFile {
    pub name: Spanned<String>,
    systems: Spanned<Vec<Spanned<toml::Value>>>,
    #[serde(default)]
    topologies: Vec<Spanned<toml::Value>>,
    #[serde(default)]
    pub targets: Vec<TargetEntry>,
    #[serde(default)]
    pub dataset: Dataset,
    workloads: Spanned<Vec<Spanned<toml::Value>>>,
    #[serde(default)]
    pub load: LoadModel,
    #[serde(default)]
    pub sweep: Sweep,
    #[serde(default)]
    pub run: Window,
    pub iterations: Option<Spanned<u32>>,
    /// The most cells the file may expand to (a guard against a sweep
    /// typed with one zero too many); see `cells::DEFAULT_MAX_CELLS`.
    pub max_cells: Option<Spanned<u64>>,
    pub seed: Option<Spanned<u64>>,
    pub reload: Option<Spanned<String>>,
    /// As --server-cpus and --client-cpus (CPU lists such as "0" or "0-1,3").
    pub server_cpus: Option<Spanned<String>>,
    pub client_cpus: Option<Spanned<String>>,
    /// How verdicts are called, and whether blocks are added until they
    /// are decided (as compare's --margin, --until-decided, --max-blocks,
    /// --budget).
    #[serde(default)]
    pub verdicts: VerdictsTable,
}

/// `[verdicts]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VerdictsTable {
    /// Percent, as --margin.
    pub margin: Option<Spanned<f64>>,
    #[serde(default)]
    pub until_decided: bool,
    pub max_blocks: Option<Spanned<u32>>,
    /// A duration, as --budget ("4m").
    pub budget: Option<Spanned<String>>,
}

impl VerdictsTable {
    /// The table checked, as the experiment needs it.
    ///
    /// # Errors
    /// [`UsageError`] naming the file, line and key.
    pub fn resolve(&self, src: &Source) -> Result<crate::verdict_plan::Plan, UsageError> {
        let margin = self.margin.as_ref();
        let max = self.max_blocks.as_ref();
        let budget = match &self.budget {
            Some(b) => Some(
                humantime::parse_duration(b.get_ref())
                    .map_err(|e| src.error(b.span(), "verdicts.budget", &e.to_string()))?,
            ),
            None => None,
        };
        if !self.until_decided {
            if let Some(m) = max {
                return Err(src.error(
                    m.span(),
                    "verdicts.max_blocks",
                    "goes with until_decided = true",
                ));
            }
            if let Some(b) = &self.budget {
                return Err(src.error(
                    b.span(),
                    "verdicts.budget",
                    "goes with until_decided = true",
                ));
            }
        }
        crate::verdict_plan::Plan::new(
            margin.map_or(kvbench_stats::paired::DEFAULT_MARGIN * 100.0, |m| {
                *m.get_ref()
            }),
            self.until_decided,
            max.map_or(crate::verdict_plan::DEFAULT_MAX_BLOCKS, |m| *m.get_ref()),
            budget,
        )
        .map_err(|(key, e)| {
            let span = match key {
                "margin" => margin.map(Spanned::span),
                _ => max.map(Spanned::span),
            };
            src.error(span.unwrap_or(0..0), &format!("verdicts.{key}"), &e)
        })
    }
}

/// A system as `--system` names it, with an optional server binary.
#[derive(Debug)]
pub struct SystemEntry {
    pub name: Spanned<String>,
    pub server_bin: Option<Spanned<String>>,
    /// Extra arguments for this system's servers (as --server-args).
    pub server_args: Option<Spanned<Vec<String>>>,
    /// The version its server binary must report (a prefix at dots: "7.0").
    pub version: Option<Spanned<String>>,
    /// Run only where its server binary is found (Aerospike's asd, which
    /// no package provides); left out, and named, elsewhere.
    pub optional: bool,
}

/// A deployment kvbench starts; every part spans the entry, because
/// toml keeps no spans inside an entry that may be a string or a table.
#[derive(Debug)]
pub struct TopologyEntry {
    pub kind: Spanned<String>,
    pub nodes: Option<Spanned<u32>>,
    pub replicas: Option<Spanned<u32>>,
    /// Only for these systems (default: every system).
    pub systems: Option<Vec<Spanned<String>>>,
}

/// A server kvbench does not start (`--target`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TargetEntry {
    pub system: Spanned<String>,
    pub url: Spanned<String>,
    #[serde(default)]
    pub flush: bool,
    #[serde(default)]
    pub allow_existing: bool,
    #[serde(default)]
    pub cleanup: bool,
    /// As --password-env / --password-file: where the password is read
    /// from (never the password itself, which would then be in the file).
    pub password_env: Option<Spanned<String>>,
    pub password_file: Option<Spanned<String>>,
    /// As --tls-ca, --tls-cert, --tls-key (paths relative to this file),
    /// --tls-server-name, --tls-insecure.
    pub tls_ca: Option<Spanned<String>>,
    pub tls_cert: Option<Spanned<String>>,
    pub tls_key: Option<Spanned<String>>,
    pub tls_server_name: Option<Spanned<String>>,
    #[serde(default)]
    pub tls_insecure: bool,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Dataset {
    pub records: Option<Spanned<u64>>,
    pub field_count: Option<Spanned<u32>>,
    pub field_length: Option<Spanned<u32>>,
    pub key_prefix: Option<Spanned<String>>,
}

/// A workload: a preset and/or YCSB files, adjusted by properties.
#[derive(Debug)]
pub struct WorkloadEntry {
    pub span: Range<usize>,
    pub preset: Option<Spanned<String>>,
    /// YCSB property files, relative to the experiment file.
    pub files: Vec<Spanned<String>>,
    /// YCSB properties over the preset and files (as `-p NAME=VALUE`).
    pub properties: BTreeMap<String, Spanned<String>>,
    /// Its own record count (as --records), over `[dataset]`'s.
    pub records: Option<Spanned<u64>>,
    /// Its own operation count (as --operations), over `[run]`'s: paper B
    /// ran its insert-heavy workloads for half the operations of the others.
    pub operations: Option<Spanned<u64>>,
    /// Its own sweep lists, each replacing the file's list of that name for
    /// this workload only (paper C sweeps pipeline depth for one workload
    /// and client counts for another).
    pub sweep: Option<Sweep>,
    /// A second client group run at the same time (as --with).
    pub with: Option<CompanionEntry>,
}

/// A second client group beside a workload: `with = { preset, clients,
/// pipeline, records, properties }` (as --with, --with-clients,
/// --with-pipeline, --with-property recordcount=N and NAME=VALUE).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CompanionEntry {
    pub preset: String,
    pub clients: Option<u32>,
    pub pipeline: Option<u32>,
    pub records: Option<u64>,
    #[serde(default)]
    pub properties: BTreeMap<String, toml::Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSystem {
    name: String,
    server_bin: Option<String>,
    server_args: Option<Vec<String>>,
    version: Option<String>,
    optional: Option<bool>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTopology {
    kind: String,
    nodes: Option<u32>,
    replicas: Option<u32>,
    systems: Option<Vec<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawWorkload {
    preset: Option<String>,
    #[serde(default)]
    files: Vec<String>,
    #[serde(default)]
    properties: BTreeMap<String, toml::Value>,
    records: Option<u64>,
    operations: Option<u64>,
    sweep: Option<RawSweep>,
    with: Option<CompanionEntry>,
}

/// A workload's own `sweep`: read from a table that keeps no spans inside,
/// so each value spans the workload's entry.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSweep {
    clients: Option<Vec<u32>>,
    pipeline: Option<Vec<u32>>,
    field_length: Option<Vec<u32>>,
    rate: Option<Vec<f64>>,
    threads: Option<Vec<u32>>,
    faults: Option<Vec<String>>,
    max_memory: Option<Vec<String>>,
    eviction: Option<Vec<String>>,
}

impl RawSweep {
    fn spanned(self, span: &Range<usize>) -> Sweep {
        fn list<T>(v: Option<Vec<T>>, span: &Range<usize>) -> Option<Spanned<Vec<Spanned<T>>>> {
            v.map(|v| at(span, v.into_iter().map(|x| at(span, x)).collect()))
        }
        Sweep {
            clients: list(self.clients, span),
            pipeline: list(self.pipeline, span),
            field_length: list(self.field_length, span),
            rate: list(self.rate, span),
            threads: list(self.threads, span),
            faults: list(self.faults, span),
            max_memory: list(self.max_memory, span),
            eviction: list(self.eviction, span),
        }
    }
}

/// `"NAME"` or a table, read as `R`; errors point at the entry.
fn entry<T, R: serde::de::DeserializeOwned>(
    v: &Spanned<toml::Value>,
    key: &str,
    src: &Source,
    name: impl Fn(Spanned<String>) -> T,
    table: impl Fn(R, Range<usize>) -> T,
) -> Result<T, UsageError> {
    let span = v.span();
    match v.get_ref() {
        toml::Value::String(s) => Ok(name(Spanned::new(span, s.clone()))),
        toml::Value::Table(_) => v
            .get_ref()
            .clone()
            .try_into::<R>()
            .map(|r| table(r, span.clone()))
            .map_err(|e| src.error(span, key, e.message())),
        other => Err(src.error(
            span,
            key,
            &format!("expected a name or a table, found {}", other.type_str()),
        )),
    }
}

/// `value` at `span`.
fn at<T>(span: &Range<usize>, value: T) -> Spanned<T> {
    Spanned::new(span.clone(), value)
}

impl ExperimentFile {
    /// The systems, each a name or a `{ name, server_bin, server_args, version, optional }` table.
    pub fn systems(&self, src: &Source) -> Result<Vec<SystemEntry>, UsageError> {
        let list = self.systems.get_ref().iter();
        list.map(|v| {
            let name = |name| SystemEntry {
                name,
                server_bin: None,
                server_args: None,
                version: None,
                optional: false,
            };
            let table = |r: RawSystem, span: Range<usize>| SystemEntry {
                name: at(&span, r.name),
                server_bin: r.server_bin.map(|b| at(&span, b)),
                server_args: r.server_args.map(|a| at(&span, a)),
                version: r.version.map(|v| at(&span, v)),
                optional: r.optional.unwrap_or(false),
            };
            entry(v, "systems", src, name, table)
        })
        .collect()
    }

    /// Where the systems list is, for errors about it as a whole.
    pub fn systems_span(&self) -> Range<usize> {
        self.systems.span()
    }

    /// Where the workloads list is, for errors about it as a whole.
    pub fn workloads_span(&self) -> Range<usize> {
        self.workloads.span()
    }

    /// The topologies, each a kind or a `{ kind, nodes, replicas, systems }` table.
    pub fn topologies(&self, src: &Source) -> Result<Vec<TopologyEntry>, UsageError> {
        let list = self.topologies.iter();
        list.map(|v| {
            let name = |kind| TopologyEntry {
                kind,
                nodes: None,
                replicas: None,
                systems: None,
            };
            let table = |r: RawTopology, span: Range<usize>| TopologyEntry {
                kind: at(&span, r.kind),
                nodes: r.nodes.map(|n| at(&span, n)),
                replicas: r.replicas.map(|n| at(&span, n)),
                systems: r
                    .systems
                    .map(|l| l.into_iter().map(|s| at(&span, s)).collect()),
            };
            entry(v, "topologies", src, name, table)
        })
        .collect()
    }

    /// The workloads, each a preset or a `{ preset, files, properties,
    /// records, operations, sweep, with }` table.
    pub fn workloads(&self, src: &Source) -> Result<Vec<WorkloadEntry>, UsageError> {
        let list = self.workloads.get_ref().iter();
        list.map(|v| {
            let name = |p: Spanned<String>| WorkloadEntry {
                span: p.span(),
                preset: Some(p),
                files: Vec::new(),
                properties: BTreeMap::new(),
                records: None,
                operations: None,
                sweep: None,
                with: None,
            };
            let table = |r: RawWorkload, span: Range<usize>| WorkloadEntry {
                preset: r.preset.map(|p| at(&span, p)),
                files: r.files.into_iter().map(|f| at(&span, f)).collect(),
                properties: r
                    .properties
                    .into_iter()
                    .map(|(k, v)| (k, at(&span, property_text(&v))))
                    .collect(),
                records: r.records.map(|n| at(&span, n)),
                operations: r.operations.map(|n| at(&span, n)),
                sweep: r.sweep.map(|sw| sw.spanned(&span)),
                with: r.with,
                span,
            };
            entry(v, "workloads", src, name, table)
        })
        .collect()
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LoadModel {
    pub clients: Option<Spanned<u32>>,
    pub pipeline: Option<Spanned<u32>>,
    pub threads: Option<Spanned<u32>>,
    /// Open loop: operations per second in total.
    pub rate: Option<Spanned<f64>>,
    pub arrival: Option<Spanned<String>>,
    pub load_clients: Option<Spanned<u32>>,
    pub load_pipeline: Option<Spanned<u32>>,
}

/// Lists to take the product of; the last named here varies fastest.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sweep {
    pub clients: Option<Spanned<Vec<Spanned<u32>>>>,
    pub pipeline: Option<Spanned<Vec<Spanned<u32>>>>,
    pub field_length: Option<Spanned<Vec<Spanned<u32>>>>,
    pub rate: Option<Spanned<Vec<Spanned<f64>>>>,
    pub threads: Option<Spanned<Vec<Spanned<u32>>>>,
    /// As --fault, one per cell; "none" for a cell without one.
    pub faults: Option<Spanned<Vec<Spanned<String>>>>,
    /// As --max-memory ("25%", "64mb").
    pub max_memory: Option<Spanned<Vec<Spanned<String>>>>,
    /// As --eviction; a system runs only the policies it has.
    pub eviction: Option<Spanned<Vec<Spanned<String>>>>,
}

/// What each cell measures, with durations written as in the CLI ("30s").
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Window {
    pub warmup: Option<Spanned<String>>,
    pub duration: Option<Spanned<String>>,
    pub operations: Option<Spanned<u64>>,
    pub timeout: Option<Spanned<String>>,
    pub stall: Option<Spanned<String>>,
    pub reconnect_backoff: Option<Spanned<String>>,
    pub retry_backoff: Option<Spanned<String>>,
    pub max_retries: Option<Spanned<u32>>,
    #[serde(default)]
    pub no_reconnect: bool,
    #[serde(default)]
    pub allow_errors: bool,
    #[serde(default)]
    pub allow_incomplete_load: bool,
    /// `--workers`: the run phase spread over this many processes.
    pub workers: Option<Spanned<u32>>,
    /// `--spark-master` for them.
    pub spark_master: Option<Spanned<String>>,
}

/// The file's text, kept to turn byte spans into lines for messages.
pub struct Source {
    pub path: PathBuf,
    text: String,
}

impl Source {
    /// A usage error at `span`: `FILE:LINE:COL: KEY: MESSAGE`, on one line.
    pub fn error(&self, span: Range<usize>, key: &str, message: &str) -> UsageError {
        let (line, col) = self.line_col(span.start);
        let message = message.replace('\n', " ");
        let key = if key.is_empty() {
            String::new()
        } else {
            format!("{key}: ")
        };
        UsageError(format!(
            "{}:{line}:{col}: {key}{}",
            self.path.display(),
            message.trim()
        ))
    }

    fn line_col(&self, offset: usize) -> (usize, usize) {
        let before = self.text.get(..offset).unwrap_or(&self.text);
        let line = before.matches('\n').count() + 1;
        let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        (line, col)
    }

    /// Where the file's relative paths start.
    pub fn dir(&self) -> &Path {
        self.path.parent().unwrap_or(Path::new(""))
    }
}

/// Reads and parses `path`.
///
/// # Errors
/// [`UsageError`] naming the file, and for bad TOML or an unknown or
/// mistyped key, its line and column.
pub fn load(path: &Path) -> Result<(ExperimentFile, Source), UsageError> {
    let text =
        kvbench_workload::input::read_utf8(path, kvbench_workload::input::EXPERIMENT_FILE_LIMIT)
            .map_err(UsageError)?;
    parse(text, path)
}

/// Parses `text` as the file at `path` (which names it in messages and
/// anchors its relative paths).
///
/// # Errors
/// As [`load`].
pub fn parse(text: String, path: &Path) -> Result<(ExperimentFile, Source), UsageError> {
    let src = Source {
        path: path.to_path_buf(),
        text,
    };
    match toml::from_str::<ExperimentFile>(&src.text) {
        Ok(f) => Ok((f, src)),
        Err(e) => Err(match e.span() {
            Some(span) => src.error(span, "", e.message()),
            None => UsageError(format!("{}: {}", path.display(), e.message())),
        }),
    }
}

/// A TOML property value as `-p` takes it: strings unquoted.
pub fn property_text(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}
