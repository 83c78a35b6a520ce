//! Key-popularity profiles against YCSB core 0.17.0's CoreWorkload.nextKeynum
//! (vectors in tests/ycsb-vectors/data/distributions.json): 10^6 draws over
//! 10^5 records, compared rank by rank, since YCSB's RNG cannot be seeded.

use kvbench_workload::generator::{
    AcknowledgedCounterGenerator, KeyChooser, KeyDistribution, KeySpace, ScrambledZipfianGenerator,
};
use rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;
use serde_json::Value;
use std::sync::Arc;

const RECORDS: u64 = 100_000;
const DRAWS: u64 = 1_000_000;
const SEED: u64 = 0x6b76_6265_6e63_6821;
/// The acceptance bound: 0.5 percentage points.
const TOLERANCE: f64 = 0.005;

fn vectors() -> Value {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/ycsb-vectors/data/distributions.json"
    );
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn floats(v: &Value) -> Vec<f64> {
    v.as_array()
        .expect("array")
        .iter()
        .map(|x| x.as_f64().expect("number"))
        .collect()
}

/// The statistics the Java side writes, computed the same way.
struct Profile {
    top_ranks: Vec<f64>,
    top_1pct: f64,
    top_10pct: f64,
    deciles: Vec<f64>,
    top_keys: Vec<u64>,
}

fn chooser(name: &str, space: &KeySpace) -> KeyChooser {
    let dist: KeyDistribution = name.parse().expect("distribution name");
    let inserts = Arc::new(AcknowledgedCounterGenerator::new(space.record_count));
    KeyChooser::new(&dist, space, inserts).expect("chooser")
}

fn space() -> KeySpace {
    KeySpace {
        operation_count: DRAWS,
        ..KeySpace::new(RECORDS)
    }
}

fn profile(mut chooser: KeyChooser, seed: u64) -> Profile {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut counts = vec![0u32; RECORDS as usize];
    let mut deciles = vec![0u64; 10];
    for _ in 0..DRAWS {
        let k = chooser.next_keynum(&mut rng);
        assert!(k < RECORDS, "drew {k}");
        counts[k as usize] += 1;
        deciles[(k * 10 / RECORDS) as usize] += 1;
    }
    let mut ranked: Vec<(u32, u64)> = counts
        .iter()
        .enumerate()
        .filter(|(_, &c)| c > 0)
        .map(|(k, &c)| (c, k as u64))
        .collect();
    ranked.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let share = |n: u64| n as f64 / DRAWS as f64;
    let top_sum = |n: usize| share(ranked.iter().take(n).map(|&(c, _)| u64::from(c)).sum());
    Profile {
        top_ranks: ranked
            .iter()
            .take(100)
            .map(|&(c, _)| share(c.into()))
            .collect(),
        top_1pct: top_sum(RECORDS as usize / 100),
        top_10pct: top_sum(RECORDS as usize / 10),
        deciles: deciles.into_iter().map(share).collect(),
        top_keys: ranked.iter().take(20).map(|&(_, k)| k).collect(),
    }
}

