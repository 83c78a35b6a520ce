//! `kvbench reproduce PAPER`: runs a paper's matrix (its experiment file,
//! scaled to this machine) and writes the report with a paper-vs-kvbench
//! table: every finding the paper reported (data in `papers/PAPER.toml`)
//! beside what was measured here. The experiment file actually run is
//! written into the report's directory, so the report says exactly what ran.

use crate::args::ReproduceArgs;
use crate::db::open_store;
use crate::exit::{UsageError, Verdict};
use crate::output::print;
use crate::papers::{scale, table, zhang2014, Known, KNOWN};
use anyhow::{Context, Result};
use kvbench_report::paper::Paper;
use sha2::{Digest, Sha256};
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

pub fn reproduce(a: ReproduceArgs, stop: &Arc<AtomicBool>) -> Result<Verdict> {
    if a.paper == "zhang2014" {
        return crate::analytics::reproduce::run(&a, zhang2014()?);
    }
    let Some(known) = KNOWN.iter().find(|k| k.name == a.paper) else {
        let names: Vec<&str> = KNOWN
            .iter()
            .map(|k| k.name)
            .chain(std::iter::once("zhang2014"))
            .collect();
        return Err(UsageError(format!(
            "reproduce {}: no such paper; one of {}",
            a.paper,
            names.join(", ")
        ))
        .into());
    };
    let mut paper: Paper = toml::from_str(known.findings)
        .with_context(|| format!("internal: papers/{}.toml", known.name))?;
    let scale = scale(&a, known.default_scale)?;
    paper.at_scale(scale >= 1.0);
    let out = a
        .out
        .clone()
        .unwrap_or_else(|| Path::new("reports").join(known.name));
    crate::pages::prepare(&out)?;
    let file = scaled(known, scale, &a)?;
    let path = out.join("experiment.toml");
    kvbench_run::atomic::write_atomic(&path, file.as_bytes())?;
    let exp = kvbench_experiment::expand(&path, &crate::config::RunFlags)?;
    // An optional system left out (no asd here) is said in the report.
    paper.substitutions.extend(exp.absent.iter().cloned());
    if !a.quiet && !a.json {
        // Each workload's own count: a paper may give its workloads
        // different data sets (paper C: keys for SET:GET, sorted sets).
        let mut loads: Vec<String> = Vec::new();
        for c in &exp.cells {
            let load = format!(
                "{} {}",
                c.workload,
                kvbench_report::format::count(c.settings.spec.record_count)
            );
            if !loads.contains(&load) {
                loads.push(load);
            }
        }
        eprintln!(
            "reproduce {} at scale {scale} of the paper's data ({}), {} cells as experiment '{}'; {} substitutions listed in the report",
            known.name,
            loads.join(", "),
            exp.cells.len(),
            exp.name,
            paper.substitutions.len()
        );
    }
    let opts = crate::experiment::Options {
        db: &a.db,
        restart: a.restart,
        quiet: a.quiet,
        json: a.json,
        labels: &[],
        metrics_listen: None,
        skip_memory_check: a.skip_memory_check,
    };
    // The comparison table is not printed here: the paper table is the point.
    let (verdict, records, _) = crate::experiment::execute_quietly(&exp, &opts, stop)?;
    if records.is_empty() {
        return Ok(verdict);
    }
    let store = open_store(&a.db)?;
    let w = crate::pages::write(
        &store,
        &a.db,
        &crate::pages::Selection::Experiment(exp.name.clone()),
        &out,
        crate::pages::Framing {
            title: Some(format!("kvbench reproduces {}", paper.paper)),
            experiment_file: Some(file),
            paper: Some(paper),
            margin: None,
        },
    )?;
    if a.json {
        print(&serde_json::to_string_pretty(&serde_json::json!({
            "paper": known.name,
            "experiment": exp.name,
            "index": out.join("index.html"),
            "findings": w.summary.paper,
            "report": w.summary,
        }))?)?;
    } else {
        print(&table(&w.summary.paper))?;
        eprintln!("report: {}", out.join("index.html").display());
    }
    Ok(verdict)
}

/// Records loaded at `scale` of the paper's count (at least 100).
fn records(known: &Known, scale: f64) -> u64 {
    ((known.full_records as f64 * scale).round() as u64).max(100)
}

