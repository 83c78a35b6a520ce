"""Edge-list files: checking them before Spark reads them, and making random ones.

The format is SNAP's text edge list: one edge a line, ``src<TAB>dst`` (any
run of whitespace separates the two ids), node ids dense integers
``0..N-1``; lines whose first non-blank character is ``#`` are comments and
blank lines are skipped. A file whose name ends in ``.gz`` is read through
gzip (Spark's ``textFile`` does the same).

Lines end at ``\\n``, ``\\r\\n`` or a lone ``\\r``, as Hadoop's line reader (behind
``SparkContext.textFile``) splits them, so this check and Spark see the same
lines. Line numbers in messages count ``\\n``.

:func:`scan` reads a file once in the driver, before any Spark job: it
counts the edges and, on the first bad line, raises :class:`InputError`
with a one-line message naming the file and the line. Spark then parses the
same file with :func:`kvbench_spark.tasks.parse_edge`, which trusts it.
"""

from __future__ import annotations

import gzip
import os
import random
import re
from array import array
from dataclasses import dataclass

_ID = re.compile(r"[0-9]+")


class InputError(Exception):
    """Bad input: the message is one line naming the file or the flag."""


@dataclass
class Scan:
    """What :func:`scan` found."""

    edges: int
    outdeg: array | None = None  # out-degree of every node, when asked for
    pairs: list[tuple[int, int]] | None = None  # every edge in file order, when asked for


def _open(path: str):
    if os.path.isdir(path):
        raise InputError(f"{path}: is a directory, not an edge-list file")
    try:
        if path.endswith(".gz"):
            f = gzip.open(path, "rb")
        else:
            f = open(path, "rb")
    except OSError as e:
        raise InputError(f"{path}: cannot read the edge list: {e.strerror or e}") from None
    return f


def scan(path: str, nodes: int, *, outdeg: bool = False, pairs: bool = False) -> Scan:
    """Checks the edge list at ``path`` for ``nodes`` nodes and counts its edges.

    With ``outdeg`` it also counts each node's out-degree (an ``array('q')``
    of ``nodes`` entries); with ``pairs`` it returns every edge in file
    order (for the plain-Python reference; not for big graphs).
    """
    degrees = array("q", bytes(8 * nodes)) if outdeg else None
    found: list[tuple[int, int]] | None = [] if pairs else None
    count = 0
    f = _open(path)
    try:
        lineno = 0
        while True:
            try:
                raw = f.readline()
            except (OSError, EOFError, gzip.BadGzipFile) as e:
                raise InputError(f"{path}: cannot read the edge list: {e}") from None
            if not raw:
                break
            lineno += 1
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError:
                raise InputError(f"{path}:{lineno}: not UTF-8 text") from None
            # A lone \r ends a line for Hadoop's reader too.
            for line in text.split("\r"):
                fields = line.split()
                if not fields or fields[0].startswith("#"):
                    continue
                if len(fields) != 2 or not all(_ID.fullmatch(x) for x in fields):
                    shown = line.strip()
                    if len(shown) > 60:
                        shown = shown[:57] + "..."
                    raise InputError(
                        f"{path}:{lineno}: expected two node ids 'src<TAB>dst', got {shown!r}"
                    )
                u, v = int(fields[0]), int(fields[1])
                for x in (u, v):
                    if x >= nodes:
                        raise InputError(
                            f"{path}:{lineno}: node id {x} is out of range: --nodes {nodes} "
                            f"allows 0 to {nodes - 1}"
                        )
                count += 1
                if degrees is not None:
                    degrees[u] += 1
                if found is not None:
                    found.append((u, v))
    finally:
        f.close()
    return Scan(edges=count, outdeg=degrees, pairs=found)


def generate(nodes: int, edges: int, seed: int) -> list[tuple[int, int]]:
    """A random directed graph: ``edges`` edges whose ends are drawn uniformly
    from ``0..nodes-1`` with ``random.Random(seed)`` (source, then target).
    Duplicate edges and self-loops are kept, as the definition counts them."""
    rng = random.Random(seed)
    return [(rng.randrange(nodes), rng.randrange(nodes)) for _ in range(edges)]


def write(path: str, nodes: int, pairs: list[tuple[int, int]], comment: str = "") -> None:
    """Writes ``pairs`` as a SNAP-style edge list with a comment header."""
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w", encoding="utf-8", newline="\n") as f:
        if comment:
            f.write(f"# {comment}\n")
        f.write(f"# Nodes: {nodes} Edges: {len(pairs)}\n")
        f.write("# FromNodeId\tToNodeId\n")
        f.writelines(f"{u}\t{v}\n" for u, v in pairs)
    os.replace(tmp, path)
