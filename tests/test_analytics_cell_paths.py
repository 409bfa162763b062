"""The warm report's array paths (branch warm9) give exactly what the per-row Python code they
replaced gave: F2's per-agent bin entries built from the nonzero cells, each distinct value
rounded once."""

from __future__ import annotations

import numpy as np
import pytest

from mafiascope.analytics import f2


def _cells(seed: int, groups: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    n = rng.integers(0, 6, size=(groups, f2.N_BINS)).astype(float) * (rng.random((groups, f2.N_BINS)) < 0.6)
    k = np.floor(rng.random(n.shape) * (n + 1))
    cs = np.floor(rng.random(n.shape) * 100 * n) + (rng.random(n.shape) < 0.3) * 0.37  # fractional sums too
    return n, k, cs


@pytest.mark.parametrize("seed", range(20))
def test_bin_entries_many_equal_per_row_entries(seed: int) -> None:
    n, k, cs = _cells(seed, int(np.random.default_rng(seed).integers(0, 60)))
    got = f2._bin_entries_many(n, k, cs)
    ref = [f2._bin_entries(n[i], k[i], cs[i]) for i in range(len(n))]
    assert got == ref
    # the same key order, bins in order, and the same types (ints, floats)
    assert [[(b, list(e)) for b, e in row.items()] for row in got] == [[(b, list(e)) for b, e in row.items()] for row in ref]
    assert all(type(e["n"]) is int and type(e["acc"]) is float for row in got for e in row.values())


def test_rounded_equals_round_each() -> None:
    x = np.r_[np.random.default_rng(1).random(500), 0.1234565, 0.1234565, 2.5e-7, 1.0, 0.0]
    assert f2._rounded(x) == [round(v, 6) for v in x.tolist()]
    assert f2._rounded(np.zeros(0)) == []
