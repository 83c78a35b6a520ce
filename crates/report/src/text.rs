//! Terminal output: one run's summary, a comparison of many, the run list.

use crate::diff::{Diff, Estimate, MetricDelta, SideInfo};
use crate::fields::FieldChange;
use crate::format::{count, mib, micros, rate, secs};
use crate::table::Table;
use kvbench_model::{OpKind, PhaseResult, Probe, RunRecord, RunStatus};
use kvbench_store::RunSummary;
use std::collections::BTreeMap;

/// The probe taken at `stage`, if any.
pub fn probe<'a>(rec: &'a RunRecord, stage: &str) -> Option<&'a Probe> {
    rec.probes.iter().find(|p| p.stage == stage)
}

fn opt<T>(v: Option<T>, f: impl Fn(T) -> String) -> String {
    v.map(f).unwrap_or_else(|| "-".into())
}

/// The run's command templates (`kvbench.command.N`), each with the name
/// of the operation kind it ran as (`command1`), in order.
fn command_templates(c: &kvbench_model::RunConfig) -> Vec<(OpKind, &str)> {
    (0..OpKind::COMMANDS)
        .map_while(|i| {
            let kind = OpKind::command(i)?;
            let text = c.property(&format!("kvbench.command.{}", i + 1))?;
            Some((kind, text))
        })
        .collect()
}

/// The latency percentile `pick` of `op` in `phase`, in microseconds.
pub fn latency(
    phase: Option<&PhaseResult>,
    op: OpKind,
    pick: fn(&kvbench_model::LatencySummary) -> f64,
) -> Option<f64> {
    phase?
        .ops
        .iter()
        .find(|o| o.op == op && o.latency.count > 0)
        .map(|o| pick(&o.latency))
}

fn phase_table(p: &PhaseResult) -> String {
    let mut t = Table::new(&[
        "op",
        ">completed",
        ">ops/s",
        ">p50 us",
        ">p95 us",
        ">p99 us",
        ">p99.9 us",
        ">max us",
        ">misses",
        ">errors",
    ]);
    for o in &p.ops {
        let l = &o.latency;
        let has = l.count > 0;
        let us = |v: f64| if has { micros(v) } else { "-".into() };
        t.row(vec![
            o.op.to_string(),
            count(o.completed),
            rate(o.throughput),
            us(l.p50_us),
            us(l.p95_us),
            us(l.p99_us),
            us(l.p999_us),
            us(l.max_us),
            count(o.misses),
            count(o.errors),
        ]);
    }
    t.row(vec![
        "total".into(),
        count(p.completed),
        rate(p.throughput),
        String::new(),
        String::new(),
        String::new(),
        String::new(),
        String::new(),
        String::new(),
        count(p.errors),
    ]);
    t.to_text()
}

fn open_loop_table(p: &PhaseResult) -> String {
    let mut t = Table::new(&[
        "op",
        "measure",
        ">p50 us",
        ">p99 us",
        ">p99.9 us",
        ">max us",
    ]);
    for o in &p.ops {
        for (name, l) in [("service time", &o.service), ("schedule lag", &o.lag)] {
            if let Some(l) = l.as_ref().filter(|l| l.count > 0) {
                t.row(vec![
                    o.op.to_string(),
                    name.into(),
                    micros(l.p50_us),
                    micros(l.p99_us),
                    micros(l.p999_us),
                    micros(l.max_us),
                ]);
            }
        }
    }
    t.to_text()
}

/// Latency over pipeline depth, for comparison with published numbers.
fn per_pipeline_table(p: &PhaseResult) -> String {
    let mut t = Table::new(&["op", ">mean us", ">p50 us", ">p99 us", ">p99.9 us"]);
    for o in &p.ops {
        if let Some(l) = o.per_pipeline.as_ref().filter(|l| l.count > 0) {
            t.row(vec![
                o.op.to_string(),
                micros(l.mean_us),
                micros(l.p50_us),
                micros(l.p99_us),
                micros(l.p999_us),
            ]);
        }
    }
    t.to_text()
}

