//! Expands an experiment file into its ordered cells. Each cell is written
//! as the `kvbench run` flags it stands for and resolved by the same code as
//! `kvbench run`, so a cell is exactly the run those flags give: there is one
//! way to turn settings into a run, not two.
//!
//! Order: iterations outermost (a stopped experiment has whole passes, and
//! drift on the machine spreads over every cell instead of one), then
//! blocks (`blocks`): one per comparison place, in the order of workload and
//! the sweep with its last list fastest, each running the place's systems
//! and deployments back to back in a random order drawn from the seed.

use crate::file::{self, ExperimentFile, Source, SystemEntry, TopologyEntry, WorkloadEntry};
use crate::resolve::Resolve;
use kvbench_model::SystemKind;
use kvbench_run::reuse::Reload;
use kvbench_run::{RunSettings, UsageError};
use sha2::{Digest, Sha256};
use std::ops::Range;
use std::path::Path;

/// One run of the plan.
#[derive(Clone)]
pub struct Cell {
    /// Place in the plan, from 0.
    pub index: u32,
    /// From 1.
    pub iteration: u32,
    pub system: String,
    /// `single`, `cluster/3`, or a target's URL (password hidden).
    pub deployment: String,
    pub workload: String,
    /// The `kvbench run` flags this cell stands for.
    pub args: Vec<String>,
    pub settings: RunSettings,
    /// A hash of the complete configuration and kvbench's version.
    pub key: String,
}

/// A file turned into cells.
pub struct Experiment {
    pub name: String,
    pub iterations: u32,
    /// When servers are started and loaded again.
    pub reload: Reload,
    pub cells: Vec<Cell>,
    /// Optional systems left out, each with why (`aerospike: asd not
    /// found ...`), and how the cells were ordered when blocks would not
    /// fit in memory: for the plan, the run and the report to name.
    pub absent: Vec<String>,
    /// Blocks are added until each place is decided (`--until-decided`,
    /// `[verdicts] until_decided`), within these limits.
    pub sequential: Option<crate::verdict_plan::Limits>,
}

/// A `run` flag and the place in the file it came from, so that an error
/// about the flag points at the file.
#[derive(Clone)]
struct Flag {
    name: &'static str,
    value: Option<String>,
    key: &'static str,
    span: Range<usize>,
}

#[derive(Default, Clone)]
struct Flags(Vec<Flag>);

/// The `run` flags that may be given more than once.
const REPEATABLE: [&str; 3] = ["-P", "-p", "--with-property"];

impl Flags {
    /// Sets a flag; a later value replaces an earlier one (clap refuses a
    /// repeated single-valued flag), except for the [`REPEATABLE`] ones.
    fn set(&mut self, name: &'static str, value: String, key: &'static str, span: Range<usize>) {
        self.put(Flag {
            name,
            value: Some(value),
            key,
            span,
        });
    }
    fn put(&mut self, flag: Flag) {
        if !REPEATABLE.contains(&flag.name) {
            self.0.retain(|f| f.name != flag.name);
        }
        self.0.push(flag);
    }
    fn switch(&mut self, name: &'static str, key: &'static str, span: Range<usize>) {
        self.0.push(Flag {
            name,
            value: None,
            key,
            span,
        });
    }
    fn argv(&self) -> Vec<String> {
        let mut out = Vec::new();
        for f in &self.0 {
            out.push(f.name.to_string());
            out.extend(f.value.clone());
        }
        out
    }
    /// The flag an error message names (the longest match, so that
    /// `--load-pipeline` is not taken for `--pipeline`).
    fn named_in(&self, message: &str) -> Option<&Flag> {
        self.0
            .iter()
            .filter(|f| message.contains(f.name))
            .max_by_key(|f| f.name.len())
    }
}

/// In `[sweep] faults`, the cell without a fault.
const NO_FAULT: &str = "none";

/// One list of the sweep: flag, key, and each value with its span.
struct Axis {
    flag: &'static str,
    key: &'static str,
    values: Vec<(String, Range<usize>)>,
}

