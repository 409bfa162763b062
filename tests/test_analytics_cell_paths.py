"""The warm report's array paths (branches warm9, f2x) give exactly what the code they replaced gave (kept
here as the reference): F2's per-agent bin entries built from the nonzero cells and rounded on whole
arrays, its grouped summaries without sorting the rows' bin sums, and its per-game bin statistics over (game, bin) cells; F4's last probe before
each vote by sorted searches; the dense score arrays of dynamics and episodes filled by assignment;
the step table's union of sorted step codes and its first/last row per run."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from mafiascope.analytics import dynamics, f2, step_keys
from mafiascope.analytics.last_before import last_probe_before, record_index
from mafiascope.analytics.stats import round_or_none
from mafiascope.analytics.step_keys import sorted_union


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


def _grouped_by_sorting(df: pd.DataFrame, keys: np.ndarray, n_groups: int) -> list[dict]:
    """F2's grouped summaries before f2x: rows sorted by group, each group's Brier sum one ``sum()``."""
    order = np.argsort(keys, kind="stable")
    conf, out_, b, kk = (df["conf"].to_numpy()[order], df["outcome"].to_numpy()[order], df["bin"].to_numpy()[order],
                         keys[order])
    cell, size = kk * f2.N_BINS + b, n_groups * f2.N_BINS
    n = np.bincount(cell, minlength=size).astype(float).reshape(n_groups, f2.N_BINS)
    k = np.bincount(cell, weights=out_, minlength=size).reshape(n_groups, f2.N_BINS)
    cs = np.bincount(cell, weights=conf, minlength=size).reshape(n_groups, f2.N_BINS)
    sq = (conf / 100.0 - out_) ** 2
    bounds = np.searchsorted(kk, np.arange(n_groups + 1))
    bs = np.array([float(sq[a:z].sum()) for a, z in zip(bounds[:-1].tolist(), bounds[1:].tolist())])
    ece, brier = f2._bins_ece_brier(k, n, cs, bs)
    return [{"n": int(nn), "ece": round_or_none(e), "brier": round_or_none(br), "bins": f2._bin_entries(n[i], k[i], cs[i])}
            for i, (nn, e, br) in enumerate(zip(n.sum(1).tolist(), ece.tolist(), brier.tolist()))]


@pytest.mark.parametrize("seed", range(6))
def test_grouped_summaries_equal_the_sorted_per_group_sums(seed: int) -> None:
    rng = np.random.default_rng(seed)
    rows, n_groups = int(rng.integers(0, 20000)), int(rng.integers(1, 400))
    conf = rng.integers(0, 101, rows) + (rng.random(rows) < 0.3) * rng.random(rows)  # fractional ones too
    keys = rng.integers(0, n_groups, rows) * (rng.random(rows) < 0.97)  # big group 0, some groups empty
    df = pd.DataFrame({"conf": conf, "outcome": (rng.random(rows) < 0.4).astype(float),
                       "bin": np.minimum(f2.N_BINS - 1, np.floor(conf / 20).astype(int))})
    got, ref = f2.grouped_summaries(df, keys, n_groups), _grouped_by_sorting(df, keys, n_groups)
    assert json.dumps(got) == json.dumps(ref)  # values bit for bit (repr), key order, ints as ints, None


def _last_probe_merge(g: np.ndarray, voter: np.ndarray, t: np.ndarray, recs: dict[str, np.ndarray]) -> np.ndarray:
    """The merge F4 used before: every unit joined with every record of its voter, the largest pi kept."""
    units = pd.DataFrame({"u": np.arange(len(g)), "g": g, "voter": voter, "t": t})
    j = units.merge(pd.DataFrame(recs), left_on=["g", "voter"], right_on=["g", "seat"])
    j = j[j["timestamp"].to_numpy() < j["t"].to_numpy()]
    out = np.full(len(units), -1, dtype=np.int64)
    if len(j):
        last = j.groupby("u", sort=False)["pi"].max()
        out[last.index.to_numpy()] = last.to_numpy()
    return out


@pytest.mark.parametrize("seed", range(30))
def test_last_probe_before_equals_merge(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n_rec, n_units = (int(x) for x in rng.integers(0, 80, 2))
    games, seats = int(rng.integers(1, 5)), 4
    ts = rng.integers(0, 12, n_rec).astype(float)  # ties, and times out of file order
    ts[rng.random(n_rec) < 0.1] = np.nan
    pi = np.sort(rng.choice(10 * n_rec + 1, n_rec, replace=False))
    recs = {"g": rng.integers(0, games, n_rec).astype(np.int32), "seat": rng.integers(-1, seats, n_rec).astype(np.int8),
            "timestamp": ts, "pi": pi}
    t = rng.integers(0, 13, n_units).astype(float)
    t[rng.random(n_units) < 0.1] = np.nan
    g, voter = rng.integers(0, games + 1, n_units), rng.integers(0, seats + 1, n_units)
    got = last_probe_before(g, voter, t, record_index(recs))
    assert got.dtype == np.int64
    assert np.array_equal(got, _last_probe_merge(g, voter, t, recs))


@pytest.mark.parametrize("seed", range(10))
def test_sorted_union_equals_union1d(seed: int) -> None:
    rng = np.random.default_rng(seed)
    a = np.unique(rng.integers(-50, 50, int(rng.integers(0, 40))))
    b = np.unique(np.r_[a[: len(a) // 2], rng.integers(-50, 50, int(rng.integers(0, 40)))])
    for x, y in ((a, b), (b, a), (a, a), (a, b[:0]), (a[:0], b[:0])):
        got = sorted_union(x, y)
        assert got.dtype == np.union1d(x, y).dtype and np.array_equal(got, np.union1d(x, y))


@pytest.mark.parametrize("seed", range(10))
def test_cells_reduce_equals_ufunc_at(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n, S = int(rng.integers(0, 30)), 7
    k = int(rng.integers(0, 120)) if n else 0
    row, col = np.sort(rng.integers(0, max(n, 1), k)), rng.integers(0, S, k).astype(np.int8)
    vals = rng.integers(-3, 4, k).astype(float)  # ties and repeats
    vals[rng.random(k) < 0.1] = np.nan
    for op, fill in ((np.fmax, np.nan), (np.minimum, np.inf), (np.add, 0.0)):  # add: repeats summed in order
        ref = np.full((n, S), fill)
        op.at(ref, (row, col), vals)
        assert np.array_equal(dynamics.cells_reduce(op, fill, n, S, row, col, vals), ref, equal_nan=True)
    with pytest.raises(IndexError):
        dynamics.cells_reduce(np.fmax, np.nan, 2, 3, np.array([0, 1]), np.array([0, 3]), np.ones(2))


def _bin_columns_by_bin(df: pd.DataFrame, m: int) -> np.ndarray:
    """F2's per-game statistics as they were computed before: three bincounts of each bin's rows."""
    conf, out_, b, g = df["conf"].to_numpy(), df["outcome"].to_numpy(), df["bin"].to_numpy(), df["g"].to_numpy()
    cols = []
    for j in range(f2.N_BINS):
        sel = b == j
        cols += [np.bincount(g[sel], weights=out_[sel], minlength=m), np.bincount(g[sel], minlength=m).astype(float),
                 np.bincount(g[sel], weights=conf[sel], minlength=m)]
    cols.append(np.bincount(g, weights=(conf / 100.0 - out_) ** 2, minlength=m))
    return np.column_stack(cols)


@pytest.mark.parametrize("seed", range(10))
def test_bin_columns_equal_per_bin_bincounts(seed: int) -> None:
    rng = np.random.default_rng(seed)
    rows, m = int(rng.integers(0, 300)), int(rng.integers(1, 12))
    conf = rng.integers(0, 101, rows) + rng.choice([0.0, 0.1, 0.33], rows)  # sums whose order matters
    conf = np.minimum(conf, 100.0)
    correct = rng.random(rows) < 0.5
    df = pd.DataFrame({"g": rng.integers(0, m, rows), "conf": conf, "outcome": correct.astype(float),
                       "bin": np.minimum(f2.N_BINS - 1, np.floor(conf / 20).astype(int))})
    got, ref = f2.bin_columns(df, m), _bin_columns_by_bin(df, m)
    assert got.shape == ref.shape == (m, 3 * f2.N_BINS + 1)
    assert np.array_equal(got, ref)  # bit for bit


def _first_where_by_assignment(order: np.ndarray, starts: np.ndarray, ok: np.ndarray, last: bool) -> np.ndarray:
    """The step table's first/last row with ``ok`` per run as it was found before: run ids by a cumsum,
    then an assignment in which the last (or, assigned from the end, the first) row stays."""
    mark = np.zeros(len(order), dtype=np.int64)
    mark[starts] = 1
    run = np.cumsum(mark) - 1
    hit = ok[order]
    out = np.full(len(starts), -1, dtype=np.int64)
    rows, runs = order[hit], run[hit]
    if last:
        out[runs] = rows
    else:
        out[runs[::-1]] = rows[::-1]
    return out


@pytest.mark.parametrize("seed", range(10))
def test_first_where_equals_assignment(seed: int) -> None:
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, 8, int(rng.integers(0, 60)))
    order, starts, _ = step_keys._runs(codes)
    ok = rng.random(len(codes)) < rng.random()
    for last in (False, True):
        got = step_keys._first_where(order, starts, ok, last)
        assert got.dtype == np.int64
        assert np.array_equal(got, _first_where_by_assignment(order, starts, ok, last))