/// The paper's experiment file with this run's scale, window, iterations
/// and client counts, under a name that says so (so runs at another scale
/// are another experiment, never mixed into this one's report). At scale 1
/// a paper with a full-scale file runs that file, record counts untouched.
fn scaled(known: &Known, scale: f64, a: &ReproduceArgs) -> Result<String> {
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
    use crate::papers::ZHANG2014;

    fn args() -> ReproduceArgs {
        ReproduceArgs {
            paper: "anthony2016".into(),
            scale: None,
            duration: None,
            warmup: None,
            iterations: None,
            clients: None,
            out: None,
            restart: false,
            skip_memory_check: false,
            quiet: true,
            json: false,
            db: kvbench_store::Location::from(std::path::PathBuf::from("unused.db")),
        }
    }

    fn run(scale: f64, a: &ReproduceArgs) -> toml::Table {
        let known = KNOWN.iter().find(|k| k.name == a.paper).expect("known");
        let text = scaled(known, scale, a).expect("scaled");
        text.parse().expect("a TOML table")
    }

    fn get<'a>(t: &'a toml::Table, table: &str, key: &str) -> Option<&'a toml::Value> {
        t.get(table)
            .and_then(|v| v.as_table())
            .and_then(|inner| inner.get(key))
    }

    /// Every finding keeps its citation, its id is unique, and what it is
    /// about is run by the paper's experiment: a finding that silently
    /// stopped being measured, or lost where the paper says it, fails here.
    #[test]
    fn every_paper_keeps_its_findings_and_their_citations() {
        let papers: Vec<(&str, &str, Option<&str>)> = KNOWN
            .iter()
            .map(|k| (k.name, k.findings, Some(k.experiment)))
            .chain([("zhang2014", ZHANG2014, None)])
            .collect();
        let counts: Vec<(&str, usize)> = papers
            .iter()
            .map(|(name, text, experiment)| {
                let p: Paper = toml::from_str(text).expect(name);
                let mut ids: Vec<&str> = p.findings.iter().map(|f| f.id.as_str()).collect();
                ids.sort_unstable();
                ids.dedup();
                assert_eq!(ids.len(), p.findings.len(), "{name}: an id twice");
                for f in &p.findings {
                    // Sections, figures, tables, or a slide deck's named
                    // tables (paper B has no numbers).
                    let cites = ["sec. ", "fig. ", "table", "abstract", "conclusion"];
                    let source = f.source.to_lowercase();
                    assert!(
                        cites.iter().any(|c| source.contains(c)),
                        "{name} {}: no section, figure or table: {}",
                        f.id,
                        f.source
                    );
                    assert!(!f.claim.trim().is_empty(), "{name} {}: no claim", f.id);
                    if let Some(exp) = experiment {
                        let main = f.workload.split(" + ").next().unwrap_or_default();
                        assert!(
                            exp.contains(&format!("\"{main}\"")),
                            "{name} {}: {main} is not in its experiment file",
                            f.id
                        );
                    }
                }
                assert!(
                    p.tolerance.is_some_and(|t| (0.0..=0.2).contains(&t)),
                    "{name}: its tolerance is stated"
                );
                for n in &p.not_reproducible {
                    assert!(
                        !n.source.is_empty() && !n.claim.is_empty() && !n.why.is_empty(),
                        "{name}: a result not reproducible here needs where, what and why"
                    );
                }
                (*name, p.findings.len())
            })
            .collect();
        assert_eq!(
            counts,
            [
                ("anthony2016", 36),
                ("sadat2019", 23),
                ("altoros", 17),
                ("zhang2014", 7)
            ]
        );
    }

    /// The outcome docs quote the report's "Paper vs kvbench" section as
    /// generated (between markers) instead of restating it: its totals
    /// sentence must agree with its own table, row by row.
    #[test]
    fn the_outcome_docs_quote_tables_whose_totals_agree() {
        for (name, doc) in [
            (
                "altoros.md",
                include_str!("../../../docs/reproductions/altoros.md"),
            ),
            (
                "anthony2016.md",
                include_str!("../../../docs/reproductions/anthony2016.md"),
            ),
            (
                "sadat2019.md",
                include_str!("../../../docs/reproductions/sadat2019.md"),
            ),
            (
                "sadat2019-full.md",
                include_str!("../../../docs/reproductions/sadat2019-full.md"),
            ),
        ] {
            let start = "<!-- generated by kvbench reproduce: begin -->";
            let end = "<!-- generated by kvbench reproduce: end -->";
            let (Some(a), Some(b)) = (doc.find(start), doc.find(end)) else {
                panic!("{name}: no generated section");
            };
            let quoted = &doc[a..b];
            let count = |v: &str| {
                quoted
                    .lines()
                    .filter(|l| l.starts_with("| ") && l.contains(&format!("| **{v}** |")))
                    .count()
            };
            let said = format!(
                "{} findings agree, {} differ, {} inconclusive, {} not measured here",
                count("agrees"),
                count("differs"),
                count("inconclusive"),
                count("not measured")
            );
            assert!(quoted.contains(&said), "{name}: the totals are not {said}");
            assert!(
                count("agrees") + count("differs") > 0,
                "{name}: an empty table"
            );
        }
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
        let systems: Vec<&str> = t["systems"]
            .as_array()
            .expect("systems")
            .iter()
            .filter_map(|v| v.as_str())
            .collect();
        assert_eq!(systems, ["redis", "valkey", "memcached"]);
        assert_eq!(t["topologies"].as_array().map(Vec::len), Some(1));
        assert!(t["name"]
            .as_str()
            .is_some_and(|n| n.starts_with("anthony2016-")));
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
        let a = ReproduceArgs {
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
        let b = ReproduceArgs {
            paper: "sadat2019".into(),
            ..a
        };
        let t = run(1.0, &b);
        let workloads = t["workloads"].as_array().expect("workloads");
        assert!(workloads.iter().any(|w| w.is_table()), "D and E are tables");
        assert!(
            !workloads.iter().any(|w| w.get("operations").is_some()),
            "{workloads:?}"
        );
        let full = run(
            1.0,
            &ReproduceArgs {
                paper: "sadat2019".into(),
                ..args()
            },
        );
        let counts: Vec<Option<i64>> = full["workloads"]
            .as_array()
            .expect("workloads")
            .iter()
            .map(|w| w.get("operations").and_then(|v| v.as_integer()))
            .collect();
        assert_eq!(counts, [None, None, None, Some(1_250_000), Some(1_250_000)]);
    }
}
