//! A reproduction prepared as a library call, before anything runs: the
//! scaled file written beside the report is the one expanded, each cell's
//! flags go through the caller's resolver (the binary's `kvbench run`
//! parser; here a stand-in that records them), and bad input is a usage
//! error naming the flag. Running the pass and the report is covered by the
//! binary's `reproduce` tests, on real servers.

use kvbench_engine::Window;
use kvbench_experiment::Resolve;
use kvbench_model::SystemKind;
use kvbench_papers::reproduce::prepare;
use kvbench_papers::scale::Overrides;
use kvbench_run::{RunSettings, UsageError};
use std::cell::RefCell;

/// Resolves every cell to a tiny YCSB C run on the system its flags name,
/// keeping the flags it was given.
#[derive(Default)]
struct Stand {
    seen: RefCell<Vec<Vec<String>>>,
}

impl Resolve for Stand {
    fn settings(&self, args: Vec<String>) -> Result<RunSettings, UsageError> {
        let system = args
            .iter()
            .position(|a| a == "--system")
            .and_then(|i| args.get(i + 1))
            .ok_or_else(|| UsageError("no --system".into()))?
            .parse::<SystemKind>()
            .map_err(|e| UsageError(format!("--system: {e}")))?;
        self.seen.borrow_mut().push(args);
        RunSettings::of_preset(
            system,
            "ycsb/c",
            &[("recordcount", "100")],
            Window::Operations(100),
        )
        .map_err(|e| UsageError(e.to_string()))
    }

    fn checkpoint(&self, _what: &str) {}
}

struct Refuse;

impl Resolve for Refuse {
    fn settings(&self, _args: Vec<String>) -> Result<RunSettings, UsageError> {
        Err(UsageError("--pipeline 0: refused here".into()))
    }

    fn checkpoint(&self, _what: &str) {}
}

fn usage_text(e: &anyhow::Error) -> String {
    e.downcast_ref::<UsageError>()
        .map(|u| u.0.clone())
        .unwrap_or_else(|| panic!("a usage error, got: {e:#}"))
}

#[test]
fn the_file_written_beside_the_report_is_the_one_expanded() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("rep");
    let known = kvbench_papers::find("sadat2019").expect("paper B");
    let stand = Stand::default();
    let p = prepare(known, 0.001, &Overrides::default(), &out, &stand).expect("prepared");
    let written = std::fs::read_to_string(out.join("experiment.toml")).expect("written");
    assert_eq!(written, p.file);
    assert!(
        out.join("figures").is_dir(),
        "the report's directory is made"
    );
    // Each cell's flags resolved once, its iterations copies of it.
    assert_eq!(
        p.experiment.cells.len(),
        stand.seen.borrow().len() * p.experiment.iterations as usize
    );
    assert!(!p.experiment.cells.is_empty());
    // 2,500 records: 0.001 of the paper's 2,500,000.
    assert!(
        stand
            .seen
            .borrow()
            .iter()
            .all(|args| args.iter().any(|a| a.contains("2500"))),
        "{:?}",
        stand.seen.borrow().first()
    );
    let loads = p.loads();
    assert!(!loads.is_empty());
    let mut unique = loads.clone();
    unique.dedup();
    assert_eq!(unique, loads, "each workload's count once");
    assert!(!p.paper.findings.is_empty());
    assert!(p.paper.substitutions.iter().any(|s| s.contains("scale")));
}

#[test]
fn bad_input_is_a_usage_error_before_anything_runs() {
    let dir = tempfile::tempdir().expect("tempdir");
    let known = kvbench_papers::find("anthony2016").expect("paper A");
    let e = prepare(
        known,
        0.001,
        &Overrides::default(),
        &dir.path().join("a"),
        &Refuse,
    )
    .err()
    .expect("refused");
    assert!(
        usage_text(&e).contains("--pipeline 0: refused here"),
        "{e:#}"
    );
    let clients = Overrides {
        clients: Some("1,x".into()),
        ..Overrides::default()
    };
    let e = prepare(
        known,
        0.001,
        &clients,
        &dir.path().join("b"),
        &Stand::default(),
    )
    .err()
    .expect("bad --clients");
    assert!(usage_text(&e).contains("--clients"), "{e:#}");
}

/// Paper D checks where its report goes before it builds a graph.
#[test]
fn paper_d_refuses_an_unwritable_report_directory_first() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("file"), b"x").expect("write");
    let e = kvbench_papers::analytics::check(&dir.path().join("file/rep"))
        .expect_err("a file is in the way");
    assert!(usage_text(&e).starts_with("--out "), "{e:#}");
}
