"""One SparkSession (local[2], bound to 127.0.0.1) shared by every test that
calls the package's functions directly; the CLI tests start their own JVM
in a subprocess."""

import pytest

from graphs import RANDOM_EDGES, RANDOM_NODES, RANDOM_SEED, write_edges
from kvbench_spark import edges


@pytest.fixture(scope="session")
def spark():
    from kvbench_spark import session

    s = session.start("local[2]", app_name="kvbench-spark-tests")
    yield s
    s.stop()


@pytest.fixture(scope="session")
def random_graph(tmp_path_factory):
    """(path, nodes, edge list) of the seeded 10,000-node graph."""
    path = tmp_path_factory.mktemp("random") / "random-10k.txt"
    pairs = edges.generate(RANDOM_NODES, RANDOM_EDGES, RANDOM_SEED)
    write_edges(path, RANDOM_NODES, pairs, comment="seeded random graph")
    return str(path), RANDOM_NODES, pairs
