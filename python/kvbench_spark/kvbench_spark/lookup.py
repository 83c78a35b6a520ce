"""Single-key lookups on a cached pair RDD: Spark's cost per job, against a
GET on Redis or Memcached.

The RDD holds (node, out-degree) for every node 0..N-1, hash-partitioned
(``reduceByKey`` into P partitions), cached and materialized by one
``count()`` before any lookup is timed (``cache_s``: reading the edges,
the shuffle, the caching). Each lookup is ``rdd.lookup(key)``: because the
RDD has a partitioner, that is one Spark job over the single partition that
holds the key (a filter of that partition's cached records). Every answer is
checked against the out-degree the driver counted while checking the file.
"""

from __future__ import annotations

import math
import operator
import os
import random
import time

from . import tasks
from .edges import Scan
from .session import JobCounter


def percentile(values, p: float) -> float:
    """Nearest-rank percentile: the ceil(p/100 * n)-th smallest value."""
    ordered = sorted(values)
    if not ordered:
        raise ValueError("no values")
    k = max(1, math.ceil(p / 100.0 * len(ordered)))
    return ordered[k - 1]


def run(
    spark,
    edges_path: str,
    nodes: int,
    scan: Scan,
    count: int = 100,
    seed: int = 0,
    partitions: int | None = None,
):
    """Times ``count`` lookups of random node ids (``random.Random(seed)``).
    ``scan`` must hold the out-degrees (``edges.scan(..., outdeg=True)``).
    Returns the JSON channel's fields."""
    if scan.outdeg is None:
        raise ValueError("the scan needs the out-degrees (scan(..., outdeg=True))")
    sc = spark.sparkContext
    p = partitions or sc.defaultParallelism
    uri = "file://" + os.path.abspath(edges_path)
    rng = random.Random(seed)
    keys = [rng.randrange(nodes) for _ in range(count)]
    jobs = JobCounter(sc, "lookup")
    degrees = None
    jobs.start()
    try:
        t0 = time.perf_counter()
        pairs = sc.textFile(uri, minPartitions=p).flatMap(tasks.parse_edge).map(tasks.degree_of)
        zeros = sc.range(0, nodes, numSlices=p).map(tasks.no_degree)
        degrees = pairs.union(zeros).reduceByKey(operator.add, numPartitions=p).cache()
        cached = degrees.count()
        cache_s = time.perf_counter() - t0
        if cached != nodes:
            raise RuntimeError(f"the degree RDD has {cached} nodes, expected {nodes}")

        lookup_us = []
        for key in keys:
            t = time.perf_counter()
            answer = degrees.lookup(key)
            lookup_us.append((time.perf_counter() - t) * 1e6)
            want = scan.outdeg[key]
            if answer != [want]:
                raise RuntimeError(f"lookup({key}) returned {answer!r}, expected [{want}]")
        job_count = jobs.stop(at_least=1 + count)
    finally:
        sc.setLocalProperty("spark.jobGroup.id", None)
        if degrees is not None and degrees.is_cached:
            degrees.unpersist()

    return {
        "implementation": "spark",
        "spark_version": spark.version,
        "master": sc.master,
        "nodes": nodes,
        "edges": scan.edges,
        "partitions": p,
        "seed": seed,
        "count": count,
        "cache_s": cache_s,
        "lookup_us": lookup_us,
        "p50_us": percentile(lookup_us, 50),
        "p99_us": percentile(lookup_us, 99),
        "jobs": job_count,
    }