fn axis<T: ToString>(
    flag: &'static str,
    key: &'static str,
    list: &Option<toml::Spanned<Vec<toml::Spanned<T>>>>,
    src: &Source,
) -> Result<Option<Axis>, UsageError> {
    let Some(list) = list else { return Ok(None) };
    if list.get_ref().is_empty() {
        return Err(src.error(list.span(), key, "an empty list leaves nothing to run"));
    }
    let mut seen = std::collections::HashSet::new();
    for v in list.get_ref() {
        let value = v.get_ref().to_string();
        if !seen.insert(value.clone()) {
            return Err(src.error(
                v.span(),
                key,
                &format!("{value} is listed twice (its cells would run twice)"),
            ));
        }
    }
    Ok(Some(Axis {
        flag,
        key,
        values: list
            .get_ref()
            .iter()
            .map(|v| (v.get_ref().to_string(), v.span()))
            .collect(),
    }))
}

/// The flags every cell shares: dataset, load model, window, seed.
fn common(f: &ExperimentFile) -> Flags {
    let mut fl = Flags::default();
    let d = &f.dataset;
    if let Some(v) = &d.records {
        fl.set(
            "--records",
            v.get_ref().to_string(),
            "dataset.records",
            v.span(),
        );
    }
    if let Some(v) = &d.field_count {
        fl.set(
            "--field-count",
            v.get_ref().to_string(),
            "dataset.field_count",
            v.span(),
        );
    }
    if let Some(v) = &d.field_length {
        fl.set(
            "--field-length",
            v.get_ref().to_string(),
            "dataset.field_length",
            v.span(),
        );
    }
    if let Some(v) = &d.key_prefix {
        fl.set(
            "--key-prefix",
            v.get_ref().clone(),
            "dataset.key_prefix",
            v.span(),
        );
    }
    let l = &f.load;
    let numbers = [
        ("--clients", "load.clients", &l.clients),
        ("--pipeline", "load.pipeline", &l.pipeline),
        ("--threads", "load.threads", &l.threads),
        ("--load-clients", "load.load_clients", &l.load_clients),
        ("--load-pipeline", "load.load_pipeline", &l.load_pipeline),
    ];
    for (flag, key, v) in numbers {
        if let Some(v) = v {
            fl.set(flag, v.get_ref().to_string(), key, v.span());
        }
    }
    if let Some(v) = &l.rate {
        fl.set("--rate", v.get_ref().to_string(), "load.rate", v.span());
    }
    if let Some(v) = &l.arrival {
        fl.set("--arrival", v.get_ref().clone(), "load.arrival", v.span());
    }
    let w = &f.run;
    let texts = [
        ("--warmup", "run.warmup", &w.warmup),
        ("--duration", "run.duration", &w.duration),
        ("--timeout", "run.timeout", &w.timeout),
        ("--stall", "run.stall", &w.stall),
        (
            "--reconnect-backoff",
            "run.reconnect_backoff",
            &w.reconnect_backoff,
        ),
        ("--retry-backoff", "run.retry_backoff", &w.retry_backoff),
        ("--spark-master", "run.spark_master", &w.spark_master),
    ];
    for (flag, key, v) in texts {
        if let Some(v) = v {
            fl.set(flag, v.get_ref().clone(), key, v.span());
        }
    }
    if let Some(v) = &w.workers {
        fl.set(
            "--workers",
            v.get_ref().to_string(),
            "run.workers",
            v.span(),
        );
    }
    if let Some(v) = &w.operations {
        fl.set(
            "--operations",
            v.get_ref().to_string(),
            "run.operations",
            v.span(),
        );
    }
    if w.allow_incomplete_load {
        fl.switch("--allow-incomplete-load", "run.allow_incomplete_load", 0..0);
    }
    if w.allow_errors {
        fl.switch("--allow-errors", "run.allow_errors", 0..0);
    }
    if let Some(v) = &w.max_retries {
        fl.set(
            "--max-retries",
            v.get_ref().to_string(),
            "run.max_retries",
            v.span(),
        );
    }
    if w.no_reconnect {
        fl.switch("--no-reconnect", "run.no_reconnect", 0..0);
    }
    let cpus = [
        ("--server-cpus", "server_cpus", &f.server_cpus),
        ("--client-cpus", "client_cpus", &f.client_cpus),
    ];
    for (flag, key, v) in cpus {
        if let Some(v) = v {
            fl.set(flag, v.get_ref().clone(), key, v.span());
        }
    }
    let seed = match &f.seed {
        Some(s) => (*s.get_ref(), s.span()),
        None => (name_seed(f.name.get_ref()), f.name.span()),
    };
    fl.set("--seed", seed.0.to_string(), "seed", seed.1);
    fl
}

