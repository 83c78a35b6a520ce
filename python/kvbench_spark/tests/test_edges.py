"""Reading and checking edge lists (no Spark)."""

import gzip

import pytest

from kvbench_spark import edges, tasks


def test_tabs_spaces_comments_and_blank_lines(tmp_path):
    path = tmp_path / "g.txt"
    path.write_bytes(b"# a comment\n0\t1\n  # indented comment\n\n1 2\r\n2   0\r3\t3\n")
    s = edges.scan(str(path), 4, outdeg=True, pairs=True)
    assert s.edges == 4
    assert s.pairs == [(0, 1), (1, 2), (2, 0), (3, 3)]
    assert list(s.outdeg) == [1, 1, 1, 1]
    # The workers' parser sees the same lines the same way.
    lines = path.read_bytes().decode().replace("\r\n", "\n").replace("\r", "\n").split("\n")
    assert [e for line in lines for e in tasks.parse_edge(line)] == s.pairs


def test_gzip(tmp_path):
    path = tmp_path / "g.txt.gz"
    with gzip.open(path, "wb") as f:
        f.write(b"0\t1\n1\t0\n")
    assert edges.scan(str(path), 2, pairs=True).pairs == [(0, 1), (1, 0)]


def test_duplicates_count_with_multiplicity(tmp_path):
    path = tmp_path / "g.txt"
    path.write_text("0\t1\n0\t1\n0\t0\n")
    s = edges.scan(str(path), 2, outdeg=True)
    assert s.edges == 3
    assert list(s.outdeg) == [3, 0]


@pytest.mark.parametrize(
    "content, where, what",
    [
        ("0\t1\n1\n", ":2:", "expected two node ids"),
        ("0\t1\n1\t2\t3\n", ":2:", "expected two node ids"),
        ("0\tx\n", ":1:", "expected two node ids"),
        ("-1\t0\n", ":1:", "expected two node ids"),
        ("0\t1.5\n", ":1:", "expected two node ids"),
        ("1_0\t1\n", ":1:", "expected two node ids"),
        ("0\t1 # trailing comment\n", ":1:", "expected two node ids"),
        ("0\t1\n0\t5\n", ":2:", "node id 5 is out of range: --nodes 5 allows 0 to 4"),
    ],
)
def test_bad_lines_name_the_file_and_line(tmp_path, content, where, what):
    path = tmp_path / "bad.txt"
    path.write_text(content)
    with pytest.raises(edges.InputError) as e:
        edges.scan(str(path), 5)
    message = str(e.value)
    assert message.startswith(str(path) + where)
    assert what in message
    assert "\n" not in message


def test_not_utf8(tmp_path):
    path = tmp_path / "bin.txt"
    path.write_bytes(b"0\t1\n\xff\xfe\n")
    with pytest.raises(edges.InputError, match=r":2: not UTF-8 text$"):
        edges.scan(str(path), 2)


def test_missing_file_and_directory(tmp_path):
    with pytest.raises(edges.InputError, match="no-such.txt: cannot read the edge list: No such file"):
        edges.scan(str(tmp_path / "no-such.txt"), 2)
    with pytest.raises(edges.InputError, match="is a directory"):
        edges.scan(str(tmp_path), 2)


def test_generate_is_seeded_and_in_range():
    a = edges.generate(100, 500, 7)
    assert a == edges.generate(100, 500, 7)
    assert a != edges.generate(100, 500, 8)
    assert len(a) == 500
    assert all(0 <= u < 100 and 0 <= v < 100 for u, v in a)


def test_write_then_scan_round_trip(tmp_path):
    pairs = edges.generate(50, 200, 1)
    path = tmp_path / "g.txt"
    edges.write(str(path), 50, pairs, comment="round trip")
    assert path.read_text().startswith("# round trip\n# Nodes: 50 Edges: 200\n")
    assert edges.scan(str(path), 50, pairs=True).pairs == pairs
