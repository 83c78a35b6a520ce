//! Blocks: the order in which an experiment's cells run, so that every
//! verdict compares alternatives that met the same machine.
//!
//! On a shared VM the machine's slow states last minutes (docs/experiments.md,
//! "Durations and iterations"), far longer than a cell. Run system by
//! system, two systems at one place are minutes apart and each lands in
//! whatever state the machine was in then; their ratio carries that noise.
//! So an iteration is cut into blocks: one per comparison place (the
//! settings minus what picks the alternative: system, deployment, server
//! binary and arguments), each running its alternatives back to back in a
//! random order (Randomized Multiple Interleaved Trials, Abedi & Brecht,
//! ICPE 2017). The order is drawn from the experiment's seed, the
//! iteration and the place, so the same file or command runs the same
//! order again; a new random order each block keeps any "who runs first"
//! effect out of the mean ratio. Servers are kept between blocks as the
//! reload policy allows (`run`'s pool of kept deployments).

use crate::cells::Cell;
use kvbench_run::reuse::Reload;
use kvbench_run::settings::RunSettings;
use rand_core::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// What makes two cells alternatives of one place: everything but what
/// chooses the system and how it is deployed (a 3-node Redis Cluster and
/// a 3-server Memcached pool stand at the same place, as in the papers).
pub fn place(s: &RunSettings) -> String {
    let nodes = if s.target.is_some() { 0 } else { s.nodes };
    format!(
        "{}|{:?}|{}|{}|{:?}|{}|{:?}|{:?}|{}|{:?}",
        s.spec.name,
        s.properties,
        s.clients,
        s.pipeline,
        s.rate.map(|r| r.ops_per_s.to_bits()),
        nodes,
        s.window,
        s.warmup,
        s.spec.record_count,
        s.companion
            .as_ref()
            .map(|c| (&c.name, &c.properties, c.clients, c.pipeline)),
    )
}

/// `cells` (iterations outermost, as expanded) put in block order: within
/// each iteration, places in the order they first appear, and each
/// place's alternatives shuffled by a generator seeded from `seed`, the
/// iteration and the place's rank. Indexes are renumbered.
pub fn arrange(cells: Vec<Cell>, seed: u64) -> Vec<Cell> {
    let mut out: Vec<Cell> = Vec::with_capacity(cells.len());
    let mut iterations: Vec<(u32, Vec<Cell>)> = Vec::new();
    for c in cells {
        match iterations.last_mut() {
            Some((it, v)) if *it == c.iteration => v.push(c),
            _ => iterations.push((c.iteration, vec![c])),
        }
    }
    for (iteration, cells) in iterations {
        let mut places: Vec<(String, Vec<Cell>)> = Vec::new();
        for c in cells {
            let p = place(&c.settings);
            match places.iter_mut().find(|(q, _)| *q == p) {
                Some((_, v)) => v.push(c),
                None => places.push((p, vec![c])),
            }
        }
        for (rank, (_, mut group)) in places.into_iter().enumerate() {
            shuffle(&mut group, block_seed(seed, iteration, rank as u64));
            out.extend(group);
        }
    }
    for (i, c) in out.iter_mut().enumerate() {
        c.index = i as u32;
    }
    out
}

/// One generator per block, independent of every other block's: the
/// workload's seed mixer, with the place's rank as the purpose.
fn block_seed(seed: u64, iteration: u32, rank: u64) -> u64 {
    kvbench_workload::purpose_seed(seed ^ (u64::from(iteration) << 40), rank)
}

/// Fisher-Yates.
fn shuffle<T>(v: &mut [T], seed: u64) {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    for i in (1..v.len()).rev() {
        let j = (rng.next_u64() % (i as u64 + 1)) as usize;
        v.swap(i, j);
    }
}

