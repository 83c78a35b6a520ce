"""Plain-Python PageRank of the definition in :mod:`kvbench_spark.pagerank`.

No Spark: the tests compare the Spark ranks with these. The floating-point
operations are those of kvbench's Rust reference
(crates/analytics/src/pagerank.rs), in its order: nodes in id order, each
node's out-edges in file order; a node's share r(u)/outdeg(u) is one
division and is added to s(v) (starting from 0.0) for each of its edges;
a dangling node's rank is added to D; then

    base  = (1.0 - d) / N + d * D / N
    r'(v) = base + d * s(v)
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence


def pagerank(
    nodes: int, edges: Sequence[tuple[int, int]], iterations: int, damping: float
) -> list[float]:
    """Ranks of nodes 0..nodes-1 after ``iterations`` iterations."""
    if nodes < 1:
        raise ValueError("nodes must be at least 1")
    rows: list[list[int]] = [[] for _ in range(nodes)]
    for u, v in edges:
        rows[u].append(v)
    ranks = [1.0 / nodes] * nodes
    for _ in range(iterations):
        s = [0.0] * nodes
        dangling = 0.0
        for u, row in enumerate(rows):
            r = ranks[u]
            if not row:
                dangling += r
                continue
            share = r / len(row)
            for v in row:
                s[v] += share
        base = (1.0 - damping) / nodes + damping * dangling / nodes
        ranks = [base + damping * x for x in s]
    return ranks


def pagerank_exact(nodes: int, edges: Iterable[tuple[int, int]], iterations: int, damping):
    """The same definition in exact rational arithmetic (fractions.Fraction;
    pass damping as a Fraction or a string such as "0.85"), for small
    hand-checkable graphs."""
    from fractions import Fraction

    edges = list(edges)
    d = Fraction(damping)
    outdeg = [0] * nodes
    for u, _ in edges:
        outdeg[u] += 1
    ranks = [Fraction(1, nodes)] * nodes
    for _ in range(iterations):
        s = [Fraction(0)] * nodes
        for u, v in edges:
            s[v] += ranks[u] / outdeg[u]
        d_sum = sum((ranks[u] for u in range(nodes) if outdeg[u] == 0), Fraction(0))
        ranks = [(1 - d) / nodes + d * (s[v] + d_sum / nodes) for v in range(nodes)]
    return ranks
