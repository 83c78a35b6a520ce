"""PageRank on Spark RDDs, map and reduce timed apart (kvbench paper D).

Definition (kvbench's Rust reference computes the same):

    The graph has N nodes with dense ids 0..N-1 (a node may have no edges)
    and M directed edges u->v read from the edge list; duplicate edges count
    with multiplicity and self-loops are ordinary edges. outdeg(u) is the
    number of edges leaving u (with multiplicity); u is dangling when
    outdeg(u) = 0. d is the damping factor.

        r0(v) = 1/N                                      for every node v
        r'(v) = (1-d)/N + d * ( sum over edges u->v of r(u)/outdeg(u) + D/N )
        where D = sum of r(u) over the dangling nodes u

    The ranks sum to 1 (up to rounding) after every iteration.

    In float64 it is computed as kvbench's Rust reference
    (crates/analytics/src/pagerank.rs) computes it: each node's share
    r(u)/outdeg(u) is one division, s(v) is the sum of the shares arriving
    at v, and per iteration

        base  = (1.0 - d) / N + d * D / N
        r'(v) = base + d * s(v)

    which is the formula above with D/N and (1-d)/N gathered into base.

Only the order in which s(v) and D are added up differs between this, the
plain-Python reference (kvbench_spark.reference) and the Rust one (both:
nodes in id order, each node's edges in file order): Spark adds within a
partition in the order its tasks meet the records, then across partitions
(the map-side combine of reduceByKey, then the merge after the shuffle),
and D per partition, then over the partitions in partition order. The ranks
then differ in the last bits: relative differences near 1e-16 (5e-16 at
most on the 10,000-node test graph), far inside the 1e-9 the tests allow.

One run on Spark (``run``):

- load: ``textFile`` -> parsed (src, dst) pairs, plus a (u, marker) record
  for every node 0..N-1 (so that nodes without out-edges exist) ->
  ``combineByKey`` into P hash partitions -> the adjacency RDD
  (node, tuple of neighbours), cached and materialized by one job that also
  counts its nodes and edges (checked against the driver's count).
- each iteration, map: ``links.join(ranks)`` gives (node, (neighbours,
  rank)); ``flatMap`` emits the contributions (see
  :func:`kvbench_spark.tasks.contributions`); the contributions RDD is
  persisted and materialized by one job that returns each partition's
  record count and dangling-rank sum, so D = the partitions' sums added in
  partition order.
- each iteration, reduce: ``reduceByKey(add)`` over the contributions
  (without the dangling records) into P partitions, ``mapValues`` to the
  new rank base + d * s(v); persisted and materialized by ``count()``
  (checked = N). Then the contributions and the previous ranks are
  unpersisted.
- the final ranks are collected into the driver in node order.

PySpark's ``join`` is a union and a ``groupByKey``, so unlike Scala's
co-partitioned join it shuffles the adjacency lists and the ranks in every
map stage; that cost is part of map_s.
"""

from __future__ import annotations

import operator
import os
import sys
import time
from array import array

from . import tasks
from .edges import Scan
from .session import JobCounter, cached_memory


