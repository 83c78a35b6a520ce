//! The cluster case end to end on a real 3-master Redis Cluster and one
//! Redis, both started by the bench: its in-window ratio and interval, and
//! `--split`'s whole-process figures (user and system time apart), which
//! must be the ones the lines above them print.

use std::process::Command;

/// The numbers in the line starting with `prefix`, after it.
fn numbers(out: &str, prefix: &str) -> Vec<f64> {
    let line = out
        .lines()
        .find(|l| l.starts_with(prefix))
        .unwrap_or_else(|| panic!("no line `{prefix}` in:\n{out}"));
    line[prefix.len()..]
        .split_whitespace()
        .filter_map(|w| w.trim_end_matches(',').parse().ok())
        .collect()
}

#[test]
fn the_cluster_case_prints_its_ratio_and_where_the_extra_cpu_is() {
    let out = Command::new(env!("CARGO_BIN_EXE_kvbench-efficiency"))
        .args(["cluster", "--repeat", "2", "--ops", "20000", "--split"])
        .output()
        .expect("run kvbench-efficiency");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let ratio = numbers(&stdout, "case cluster redis ratio ");
    assert!(ratio.len() == 1 && ratio[0] > 0.0, "{stdout}");
    let iv = numbers(&stdout, "case cluster redis interval ");
    assert!(iv.len() == 2 && iv[0] > 0.0 && iv[0] <= iv[1], "{stdout}");
    // `whole ratio R user U system S`: the words between are skipped.
    let whole = numbers(&stdout, "case cluster redis whole ratio ");
    assert_eq!(whole.len(), 3, "{stdout}");
    assert!(whole.iter().all(|x| x.is_finite() && *x > 0.0), "{stdout}");
    // The ratios are those of the medians printed above them.
    // `(medians of 2 and 2 repetitions): cluster user U system S, single
    // node user U system S`: every repetition of each topology counted.
    let medians = numbers(
        &stdout,
        "kvbench's whole process, CPU s per 1M ops (medians of ",
    );
    let [n_cluster, n_single, cu, cs, su, ss] = medians[..] else {
        panic!("two counts and four medians expected: {stdout}");
    };
    assert_eq!((n_cluster, n_single), (2.0, 2.0), "{stdout}");
    // The topologies alternate: the cluster first, then the single node.
    let firsts: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("-- repetition "))
        .collect();
    assert_eq!(
        firsts,
        [
            "-- repetition 1: cluster --",
            "-- repetition 1: single --",
            "-- repetition 2: single --",
            "-- repetition 2: cluster --"
        ],
        "{stdout}"
    );
    // The medians are printed to three decimals, the ratios from the
    // unrounded ones: 1% covers the rounding of figures above 0.1.
    let close = |a: f64, b: f64| (a - b).abs() <= 0.01 * b;
    assert!(close(whole[0], (cu + cs) / (su + ss)), "{stdout}");
    assert!(
        close(whole[1], cu / su) && close(whole[2], cs / ss),
        "{stdout}"
    );
}