/// Without a `seed`, one derived from the name: the cells' configurations,
/// and so their keys, stay the same from one start to the next, which is
/// what lets a stopped experiment resume.
pub fn name_seed(name: &str) -> u64 {
    let d = Sha256::digest(name.as_bytes());
    let mut b = [0u8; 8];
    b.copy_from_slice(&d[..8]);
    u64::from_le_bytes(b)
}

/// How one system is deployed in a cell: flags, label, span for errors.
struct Deployment {
    flags: Flags,
    label: String,
}

fn deployments(
    f: &ExperimentFile,
    topologies: &[TopologyEntry],
    system: &SystemEntry,
    src: &Source,
) -> Vec<Deployment> {
    let name = system.name.get_ref();
    let mut out = Vec::new();
    let local = |flags: &mut Flags| {
        if let Some(bin) = &system.server_bin {
            let path = src.dir().join(bin.get_ref());
            flags.set(
                "--server-bin",
                path.display().to_string(),
                "systems.server_bin",
                bin.span(),
            );
        }
        if let Some(args) = &system.server_args {
            // One flag; each element is one argument (checked in `expand`).
            flags.set(
                "--server-args",
                args.get_ref().join(" "),
                "systems.server_args",
                args.span(),
            );
        }
    };
    if topologies.is_empty() && f.targets.is_empty() {
        let mut flags = Flags::default();
        local(&mut flags);
        out.push(Deployment {
            flags,
            label: "single".into(),
        });
    }
    for t in topologies {
        if let Some(only) = &t.systems {
            if !only.iter().any(|s| s.get_ref() == name) {
                continue;
            }
        }
        let mut flags = Flags::default();
        flags.set(
            "--topology",
            t.kind.get_ref().clone(),
            "topologies",
            t.kind.span(),
        );
        let mut label = t.kind.get_ref().clone();
        if let Some(n) = &t.nodes {
            flags.set(
                "--nodes",
                n.get_ref().to_string(),
                "topologies.nodes",
                n.span(),
            );
            label = format!("{label}/{}", n.get_ref());
        }
        if let Some(r) = &t.replicas {
            flags.set(
                "--replicas",
                r.get_ref().to_string(),
                "topologies.replicas",
                r.span(),
            );
            label = format!("{label}+{}r", r.get_ref());
        }
        local(&mut flags);
        out.push(Deployment { flags, label });
    }
    for t in f.targets.iter().filter(|t| t.system.get_ref() == name) {
        let mut flags = Flags::default();
        flags.set(
            "--target",
            t.url.get_ref().clone(),
            "targets.url",
            t.url.span(),
        );
        let switches = [
            ("--flush", t.flush),
            ("--allow-existing", t.allow_existing),
            ("--cleanup", t.cleanup),
        ];
        for (flag, on) in switches {
            if on {
                flags.switch(flag, "targets", t.url.span());
            }
        }
        if t.tls_insecure {
            flags.switch("--tls-insecure", "targets.tls_insecure", t.url.span());
        }
        let texts = [
            (
                "--password-env",
                "targets.password_env",
                &t.password_env,
                false,
            ),
            (
                "--password-file",
                "targets.password_file",
                &t.password_file,
                true,
            ),
            ("--tls-ca", "targets.tls_ca", &t.tls_ca, true),
            ("--tls-cert", "targets.tls_cert", &t.tls_cert, true),
            ("--tls-key", "targets.tls_key", &t.tls_key, true),
            (
                "--tls-server-name",
                "targets.tls_server_name",
                &t.tls_server_name,
                false,
            ),
        ];
        for (flag, key, value, is_path) in texts {
            if let Some(v) = value {
                let text = if is_path {
                    src.dir().join(v.get_ref()).display().to_string()
                } else {
                    v.get_ref().clone()
                };
                flags.set(flag, text, key, v.span());
            }
        }
        // The label is replaced by the resolved target's redacted URL.
        out.push(Deployment {
            flags,
            label: String::new(),
        });
    }
    out
}

