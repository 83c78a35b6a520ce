//! Seeded synthetic graphs shaped like the paper's datasets.
//!
//! R-MAT (Chakrabarti, Zhan and Faloutsos, 2004) with Graph500's quadrant
//! probabilities (a = 0.57, b = c = 0.19, d = 0.05): each edge picks one
//! quadrant of the adjacency matrix per bit of the node ids, which gives the
//! power-law in- and out-degrees of web and social graphs. Node ids are then
//! shuffled (seeded), so the high-degree nodes are not all at the low ids,
//! where they would fall into one partition of every driver.

use crate::graph::Graph;
use rand_core::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// Graph500's R-MAT probabilities for the first three quadrants (the fourth
/// takes the rest).
const A: f64 = 0.57;
const B: f64 = 0.19;
const C: f64 = 0.19;

/// A dataset's size, to generate a graph of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    /// `google` or `pokec`.
    pub name: &'static str,
    /// Nodes of the real dataset.
    pub nodes: u32,
    /// Edges of the real dataset.
    pub edges: u64,
}

/// The Google web graph (SNAP web-Google): 875,713 nodes, 5,105,039 edges.
pub const GOOGLE: Shape = Shape {
    name: "google",
    nodes: 875_713,
    edges: 5_105_039,
};

/// The Pokec social network (SNAP soc-Pokec): 1,632,803 nodes, 30,622,564 edges.
pub const POKEC: Shape = Shape {
    name: "pokec",
    nodes: 1_632_803,
    edges: 30_622_564,
};

/// The shape named `name`, if any.
pub fn shape(name: &str) -> Option<Shape> {
    [GOOGLE, POKEC].into_iter().find(|s| s.name == name)
}

impl Shape {
    /// Nodes and edges times `scale` (each at least 1 node and 0 edges,
    /// rounded to the nearest whole number).
    pub fn scaled(&self, scale: f64) -> (u32, u64) {
        let nodes = (f64::from(self.nodes) * scale).round().max(1.0);
        let edges = (self.edges as f64 * scale).round().max(0.0);
        (nodes.min(f64::from(u32::MAX)) as u32, edges as u64)
    }
}

/// Why a graph cannot be generated.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum RmatError {
    /// More distinct edges than the nodes can have (without self-loops,
    /// each of n nodes has at most n - 1 targets), or more than half of that,
    /// where drawing distinct edges at random stops converging.
    #[error("{edges} edges over {nodes} nodes: at most {max} distinct edges can be drawn")]
    TooDense {
        /// Nodes asked for.
        nodes: u32,
        /// Edges asked for.
        edges: u64,
        /// The most that can be drawn.
        max: u64,
    },
}

/// A graph of exactly `nodes` nodes and `edges` distinct edges, no
/// self-loops (as the SNAP datasets), the same for the same seed.
///
/// # Errors
/// [`RmatError::TooDense`] when the edges cannot be drawn.
pub fn rmat(nodes: u32, edges: u64, seed: u64) -> Result<Graph, RmatError> {
    let n = u64::from(nodes);
    let max = n * n.saturating_sub(1) / 2;
    if edges > max {
        return Err(RmatError::TooDense { nodes, edges, max });
    }
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let bits = 64 - (n.max(2) - 1).leading_zeros();
    // Packed (source << 32 | target), drawn in rounds: draw what is
    // missing, then sort and drop repeats, until there are enough.
    let mut packed: Vec<u64> = Vec::with_capacity(edges as usize);
    while (packed.len() as u64) < edges {
        let missing = edges - packed.len() as u64;
        for _ in 0..missing {
            loop {
                let (s, t) = draw(&mut rng, bits);
                if s < n && t < n && s != t {
                    packed.push(s << 32 | t);
                    break;
                }
            }
        }
        packed.sort_unstable();
        packed.dedup();
    }
    let perm = shuffled(nodes, &mut rng);
    let list: Vec<(u32, u32)> = packed
        .iter()
        .map(|&p| (perm[(p >> 32) as usize], perm[(p & 0xffff_ffff) as usize]))
        .collect();
    Ok(Graph::from_edges(nodes, &list))
}

/// One R-MAT edge over ids of `bits` bits.
fn draw(rng: &mut Xoshiro256PlusPlus, bits: u32) -> (u64, u64) {
    let (mut s, mut t) = (0u64, 0u64);
    for _ in 0..bits {
        let r = unit(rng);
        let (sb, tb) = if r < A {
            (0, 0)
        } else if r < A + B {
            (0, 1)
        } else if r < A + B + C {
            (1, 0)
        } else {
            (1, 1)
        };
        s = s << 1 | sb;
        t = t << 1 | tb;
    }
    (s, t)
}

/// A uniform number in [0, 1) from 53 random bits.
fn unit(rng: &mut Xoshiro256PlusPlus) -> f64 {
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// `0..n` in a seeded random order (Fisher-Yates).
fn shuffled(n: u32, rng: &mut Xoshiro256PlusPlus) -> Vec<u32> {
    let mut p: Vec<u32> = (0..n).collect();
    for i in (1..p.len()).rev() {
        let j = (rng.next_u64() % (i as u64 + 1)) as usize;
        p.swap(i, j);
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_counts_no_self_loops_no_repeats_and_the_same_for_a_seed() {
        let g = rmat(10_000, 50_000, 7).expect("graph");
        assert_eq!((g.nodes(), g.edges()), (10_000, 50_000));
        let mut seen = std::collections::HashSet::new();
        for (s, t) in g.edge_list() {
            assert_ne!(s, t);
            assert!(seen.insert((s, t)), "repeat {s} -> {t}");
        }
        assert_eq!(g, rmat(10_000, 50_000, 7).expect("graph"));
        assert_ne!(g, rmat(10_000, 50_000, 8).expect("graph"));
    }

    #[test]
    fn degrees_follow_a_power_law_not_a_uniform_spread() {
        let g = rmat(1 << 14, 1 << 17, 1).expect("graph");
        let mut indeg = vec![0u32; g.nodes() as usize];
        for (_, t) in g.edge_list() {
            indeg[t as usize] += 1;
        }
        indeg.sort_unstable_by(|a, b| b.cmp(a));
        // The busiest 1% of nodes receive far more than 1% of the edges (a
        // uniform graph of mean degree 8 would give them about 2.5%).
        let top: u64 = indeg[..indeg.len() / 100]
            .iter()
            .map(|&d| u64::from(d))
            .sum();
        assert!(
            top as f64 > 0.15 * g.edges() as f64,
            "top 1% get {top} of {}",
            g.edges()
        );
    }

    #[test]
    fn shapes_scale_and_too_dense_is_refused() {
        assert_eq!(shape("google"), Some(GOOGLE));
        assert_eq!(GOOGLE.scaled(0.01), (8_757, 51_050));
        assert!(matches!(
            rmat(4, 7, 1),
            Err(RmatError::TooDense { max: 6, .. })
        ));
    }
}
