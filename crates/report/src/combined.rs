//! Paper C's third table: in a combined run (`--with`) each client group's
//! throughput and latency, set beside the second group's own cell run alone
//! on the same server, so the cost of sharing the server is one number.

use crate::cells::{Cell, CellOp};

/// One client group of a combined cell.
#[derive(Debug, Clone)]
pub struct Group {
    /// Its workload.
    pub workload: String,
    /// Its connections and pipeline depth.
    pub clients: u32,
    /// See `clients`.
    pub pipeline: u32,
    /// Its throughput (ops/s, mean over the runs).
    pub throughput: f64,
    /// Its busiest operation and that operation's median latency (us).
    pub op: String,
    /// See `op`.
    pub p50_us: f64,
}

/// A combined cell beside its second group alone.
#[derive(Debug, Clone)]
pub struct Row {
    /// The server and deployment (`redis 7.0.15, cluster of 5 masters`).
    pub series: String,
    /// Picks the colour.
    pub system: String,
    /// The main group.
    pub main: Group,
    /// The second group, measured together with the main one.
    pub with: Group,
    /// The second group's workload alone at the same clients and pipeline
    /// on the same server, when the report holds that cell.
    pub alone: Option<Group>,
}

impl Row {
    /// How many times the second group's throughput alone exceeds its
    /// throughput beside the main group.
    pub fn slowdown(&self) -> Option<f64> {
        self.alone
            .as_ref()
            .filter(|_| self.with.throughput > 0.0)
            .map(|a| a.throughput / self.with.throughput)
    }
}

fn group(ops: &[&CellOp], workload: &str, clients: u32, pipeline: u32) -> Group {
    let busiest = ops
        .iter()
        .max_by(|a, b| a.throughput.mean.total_cmp(&b.throughput.mean));
    Group {
        workload: workload.to_string(),
        clients,
        pipeline,
        throughput: ops.iter().map(|o| o.throughput.mean).sum(),
        op: busiest.map_or(String::new(), |o| o.op.as_str().to_string()),
        p50_us: busiest.map_or(f64::NAN, |o| o.merged.p50_us),
    }
}

/// The rows for every combined closed-loop cell, in the cells' order.
pub fn rows(cells: &[Cell]) -> Vec<Row> {
    let mut out = Vec::new();
    for c in cells.iter().filter(|c| c.rate.is_none()) {
        let Some(w) = &c.companion else { continue };
        let main_ops: Vec<&CellOp> = c.ops.iter().filter(|o| !o.with).collect();
        let with_ops: Vec<&CellOp> = c.ops.iter().filter(|o| o.with).collect();
        let alone = cells
            .iter()
            .find(|a| {
                a.companion.is_none()
                    && a.rate.is_none()
                    && a.workload == w.workload
                    && a.series == c.series
                    && a.clients == w.clients
                    && a.pipeline == w.pipeline
            })
            .map(|a| {
                let ops: Vec<&CellOp> = a.ops.iter().collect();
                group(&ops, &a.workload, a.clients, a.pipeline)
            });
        out.push(Row {
            series: c.series.clone(),
            system: c.system.clone(),
            main: group(&main_ops, c.main_workload(), c.clients, c.pipeline),
            with: group(&with_ops, &w.workload, w.clients, w.pipeline),
            alone,
        });
    }
    out
}
