"""python -m kvbench_spark as a subprocess: two runs that start Spark, and
bad input, which is refused before Spark starts."""

import json
import math
import os
import subprocess
import sys

import pytest

from graphs import SMALL, relative_errors, write_edges
from kvbench_spark import pagerank, reference


def cli(*args, timeout=240):
    env = dict(os.environ)
    env.pop("PYSPARK_SUBMIT_ARGS", None)
    return subprocess.run(
        [sys.executable, "-m", "kvbench_spark", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )


def test_pagerank_command(tmp_path):
    nodes, pairs = SMALL["dangling_isolated"]
    graph = write_edges(tmp_path / "graph.txt", nodes, pairs)
    ranks_out, json_out = tmp_path / "ranks.bin", tmp_path / "result.json"
    p = cli(
        "pagerank", "--edges", graph, "--nodes", nodes, "--iterations", 3, "--damping", 0.85,
        "--master", "local[2]", "--ranks-out", ranks_out, "--json-out", json_out,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    # stdout: the one summary line and nothing else
    assert p.stdout.count("\n") == 1 and p.stdout.startswith("pagerank: spark 4."), p.stdout
    assert str(json_out) in p.stdout
    result = json.loads(json_out.read_text())
    assert result["implementation"] == "spark"
    assert (result["nodes"], result["edges"], result["iterations"]) == (5, 4, 3)
    assert result["damping"] == 0.85 and result["master"] == "local[2]"
    assert len(result["iterations_s"]) == 3
    assert type(result["storage_bytes"]) is int and result["storage_bytes"] > 0, result
    assert type(result["jobs"]) is int and result["jobs"] == 2 + 2 * 3
    assert type(result["startup_s"]) is float
    ranks = pagerank.read_ranks(str(ranks_out))
    assert ranks_out.stat().st_size == 8 * nodes
    assert max(relative_errors(ranks, reference.pagerank(nodes, pairs, 3, 0.85))) <= 1e-9
    assert abs(math.fsum(ranks) - 1) <= 1e-9


def test_lookup_command(tmp_path):
    nodes, pairs = SMALL["star"]
    graph = write_edges(tmp_path / "graph.txt", nodes, pairs)
    json_out = tmp_path / "lookup.json"
    p = cli("lookup", "--edges", graph, "--nodes", nodes, "--count", 5, "--seed", 3, "--json-out", json_out)
    assert p.returncode == 0, p.stderr
    assert p.stdout.count("\n") == 1 and p.stdout.startswith("lookup: spark 4."), p.stdout
    result = json.loads(json_out.read_text())
    for key, kind in [("implementation", str), ("count", int), ("cache_s", float),
                      ("lookup_us", list), ("p50_us", float), ("p99_us", float),
                      ("spark_version", str)]:  # fmt: skip
        assert type(result[key]) is kind, key
    assert result["count"] == len(result["lookup_us"]) == 5


BAD_INPUT = [
    # (command, content of graph.txt or None, arguments, what stderr names)
    ("pagerank", None, ["--edges", "{dir}/missing.txt", "--nodes", "3"], "missing.txt"),
    ("pagerank", "0\t1\n1 2 3\n", ["--edges", "{graph}", "--nodes", "3"], "graph.txt:2:"),
    ("pagerank", "0\t1\n1\t3\n", ["--edges", "{graph}", "--nodes", "3"], "graph.txt:2: node id 3"),
    ("pagerank", "0\t1\n", ["--edges", "{graph}", "--nodes", "0"], "--nodes"),
    ("pagerank", "0\t1\n", ["--edges", "{graph}", "--nodes", "x"], "--nodes"),
    ("pagerank", "0\t1\n", ["--edges", "{graph}", "--nodes", "3", "--damping", "1.5"], "--damping"),
    ("pagerank", "0\t1\n", ["--edges", "{graph}", "--nodes", "3", "--iterations", "0"], "--iterations"),
    ("pagerank", "0\t1\n", ["--edges", "{graph}", "--nodes", "3", "--ranks-out", "{dir}/no/r.bin"], "--ranks-out"),
    ("pagerank", "0\t1\n", ["--nodes", "3"], "--edges"),
    ("pagerank", "0\t1\n", ["--edges", "{graph}", "--nodes", "3", "--master", "bogus://x"], "--master"),
    ("lookup", None, ["--edges", "{dir}/missing.txt", "--nodes", "3"], "missing.txt"),
    ("lookup", "0\t1\n1 2 3\n", ["--edges", "{graph}", "--nodes", "3"], "graph.txt:2:"),
    ("lookup", "0\t1\n1\t3\n", ["--edges", "{graph}", "--nodes", "3"], "graph.txt:2: node id 3"),
    ("lookup", "0\t1\n", ["--edges", "{graph}", "--nodes", "3", "--count", "0"], "--count"),
]


@pytest.mark.parametrize("command, content, args, names", BAD_INPUT)
def test_bad_input_exits_2_with_one_line(tmp_path, command, content, args, names):
    graph = tmp_path / "graph.txt"
    if content is not None:
        graph.write_text(content)
    args = [a.format(dir=tmp_path, graph=graph) for a in args]
    p = cli(command, *args, "--json-out", tmp_path / "out.json", timeout=60)
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert p.stderr.count("\n") == 1, p.stderr
    assert names in p.stderr
    assert p.stdout == ""
    assert not (tmp_path / "out.json").exists()


def test_help_has_an_example():
    for command in ("pagerank", "lookup", "generate"):
        p = cli(command, "--help", timeout=60)
        assert p.returncode == 0
        assert "example:\n  .venv/bin/python -m kvbench_spark " + command in p.stdout


def test_generate_command(tmp_path):
    out = tmp_path / "g.txt"
    p = cli("generate", "--nodes", 100, "--edges", 300, "--seed", 4, "--out", out, timeout=60)
    assert p.returncode == 0, p.stderr
    assert p.stdout.count("\n") == 1
    from kvbench_spark import edges

    assert edges.scan(str(out), 100, pairs=True).pairs == edges.generate(100, 300, 4)
