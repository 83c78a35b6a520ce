//! The search driven as a library on a real Redis that kvbench starts:
//! the steps it takes are the runs it stores, under one experiment and
//! generation, and the search ends for the reason its objective implies.

use kvbench_engine::{Arrival, Rate, Window};
use kvbench_findmax::{find, Plan, Slo, Step, Stop, Watch};
use kvbench_model::SystemKind;
use kvbench_run::view::Silent;
use kvbench_run::{RunSettings, UsageError};
use kvbench_store::Store;
use std::cell::RefCell;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

/// Reads of 200 small records for 300 ms at `rate` (closed loop when none).
fn settings(rate: Option<f64>) -> Result<RunSettings, UsageError> {
    let base = RunSettings::of_preset(
        SystemKind::Redis,
        "ycsb/c",
        &[("recordcount", "200")],
        Window::Duration(Duration::from_millis(300)),
    )
    .map_err(UsageError)?;
    Ok(RunSettings {
        clients: 2,
        warmup: Duration::ZERO,
        rate: rate.map(|ops_per_s| Rate {
            ops_per_s,
            arrival: Arrival::Uniform,
        }),
        ..base
    })
}

/// A step as the watch saw it: its index, its rate, whether it passed.
type Sighting = (usize, Option<f64>, Option<bool>);

/// Every step the search announced and judged, in order.
#[derive(Default)]
struct Seen(RefCell<Vec<Sighting>>);

impl Watch for Seen {
    fn starts(&self, index: usize, rate: Option<f64>) {
        self.0.borrow_mut().push((index, rate, None));
    }
    fn judged(&self, step: &Step, _: Slo) {
        if let Some(last) = self.0.borrow_mut().last_mut() {
            last.2 = Some(step.passed);
        }
    }
}

fn plan(name: &str, slo: &str) -> Plan {
    Plan {
        name: name.into(),
        slo: slo.parse().expect("an objective"),
        start_rate: Some(200.0),
        min_rate: 100.0,
        max_rate: 800.0,
        precision: 0.05,
        max_steps: 10,
    }
}

#[test]
fn an_objective_every_rate_meets_stops_at_the_highest_rate_and_stores_each_step() {
    let dir = tempfile::tempdir().expect("a directory");
    let mut store = Store::open(&dir.path().join("f.db")).expect("a store");
    let stop = Arc::new(AtomicBool::new(false));
    let seen = Seen::default();
    let p = plan("easy", "p99=10s");
    let found = find(&p, &settings, &mut store, &Silent, &seen, &stop).expect("searches");
    assert_eq!(found.stopped, Stop::MaxRate, "{found:?}");
    assert!(found.found());
    assert_eq!(found.max_rate, Some(800.0));
    assert!(found.steps.iter().all(|s| s.passed), "{found:?}");
    // What the watch saw is what was returned, step for step.
    let seen = seen.0.into_inner();
    assert_eq!(seen.len(), found.steps.len());
    for (i, (s, (index, rate, passed))) in found.steps.iter().zip(&seen).enumerate() {
        assert_eq!((*index, *rate, *passed), (i, s.rate, Some(s.passed)));
    }
    // Each step is a stored run of the search's experiment, in order.
    let ids: Vec<i64> = found.steps.iter().map(|s| s.run_id).collect();
    let mut sorted = ids.clone();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(sorted, ids, "one new run per step");
    assert_eq!(found.max_rate_run, ids.last().copied());
    assert_eq!(store.experiment_generation("easy").expect("read"), Some(1));
    for s in &found.steps {
        let rec = store.get_run(s.run_id).expect("stored");
        assert_eq!(rec.config.rate, s.rate, "run {}", s.run_id);
    }
}

#[test]
fn an_objective_no_rate_meets_ends_at_the_lowest_rate_without_a_result() {
    let dir = tempfile::tempdir().expect("a directory");
    let mut store = Store::open(&dir.path().join("f.db")).expect("a store");
    let stop = Arc::new(AtomicBool::new(false));
    let p = plan("impossible", "p50=1ns");
    let found =
        find(&p, &settings, &mut store, &Silent, &Seen::default(), &stop).expect("searches");
    assert_eq!(found.stopped, Stop::MinRate, "{found:?}");
    assert!(!found.found());
    assert_eq!(found.max_rate, None);
    assert_eq!(found.lowest_failing_rate, Some(100.0));
    assert!(found.steps.iter().all(|s| !s.passed));
    assert!(found
        .steps
        .iter()
        .all(|s| s.notes.iter().any(|n| n.contains("is above 0.001 us"))));
}
