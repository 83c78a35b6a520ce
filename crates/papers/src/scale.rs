//! A paper's experiment file scaled to a run: its record counts at
//! `--scale` of the paper's (a full-scale file at 1), and the window,
//! warm-up, iterations and client counts a user gave instead of the file's.

use crate::Known;
use anyhow::{Context, Result};
use kvbench_run::UsageError;
use sha2::{Digest, Sha256};

/// What a user gave instead of the paper's file, as the flags' text.
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    /// `--duration`: a window instead of the file's operation counts.
    pub duration: Option<String>,
    /// `--warmup`.
    pub warmup: Option<String>,
    /// `--iterations`.
    pub iterations: Option<u32>,
    /// `--clients`, a comma-separated list.
    pub clients: Option<String>,
}

/// Records loaded at `scale` of the paper's count (at least 100).
pub fn records(known: &Known, scale: f64) -> u64 {
    ((known.full_records as f64 * scale).round() as u64).max(100)
}

/// The paper's experiment file with this run's scale, window, iterations
/// and client counts, under a name that says so (so runs at another scale
/// are another experiment, never mixed into this one's report). At scale 1
/// a paper with a full-scale file runs that file, record counts untouched.
///
/// # Errors
/// `--iterations` or `--clients` out of range ([`UsageError`]).
pub fn scaled(known: &Known, scale: f64, a: &Overrides) -> Result<String> {
    let (source, full) = match known.full {
        Some(file) if scale >= 1.0 => (file, true),
        _ => (known.experiment, false),
    };
    let mut t: toml::Table = source
        .parse()
        .with_context(|| format!("internal: the experiment file of {}", known.name))?;
    let set = |t: &mut toml::Table, table: &str, key: &str, v: toml::Value| {
        if let Some(toml::Value::Table(inner)) = t.get_mut(table) {
            inner.insert(key.into(), v);
        } else {
            let mut inner = toml::Table::new();
            inner.insert(key.into(), v);
            t.insert(table.into(), toml::Value::Table(inner));
        }
    };
    if !full {
        let records =
            i64::try_from(records(known, scale)).context("internal: a record count beyond i64")?;
        set(&mut t, "dataset", "records", toml::Value::Integer(records));
        scale_workloads(&mut t, scale);
    }
    if let Some(d) = &a.duration {
        // A window replaces the full-scale file's operation counts, the
        // file's and each workload's own.
        if let Some(toml::Value::Table(run)) = t.get_mut("run") {
            run.remove("operations");
        }
        if let Some(toml::Value::Array(list)) = t.get_mut("workloads") {
            for w in list.iter_mut() {
                if let toml::Value::Table(w) = w {
                    w.remove("operations");
                }
            }
        }
        set(&mut t, "run", "duration", toml::Value::String(d.clone()));
    }
    if let Some(w) = &a.warmup {
        set(&mut t, "run", "warmup", toml::Value::String(w.clone()));
    }
    if let Some(n) = a.iterations {
        kvbench_run::bounds::ITERATIONS.check("--iterations", n.into())?;
        t.insert("iterations".into(), toml::Value::Integer(i64::from(n)));
    }
    if let Some(list) = &a.clients {
        let counts = list
            .split(',')
            .map(|c| {
                c.trim()
                    .parse::<u32>()
                    .ok()
                    .filter(|&n| n > 0)
                    .map(|n| toml::Value::Integer(i64::from(n)))
                    .ok_or_else(|| {
                        UsageError(format!("--clients '{list}': '{c}' is not a client count"))
                    })
            })
            .collect::<Result<Vec<_>, _>>()?;
        set(&mut t, "sweep", "clients", toml::Value::Array(counts));
    }
    let body = toml::to_string(&t).context("internal: writing the scaled experiment")?;
    let hash: String = Sha256::digest(body.as_bytes())
        .iter()
        .take(4)
        .map(|b| format!("{b:02x}"))
        .collect();
    t.insert(
        "name".into(),
        toml::Value::String(format!("{}-{hash}", known.name)),
    );
    Ok(format!(
        "# kvbench reproduce {} --scale {scale}: the paper's matrix as run here.\n{}",
        known.name,
        toml::to_string(&t).context("internal: writing the scaled experiment")?
    ))
}

/// Scales the record counts a paper's workloads give themselves (`records`
/// of a workload and of its `with` group), keeping at least one whole unit:
/// a record, or a group of sorted sets.
fn scale_workloads(t: &mut toml::Table, scale: f64) {
    let Some(toml::Value::Array(list)) = t.get_mut("workloads") else {
        return;
    };
    for w in list.iter_mut() {
        let toml::Value::Table(w) = w else { continue };
        scale_records(w, scale);
        if let Some(toml::Value::Table(with)) = w.get_mut("with") {
            scale_records(with, scale);
        }
    }
}

fn scale_records(w: &mut toml::Table, scale: f64) {
    let Some(toml::Value::Integer(full)) = w.get("records") else {
        return;
    };
    let unit = records_unit(w);
    let units = ((*full as f64 * scale / unit as f64).round() as i64).max(1);
    w.insert("records".into(), toml::Value::Integer(units * unit));
}