/// A workload's flags and label.
fn workload(w: &WorkloadEntry, src: &Source) -> Result<(Flags, String), UsageError> {
    let mut flags = Flags::default();
    if w.preset.is_none() && w.files.is_empty() {
        return Err(src.error(
            w.span.clone(),
            "workloads",
            "a workload needs a preset or files (properties only adjust them)",
        ));
    }
    let mut label = Vec::new();
    if let Some(p) = &w.preset {
        flags.set("--workload", p.get_ref().clone(), "workloads", p.span());
        label.push(p.get_ref().clone());
    }
    for file in &w.files {
        let path = src.dir().join(file.get_ref());
        flags.set(
            "-P",
            path.display().to_string(),
            "workloads.files",
            file.span(),
        );
        label.push(file.get_ref().clone());
    }
    for (name, value) in &w.properties {
        let pair = format!("{name}={}", value.get_ref());
        flags.set("-p", pair.clone(), "workloads.properties", value.span());
        label.push(pair);
    }
    if let Some(n) = &w.records {
        flags.set(
            "--records",
            n.get_ref().to_string(),
            "workloads.records",
            n.span(),
        );
    }
    if let Some(n) = &w.operations {
        flags.set(
            "--operations",
            n.get_ref().to_string(),
            "workloads.operations",
            n.span(),
        );
    }
    let mut label = label.join(" ");
    if let Some(c) = &w.with {
        let span = w.span.clone();
        flags.set("--with", c.preset.clone(), "workloads.with", span.clone());
        let numbers = [
            ("--with-clients", "workloads.with.clients", c.clients),
            ("--with-pipeline", "workloads.with.pipeline", c.pipeline),
        ];
        for (flag, key, v) in numbers {
            if let Some(v) = v {
                flags.set(flag, v.to_string(), key, span.clone());
            }
        }
        if let Some(n) = c.records {
            let pair = format!("recordcount={n}");
            flags.set(
                "--with-property",
                pair,
                "workloads.with.records",
                span.clone(),
            );
        }
        for (name, value) in &c.properties {
            let pair = format!("{name}={}", file::property_text(value));
            flags.set(
                "--with-property",
                pair,
                "workloads.with.properties",
                span.clone(),
            );
        }
        // As the report names a combined run's workload.
        label = format!("{label} + {}", c.preset);
    }
    Ok((flags, label))
}

/// Resolves one cell's flags as `kvbench run` would; an error points at the
/// key whose flag it names, else at `fallback`.
fn resolve(
    flags: &Flags,
    src: &Source,
    fallback: Range<usize>,
    r: &dyn Resolve,
) -> Result<RunSettings, UsageError> {
    r.settings(flags.argv())
        .map_err(|e| match flags.named_in(&e.0) {
            Some(f) if !f.span.is_empty() => src.error(f.span.clone(), f.key, &e.0),
            _ => src.error(fallback.clone(), "", &e.0),
        })
}

/// A hash of what makes the cell's measurement what it is: the recorded
/// configuration, the server binary, kvbench's version, and for a shared
/// server the reload policy (a loaded, warm server is another measurement
/// than a fresh one).
pub fn key(s: &RunSettings, reload: Reload) -> String {
    let mut doc = serde_json::json!({
        "kvbench": env!("CARGO_PKG_VERSION"),
        "config": kvbench_run::record::planned_config(s),
        "server_binary": s.server_binary,
        "server_version": server_version(s),
    });
    if reload != Reload::PerRun {
        doc["reload"] = reload.as_str().into();
    }
    let d = Sha256::digest(doc.to_string().as_bytes());
    d.iter().map(|b| format!("{b:02x}")).collect()
}

/// The version the server binary a cell would start reports, so that a
/// new server version makes a new cell (empty for a target, whose version
/// is only known once connected, and for a missing binary, which the run's
/// checks refuse anyway). Asked once per binary.
fn server_version(s: &RunSettings) -> String {
    if s.target.is_some() {
        return String::new();
    }
    binary_version(s.system, s.server_binary.as_deref()).unwrap_or_default()
}

/// What `kvbench_servers::binary_version` says, asked once per binary (it
/// starts the binary: a file of many cells, or a fuzzer, asks often).
fn binary_version(system: kvbench_model::SystemKind, bin: Option<&Path>) -> Result<String, String> {
    use std::collections::HashMap;
    use std::sync::Mutex;
    type Seen =
        HashMap<(kvbench_model::SystemKind, Option<std::path::PathBuf>), Result<String, String>>;
    static SEEN: Mutex<Option<Seen>> = Mutex::new(None);
    let mut seen = SEEN.lock().unwrap_or_else(|p| p.into_inner());
    seen.get_or_insert_with(HashMap::new)
        .entry((system, bin.map(Path::to_path_buf)))
        .or_insert_with(|| kvbench_servers::binary_version(system, bin).map_err(|e| e.to_string()))
        .clone()
}