/// Compares one distribution with YCSB's and returns the largest difference
/// in each statistic: (top-100 ranks, top 1% / 10%, key-space deciles).
fn compare(name: &str) -> (f64, f64, f64) {
    let v = vectors();
    assert_eq!(v["records"].as_u64(), Some(RECORDS));
    assert_eq!(v["draws"].as_u64(), Some(DRAWS));
    let want = &v["distributions"][name];
    let got = profile(chooser(name, &space()), SEED);

    let ranks = floats(&want["top_ranks"]);
    assert_eq!(ranks.len(), 100);
    let max_diff = |a: &[f64], b: &[f64]| {
        a.iter()
            .zip(b)
            .map(|(x, y)| (x - y).abs())
            .fold(0.0, f64::max)
    };
    let rank_diff = max_diff(&got.top_ranks, &ranks);
    let top_diff = (got.top_1pct - want["top_1pct"].as_f64().expect("top_1pct"))
        .abs()
        .max((got.top_10pct - want["top_10pct"].as_f64().expect("top_10pct")).abs());
    let decile_diff = max_diff(&got.deciles, &floats(&want["deciles"]));
    eprintln!(
        "{name}: max |diff| in pp: top-100 ranks {:.4}, top 1%/10% {:.4}, deciles {:.4}",
        rank_diff * 100.0,
        top_diff * 100.0,
        decile_diff * 100.0
    );
    assert!(
        rank_diff < TOLERANCE,
        "{name}: rank shares differ by {rank_diff}"
    );
    assert!(
        top_diff < TOLERANCE,
        "{name}: top 1%/10% shares differ by {top_diff}"
    );
    assert!(
        decile_diff < TOLERANCE,
        "{name}: decile shares differ by {decile_diff}"
    );
    (rank_diff, top_diff, decile_diff)
}

#[test]
fn zipfian_matches_ycsb() {
    compare("zipfian");
}

#[test]
fn zipfian_hot_keys_are_ycsbs_keys() {
    // The scrambled Zipfian's hot keys are fixed by the hash, not the RNG, so
    // wherever YCSB's ranks are clearly separated the keys must agree.
    let v = vectors();
    let want = &v["distributions"]["zipfian"];
    let keys: Vec<u64> = want["top_keys"]
        .as_array()
        .expect("top_keys")
        .iter()
        .map(|k| k.as_u64().expect("key"))
        .collect();
    let ranks = floats(&want["top_ranks"]);
    let got = profile(chooser("zipfian", &space()), SEED);
    let mut checked = 0;
    for i in 0..keys.len() - 1 {
        let separated = |j: usize| j == 0 || ranks[j - 1] - ranks[j] > 0.001;
        if separated(i) && ranks[i] - ranks[i + 1] > 0.001 {
            assert_eq!(got.top_keys[i], keys[i], "rank {i}");
            checked += 1;
        }
    }
    assert!(checked >= 3, "only {checked} ranks were clearly separated");
}

#[test]
fn latest_matches_ycsb() {
    compare("latest");
}

#[test]
fn hotspot_matches_ycsb() {
    compare("hotspot");
}

#[test]
fn uniform_matches_ycsb() {
    compare("uniform");
}

#[test]
fn exponential_matches_ycsb() {
    compare("exponential");
}

fn sequence(name: &str, seed: u64) -> Vec<u64> {
    let mut c = chooser(name, &space());
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    (0..1000).map(|_| c.next_keynum(&mut rng)).collect()
}

#[test]
fn same_seed_same_sequence_different_seed_different_sequence() {
    for name in ["zipfian", "latest", "hotspot", "uniform", "exponential"] {
        assert_eq!(sequence(name, 1), sequence(name, 1), "{name}");
        assert_ne!(sequence(name, 1), sequence(name, 2), "{name}");
    }
}

#[test]
fn a_larger_zipfian_constant_skews_more() {
    let mut top1 = Vec::new();
    for theta in [0.5, 0.8, 0.99, 0.999] {
        let space = KeySpace {
            zipfian_constant: theta,
            ..space()
        };
        for name in ["zipfian", "latest"] {
            let p = profile(chooser(name, &space), SEED);
            top1.push((name, theta, p.top_1pct, p.top_ranks[0]));
        }
    }
    for name in ["zipfian", "latest"] {
        let row: Vec<_> = top1.iter().filter(|r| r.0 == name).collect();
        for w in row.windows(2) {
            assert!(w[0].2 < w[1].2, "{name}: top 1% {w:?}");
            assert!(w[0].3 < w[1].3, "{name}: top key {w:?}");
        }
    }
    assert!(ScrambledZipfianGenerator::with_constant(0, 99, 1.0).is_err());
}