/// `cells` as [`arrange`] put them when the deployments they keep
/// (`reload`) fit in memory together; otherwise deployment by deployment,
/// each one's cells together and still in block order, with why.
///
/// Blocks interleave systems, so an experiment that keeps its servers
/// holds one loaded deployment per alternative at once. When those do not
/// fit in `available` bytes (paper A's full scale: three servers of about
/// 9.5 GB on 24 GB), interleaving would mean a reload at every cell, or
/// the kernel's OOM killer choosing a server; one deployment at a time is
/// what the papers did. Verdicts then compare cells run minutes apart, and
/// the note says so.
pub fn fit_in_memory(
    cells: Vec<Cell>,
    reload: Reload,
    available: Option<u64>,
) -> (Vec<Cell>, Option<String>) {
    let Some(available) = available else {
        return (cells, None);
    };
    let keys: Vec<Option<String>> = cells
        .iter()
        .map(|c| kvbench_run::reuse::key(&c.settings, reload))
        .collect();
    let mut kept: Vec<(&String, u64)> = Vec::new();
    for (c, key) in cells.iter().zip(&keys) {
        let Some(key) = key else { continue };
        let bytes = kvbench_run::memory::estimate(&c.settings).server;
        match kept.iter_mut().find(|(k, _)| *k == key) {
            Some((_, b)) => *b = (*b).max(bytes),
            None => kept.push((key, bytes)),
        }
    }
    let need: u64 = kept.iter().map(|(_, b)| b).sum();
    if kept.len() < 2 || need <= available {
        return (cells, None);
    }
    let note = format!(
        "cells run deployment by deployment, not in interleaved blocks: the {} loaded deployments the blocks would keep at once need about {:.1} GiB, and {:.1} GiB is available; verdicts compare cells run minutes apart",
        kept.len(),
        need as f64 / (1u64 << 30) as f64,
        available as f64 / (1u64 << 30) as f64
    );
    // Each cell goes with the first cell of its deployment (a cell that
    // keeps nothing stays where it is).
    let mut first: std::collections::HashMap<&String, usize> = std::collections::HashMap::new();
    let rank: Vec<usize> = keys
        .iter()
        .enumerate()
        .map(|(i, key)| match key {
            Some(k) => *first.entry(k).or_insert(i),
            None => i,
        })
        .collect();
    let mut order: Vec<(usize, Cell)> = rank.into_iter().zip(cells).collect();
    order.sort_by_key(|(r, _)| *r);
    let mut out: Vec<Cell> = order.into_iter().map(|(_, c)| c).collect();
    for (i, c) in out.iter_mut().enumerate() {
        c.index = i as u32;
    }
    (out, Some(note))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shuffles_are_permutations_and_vary_between_blocks() {
        let mut orders = std::collections::HashSet::new();
        for rank in 0..40 {
            let mut v: Vec<u32> = (0..3).collect();
            shuffle(&mut v, block_seed(7, 1, rank));
            let mut sorted = v.clone();
            sorted.sort_unstable();
            assert_eq!(sorted, vec![0, 1, 2]);
            orders.insert(v);
        }
        // All six orders of three appear over 40 blocks.
        assert_eq!(orders.len(), 6, "{orders:?}");
        // The same seed, the same order.
        let (mut a, mut b): (Vec<u32>, Vec<u32>) = ((0..5).collect(), (0..5).collect());
        shuffle(&mut a, block_seed(7, 2, 3));
        shuffle(&mut b, block_seed(7, 2, 3));
        assert_eq!(a, b);
    }

    #[test]
    fn each_system_leads_about_as_often_as_the_others() {
        let mut first = [0u32; 3];
        for it in 1..=300 {
            let mut v: Vec<usize> = (0..3).collect();
            shuffle(&mut v, block_seed(2016, it, 0));
            first[v[0]] += 1;
        }
        // 100 expected each; 3 standard deviations is about 25.
        assert!(first.iter().all(|&n| (75..=125).contains(&n)), "{first:?}");
    }
}
