"""PageRank on Spark (the shared local[2] session) against the plain-Python
reference of the same definition."""

import json
import math
import struct

import pytest

from graphs import SMALL, relative_errors, write_edges
from kvbench_spark import edges, pagerank, reference

ITERATIONS = 10
DAMPING = 0.85


def run_spark(spark, path, nodes, iterations=ITERATIONS, damping=DAMPING, **kw):
    scan = edges.scan(path, nodes)
    return pagerank.run(spark, path, nodes, scan, iterations=iterations, damping=damping, **kw)


@pytest.mark.parametrize("name", sorted(SMALL))
def test_small_graphs_match_the_reference(spark, tmp_path, name):
    nodes, pairs = SMALL[name]
    path = write_edges(tmp_path / f"{name}.txt", nodes, pairs)
    result, ranks = run_spark(spark, path, nodes)
    want = reference.pagerank(nodes, pairs, ITERATIONS, DAMPING)
    assert len(ranks) == nodes
    assert max(relative_errors(ranks, want)) <= 1e-9
    assert abs(math.fsum(ranks) - 1.0) <= 1e-9
    assert result["nodes"] == nodes and result["edges"] == len(pairs)
    assert len(result["iterations_s"]) == ITERATIONS


def test_random_10k_graph_matches_the_reference(random_pagerank, random_graph):
    _path, nodes, pairs = random_graph
    result, ranks = random_pagerank
    want = reference.pagerank(nodes, pairs, ITERATIONS, DAMPING)
    errors = relative_errors(ranks, want)
    assert max(errors) <= 1e-9, f"node {errors.index(max(errors))}: relative error {max(errors)}"
    assert abs(math.fsum(ranks) - 1.0) <= 1e-9
    # The graph has what the definition singles out.
    outdeg = [0] * nodes
    for u, _ in pairs:
        outdeg[u] += 1
    assert outdeg.count(0) > 0  # dangling nodes
    assert any(u == v for u, v in pairs)  # self-loops
    assert len(set(pairs)) < len(pairs)  # duplicate edges
    assert result["edges"] == len(pairs) == 50_000


@pytest.fixture(scope="module")
def random_pagerank(spark, random_graph):
    path, nodes, _ = random_graph
    return run_spark(spark, path, nodes)


def test_json_channel_fields_and_types(random_pagerank):
    result, _ = random_pagerank
    # What the CLI writes with --json-out is this dict (plus startup_s).
    result = json.loads(json.dumps(result))
    expected_types = {
        "implementation": str,
        "spark_version": str,
        "master": str,
        "nodes": int,
        "edges": int,
        "iterations": int,
        "damping": float,
        "load_s": float,
        "iterations_s": list,
        "total_s": float,
        "storage_bytes": int,
        "jobs": int,
    }
    for key, kind in expected_types.items():
        assert key in result, key
        assert type(result[key]) is kind, (key, result[key])
    assert result["implementation"] == "spark"
    assert result["spark_version"].startswith("4.")
    assert result["master"] == "local[2]"
    assert (result["nodes"], result["iterations"], result["damping"]) == (10_000, 10, 0.85)
    assert len(result["iterations_s"]) == 10
    for it in result["iterations_s"]:
        assert set(it) == {"map_s", "reduce_s"}
        assert all(type(v) is float and v > 0 for v in it.values())
    assert result["load_s"] > 0
    stages = result["load_s"] + sum(it["map_s"] + it["reduce_s"] for it in result["iterations_s"])
    assert stages <= result["total_s"]
    # The adjacency lists of 10,000 nodes and 50,000 edges and 10,000 ranks,
    # pickled: more than a byte per edge, less than a megabyte.
    assert 50_000 < result["storage_bytes"] < 1_000_000
    assert "storage_note" not in result
    # load, then a map and a reduce job per iteration, then the collect.
    assert result["jobs"] == 2 + 2 * 10


def test_shared_session_keeps_nothing_cached(spark, random_pagerank):
    assert spark.sparkContext._jsc.getPersistentRDDs().isEmpty()


def test_ranks_file_size_and_order(spark, tmp_path):
    nodes, pairs = SMALL["dangling_isolated"]
    path = write_edges(tmp_path / "g.txt", nodes, pairs)
    _, ranks = run_spark(spark, path, nodes, iterations=1)
    out = tmp_path / "ranks.bin"
    pagerank.write_ranks(str(out), ranks)
    data = out.read_bytes()
    assert len(data) == 8 * nodes
    # Node order, little-endian float64; the hand-checked values of
    # test_reference.py (one iteration).
    assert struct.unpack(f"<{nodes}d", data) == pytest.approx(
        [0.268, 0.183, 0.353, 0.098, 0.098], rel=1e-12
    )
    assert list(pagerank.read_ranks(str(out))) == list(ranks)


def test_storage_unreadable_gives_null_and_a_note(spark, tmp_path, monkeypatch):
    monkeypatch.setattr(pagerank, "cached_memory", lambda sc, ids: (None, "the UI said no"))
    nodes, pairs = SMALL["chain"]
    path = write_edges(tmp_path / "g.txt", nodes, pairs)
    result, _ = run_spark(spark, path, nodes, iterations=1)
    assert result["storage_bytes"] is None
    assert result["storage_note"] == "the UI said no"


def test_spark_listens_on_loopback_only(spark):
    """Every listening TCP socket of the session's JVM is on 127.0.0.1 (the
    driver, the block manager and the web UI)."""
    import os

    pid = spark.sparkContext._gateway.proc.pid
    inodes = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    listening = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as f:
            next(f)
            for line in f:
                cols = line.split()
                if cols[3] == "0A" and cols[9] in inodes:  # 0A: LISTEN
                    listening.append(cols[1].split(":")[0])
    assert listening, "the JVM listens on nothing?"
    loopback = {
        "0100007F",  # 127.0.0.1
        "0000000000000000FFFF00000100007F",  # ::ffff:127.0.0.1
        "00000000000000000000000001000000",  # ::1
    }
    assert set(listening) <= loopback, listening
    ui = spark.sparkContext.uiWebUrl
    assert ui.startswith("http://127.0.0.1:")
