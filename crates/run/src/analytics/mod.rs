//! Paper D's measurements end to end, apart from the command line:
//! PageRank over each implementation (`pagerank`) and the random gets
//! (`lookup`), each on a graph this module builds from its spec, on
//! private servers it starts and stops, checked against the in-process
//! reference and stored as one analytics run (`record`). The
//! implementations themselves are `kvbench_analytics`'s, which starts no
//! servers; the binary turns flags into the settings here and prints.

pub mod lookup;
pub mod pagerank;
mod record;
mod setget;

use crate::usage::UsageError;
use crate::view::View;
use anyhow::{Context, Result};
use kvbench_analytics::{agree, kv, rmat, snap, Graph};
use kvbench_model::analytics::AnalyticsRecord;
use kvbench_model::SystemKind;
use kvbench_servers::{Server, ServerSpec};
use std::path::Path;

/// Every implementation must give each node's rank within this relative
/// error of the reference's. The implementations sum a node's
/// contributions in other orders than the reference (per driver, then
/// across drivers; Spark by partition), which moves the last bits only:
/// measured differences are below 1e-13.
pub const TOLERANCE: f64 = 1e-6;

/// The graph a command runs on, as the user named it.
#[derive(Debug, Clone)]
pub struct GraphSpec {
    /// `synthetic:NAME`, `rmat:NODES:EDGES` or a SNAP edge-list file.
    pub source: String,
    /// Multiplies a synthetic graph's nodes and edges.
    pub scale: f64,
    /// The synthetic graph's seed (and that of the keys `lookup` asks for).
    pub seed: u64,
}

/// What an analytics run ended with: its record (with its id when it was
/// stored) and, when the database would not take it, why; the results are
/// shown either way.
#[derive(Debug)]
pub struct Finished {
    /// Every implementation's results.
    pub record: AnalyticsRecord,
    /// Why the record was not stored, when it was not.
    pub unsaved: Option<anyhow::Error>,
}

impl Finished {
    /// The stored record, or why it was not stored.
    ///
    /// # Errors
    /// The database's refusal.
    pub fn saved(self) -> Result<AnalyticsRecord> {
        match self.unsaved {
            None => Ok(self.record),
            Some(e) => Err(e),
        }
    }
}

/// Builds the graph `spec` names, with its description. Errors name
/// `--graph` and `--scale`, the flags a user gives them with.
///
/// # Errors
/// A scale out of range, a malformed size, an unknown synthetic graph or a
/// file that cannot be read ([`UsageError`]).
pub fn graph(spec: &GraphSpec) -> Result<(Graph, String)> {
    if !(spec.scale.is_finite() && spec.scale > 0.0 && spec.scale <= 100.0) {
        return Err(UsageError(format!(
            "--scale must be above 0 and at most 100, got {}",
            spec.scale
        ))
        .into());
    }
    if let Some(size) = spec.source.strip_prefix("rmat:") {
        let bad = || {
            UsageError(format!(
                "--graph {}: expected rmat:NODES:EDGES (e.g. rmat:10000:50000)",
                spec.source
            ))
        };
        let (nodes, edges) = size.split_once(':').ok_or_else(bad)?;
        let nodes: u32 = nodes.parse().map_err(|_| bad())?;
        let edges: u64 = edges.parse().map_err(|_| bad())?;
        if nodes == 0 {
            return Err(bad().into());
        }
        let g = rmat::rmat(nodes, edges, spec.seed)
            .map_err(|e| UsageError(format!("--graph {}: {e}", spec.source)))?;
        return Ok((g, format!("{} (R-MAT, seed {})", spec.source, spec.seed)));
    }
    if let Some(name) = spec.source.strip_prefix("synthetic:") {
        let shape = rmat::shape(name).ok_or_else(|| {
            UsageError(format!(
                "--graph synthetic:{name}: unknown graph (expected synthetic:google, synthetic:pokec or a SNAP edge-list file)"
            ))
        })?;
        let (nodes, edges) = shape.scaled(spec.scale);
        let g = rmat::rmat(nodes, edges, spec.seed)
            .map_err(|e| UsageError(format!("--graph {}: {e}", spec.source)))?;
        return Ok((
            g,
            format!(
                "synthetic:{name} x{} (R-MAT, seed {})",
                spec.scale, spec.seed
            ),
        ));
    }
    let g = snap::read(Path::new(&spec.source)).map_err(|e| UsageError(format!("--graph {e}")))?;
    Ok((g, spec.source.clone()))
}

/// Each of `names` is one of `known`, or the error names the flag `--impl`.
///
/// # Errors
/// The first unknown name ([`UsageError`]).
pub fn check_names(names: &[String], known: &[&str]) -> Result<()> {
    for i in names {
        if !known.contains(&i.as_str()) {
            return Err(UsageError(format!(
                "--impl {i}: unknown implementation (expected {})",
                known.join(", ")
            ))
            .into());
        }
    }
    Ok(())
}

/// The paper's driver threads per store, as it tuned them: five for
/// Memcached, six for Redis (and Valkey).
fn paper_drivers(wire: kv::Wire) -> u32 {
    if wire == kv::Wire::Memcache {
        5
    } else {
        6
    }
}

/// Starts a private `system` for `g` (Memcached with room for the lists,
/// ranks and contribution blobs, twice over); returns it and its version.
fn start_server(
    imp: &str,
    system: SystemKind,
    wire: kv::Wire,
    g: &Graph,
) -> Result<(Server, String)> {
    let need_mb = (g.edges() * 4 + u64::from(g.nodes()) * (16 + 2 * 80)) * 2 / (1 << 20) + 64;
    let server = Server::start(&ServerSpec {
        memory_limit_mb: (wire == kv::Wire::Memcache).then_some(need_mb),
        ..ServerSpec::new(system)
    })
    .with_context(|| format!("cannot start {imp}"))?;
    let version = server
        .version()
        .map(|v| format!("{} {}", v.name.unwrap_or_default(), v.version))
        .unwrap_or_default();
    Ok((server, version))
}

/// The largest relative error, or the run fails naming the first node
/// beyond [`TOLERANCE`].
fn checked(imp: &str, reference: &[f64], got: &[f64]) -> Result<f64> {
    agree(reference, got, TOLERANCE).map_err(|d| {
        anyhow::anyhow!("{imp}: ranks differ from the reference beyond {TOLERANCE:e}: {d}")
    })?;
    Ok(reference
        .iter()
        .zip(got)
        .map(|(r, g)| ((g - r) / r).abs())
        .fold(0.0, f64::max))
}

/// A progress line, unless the view is quiet.
fn say(view: &dyn View, line: &str) {
    if !view.quiet() {
        view.println(line);
    }
}