/// Reads `path` and expands it into cells.
///
/// # Errors
/// [`UsageError`] naming the file, line and key.
pub fn expand(path: &Path, r: &dyn Resolve) -> Result<Experiment, UsageError> {
    let (f, src) = file::load(path)?;
    expand_file(f, src, r)
}

/// [`expand`] for a file already parsed.
pub fn expand_file(
    f: file::ExperimentFile,
    src: file::Source,
    r: &dyn Resolve,
) -> Result<Experiment, UsageError> {
    let (reload, iterations) = header(&f, &src)?;
    let (systems, absent) = present_systems(&f, &src)?;
    let topologies = f.topologies(&src)?;
    let workloads = f.workloads(&src)?;
    check_entries(&f, &systems, &topologies, &workloads, &src)?;
    refuse_repeats(&systems, &workloads, &src)?;
    let verdicts = f.verdicts.resolve(&src)?;
    let iterations = verdicts.first_blocks(iterations);
    check_size(&f, &systems, &topologies, &workloads, iterations, &src)?;
    let once = flag_sets(&f, &systems, &topologies, &workloads, &src)?;
    let mut resolved = Vec::with_capacity(once.len());
    for (system, deployment, workload, flags, span) in once {
        r.checkpoint("expanding the experiment file");
        let mut settings = resolve(&flags, &src, span, r)?;
        if f.seed.is_none() {
            settings.seed_source = "experiment name";
        }
        settings.verdict = verdicts.rule;
        let deployment = match &settings.target {
            Some(t) => t.redacted(),
            None => deployment,
        };
        resolved.push((system, deployment, workload, flags.argv(), settings));
    }
    name_by_label(&mut resolved);
    let mut cells = Vec::new();
    for iteration in 1..=iterations {
        for (system, deployment, workload, args, settings) in &resolved {
            cells.push(Cell {
                index: cells.len() as u32,
                iteration,
                system: system.clone(),
                deployment: deployment.clone(),
                workload: workload.clone(),
                args: args.clone(),
                key: key(settings, reload),
                settings: settings.clone(),
            });
        }
    }
    let seed = resolved.first().map_or(0, |r| r.4.seed);
    let cells = crate::blocks::arrange(cells, seed);
    let (cells, order) =
        crate::blocks::fit_in_memory(cells, reload, kvbench_run::memory::available());
    let mut absent = absent;
    absent.extend(order);
    Ok(Experiment {
        name: f.name.get_ref().clone(),
        iterations,
        reload,
        cells,
        absent,
        sequential: verdicts.limits,
    })
}

/// The file's `reload` and `iterations`, checked, and a name that is not
/// empty.
fn header(f: &ExperimentFile, src: &Source) -> Result<(Reload, u32), UsageError> {
    let reload = match &f.reload {
        Some(r) => r
            .get_ref()
            .parse::<Reload>()
            .map_err(|e| src.error(r.span(), "reload", &e))?,
        None => Reload::PerRun,
    };
    let iterations = match &f.iterations {
        Some(n) => {
            let range = kvbench_run::bounds::ITERATIONS;
            kvbench_workload::bounds::check(u64::from(*n.get_ref()), range.min, range.max)
                .map_err(|m| src.error(n.span(), "iterations", &m))?;
            *n.get_ref()
        }
        None => 1,
    };
    if f.name.get_ref().trim().is_empty() {
        return Err(src.error(f.name.span(), "name", "must not be empty"));
    }
    Ok((reload, iterations))
}

/// The file's systems, without the optional ones whose binary is not here
/// (each said in the second list: "NAME: not run (optional): why").
fn present_systems(
    f: &ExperimentFile,
    src: &Source,
) -> Result<(Vec<SystemEntry>, Vec<String>), UsageError> {
    let mut systems = f.systems(src)?;
    let mut absent = Vec::new();
    systems.retain(|s| {
        let targeted = f
            .targets
            .iter()
            .any(|t| t.system.get_ref() == s.name.get_ref());
        if !s.optional || targeted {
            return true;
        }
        let Ok(system) = s.name.get_ref().parse::<SystemKind>() else {
            return true; // refused below, naming the entry
        };
        let bin = s.server_bin.as_ref().map(|b| src.dir().join(b.get_ref()));
        match kvbench_servers::find_binary(system, bin.as_deref()) {
            Ok(_) => true,
            Err(e) => {
                absent.push(format!("{}: not run (optional): {e}", s.name.get_ref()));
                false
            }
        }
    });
    Ok((systems, absent))
}

