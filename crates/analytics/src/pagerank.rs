//! The reference PageRank, plain Rust over the graph's rows, and the check
//! every other implementation's ranks must pass.
//!
//! The definition (every implementation computes exactly this): with `n`
//! nodes and damping `d`, every rank starts at `1/n`; each iteration sets
//!
//! ```text
//! r'(v) = (1 - d) / n + d * ( sum over edges u -> v of r(u) / outdeg(u)  +  D / n )
//! ```
//!
//! where `D` is the sum of the ranks of the dangling nodes (no out-edge):
//! their rank is spread over every node, so the ranks always sum to 1.
//! (Spark's example PageRank, which paper D ran, drops that rank and does
//! not normalise; the definition here is the textbook one, and the Spark
//! implementation of this workload computes it too.)

use crate::graph::Graph;
use std::time::{Duration, Instant};

/// Ranks in node order, and how long each iteration took.
#[derive(Debug, Clone)]
pub struct PageRank {
    /// The rank of node `v` at index `v`.
    pub ranks: Vec<f64>,
    /// Wall time of each iteration (monotonic clock).
    pub iterations: Vec<Duration>,
}

/// `iterations` iterations of PageRank over `g` with damping `damping`.
pub fn pagerank(g: &Graph, iterations: u32, damping: f64) -> PageRank {
    let n = g.nodes() as usize;
    if n == 0 {
        return PageRank {
            ranks: Vec::new(),
            iterations: Vec::new(),
        };
    }
    let nf = n as f64;
    let mut ranks = vec![1.0 / nf; n];
    let mut next = vec![0.0f64; n];
    let mut times = Vec::with_capacity(iterations as usize);
    for _ in 0..iterations {
        let started = Instant::now();
        next.iter_mut().for_each(|x| *x = 0.0);
        let mut dangling = 0.0;
        for (u, &r) in ranks.iter().enumerate() {
            let out = g.neighbours(u as u32);
            if out.is_empty() {
                dangling += r;
                continue;
            }
            let share = r / out.len() as f64;
            for &v in out {
                next[v as usize] += share;
            }
        }
        let base = (1.0 - damping) / nf + damping * dangling / nf;
        for x in next.iter_mut() {
            *x = base + damping * *x;
        }
        std::mem::swap(&mut ranks, &mut next);
        times.push(started.elapsed());
    }
    PageRank {
        ranks,
        iterations: times,
    }
}

/// The first node whose rank differs from the reference's.
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
#[error("node {node}: rank {got:e}, the reference's {reference:e} (relative error {relative:.2e})")]
pub struct Disagreement {
    /// The node.
    pub node: u32,
    /// The reference's rank.
    pub reference: f64,
    /// The implementation's.
    pub got: f64,
    /// `|got - reference| / reference`.
    pub relative: f64,
}

/// Whether `got` matches `reference` node by node within `tolerance`
/// (relative error); a missing or extra node, or a rank that is not a
/// number, is a disagreement at the first such node.
///
/// # Errors
/// The first node that differs.
pub fn agree(reference: &[f64], got: &[f64], tolerance: f64) -> Result<(), Disagreement> {
    for (i, &want) in reference.iter().enumerate() {
        let have = got.get(i).copied().unwrap_or(f64::NAN);
        let relative = ((have - want) / want).abs();
        if relative.is_nan() || relative > tolerance {
            return Err(Disagreement {
                node: i as u32,
                reference: want,
                got: have,
                relative,
            });
        }
    }
    if got.len() > reference.len() {
        return Err(Disagreement {
            node: reference.len() as u32,
            reference: f64::NAN,
            got: got[reference.len()],
            relative: f64::INFINITY,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cycle_keeps_uniform_ranks() {
        let g = Graph::from_edges(3, &[(0, 1), (1, 2), (2, 0)]);
        let pr = pagerank(&g, 10, 0.85);
        for r in &pr.ranks {
            assert!((r - 1.0 / 3.0).abs() < 1e-15, "{r}");
        }
        assert_eq!(pr.iterations.len(), 10);
    }

    #[test]
    fn dangling_rank_is_spread_and_ranks_sum_to_one() {
        // 0 -> 1, 0 -> 2, 1 -> 2; node 2 is dangling, node 3 isolated.
        let g = Graph::from_edges(4, &[(0, 1), (0, 2), (1, 2)]);
        let pr = pagerank(&g, 1, 0.85);
        let (n, d) = (4.0, 0.85);
        // After one iteration from 1/4 each: dangling mass is r(2) + r(3) = 1/2.
        let base = (1.0 - d) / n + d * 0.5 / n;
        let want = [base, base + d * 0.125, base + d * (0.125 + 0.25), base];
        for (got, want) in pr.ranks.iter().zip(want) {
            assert!((got - want).abs() < 1e-15, "{got} vs {want}");
        }
        let pr = pagerank(&g, 30, 0.85);
        assert!((pr.ranks.iter().sum::<f64>() - 1.0).abs() < 1e-12);
    }

    #[test]
    fn agreement_names_the_first_node_that_differs() {
        let reference = [0.25, 0.25, 0.5];
        assert!(agree(&reference, &[0.25, 0.250_000_000_1, 0.5], 1e-6).is_ok());
        let e = agree(&reference, &[0.25, 0.26, 0.6], 1e-6).expect_err("differs");
        assert_eq!(e.node, 1);
        assert!(e.to_string().starts_with("node 1: rank 2.6e-1"), "{e}");
        assert_eq!(
            agree(&reference, &[0.25, 0.25], 1e-6)
                .expect_err("short")
                .node,
            2
        );
        assert_eq!(
            agree(&reference, &[0.25, 0.25, 0.5, 0.1], 1e-6)
                .expect_err("long")
                .node,
            3
        );
        assert_eq!(
            agree(&reference, &[f64::NAN, 0.25, 0.5], 1e-6)
                .expect_err("nan")
                .node,
            0
        );
    }
}
