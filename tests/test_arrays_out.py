"""The array helpers behind the report's Python values (analytics/arrays_out.py, branch f2x) give exactly
what the per-value code they replace gives: Python's ``round`` (bit for bit, -0.0, ties, NaN -> None),
numpy's per-group ``sum()`` (pairwise, in row order), a stable argsort; the garbage collector's state is
restored."""

from __future__ import annotations

import gc

import numpy as np
import pytest

from mafiascope.analytics import arrays_out
from mafiascope.analytics.arrays_out import gc_paused, group_sums, rounded_list, stable_order
from mafiascope.analytics.stats import round_or_none


def _near_halves(rng: np.random.Generator, n: int, nd: int) -> np.ndarray:
    """Values at and a few ulps around (j + 0.5) / 10**nd: where rint(v * 10**nd) may round otherwise."""
    j = rng.integers(0, 10**8, n).astype(float)
    mid = (j + 0.5) / 10.0**nd
    steps = rng.integers(-4, 5, n)
    out = mid.copy()
    for s in range(1, 5):
        out = np.where(steps >= s, np.nextafter(out, np.inf), out)
        out = np.where(steps <= -s, np.nextafter(out, -np.inf), out)
    return out


def _values(seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    k = rng.integers(0, 400, 3000)
    n = rng.integers(1, 400, 3000)
    return np.r_[rng.random(3000), rng.random(3000) * 100, np.minimum(k, n) / n, -rng.random(500) * 3,
                 _near_halves(rng, 3000, 6), 2.0 ** -np.arange(1, 60), [np.nan, np.inf, -np.inf, -0.0, 0.0, 1e20,
                                                                       -1e300, 1e-300, 0.1234565, 2.5e-7, -4e-7]]


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("nd", [6, 3])
def test_rounded_list_is_round_or_none_bit_for_bit(seed: int, nd: int) -> None:
    x = _values(seed)
    if nd == 3:
        x = np.r_[x, _near_halves(np.random.default_rng(seed), 2000, 3)]
    got, ref = rounded_list(x, nd), [round_or_none(v, nd) for v in x.tolist()]
    assert [repr(v) for v in got] == [repr(v) for v in ref]  # repr: -0.0 and every bit
    assert [type(v) for v in got] == [type(v) for v in ref]
    assert rounded_list(np.zeros(0)) == []


def test_rounded_list_rounds_on_the_array_and_falls_back_only_at_halves(monkeypatch) -> None:
    calls: list[float] = []
    monkeypatch.setattr(arrays_out, "round_or_none", lambda v, nd=6: calls.append(v) or round_or_none(v, nd))
    rng = np.random.default_rng(7)
    plain = np.r_[rng.random(10000), _near_halves(rng, 1000, 6)]
    assert rounded_list(plain) == [round(v, 6) for v in plain.tolist()]
    assert len(calls) < 200  # the array path rounds nearly all of them
    calls.clear()
    halves = (rng.integers(0, 10**8, 1000) + 0.5) / 1e6  # v * 1e6 mostly computes to the half-integer itself
    assert rounded_list(halves) == [round(v, 6) for v in halves.tolist()]
    assert len(calls) > 300  # those go through Python's round


def _ref_group_sums(x: np.ndarray, keys: np.ndarray, n_groups: int) -> np.ndarray:
    return np.array([float(x[keys == j].sum()) for j in range(n_groups)])


@pytest.mark.parametrize("sizes", [[1, 2, 7, 8, 9, 15, 16, 17], [127, 128, 129, 255, 256, 257],
                                   [8191, 8192, 8193, 20000, 3], [0, 5, 0, 300, 0]])
def test_group_sums_is_each_groups_pairwise_sum(sizes: list[int]) -> None:
    rng = np.random.default_rng(len(sizes))
    keys = rng.permutation(np.repeat(np.arange(len(sizes)), sizes))
    x = rng.random(len(keys)) ** 2 * rng.choice([1.0, 1e-3, 3.7], len(keys))
    got = group_sums(x, keys, len(sizes) + 2)  # two empty groups at the end too
    assert got.tobytes() == _ref_group_sums(x, keys, len(sizes) + 2).tobytes()
    # a plain reduceat (no heading zero) differs: the test would see a wrong run start
    assert (np.add.reduceat(x[np.argsort(keys, kind="stable")], np.r_[0, np.cumsum([s for s in sizes if s])[:-1]])
            != _ref_group_sums(x, keys, len(sizes))[np.array(sizes) > 0]).any()


@pytest.mark.parametrize("n_groups", [1, 300, 70000])
def test_group_sums_many_groups_and_stable_order(n_groups: int) -> None:
    rng = np.random.default_rng(n_groups)
    keys = rng.integers(0, n_groups, 200000)
    x = rng.random(len(keys))
    order = np.argsort(keys, kind="stable")
    assert np.array_equal(stable_order(keys, n_groups), order)
    srt = x[order]
    bounds = np.searchsorted(keys[order], np.arange(n_groups + 1))
    ref = np.array([float(srt[a:z].sum()) for a, z in zip(bounds[:-1], bounds[1:])])
    assert group_sums(x, keys, n_groups).tobytes() == ref.tobytes()
    assert group_sums(x[:0], keys[:0], 0).shape == (0,)


def test_gc_paused_restores_the_collectors_state() -> None:
    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(ValueError):
        with gc_paused():
            raise ValueError
    assert gc.isenabled()
    gc.disable()
    try:
        with gc_paused():
            pass
        assert not gc.isenabled()  # a caller's disabled collector stays disabled
    finally:
        gc.enable()