/// Every system, topology and target entry names something kvbench has,
/// a system's `version` is the one installed, and there is at least one
/// system and one workload.
fn check_entries(
    f: &ExperimentFile,
    systems: &[SystemEntry],
    topologies: &[TopologyEntry],
    workloads: &[WorkloadEntry],
    src: &Source,
) -> Result<(), UsageError> {
    for s in systems {
        let n = &s.name;
        n.get_ref()
            .parse::<SystemKind>()
            .map_err(|e| src.error(n.span(), "systems", &e))?;
        if let Some(want) = &s.version {
            let system = n
                .get_ref()
                .parse::<SystemKind>()
                .map_err(|e| src.error(n.span(), "systems", &e))?;
            let bin = s.server_bin.as_ref().map(|b| src.dir().join(b.get_ref()));
            let found = binary_version(system, bin.as_deref())
                .map_err(|e| src.error(want.span(), "systems.version", &e))?;
            if !version_matches(&found, want.get_ref()) {
                return Err(src.error(
                    want.span(),
                    "systems.version",
                    &format!(
                        "the {} server here is version {found}, not {}; install it, or name its binary with server_bin",
                        n.get_ref(),
                        want.get_ref()
                    ),
                ));
            }
        }
        if let Some(a) = &s.server_args {
            if a.get_ref()
                .iter()
                .any(|x| x.is_empty() || x.contains(char::is_whitespace))
            {
                return Err(src.error(
                    a.span(),
                    "systems.server_args",
                    "each element is one argument, without spaces: [\"--io-threads\", \"2\"]",
                ));
            }
        }
    }
    for t in topologies {
        let k = &t.kind;
        let kind: Result<kvbench_model::TopologyKind, String> = k.get_ref().parse();
        kind.map_err(|e| src.error(k.span(), "topologies", &e))?;
    }
    if systems.is_empty() {
        return Err(src.error(f.systems_span(), "systems", "name at least one system"));
    }
    if workloads.is_empty() {
        return Err(src.error(
            f.workloads_span(),
            "workloads",
            "name at least one workload",
        ));
    }
    for t in &f.targets {
        if !systems
            .iter()
            .any(|s| s.name.get_ref() == t.system.get_ref())
        {
            return Err(src.error(
                t.system.span(),
                "targets.system",
                &format!("'{}' is not one of the file's systems", t.system.get_ref()),
            ));
        }
    }
    Ok(())
}

/// One cell's flags (with the system's name, deployment and workload
/// labels and the workload's span) for each system x deployment x
/// workload x sweep point, in that order.
type FlagSet = (String, String, String, Flags, Range<usize>);

/// The flags of every cell of one iteration, before they are resolved.
fn flag_sets(
    f: &ExperimentFile,
    systems: &[SystemEntry],
    topologies: &[TopologyEntry],
    workloads: &[WorkloadEntry],
    src: &Source,
) -> Result<Vec<FlagSet>, UsageError> {
    let common = common(f);
    let mut once: Vec<FlagSet> = Vec::new();
    for system in systems {
        let name = &system.name;
        for d in deployments(f, topologies, system, src) {
            for w in workloads {
                let (wf, label) = workload(w, src)?;
                let axes = axes(&f.sweep, w.sweep.as_ref(), src)?;
                let span = w.span.clone();
                let system_name = name.get_ref();
                let (points, skipped): (Vec<_>, Vec<_>) = product(&axes)
                    .into_iter()
                    .partition(|p| policy_missing(system_name, &axes, p).is_none());
                if let (true, Some((why, at))) = (
                    points.is_empty(),
                    skipped
                        .first()
                        .and_then(|p| policy_missing(system_name, &axes, p)),
                ) {
                    return Err(src.error(
                        at,
                        "sweep.eviction",
                        &format!("none of these policies applies to {system_name}: {why}"),
                    ));
                }
                for point in points {
                    let mut flags = Flags::default();
                    flags.set("--system", name.get_ref().clone(), "systems", name.span());
                    flags.0.extend(common.0.iter().cloned());
                    flags.0.extend(d.flags.0.iter().cloned());
                    // After `[dataset]`'s, so a workload's own records win.
                    for flag in &wf.0 {
                        flags.put(flag.clone());
                    }
                    // Set last, so a swept value replaces `[load]`'s or `[dataset]`'s.
                    for (a, (value, vspan)) in axes.iter().zip(point) {
                        // A faults list's "none": the cell without one.
                        if !(a.flag == "--fault" && value == NO_FAULT) {
                            flags.set(a.flag, value, a.key, vspan);
                        }
                    }
                    once.push((
                        name.get_ref().clone(),
                        d.label.clone(),
                        label.clone(),
                        flags,
                        span.clone(),
                    ));
                }
            }
        }
    }
    Ok(once)
}

