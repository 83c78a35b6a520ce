"""The plain-Python reference against hand-computed ranks and exact rational
arithmetic (no Spark)."""

from fractions import Fraction as F

import pytest

from graphs import SMALL
from kvbench_spark import reference

D = F(85, 100)

# One iteration by hand, d = 0.85: r1(v) = 0.15/N + 0.85 * (s(v) + D/N).
HAND = {
    # r0 = 1/3; D = r(2) = 1/3, D/N = 1/9; s = (0, 1/3, 1/3)
    # r1(0) = 0.05 + 0.85 * 1/9 = 13/90; r1(1) = r1(2) = 0.05 + 0.85 * 4/9 = 77/180
    "chain": [F(13, 90), F(77, 180), F(77, 180)],
    # every node gets 1/3 and gives 1/3: uniform again
    "cycle": [F(1, 3)] * 3,
    # r0 = 0.2; D = 0.8 (the 4 leaves), D/N = 0.16; s(leaf) = 0.2/4 = 0.05
    # r1(0) = 0.03 + 0.85 * 0.16 = 0.166; r1(leaf) = 0.03 + 0.85 * 0.21 = 0.2085
    "star": [F("0.166")] + [F("0.2085")] * 4,
    # r0 = 0.2; D = r(2) + r(4) = 0.4, D/N = 0.08; s = (0.2, 0.1, 0.3, 0, 0)
    # r1 = 0.03 + 0.85 * (s + 0.08)
    "dangling_isolated": [F("0.268"), F("0.183"), F("0.353"), F("0.098"), F("0.098")],
    # r0 = 1/3; outdeg = (3, 2, 1); s(0) = 1/3, s(1) = 2/9 + 1/6 = 7/18,
    # s(2) = 1/9 + 1/6 = 5/18; no dangling node
    # r1 = 0.05 + 0.85 * s = (1/3, 137/360, 103/360)
    "duplicates_self_loop": [F(1, 3), F(137, 360), F(103, 360)],
}


@pytest.mark.parametrize("name", sorted(SMALL))
def test_one_iteration_by_hand(name):
    nodes, edges = SMALL[name]
    want = HAND[name]
    assert sum(want) == 1
    assert reference.pagerank_exact(nodes, edges, 1, D) == want
    got = reference.pagerank(nodes, edges, 1, 0.85)
    for g, w in zip(got, want, strict=True):
        assert g == pytest.approx(float(w), rel=1e-15)


@pytest.mark.parametrize("name", sorted(SMALL))
def test_float_reference_matches_exact_arithmetic(name):
    nodes, edges = SMALL[name]
    exact = reference.pagerank_exact(nodes, edges, 10, D)
    assert sum(exact) == 1
    got = reference.pagerank(nodes, edges, 10, 0.85)
    for g, w in zip(got, exact, strict=True):
        assert abs(g - float(w)) <= 1e-14 * float(w)
    assert abs(sum(got) - 1.0) <= 1e-15 * nodes


def test_cycle_stays_uniform_for_any_number_of_iterations():
    nodes, edges = SMALL["cycle"]
    assert reference.pagerank(nodes, edges, 25, 0.85) == [1.0 / 3] * 3


def test_no_edges_gives_uniform_ranks():
    # every node dangling: D = 1, r' = (1-d)/N + d/N = 1/N
    got = reference.pagerank(4, [], 10, 0.85)
    assert got == pytest.approx([0.25] * 4, rel=1e-15)


def test_damping_zero_and_one():
    nodes, edges = SMALL["chain"]
    assert reference.pagerank(nodes, edges, 3, 0.0) == pytest.approx([1 / 3] * 3, rel=1e-15)
    exact = reference.pagerank_exact(nodes, edges, 3, 1)
    assert reference.pagerank(nodes, edges, 3, 1.0) == pytest.approx([float(x) for x in exact], rel=1e-14)