/// The records one unit of a workload's data takes: a sorted-set workload
/// loads whole groups of `kvbench.zset.sets` sets.
fn records_unit(w: &toml::Table) -> i64 {
    let Some(toml::Value::String(preset)) = w.get("preset") else {
        return 1;
    };
    let Ok(mut props) = kvbench_workload::presets::find(preset) else {
        return 1;
    };
    if let Some(toml::Value::Table(extra)) = w.get("properties") {
        for (k, v) in extra {
            let text = kvbench_experiment::property_text(v);
            if props.apply_override(&format!("{k}={text}")).is_err() {
                return 1;
            }
        }
    }
    kvbench_workload::WorkloadSpec::from_properties(&props).map_or(1, |(spec, _)| {
        i64::try_from(spec.records_unit()).unwrap_or(1)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_paper(paper: &str, scale: f64, a: &Overrides) -> toml::Table {
        let known = crate::find(paper).expect("known");
        let text = scaled(known, scale, a).expect("scaled");
        text.parse().expect("a TOML table")
    }

    fn run(scale: f64, a: &Overrides) -> toml::Table {
        run_paper("anthony2016", scale, a)
    }

    fn args() -> Overrides {
        Overrides::default()
    }

    fn get<'a>(t: &'a toml::Table, table: &str, key: &str) -> Option<&'a toml::Value> {
        t.get(table)
            .and_then(|v| v.as_table())
            .and_then(|inner| inner.get(key))
    }

    #[test]
    fn the_papers_scale_runs_its_full_matrix_by_operation_count() {
        let t = run(1.0, &args());
        assert_eq!(
            get(&t, "dataset", "records").and_then(|v| v.as_integer()),
            Some(1_000_000)
        );
        assert_eq!(
            get(&t, "run", "operations").and_then(|v| v.as_integer()),
            Some(1_000_000)
        );
        assert_eq!(get(&t, "run", "duration"), None);
        let clients = get(&t, "sweep", "clients")
            .and_then(|v| v.as_array())
            .map(Vec::len);
        assert_eq!(clients, Some(9), "YCSB threadcount 1 to 32 in steps of 4");
        assert_eq!(names(&t["systems"]), ["redis", "valkey", "memcached"]);
        // Single node, and the paper's 3-node cluster (a Redis Cluster,
        // Memcached's client-hashed pool).
        assert_eq!(topology_kinds(&t), ["single", "cluster", "pool"]);
        assert!(t["name"]
            .as_str()
            .is_some_and(|n| n.starts_with("anthony2016-")));
    }

    /// The strings of a list of names (systems).
    fn names(list: &toml::Value) -> Vec<&str> {
        list.as_array()
            .expect("a list")
            .iter()
            .filter_map(|v| v.as_str())
            .collect()
    }

    /// The kinds of a file's topologies, in order ("single" is a string,
    /// the others tables with a `kind`).
    fn topology_kinds(t: &toml::Table) -> Vec<&str> {
        t["topologies"]
            .as_array()
            .expect("topologies")
            .iter()
            .map(|v| {
                v.as_str()
                    .or_else(|| v.get("kind")?.as_str())
                    .unwrap_or("?")
            })
            .collect()
    }

    #[test]
    fn paper_b_at_its_scale_runs_its_cluster_too() {
        let t = run_paper("sadat2019", 1.0, &args());
        assert_eq!(
            get(&t, "dataset", "records").and_then(|v| v.as_integer()),
            Some(2_500_000)
        );
        assert_eq!(topology_kinds(&t), ["single", "cluster", "pool"]);
        let only = |i: usize| names(&t["topologies"][i]["systems"]);
        assert_eq!(only(1), ["redis"], "a Redis Cluster");
        assert_eq!(only(2), ["memcached"], "Memcached's client-hashed pool");
    }

    #[test]
    fn below_the_papers_scale_the_default_file_is_scaled() {
        let t = run(0.02, &args());
        assert_eq!(
            get(&t, "dataset", "records").and_then(|v| v.as_integer()),
            Some(20_000)
        );
        assert_eq!(get(&t, "run", "operations"), None);
        assert!(get(&t, "run", "duration").is_some());
        let systems = t["systems"].as_array().expect("systems");
        assert!(!systems.iter().any(|s| s.as_str() == Some("valkey")));
    }

    #[test]
    fn a_window_replaces_the_full_files_operation_count() {
        let a = Overrides {
            duration: Some("3s".into()),
            ..args()
        };
        let t = run(1.0, &a);
        assert_eq!(get(&t, "run", "operations"), None);
        assert_eq!(
            get(&t, "run", "duration").and_then(|v| v.as_str()),
            Some("3s")
        );
        assert_ne!(run(1.0, &args())["name"], t["name"], "another experiment");
        // Paper B's insert-heavy workloads carry their own count, which the
        // window replaces too (a count beside a window is refused).
        let t = run_paper("sadat2019", 1.0, &a);
        let workloads = t["workloads"].as_array().expect("workloads");
        assert!(workloads.iter().any(|w| w.is_table()), "D and E are tables");
        assert!(
            !workloads.iter().any(|w| w.get("operations").is_some()),
            "{workloads:?}"
        );
        let full = run_paper("sadat2019", 1.0, &args());
        let counts: Vec<Option<i64>> = full["workloads"]
            .as_array()
            .expect("workloads")
            .iter()
            .map(|w| w.get("operations").and_then(|v| v.as_integer()))
            .collect();
        assert_eq!(counts, [None, None, None, Some(1_250_000), Some(1_250_000)]);
    }
}