/// Workloads of one preset told apart by their properties (an eviction
/// study's skews) are stored under their labels, so reports, listings and
/// figures keep them apart; a preset used once keeps its name, and so does
/// a workload run beside a second group (`with`: the report names the pair
/// from both).
fn name_by_label(resolved: &mut [(String, String, String, Vec<String>, RunSettings)]) {
    let mut labels: std::collections::BTreeMap<String, std::collections::BTreeSet<String>> =
        std::collections::BTreeMap::new();
    for (_, _, workload, _, settings) in resolved.iter().filter(|r| r.4.companion.is_none()) {
        labels
            .entry(settings.spec.name.clone())
            .or_default()
            .insert(workload.clone());
    }
    for (_, _, workload, _, settings) in resolved.iter_mut() {
        if settings.companion.is_none()
            && labels.get(&settings.spec.name).is_some_and(|l| l.len() > 1)
        {
            settings.spec.name = workload.clone();
        }
    }
}

/// The most cells an experiment file may expand to unless its `max_cells`
/// says more: far above any sweep run by hand (paper A's full matrix is
/// 270), far below what takes minutes to plan or gigabytes to hold.
pub const DEFAULT_MAX_CELLS: u64 = 10_000;
/// `max_cells` itself is bounded: every cell is held in memory at once.
const MAX_CELLS_CEILING: u64 = 1_000_000;

/// Counts the cells before making any, and refuses a file over its bound
/// with the count and how to raise the bound.
fn check_size(
    f: &file::ExperimentFile,
    systems: &[SystemEntry],
    topologies: &[TopologyEntry],
    workloads: &[WorkloadEntry],
    iterations: u32,
    src: &Source,
) -> Result<(), UsageError> {
    let limit = match &f.max_cells {
        Some(m) => {
            kvbench_workload::bounds::check(*m.get_ref(), 1, MAX_CELLS_CEILING)
                .map_err(|e| src.error(m.span(), "max_cells", &e))?;
            *m.get_ref()
        }
        None => DEFAULT_MAX_CELLS,
    };
    let mut cells = 0u64;
    for system in systems {
        let deployments = deployments(f, topologies, system, src).len() as u64;
        for w in workloads {
            let points = axes(&f.sweep, w.sweep.as_ref(), src)?
                .iter()
                .fold(1u64, |n, a| n.saturating_mul(a.values.len() as u64));
            cells = cells.saturating_add(deployments.saturating_mul(points));
        }
    }
    let cells = cells.saturating_mul(u64::from(iterations));
    if cells > limit {
        let span = f.max_cells.as_ref().map_or(f.name.span(), |m| m.span());
        return Err(src.error(
            span,
            "max_cells",
            &format!(
                "the file expands to {cells} cells, more than the {limit} allowed; shorten a sweep list, or raise the bound with max_cells = {} (at most {MAX_CELLS_CEILING})",
                cells.min(MAX_CELLS_CEILING)
            ),
        ));
    }
    Ok(())
}