/// The measured window second by second (completions by reply time).
pub fn series_table(p: &PhaseResult) -> String {
    if p.series.is_empty() {
        return "no per-second series stored\n".into();
    }
    let mut t = Table::new(&[
        ">second",
        "op",
        ">completed",
        ">errors",
        ">p50 us",
        ">p99 us",
        ">p99.9 us",
    ]);
    for pt in &p.series {
        let has = pt.completed > 0;
        let us = |v: f64| if has { micros(v) } else { "-".into() };
        t.row(vec![
            pt.second.to_string(),
            pt.op.to_string(),
            count(pt.completed),
            count(pt.errors),
            us(pt.p50_us),
            us(pt.p99_us),
            us(pt.p999_us),
        ]);
    }
    t.to_text()
}

/// A memory-limited window (`--max-memory`) in words and tables: the hit
/// ratio, evictions and memory against the limit, then hits' and misses'
/// latency apart. Empty for any other run.
pub fn cache_lines(c: &kvbench_model::RunConfig, run: &PhaseResult) -> String {
    let pct = |r: f64| format!("{:.1}%", r * 100.0);
    let mut s = String::new();
    if let Some(k) = &run.cache {
        let limit = match (&c.max_memory, c.max_memory_mb) {
            (Some(given), Some(mb)) if given.ends_with('%') => {
                format!("{given} = {mb} MB per server")
            }
            (_, Some(mb)) => format!("{mb} MB per server"),
            _ => "a limit".into(),
        };
        let policy = c.eviction.as_deref().unwrap_or("its default policy");
        s.push_str(&format!(
            "\ncache (--max-memory {limit}, {policy}): hit ratio {} ({} hits, {} misses); {} evicted in the window{}; server memory {} of {} MiB ({})\n",
            opt(k.hit_ratio, pct),
            count(k.hits),
            count(k.misses),
            opt(k.evictions, count),
            opt(k.evictions_per_s, |e| format!(" ({}/s)", rate(e))),
            opt(k.server_memory_bytes, mib),
            mib(k.limit_bytes),
            opt(k.memory_of_limit, pct),
        ));
    }
    let aside = run.ops.iter().any(|o| o.app_latency.is_some());
    if aside {
        let penalty = c
            .workload_properties
            .iter()
            .find(|(k, _)| k == "kvbench.cacheaside.penalty")
            .map_or("1ms", |(_, v)| v.as_str());
        s.push_str(&format!(
            "cache-aside: a read that missed waited the backend's {penalty}, then set its record ({} sets{}); the application's latency is the hit's, or the miss's plus that wait{}\n",
            count(run.fills),
            if run.fill_errors > 0 {
                format!(", {} failed", count(run.fill_errors))
            } else {
                String::new()
            },
            run.fill_lateness.as_ref().map_or(String::new(), |l| format!(
                "; kvbench sent the sets {} us late at the median, {} us at p99 (its own delay, not counted)",
                micros(l.p50_us),
                micros(l.p99_us)
            ))
        ));
    }
    let mut t = Table::new(&[
        "reads",
        ">count",
        ">mean us",
        ">p50 us",
        ">p99 us",
        ">p99.9 us",
        ">max us",
    ]);
    for o in run.ops.iter().filter(|o| !o.with) {
        let rows = [
            ("hits", o.completed, Some(&o.latency)),
            ("misses", o.misses, o.miss_latency.as_ref()),
            (
                "application",
                o.completed + o.misses,
                o.app_latency.as_ref(),
            ),
        ];
        if rows[1].2.is_none() && rows[2].2.is_none() {
            continue;
        }
        for (name, n, l) in rows {
            if let Some(l) = l.filter(|l| l.count > 0) {
                t.row(vec![
                    format!("{} {name}", o.op),
                    count(n),
                    micros(l.mean_us),
                    micros(l.p50_us),
                    micros(l.p99_us),
                    micros(l.p999_us),
                    micros(l.max_us),
                ]);
            }
        }
    }
    if !t.is_empty() {
        if run.cache.is_none() {
            s.push('\n');
        }
        s.push_str(&t.to_text());
    }
    s
}

/// A memory-limited window second by second: hit ratio, evictions, memory.
pub fn cache_series_table(run: &PhaseResult) -> String {
    let Some(k) = &run.cache else {
        return String::new();
    };
    let mut t = Table::new(&[">second", ">hit ratio", ">evictions", ">server MiB"]);
    for s in &k.seconds {
        t.row(vec![
            s.second.to_string(),
            opt(s.hit_ratio, |r| format!("{:.1}%", r * 100.0)),
            opt(s.evictions, count),
            opt(s.server_memory_bytes, mib),
        ]);
    }
    t.to_text()
}

