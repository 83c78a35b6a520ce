//! A directed graph as compressed sparse rows.

/// Nodes `0..nodes()`, each with its out-neighbours in one slice. Duplicate
/// edges are kept (they count twice in the out-degree, as in an edge list
/// that repeats a line); self-loops are ordinary edges.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Graph {
    /// `offsets[v]..offsets[v + 1]` indexes `targets` for node `v`.
    offsets: Vec<u64>,
    targets: Vec<u32>,
}

impl Graph {
    /// The graph of `edges` (source, target) over `nodes` nodes; every id
    /// must be below `nodes` (the callers check it).
    pub fn from_edges(nodes: u32, edges: &[(u32, u32)]) -> Graph {
        let n = nodes as usize;
        let mut offsets = vec![0u64; n + 1];
        for &(s, _) in edges {
            offsets[s as usize + 1] += 1;
        }
        for i in 0..n {
            offsets[i + 1] += offsets[i];
        }
        let mut fill = offsets.clone();
        let mut targets = vec![0u32; edges.len()];
        for &(s, t) in edges {
            let at = &mut fill[s as usize];
            targets[*at as usize] = t;
            *at += 1;
        }
        // Neighbours in ascending order: the same graph always has the
        // same rows, whatever order its edges came in.
        for v in 0..n {
            targets[offsets[v] as usize..offsets[v + 1] as usize].sort_unstable();
        }
        Graph { offsets, targets }
    }

    /// Number of nodes.
    pub fn nodes(&self) -> u32 {
        (self.offsets.len() - 1) as u32
    }

    /// Number of edges.
    pub fn edges(&self) -> u64 {
        self.targets.len() as u64
    }

    /// The out-neighbours of `v`.
    pub fn neighbours(&self, v: u32) -> &[u32] {
        let v = v as usize;
        &self.targets[self.offsets[v] as usize..self.offsets[v + 1] as usize]
    }

    /// Nodes with no out-edge (their rank is spread over every node).
    pub fn dangling(&self) -> u32 {
        (0..self.nodes())
            .filter(|&v| self.neighbours(v).is_empty())
            .count() as u32
    }

    /// Every edge, in node order.
    pub fn edge_list(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        (0..self.nodes()).flat_map(move |v| self.neighbours(v).iter().map(move |&t| (v, t)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_hold_each_nodes_neighbours_sorted_with_duplicates() {
        let g = Graph::from_edges(4, &[(2, 1), (0, 3), (0, 1), (2, 1), (3, 3)]);
        assert_eq!(g.nodes(), 4);
        assert_eq!(g.edges(), 5);
        assert_eq!(g.neighbours(0), &[1, 3]);
        assert_eq!(g.neighbours(1), &[] as &[u32]);
        assert_eq!(g.neighbours(2), &[1, 1]);
        assert_eq!(g.neighbours(3), &[3]);
        assert_eq!(g.dangling(), 1);
        assert_eq!(g.edge_list().count(), 5);
    }
}