def run(
    spark,
    edges_path: str,
    nodes: int,
    scan: Scan,
    iterations: int = 10,
    damping: float = 0.85,
    partitions: int | None = None,
    measure_storage: bool = True,
):
    """Runs PageRank on Spark. ``scan`` is kvbench_spark.edges.scan's result
    for the same file (the edge count to check against).

    Returns (result, ranks): the JSON channel's fields (the CLI adds
    startup_s) and the final ranks as an ``array('d')`` in node order."""
    sc = spark.sparkContext
    p = partitions or sc.defaultParallelism
    n = nodes
    uri = "file://" + os.path.abspath(edges_path)
    jobs = JobCounter(sc, "pagerank")
    actions = 0
    iteration_times = []
    links = ranks = contribs = None
    jobs.start()
    try:
        t_start = time.perf_counter()

        # Load: read, parse and partition the edges into the cached adjacency RDD.
        pairs = sc.textFile(uri, minPartitions=p).flatMap(tasks.parse_edge)
        markers = sc.range(0, n, numSlices=p).map(tasks.node_marker)
        links = (
            pairs.union(markers)
            .combineByKey(
                tasks.adjacency_create, tasks.adjacency_add, tasks.adjacency_merge, numPartitions=p
            )
            .mapValues(tuple)
            .cache()
        )
        stats = links.mapPartitions(tasks.adjacency_stats).collect()
        actions += 1
        got_nodes = sum(s[0] for s in stats)
        got_edges = sum(s[1] for s in stats)
        load_s = time.perf_counter() - t_start
        if got_nodes != n or got_edges != scan.edges:
            raise RuntimeError(
                f"Spark read {got_nodes} nodes and {got_edges} edges from {edges_path}, "
                f"expected {n} and {scan.edges}"
            )

        ranks = links.mapValues(tasks.uniform(1.0 / n))
        for _ in range(iterations):
            # Map: (node, (neighbours, rank)) -> contributions.
            t0 = time.perf_counter()
            contribs = links.join(ranks, numPartitions=p).flatMap(tasks.contributions).persist()
            parts = contribs.mapPartitions(tasks.contribution_stats).collect()
            actions += 1
            dangling = 0.0
            for _records, d_part in parts:
                dangling += d_part
            t1 = time.perf_counter()
            base = (1.0 - damping) / n + damping * dangling / n

            # Reduce: sum the contributions per node, then the new ranks.
            new_ranks = (
                contribs.filter(tasks.is_node)
                .reduceByKey(operator.add, numPartitions=p)
                .mapValues(tasks.new_rank(damping, base))
                .persist()
            )
            counted = new_ranks.count()
            actions += 1
            t2 = time.perf_counter()
            if counted != n:
                raise RuntimeError(f"an iteration produced {counted} ranks, expected {n}")
            contribs.unpersist()
            contribs = None
            if ranks.is_cached:
                ranks.unpersist()
            ranks = new_ranks
            iteration_times.append({"map_s": t1 - t0, "reduce_s": t2 - t1})

        t_collect = time.perf_counter()
        out = array("d", bytes(8 * n))
        seen = 0
        for u, r in ranks.collect():
            out[u] = r
            seen += 1
        actions += 1
        t_end = time.perf_counter()
        if seen != n:
            raise RuntimeError(f"collected {seen} ranks, expected {n}")
        job_count = jobs.stop(at_least=actions)

        if measure_storage:
            if not ranks.is_cached:  # iterations == 0: the ranks were never cached
                storage, note = cached_memory(sc, [links.id()])
            else:
                storage, note = cached_memory(sc, [links.id(), ranks.id()])
        else:
            storage, note = None, "not measured (measure_storage=False)"

        result = {
            "implementation": "spark",
            "spark_version": spark.version,
            "master": sc.master,
            "nodes": n,
            "edges": scan.edges,
            "iterations": iterations,
            "damping": damping,
            "partitions": p,
            "load_s": load_s,
            "iterations_s": iteration_times,
            "collect_s": t_end - t_collect,
            "total_s": t_end - t_start,
            "storage_bytes": storage,
            "jobs": job_count,
        }
        if note is not None:
            result["storage_note"] = note
        return result, out
    finally:
        # Leave a shared session as it was: nothing of this run stays cached.
        sc.setLocalProperty("spark.jobGroup.id", None)
        for rdd in (contribs, ranks, links):
            if rdd is not None and rdd.is_cached:
                rdd.unpersist()


def write_ranks(path: str, ranks: array) -> None:
    """The ranks as little-endian float64, node 0 first (8 * N bytes)."""
    data = array("d", ranks)
    if sys.byteorder != "little":
        data.byteswap()
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "wb") as f:
        f.write(data.tobytes())
    os.replace(tmp, path)


def read_ranks(path: str) -> array:
    """Reads a file written by :func:`write_ranks`."""
    data = array("d")
    with open(path, "rb") as f:
        data.frombytes(f.read())
    if sys.byteorder != "little":
        data.byteswap()
    return data