/// Where each operation's mean latency went: the server's execution time
/// of its commands and the rest (kvbench, kernels, network), with the
/// loopback floor measured before the window. Empty without server times.
pub fn split_lines(run: &PhaseResult) -> String {
    let Some(t) = &run.server_time else {
        return String::new();
    };
    if t.splits.is_empty() {
        return String::new();
    }
    let open = t.splits.iter().any(|x| x.lag_mean_us.is_some());
    let mut cols = vec![
        "op",
        "commands",
        ">client us",
        ">server us",
        ">client+network us",
    ];
    if open {
        cols.push(">schedule lag us");
    }
    cols.extend([">server p50 us", ">server p99 us"]);
    let mut table = Table::new(&cols);
    let bound = |v: Option<f64>| v.map_or("-".to_string(), |b| format!("<= {}", micros(b)));
    for x in &t.splits {
        let own: Vec<&kvbench_model::server_time::CommandTime> = t
            .commands
            .iter()
            .filter(|c| x.commands.contains(&c.name))
            .collect();
        // The bucket bounds of its busiest command.
        let busiest = own.iter().max_by_key(|c| c.calls);
        let mut row = vec![
            x.op.to_string(),
            own.iter()
                .map(|c| c.name.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            micros(x.client_mean_us),
            micros(x.server_mean_us),
            micros(x.client_network_mean_us),
        ];
        if open {
            row.push(x.lag_mean_us.map_or("-".into(), micros));
        }
        row.push(bound(busiest.and_then(|c| c.p50_us)));
        row.push(bound(busiest.and_then(|c| c.p99_us)));
        table.row(row);
    }
    format!(
        "\nlatency split (means; server time from {}; loopback floor {}):\n{}",
        t.method,
        t.base_rtt_us
            .map_or("not measured".into(), |r| format!("{} us", micros(r))),
        table.to_text()
    )
}

/// A readable summary of one run.
pub fn run_summary(rec: &RunRecord) -> String {
    let c = &rec.config;
    let e = &rec.environment;
    let mut s = String::new();
    let id = rec.id.map_or(String::new(), |i| format!(" #{i}"));
    s.push_str(&format!(
        "run{id}: {}{} | {} | {} | {} clients x pipeline {} | seed {}\n",
        crate::format::server_label(c.system, e),
        crate::format::topology_label(c),
        c.workload,
        crate::format::dataset(c),
        c.clients,
        c.pipeline,
        c.seed
    ));
    if let Some(w) = &c.companion {
        s.push_str(&format!(
            "with: {} at the same time, {} clients x pipeline {}, its own {} records; its \
             operations are listed beside the main group's\n",
            w.workload,
            w.clients,
            w.pipeline,
            count(w.records)
        ));
    }
    s.push_str(&format!("status: {}", rec.status.as_str()));
    if let Some(f) = &rec.failure {
        s.push_str(&format!(" ({f})"));
    }
    s.push('\n');
    if !rec.labels.is_empty() {
        s.push_str(&format!("labels: {}\n", labels(&rec.labels)));
    }
    for m in &rec.marks {
        s.push_str(&format!("  marked: {m}\n"));
    }
    for w in &rec.warnings {
        s.push_str(&format!("  warning: {w}\n"));
    }
    if let Some(load) = &rec.load {
        s.push_str(&format!(
            "\nload: {} records in {} s ({} inserts/s, p50 {} us, p99 {} us)\n",
            count(load.completed),
            secs(load.duration_s),
            rate(load.throughput),
            opt(latency(Some(load), OpKind::Insert, |l| l.p50_us), micros),
            opt(latency(Some(load), OpKind::Insert, |l| l.p99_us), micros),
        ));
    }
    if let Some(run) = &rec.run {
        s.push_str(&window_lines(c, run));
    }
    if !rec.probes.is_empty() {
        s.push('\n');
        s.push_str(&probe_table(&rec.probes));
    }
    if let Some(cpu) = &rec.cpu {
        s.push_str(&format!(
            "\ncpu in the window: server {} s ({} us/op), kvbench {} s ({} us/op)\n",
            opt(cpu.server_seconds, secs),
            opt(cpu.server_us_per_op, |v| format!("{v:.2}")),
            secs(cpu.client_seconds),
            opt(cpu.client_us_per_op, |v| format!("{v:.2}")),
        ));
    }
    s
}

/// The measured window of a run summary: its length, the operations'
/// table and what the window says beside it (open loop, per-pipeline
/// latency, redirects, errors, outages, the cache, the server's share).
fn window_lines(c: &kvbench_model::RunConfig, run: &kvbench_model::PhaseResult) -> String {
    let mut s = String::new();
    s.push_str(&format!(
        "\nmeasured window: {} s (after {} s warm-up)\n",
        secs(run.duration_s),
        secs(c.warmup_s)
    ));
    s.push_str(&phase_table(run));
    for (kind, template) in command_templates(c) {
        s.push_str(&format!("  {kind}: {template}\n"));
    }
    if let Some(offered) = run.offered_rate {
        s.push_str(&format!(
            "\nopen loop: {} ops/s offered, {} achieved; latency above is response time (from the intended send)\n",
            rate(offered),
            rate(run.throughput)
        ));
        s.push_str(&open_loop_table(run));
    }
    if run.ops.iter().any(|o| o.per_pipeline.is_some()) {
        s.push_str(&format!(
            "\nlatency above is per request, from its send to its reply. Divided by the \
             pipeline ({}), as paper C and others publish it (not a time any request took):\n",
            c.pipeline
        ));
        s.push_str(&per_pipeline_table(run));
    }
    if c.topology == kvbench_model::TopologyKind::Cluster {
        s.push_str(&format!(
            "redirects (sent again, never counted as completed): {} MOVED, {} ASK; {} retried after CLUSTERDOWN, TRYAGAIN or a lost connection\n",
            count(run.redirects_moved),
            count(run.redirects_ask),
            count(run.retries)
        ));
    }
    if !run.errors_by_kind.is_empty() {
        let kinds: Vec<String> = run
            .errors_by_kind
            .iter()
            .map(|(k, n)| format!("{k} {}", count(*n)))
            .collect();
        s.push_str(&format!("errors by kind: {}\n", kinds.join(", ")));
    }
    s.push_str(&outage_lines(run));
    s.push_str(&cache_lines(c, run));
    s.push_str(&split_lines(run));
    for e in &run.error_replies {
        let times = match e.count {
            0 => "before the window".to_string(),
            n => format!("{} times", count(n)),
        };
        s.push_str(&format!("  the server replied {}: {}\n", times, e.first));
    }
    for m in &run.error_samples {
        s.push_str(&format!("  error seen: {m}\n"));
    }

    s
}

/// The servers' probes of a run summary, each stage summed over the
/// nodes, then each node.
fn probe_table(probes: &[kvbench_model::Probe]) -> String {
    let mut t = Table::new(&[
        "server",
        ">rss MiB",
        ">own memory MiB",
        ">items",
        ">evictions",
        ">cpu s",
    ]);
    for p in probes {
        let stage = p.stage.replace('_', " ");
        let total = if p.nodes.is_empty() {
            stage
        } else {
            format!("{stage} (sum)")
        };
        t.row(vec![
            total,
            opt(p.rss_bytes, mib),
            opt(p.server_memory_bytes, mib),
            opt(p.items, count),
            opt(p.evictions, count),
            opt(p.cpu_seconds, secs),
        ]);
        for n in &p.nodes {
            t.row(vec![
                format!("  {} {}", n.role, n.addr),
                opt(n.rss_bytes, mib),
                opt(n.server_memory_bytes, mib),
                opt(n.items, count),
                opt(n.evictions, count),
                opt(n.cpu_seconds, secs),
            ]);
        }
    }
    t.to_text()
}

/// Column headers and cells shared by the terminal and Markdown comparisons.
pub fn comparison_table(records: &[RunRecord]) -> Table {
    let mut t = Table::new(&[
        "system",
        "workload",
        ">clients",
        "status",
        ">ops/s",
        ">read p50",
        ">read p99",
        ">update p50",
        ">update p99",
        ">mem after load MiB",
        ">rss after run MiB",
        ">server us/op",
        ">client us/op",
    ]);
    for r in records {
        let run = r.run.as_ref();
        let ok = r.status != RunStatus::Failed;
        let lat = |op, pick| {
            if ok {
                opt(latency(run, op, pick), micros)
            } else {
                "-".into()
            }
        };
        t.row(vec![
            r.config.system.to_string(),
            r.config.workload.clone(),
            r.config.clients.to_string(),
            r.status.as_str().to_string(),
            opt(run.filter(|_| ok).map(|p| p.throughput), rate),
            lat(OpKind::Read, |l| l.p50_us),
            lat(OpKind::Read, |l| l.p99_us),
            lat(OpKind::Update, |l| l.p50_us),
            lat(OpKind::Update, |l| l.p99_us),
            opt(
                // A server an earlier cell loaded: its memory as this run began.
                probe(r, "after_load")
                    .or_else(|| probe(r, "before_run"))
                    .and_then(|p| p.server_memory_bytes),
                mib,
            ),
            opt(probe(r, "after_run").and_then(|p| p.rss_bytes), mib),
            opt(r.cpu.as_ref().and_then(|c| c.server_us_per_op), |v| {
                format!("{v:.1}")
            }),
            opt(r.cpu.as_ref().and_then(|c| c.client_us_per_op), |v| {
                format!("{v:.1}")
            }),
        ]);
    }
    t
}

/// Many runs side by side (latencies in microseconds).
pub fn comparison(records: &[RunRecord]) -> String {
    let mut s = String::from("latencies in microseconds; ops/s over the measured window\n");
    s.push_str(&comparison_table(records).to_text());
    for r in records.iter().filter(|r| r.status != RunStatus::Ok) {
        s.push_str(&problem(r));
        s.push('\n');
    }
    s
}

/// Marks or warnings as one line, their sentences joined by `; `.
pub fn joined(marks: &[kvbench_model::Mark]) -> String {
    let texts: Vec<&str> = marks.iter().map(|m| m.text()).collect();
    texts.join("; ")
}

/// Why a run is not `ok`, in one line: `run 7 (redis balanced x8): invalid: errors: ...`.
pub fn problem(r: &RunRecord) -> String {
    let why = r.failure.clone().unwrap_or_else(|| joined(&r.marks));
    format!(
        "run {} ({} {} x{}): {}: {why}",
        r.id.unwrap_or_default(),
        r.config.system,
        r.config.workload,
        r.config.clients,
        r.status.as_str()
    )
}

/// The stored runs, one line each.
pub fn runs_list(rows: &[RunSummary]) -> String {
    if rows.is_empty() {
        return "no runs stored\n".into();
    }
    let mut t = Table::new(&[
        "id",
        "started",
        "status",
        "system",
        "workload",
        ">clients",
        ">records",
        ">ops/s",
        ">read p99 us",
        ">update p99 us",
        "labels",
    ]);
    for r in rows {
        t.row(vec![
            r.id.to_string(),
            r.started_at.clone(),
            r.status.clone(),
            r.system.clone(),
            r.workload.clone(),
            r.clients.to_string(),
            count(r.records),
            opt(r.throughput, rate),
            opt(r.read_p99_us, micros),
            opt(r.update_p99_us, micros),
            labels(&r.labels),
        ]);
    }
    t.to_text()
}

/// `a=1, flagged, b=x`: a label with an empty value shows its key alone.
pub fn labels(labels: &BTreeMap<String, String>) -> String {
    labels
        .iter()
        .map(|(k, v)| {
            if v.is_empty() {
                k.clone()
            } else {
                format!("{k}={v}")
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// `kvbench diff`: who A and B are, the fields that differ, and the metrics.
pub fn diff(d: &Diff) -> String {
    let mut s = format!("A: {}\nB: {}\n", side(&d.a), side(&d.b));
    for (title, changes) in [
        ("configuration", &d.config),
        ("environment", &d.environment),
        ("labels", &d.labels),
    ] {
        if changes.is_empty() {
            s.push_str(&format!("\n{title}: the same\n"));
        } else {
            s.push_str(&format!("\n{title}, what differs:\n"));
            s.push_str(&field_table(changes));
        }
    }
    s.push_str("\nrun phase, B against A (latencies in microseconds):\n");
    let mut t = Table::new(&[
        "op",
        "metric",
        ">A",
        ">B",
        ">change",
        "B/A 95% interval",
        "call",
    ]);
    for m in &d.metrics {
        t.row(vec![
            m.op.clone(),
            metric_name(m.metric).into(),
            estimate(m, m.a),
            estimate(m, m.b),
            opt(m.change, |c| format!("{:+.1}%", c * 100.0)),
            m.interval
                .as_ref()
                .map_or("-".into(), crate::takeaways::interval_text),
            m.call.map_or("-".into(), |c| match c {
                kvbench_stats::paired::Call::Ahead => "B higher".to_string(),
                kvbench_stats::paired::Call::Behind => "B lower".to_string(),
                c => c.as_str().to_string(),
            }),
        ]);
    }
    s.push_str(&t.to_text());
    s.push_str(
        "A value with ± is a mean over a cell's iterations with its 95% interval; \
         the change's interval is Welch's over the two sides' runs (- : a side has fewer than two), \
         called higher/lower beyond ±5%, equal within it, else undecided.\n",
    );
    for n in &d.notes {
        s.push_str(&format!("note: {n}\n"));
    }
    s
}

fn side(i: &SideInfo) -> String {
    let what = format!(
        "run {} ({} {}, {}, {})",
        i.id, i.system, i.workload, i.status, i.started_at
    );
    let runs: Vec<String> = i.runs.iter().map(i64::to_string).collect();
    match (&i.experiment, i.runs.len()) {
        (Some(e), n) if n > 1 => format!(
            "{what}: experiment {e} pass {}, mean of {n} iterations (runs {})",
            i.generation.unwrap_or_default(),
            runs.join(", ")
        ),
        (Some(e), _) => format!(
            "{what}: experiment {e} pass {}, single run, no interval",
            i.generation.unwrap_or_default()
        ),
        (None, _) => format!("{what}: single run, no interval"),
    }
}

fn field_table(changes: &[FieldChange]) -> String {
    let value = |v: &Option<serde_json::Value>| match v {
        None => "-".to_string(),
        Some(serde_json::Value::String(s)) if !s.is_empty() => s.clone(),
        // An empty string quoted, so it is not mistaken for a missing cell.
        Some(other) => other.to_string(),
    };
    let mut t = Table::new(&["field", "A", "B"]);
    for c in changes {
        t.row(vec![c.field.clone(), value(&c.a), value(&c.b)]);
    }
    t.to_text()
}

fn metric_name(metric: &str) -> &str {
    match metric {
        "throughput" => "ops/s",
        "p50_us" => "p50",
        "p99_us" => "p99",
        "p999_us" => "p99.9",
        "mean_us" => "mean",
        other => other,
    }
}

/// `12,345` or `12,345 ± 678` in the metric's own format.
fn estimate(m: &MetricDelta, e: Option<Estimate>) -> String {
    let Some(e) = e else {
        return "-".into();
    };
    let show = |v: f64| {
        if m.metric == "throughput" {
            rate(v)
        } else {
            micros(v)
        }
    };
    match e.ci95 {
        Some((lo, hi)) => format!("{} ± {}", show(e.mean), show((hi - lo) / 2.0)),
        None => show(e.mean),
    }
}

/// The verdicts of a comparison as a table: per place, the leader, the
/// call, the throughput ratio with its interval, and server CPU per
/// operation of the same pair.
pub fn verdicts(vs: &[crate::takeaways::Verdict], rule: &crate::takeaways::Rule) -> String {
    let mut t = Table::new(&[
        "workload",
        "topology",
        ">clients",
        "leader",
        "runner-up",
        "call",
        ">ratio",
        "95% interval",
        "server CPU/op",
        "p99",
    ]);
    for v in vs {
        let th = &v.throughput;
        t.row(vec![
            v.workload.clone(),
            v.topology.clone(),
            v.clients.to_string(),
            v.leader.clone(),
            v.runner_up.clone(),
            match (th.decision.call, th.decision.blocks_needed) {
                (kvbench_stats::paired::Call::Undecided, Some(k)) => {
                    format!("undecided (~{k} blocks)")
                }
                (c, _) => c.as_str().to_string(),
            },
            format!("{:+.1}%", th.change * 100.0),
            th.interval
                .as_ref()
                .map_or("- (single runs)".into(), crate::takeaways::interval_text),
            lower(&v.server_cpu),
            lower(&v.latency_p99),
        ]);
    }
    let decided = vs.iter().filter(|v| v.call().decided()).count();
    let notes: Vec<String> = vs
        .iter()
        .filter(|v| !v.unusual_blocks.is_empty())
        .map(|v| format!("{} x{}: {}", v.workload, v.clients, v.note))
        .collect();
    let looks = if rule.looks > 1 {
        format!(
            ", each interval at {:.2}% for {} repeated looks",
            rule.level() * 100.0,
            rule.looks
        )
    } else {
        String::new()
    };
    let mut out = format!(
        "verdicts ({decided} of {} places decided; leader over runner-up, paired over blocks; ahead/behind beyond ±{}, equal within it{looks}; server CPU/op and p99 of the same pair, lower is better: less/more/equal):\n{}",
        vs.len(),
        crate::takeaways::margin_text(rule.margin),
        t.to_text()
    );
    for n in notes {
        out.push_str(&n);
        out.push('\n');
    }
    out
}

/// `-18.8% less`, or `-` without an interval.
fn lower(j: &Option<crate::takeaways::Judged>) -> String {
    j.as_ref().map_or("-".into(), |j| {
        format!(
            "{:+.1}% {}",
            j.change * 100.0,
            crate::takeaways::lower_word(j.decision.call)
        )
    })
}

/// Reconnects and the outage, in words: what the clients saw of a restart,
/// a failover or a dropped connection.
pub fn outage_lines(run: &kvbench_model::PhaseResult) -> String {
    let mut s = String::new();
    if run.reconnects > 0 {
        let per_node: Vec<String> = run
            .nodes
            .iter()
            .filter(|n| n.reconnects > 0)
            .map(|n| format!("{} {}", n.addr, count(n.reconnects)))
            .collect();
        let nodes = if per_node.is_empty() {
            String::new()
        } else {
            format!(" ({})", per_node.join(", "))
        };
        s.push_str(&format!(
            "reconnects: {}{nodes}: lost connections opened again (the requests in flight on them failed; those not yet sent waited)\n",
            count(run.reconnects)
        ));
    }
    if let Some(o) = &run.outage {
        let back = o.unavailable_s.map_or_else(
            || "no operation completed after the last failure".to_string(),
            |u| format!("unavailable for {} s", secs(u)),
        );
        let recovered = match (o.baseline_ops_s, o.recovery_s) {
            (None, _) => {
                "no baseline to recover to (the first failure came in the window's first 0.5 s)"
                    .to_string()
            }
            (Some(b), Some(r)) => format!("back to 90% of {} ops/s after {} s", rate(b), secs(r)),
            (Some(b), None) => format!("never back to 90% of {} ops/s", rate(b)),
        };
        let peak = o.peak_latency_us.map_or(String::new(), |p| {
            format!(", latency peak {} us", micros(p))
        });
        s.push_str(&format!(
            "outage: the first request failed {} s into the window; {back}; {recovered}; {} requests failed (no reply, or \"not now\"){peak}\n",
            secs(o.first_failure_s),
            count(o.failed)
        ));
    } else if !run.faults.is_empty() {
        // A fault the clients rode out (retries, a move between requests):
        // no outage to measure, and saying so is the result.
        let highest = run.ops.iter().map(|o| o.latency.max_us).fold(0.0, f64::max);
        s.push_str(&format!(
            "outage: none; no request failed without a reply (the fault cost latency only: highest {} us)\n",
            micros(highest)
        ));
    }
    for f in &run.faults {
        let how = match (&f.error, f.lasted_s) {
            (Some(e), _) => format!("not caused: {e}"),
            (None, Some(l)) => format!(
                "caused {} s into the window on {}, over after {} s",
                secs(f.at_s),
                f.target,
                secs(l)
            ),
            (None, None) => format!("caused {} s into the window on {}", secs(f.at_s), f.target),
        };
        s.push_str(&format!("fault {}: {how}\n", f.spec));
    }
    s
}
