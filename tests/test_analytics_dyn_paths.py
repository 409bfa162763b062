"""Dynamics' and the episode selector's array paths against the definitions they compute (branch dyny): the
suspicion states (docs/metrics.md §8) from a per-probe reading of the ranking items, the L1 changes of
consecutive rows from slices, several cell reductions over shared cells, the episode probe rows' first
items, and each dynamics group's per-game columns counted at once for disjoint groups."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from mafiascope.analytics import dynamics, episodes
from mafiascope.analytics.frames import death_ts, items_with_probe, order_key
from mafiascope.analytics.modes import COMPAT, Mode
from tests.loader_digest import loaded_corpora

NAMES = ("demo", "fixtures_v2", "mafiascope_en_demo", "malformed")


@pytest.fixture(scope="module")
def loaded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return loaded_corpora(tmp_path_factory.mktemp("dyn_paths"), NAMES)


def _states_by_probe(c, mode: Mode) -> dict[str, np.ndarray]:
    """The states read one probe at a time: a usable listed player's score (max over repeats, clipped at
    0) and first position, normalised by the row's sum; the top is the highest, first listed among ties."""
    sr = items_with_probe(c, "sr", "suspicion_ranking")
    dead = death_ts(c)
    S = c.seat_array("role_code").shape[1]
    cells: dict[int, tuple[dict[int, float], dict[int, float]]] = {}
    for pi, g, seat, ts, tgt, sc, pos, src in zip(*(sr[k].to_numpy().tolist() for k in
                                                    ("pi", "g", "seat", "timestamp", "tgt", "score", "pos", "src"))):
        if src < 2 and seat >= 0 and 0 <= tgt != seat and sc == sc and dead[g, tgt] > ts:
            v, p = cells.setdefault(pi, ({}, {}))
            v[tgt] = max(v.get(tgt, -np.inf), max(sc, 0.0))
            p[tgt] = min(p.get(tgt, np.inf), float(pos))
    rows, tops, pis = [], [], []
    for pi in sorted(cells):
        v, p = cells[pi]
        row = np.full(S, np.nan)
        row[list(v)] = list(v.values())
        tot = np.nansum(row)
        if tot > 0:
            row = row / tot
            best = max(row[t] for t in v)
            tops.append(min((p[t], t) for t in v if row[t] == best)[1])
            rows.append(row)
            pis.append(pi)
    pi = np.array(pis, dtype=np.int64)
    pr = c.cols("probes", ["g", "seat", "timestamp", "round", "pms"])
    order = np.lexsort((pi, order_key(c, mode)[pi], pr["seat"].to_numpy()[pi], pr["g"].to_numpy()[pi]))
    V = np.array(rows).reshape(len(rows), S)
    out = {"V": V, "top": np.array(tops, dtype=np.int64), "pi": pi}
    out.update({k: pr[col].to_numpy()[pi] for k, col in (("g", "g"), ("agent", "seat"), ("ts", "timestamp"),
                                                         ("round", "round"), ("pms", "pms"))})
    return {k: out[k][order] for k in dynamics._STATE_KEYS}


@pytest.mark.parametrize("name", NAMES)
def test_suspicion_states_follow_the_definition(loaded, name: str) -> None:
    c = loaded[name]
    for mode in (Mode(), COMPAT):
        c.forget(dynamics.DYN_STATES.key(mode))
        got, want = dynamics.suspicion_states(c, mode), _states_by_probe(c, mode)
        assert len(want["g"]) > 1, name
        for k in dynamics._STATE_KEYS:
            assert got[k].dtype == want[k].dtype, (name, k)
            assert np.array_equal(got[k], want[k], equal_nan=True), (name, mode.name, k)


