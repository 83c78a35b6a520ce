"""Functions that run inside Spark's Python workers.

They are shipped by value (``cloudpickle.register_pickle_by_value``, see
:mod:`kvbench_spark.session`), so the workers need only pyspark, not this
package: that holds on a real cluster too. Keep them free of imports from
the rest of the package.
"""

from __future__ import annotations

# Key of the records that carry a dangling node's rank in the contributions
# RDD; node ids are never negative.
DANGLING = -1
# Value marking "this node exists" in the adjacency build (edge targets are
# never negative).
NO_EDGE = -1


def parse_edge(line: str):
    """One text line to [] (comment or blank) or [(src, dst)].

    The file was checked by kvbench_spark.edges.scan first; this parses it
    the same way (str.split on whitespace, '#' comments)."""
    fields = line.split()
    if not fields or fields[0].startswith("#"):
        return []
    return [(int(fields[0]), int(fields[1]))]


def node_marker(u: int):
    return (u, NO_EDGE)


def adjacency_create(v: int) -> list:
    return [v] if v != NO_EDGE else []


def adjacency_add(acc: list, v: int) -> list:
    if v != NO_EDGE:
        acc.append(v)
    return acc


def adjacency_merge(a: list, b: list) -> list:
    a.extend(b)
    return a


def adjacency_stats(partition):
    """(nodes, edges) of one partition of the adjacency RDD."""
    nodes = edges = 0
    for _, neighbours in partition:
        nodes += 1
        edges += len(neighbours)
    yield (nodes, edges)


def contributions(item):
    """The map of one iteration, over (node, (neighbours, rank)).

    Emits (v, r(u)/outdeg(u)) for every edge u->v (duplicates as often as
    they occur), (u, 0.0) so that every node has a key after the reduce (x +
    0.0 == x, so it changes no sum), and, for a dangling node, (DANGLING,
    r(u))."""
    u, (neighbours, rank) = item
    yield (u, 0.0)
    if neighbours:
        share = rank / len(neighbours)
        for v in neighbours:
            yield (v, share)
    else:
        yield (DANGLING, rank)


def contribution_stats(partition):
    """(records, sum of the dangling ranks) of one partition of the
    contributions RDD, the dangling ranks added in the partition's order."""
    records = 0
    dangling = 0.0
    for key, value in partition:
        records += 1
        if key == DANGLING:
            dangling += value
    yield (records, dangling)


def is_node(kv) -> bool:
    return kv[0] != DANGLING


def new_rank(damping: float, base: float):
    """r'(v) = base + d * s(v), with base = (1-d)/N + d*D/N computed once
    per iteration in the driver (the Rust reference's order)."""

    def rank(s: float) -> float:
        return base + damping * s

    return rank


def uniform(value: float):
    def rank(_neighbours) -> float:
        return value

    return rank


def degree_of(kv):
    return (kv[0], 1)


def no_degree(u: int):
    return (u, 0)