/// Refuses a system or workload listed twice, which would run the same
/// cells twice: one line naming the second entry.
fn refuse_repeats(
    systems: &[SystemEntry],
    workloads: &[WorkloadEntry],
    src: &Source,
) -> Result<(), UsageError> {
    let system_key = |s: &SystemEntry| {
        (
            s.name.get_ref().clone(),
            s.server_bin.as_ref().map(|b| b.get_ref().clone()),
            s.server_args.as_ref().map(|a| a.get_ref().clone()),
        )
    };
    for (i, s) in systems.iter().enumerate() {
        if systems[..i].iter().any(|t| system_key(t) == system_key(s)) {
            return Err(src.error(
                s.name.span(),
                "systems",
                &format!(
                    "'{}' is listed twice with the same settings (its cells would run twice)",
                    s.name.get_ref()
                ),
            ));
        }
    }
    let mut seen: Vec<(Vec<String>, String)> = Vec::new();
    for w in workloads {
        let (flags, label) = workload(w, src)?;
        let key = (flags.argv(), label);
        if seen.contains(&key) {
            return Err(src.error(
                w.span.clone(),
                "workloads",
                &format!("'{}' is listed twice (its cells would run twice)", key.1),
            ));
        }
        seen.push(key);
    }
    Ok(())
}

/// The sweep of one workload: the file's lists, each replaced by the
/// workload's own list of the same name, in the file's fixed order.
fn axes(
    file: &file::Sweep,
    own: Option<&file::Sweep>,
    src: &Source,
) -> Result<Vec<Axis>, UsageError> {
    let pick = |f: fn(&file::Sweep) -> bool| own.filter(|o| f(o)).unwrap_or(file);
    let c = pick(|s| s.clients.is_some());
    let p = pick(|s| s.pipeline.is_some());
    let l = pick(|s| s.field_length.is_some());
    let r = pick(|s| s.rate.is_some());
    let t = pick(|s| s.threads.is_some());
    let x = pick(|s| s.faults.is_some());
    let m = pick(|s| s.max_memory.is_some());
    let e = pick(|s| s.eviction.is_some());
    Ok([
        axis("--clients", "sweep.clients", &c.clients, src)?,
        axis("--pipeline", "sweep.pipeline", &p.pipeline, src)?,
        axis("--field-length", "sweep.field_length", &l.field_length, src)?,
        axis("--rate", "sweep.rate", &r.rate, src)?,
        axis("--threads", "sweep.threads", &t.threads, src)?,
        axis("--fault", "sweep.faults", &x.faults, src)?,
        axis("--max-memory", "sweep.max_memory", &m.max_memory, src)?,
        axis("--eviction", "sweep.eviction", &e.eviction, src)?,
    ]
    .into_iter()
    .flatten()
    .collect())
}

/// Why `system` lacks the eviction policy this point sweeps, and where the
/// policy is written; `None` when it has it or the point sweeps none. An
/// eviction study lists Redis's and Memcached's policies together, and each
/// system runs its own.
fn policy_missing(
    system: &str,
    axes: &[Axis],
    point: &[(String, Range<usize>)],
) -> Option<(String, Range<usize>)> {
    let kind = system.parse::<kvbench_model::SystemKind>().ok()?;
    let (policy, at) = axes
        .iter()
        .zip(point)
        .find(|(a, _)| a.flag == "--eviction")
        .map(|(_, v)| v)?;
    // An unknown name is refused, with its place in the file, as the
    // cell's flags are read.
    let policy = policy.parse::<kvbench_servers::Eviction>().ok()?;
    kvbench_servers::check_eviction(kind, policy)
        .err()
        .map(|why| (why, at.clone()))
}

/// Every combination of the axes' values, the last axis fastest; one empty
/// point when there are no axes.
fn product(axes: &[Axis]) -> Vec<Vec<(String, Range<usize>)>> {
    let mut points: Vec<Vec<(String, Range<usize>)>> = vec![Vec::new()];
    for a in axes {
        points = points
            .into_iter()
            .flat_map(|p| {
                a.values.iter().map(move |v| {
                    let mut q = p.clone();
                    q.push(v.clone());
                    q
                })
            })
            .collect();
    }
    points
}

/// `7.0.15` matches `7`, `7.0` and `7.0.15`, not `7.01` or `7.2`.
fn version_matches(found: &str, wanted: &str) -> bool {
    found == wanted
        || found
            .strip_prefix(wanted)
            .is_some_and(|rest| rest.starts_with('.') || rest.starts_with('-'))
}

#[cfg(test)]
mod tests {
    use super::version_matches;

    #[test]
    fn a_version_matches_its_prefixes_at_dots() {
        for w in ["7", "7.0", "7.0.15"] {
            assert!(version_matches("7.0.15", w), "{w}");
        }
        for w in ["7.01", "7.2", "8", "7.0.1"] {
            assert!(!version_matches("7.0.15", w), "{w}");
        }
    }
}