@pytest.mark.parametrize("seed", range(8))
def test_l1_pairs_equal_each_pair_by_definition(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Rows with NaN cells, nothing in common, zero sums, one-row sequences; blocks of 1, 2, 5 and all rows."""
    rng = np.random.default_rng(seed)
    n, S = int(rng.integers(0, 40)), 5
    V = rng.integers(0, 3, (n, S)).astype(float)
    V[rng.random((n, S)) < 0.4] = np.nan
    same = rng.random(n) < 0.7
    same[:1] = False
    want = []
    for r in np.flatnonzero(same).tolist():
        a, b = V[r - 1], V[r]
        common = ~np.isnan(a) & ~np.isnan(b)
        sa, sb = a[common].sum(), b[common].sum()
        want.append(np.abs(a[common] / sa - b[common] / sb).sum() if common.any() and sa > 0 and sb > 0 else np.nan)
    for block in (1, 2, 5, 1 << 40):
        monkeypatch.setattr(dynamics, "_BLOCK", block)
        got = dynamics._l1_pairs(V, same)
        assert got.dtype == np.float64 and np.allclose(got, want, equal_nan=True, rtol=1e-12, atol=0), block
        assert np.array_equal(np.isnan(got), np.isnan(np.array(want, dtype=float)))


@pytest.mark.parametrize("seed", range(6))
def test_cells_reduce_many_equals_each_reduction(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n, S = int(rng.integers(0, 20)), 7
    k = int(rng.integers(0, 90)) if n else 0
    row, col = rng.integers(0, max(n, 1), k), rng.integers(0, S, k).astype(np.int8)  # unsorted rows, repeats
    vals = rng.integers(-3, 4, k).astype(float)
    vals[rng.random(k) < 0.1] = np.nan
    specs = ((np.fmax, np.nan, vals), (np.minimum, np.inf, -vals), (np.add, 0.0, vals * 2))
    got = dynamics._cells_reduce_many(n, S, row, col, specs)
    for (op, fill, v), out in zip(specs, got):
        ref = np.full((n, S), fill)
        op.at(ref, (row, col), v)
        assert np.array_equal(out, ref, equal_nan=True), op


@pytest.mark.parametrize("x", [np.array([3, 3, 5, 9, 9, 9], dtype=np.int32), np.array([5, 3, 9, 3, 5]),
                               np.array([], dtype=np.int32), np.array([7])])
def test_distinct_equals_unique_first_index(x: np.ndarray) -> None:
    u, first = episodes._distinct(x)
    wu, wfirst = np.unique(x, return_index=True)
    assert np.array_equal(u, wu) and np.array_equal(first, wfirst) and u.dtype == x.dtype


def _groups_by_rows(c, mode: Mode, seats: np.ndarray | None) -> dict[str, Any]:
    """Dynamics' groups as computed before the (group, game) bins: each group's rows gathered, five bincounts."""
    from mafiascope.analytics import labels as L
    from mafiascope.analytics.intervals import ci_list as _ci, cluster_ci
    from mafiascope.analytics.stats import ratio_stat, round_or_none

    d = dynamics.pair_arrays(c, mode)
    if seats is not None:
        at = np.flatnonzero(seats[d["g"].astype(np.int64), d["agent"].astype(np.int64)])
        d = {k: d[k][at] for k in ("g", "l1", "flip", "flip_pair", "ret", "mafia", "role")}

    def stats(rows: np.ndarray, mult: int = 1) -> dict[str, Any]:
        g, l1, fl, fp, ret = (d[k][rows] for k in ("g", "l1", "flip", "flip_pair", "ret"))
        has = ~np.isnan(l1)
        cols = np.column_stack([np.bincount(g[has], weights=l1[has], minlength=c.m), np.bincount(g[has], minlength=c.m)]
                               + [np.bincount(g, weights=x.astype(float), minlength=c.m) for x in (fl, fp, ret)]).astype(float)
        tot = cols.sum(0)
        one = lambda i, j, mlt=1: {"point": round_or_none(tot[i] / tot[j] if tot[j] else None),  # noqa: E731
                                   "ci": _ci(cluster_ci(cols, ratio_stat(i, j), mode)), "n": int(tot[j]) * mlt}
        return {"volatility": one(0, 1, mult), "flip_rate": one(2, 3, mult), "return_rate": one(4, 2, mult)}

    out = {"Mafia": stats(np.flatnonzero(d["mafia"]), 2 if mode.is_compat else 1), "non-Mafia": stats(np.flatnonzero(~d["mafia"]))}
    if mode.is_compat:
        out["Mafia"]["_note"] = "n doubled as in the original (QUIRK); points and CIs unaffected"
    for code in np.unique(d["role"]).tolist():
        name = L.CODE_NAMES.get(int(code))
        if name and name not in out:
            out[name] = stats(np.flatnonzero(d["role"] == code))
    out["all"] = stats(np.arange(len(d["g"])))
    return out


@pytest.mark.parametrize("name", NAMES)
def test_dynamics_groups_equal_the_groups_by_rows(loaded, name: str) -> None:
    c = loaded[name]
    rng = np.random.default_rng(4)
    shape = c.seat_array("role_code").shape
    for mode in (Mode(boot=200), COMPAT):
        for seats in (None, rng.random(shape) < 0.5, np.zeros(shape, dtype=bool)):
            got = dynamics.dynamics(c, mode, seats=seats)
            assert got == _groups_by_rows(c, mode, seats), (name, mode.name)
            assert list(got) == list(_groups_by_rows(c, mode, seats))
