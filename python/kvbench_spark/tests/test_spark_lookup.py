"""Single-key lookups on the shared local[2] session."""

import json

import pytest

from kvbench_spark import edges, lookup


def test_lookups_answer_the_out_degrees(spark, random_graph):
    path, nodes, pairs = random_graph
    scan = edges.scan(path, nodes, outdeg=True)
    # The driver's degrees, which every answer is checked against, are the
    # graph's.
    degrees = [0] * nodes
    for u, _ in pairs:
        degrees[u] += 1
    assert list(scan.outdeg) == degrees
    result = lookup.run(spark, path, nodes, scan, count=20, seed=5)
    result = json.loads(json.dumps(result))
    assert result["implementation"] == "spark"
    assert result["spark_version"].startswith("4.")
    assert result["count"] == 20
    assert type(result["cache_s"]) is float and result["cache_s"] > 0
    assert len(result["lookup_us"]) == 20
    assert all(type(x) is float and x > 0 for x in result["lookup_us"])
    assert result["p50_us"] == lookup.percentile(result["lookup_us"], 50)
    assert result["p99_us"] == max(result["lookup_us"])  # nearest rank of 20 values
    assert result["p50_us"] <= result["p99_us"]
    # one job to cache, then one per lookup
    assert result["jobs"] == 21
    assert spark.sparkContext._jsc.getPersistentRDDs().isEmpty()


def test_a_wrong_answer_fails(spark, tmp_path):
    path = tmp_path / "g.txt"
    path.write_text("0\t1\n0\t2\n1\t2\n")
    scan = edges.scan(str(path), 3, outdeg=True)
    assert list(scan.outdeg) == [2, 1, 0]
    scan.outdeg[0] = scan.outdeg[1] = scan.outdeg[2] = 7
    with pytest.raises(RuntimeError, match=r"lookup\(\d\) returned \[\d\], expected \[7\]"):
        lookup.run(spark, str(path), 3, scan, count=1, seed=0)
    assert spark.sparkContext._jsc.getPersistentRDDs().isEmpty()


def test_percentile_nearest_rank():
    values = [5.0, 1.0, 3.0, 2.0, 4.0]
    assert lookup.percentile(values, 50) == 3.0
    assert lookup.percentile(values, 99) == 5.0
    assert lookup.percentile(values, 0) == 1.0
    assert lookup.percentile(list(range(1, 101)), 99) == 99
