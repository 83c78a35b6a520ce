"""Test graphs: small hand-checkable ones and the seeded random one."""

from kvbench_spark import edges

# name: (nodes, edges). Each is checked by hand for one iteration in
# test_reference.py (d = 0.85).
SMALL = {
    # 0 -> 1 -> 2; node 2 dangling.
    "chain": (3, [(0, 1), (1, 2)]),
    # 0 -> 1 -> 2 -> 0: the uniform ranks are a fixed point.
    "cycle": (3, [(0, 1), (1, 2), (2, 0)]),
    # centre 0 -> leaves 1..4, the leaves dangling.
    "star": (5, [(0, 1), (0, 2), (0, 3), (0, 4)]),
    # 2 dangling (edges in, none out), 4 isolated (no edge at all).
    "dangling_isolated": (5, [(0, 1), (0, 2), (1, 2), (3, 0)]),
    # 0 -> 1 twice (counts twice), a self-loop 1 -> 1, no dangling node.
    "duplicates_self_loop": (3, [(0, 1), (0, 1), (0, 2), (1, 2), (1, 1), (2, 0)]),
}

# The 10,000-node random graph: 50,000 edges drawn uniformly, seeded
# (duplicates and self-loops kept; about 67 nodes end up dangling).
RANDOM_NODES = 10_000
RANDOM_EDGES = 50_000
RANDOM_SEED = 2014


def write_edges(path, nodes, pairs, comment="test graph"):
    edges.write(str(path), nodes, list(pairs), comment=comment)
    return str(path)


def relative_errors(got, want):
    return [abs(g - w) / abs(w) for g, w in zip(got, want, strict=True)]
