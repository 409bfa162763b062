"""The acct10 array paths give exactly what the code they replaced gave (kept here as the reference):
the parse section's per-probe counts from one bincount of (code, stored ok, repaired ok) with each
id's first row read from a prefix; the custom-probe rows decided per category; F4's items of each
unit's probe row by sorted ranges instead of a merge; personality's error terms and counts."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest

from mafiascope.analytics import accounting, last_before
from mafiascope.analytics import personality_blocks as pb
from mafiascope.analytics.load import TRAITS
from mafiascope.analytics.load import K_NONE
from mafiascope.probes.shapes import STANDARD_PROBES
from tests.loader_digest import loaded_corpora


def _probes(seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 12000))
    ids = np.array([*STANDARD_PROBES, "my_probe", "other"], dtype=object)
    pick = rng.integers(0, len(ids), n)
    if seed % 3 == 0:  # a probe id first seen late (past the first prefixes)
        pick[: n * 3 // 4] = pick[: n * 3 // 4] % 2
    pid = ids[pick]
    pid[rng.random(n) < (0.05 if seed % 2 else 0.0)] = None  # missing ids
    cats = list(ids) + ["never_used"]
    rng.shuffle(cats)
    return pd.DataFrame({"probe_id": pd.Categorical(pid, categories=cats),
                         "stored_kind": rng.choice(np.array([K_NONE, 1, 2], dtype=np.int8), n),
                         "eff_kind": rng.choice(np.array([K_NONE, 1, 3], dtype=np.int8), n)})


def _by_probe_groupby(p: pd.DataFrame) -> tuple[dict[str, list[int]], dict[str, list[int]]]:
    """The reference: ``groupby("probe_id", sort=False)`` over the rows as strings."""
    return accounting._by_probe(p.assign(probe_id=p["probe_id"].astype(object)))


@pytest.mark.parametrize("seed", range(24))
def test_by_probe_equals_groupby(seed: int) -> None:
    p = _probes(seed)
    got, ref = accounting._by_probe(p), _by_probe_groupby(p)
    assert got == ref
    assert [list(d) for d in got] == [list(d) for d in ref]  # the same order of first appearance


@pytest.mark.parametrize("seed", range(24))
def test_custom_rows_equal_isin(seed: int) -> None:
    p = _probes(seed)
    ref = ~p["probe_id"].isin(STANDARD_PROBES).to_numpy()
    assert np.array_equal(accounting._custom_rows(p["probe_id"]), ref)
    assert np.array_equal(accounting._custom_rows(p["probe_id"].astype(object)), ref)


def test_first_seen_prefixes() -> None:
    codes = np.r_[np.full(50000, -1), np.full(10, 3), np.zeros(70000, dtype=int), 7, 1].astype(np.int8)
    assert accounting.first_seen(codes, 4) == [3, 0, 7, 1]
    assert accounting.first_seen(codes[:0], 0) == []
    assert accounting.first_seen(np.array([2, -1, 0, 2], dtype=np.int8), 2) == [2, 0]


def _unit_items_merge(pis: np.ndarray, items: pd.DataFrame) -> pd.DataFrame:
    """The reference: F4's merge of each unit's probe row with the items."""
    q = pd.DataFrame({"u": np.arange(len(pis)), "pi": pis})
    return q[q["pi"].to_numpy() >= 0].merge(items, on="pi")


def _items(seed: int) -> tuple[np.ndarray, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    n_items, n_units, n_probes = (int(x) for x in rng.integers(0, 300, 3))
    pi = np.sort(rng.integers(0, n_probes + 1, n_items))
    if seed % 4 == 3:  # probe rows out of order (the sorted-ranges path sorts them, stably)
        pi = rng.permutation(pi)
    items = pd.DataFrame({"pi": pi, "pos": rng.integers(0, 4, n_items).astype(np.int32),
                          "tgt": rng.integers(0, 6, n_items).astype(np.int8), "lab": rng.integers(0, 3, n_items).astype(np.int8)})
    pis = np.where(rng.random(n_units) < 0.2, -1, rng.integers(0, n_probes + 2, n_units))
    return pis, items


@pytest.mark.parametrize("seed", range(40))
def test_unit_items_equal_merge(seed: int) -> None:
    pis, items = _items(seed)
    ref = _unit_items_merge(pis, items)
    unit, rows = last_before.unit_items(pis, items["pi"].to_numpy())
    assert np.array_equal(unit, ref["u"].to_numpy())
    assert np.array_equal(items["tgt"].to_numpy()[rows], ref["tgt"].to_numpy())
    assert np.array_equal(items["pos"].to_numpy()[rows], ref["pos"].to_numpy())
    assert np.array_equal(items["lab"].to_numpy()[rows], ref["lab"].to_numpy())


@pytest.mark.parametrize("seed", range(40))
def test_first_min_and_distinct_pairs_equal_frames(seed: int) -> None:
    pis, items = _items(seed)
    j = _unit_items_merge(pis, items)
    j = j[(j["tgt"].to_numpy() % 3) != 0]  # a filter, as F4's others keep some items
    first = j.sort_values(["u", "pos"], kind="stable").drop_duplicates("u")
    unit, pos, tgt = j["u"].to_numpy(), j["pos"].to_numpy(), j["tgt"].to_numpy()
    at = last_before.first_min(unit, pos)
    assert unit[at].tolist() == first["u"].tolist() and tgt[at].tolist() == first["tgt"].tolist()
    d = j.drop_duplicates(["u", "tgt"]).sort_values(["u", "tgt"], kind="stable")
    du, dt = last_before.distinct_pairs(unit, tgt)
    assert du.tolist() == d["u"].tolist() and dt.tolist() == d["tgt"].tolist()


def _terms_ref(truth: np.ndarray, base50: np.ndarray, cell: np.ndarray, est: np.ndarray):
    """The reference: personality's error terms before acct10 (both values tested for NaN per row)."""
    t = truth.take(cell)
    ok = ~np.isnan(t) & ~np.isnan(est)
    err = np.abs(est - t)
    err[~ok] = 0.0
    base = base50.take(cell)
    base[~ok] = 0.0
    return err, base, ok


def _values(rng: np.random.Generator, n: int, odd: bool) -> np.ndarray:
    x = rng.integers(0, 101, n).astype(float)
    x[rng.random(n) < 0.1] = np.nan
    if odd:  # infinities of both signs and fractions
        x[rng.random(n) < 0.05] = np.inf
        x[rng.random(n) < 0.05] = -np.inf
        x[rng.random(n) < 0.05] += 0.5
    return x


@pytest.mark.parametrize("seed", range(30))
def test_personality_terms_equal_reference(seed: int) -> None:
    rng = np.random.default_rng(seed)
    truth, est = _values(rng, 40, seed % 2 == 1), _values(rng, int(rng.integers(0, 300)), seed % 3 == 1)
    cell = rng.integers(0, 40, len(est))
    base50 = np.abs(50 - truth)
    err, base, miss = pb._terms(truth, base50, cell, est)
    r_err, r_base, ok = _terms_ref(truth, base50, cell, est)
    assert np.array_equal(err, r_err, equal_nan=True) and np.array_equal(base, r_base, equal_nan=True)
    assert np.array_equal(miss, np.flatnonzero(~ok))
    assert pb._whole(err) == bool(np.isfinite(err).all() and (err == np.rint(err)).all())


class _Fake:
    """What the personality paths read of a corpus: the seats' trait arrays and the memoised rows."""

    def __init__(self, seed: int, odd: bool):
        rng = np.random.default_rng(seed)
        self.m, S, n = 7, 5, int(rng.integers(1, 400))
        self.truth = {k: _values(rng, self.m * S, odd).reshape(self.m, S) for k in TRAITS}
        g = np.sort(rng.integers(0, self.m, n))
        self.rows = {"g": g, "seat": rng.integers(0, S, n).astype(np.int8), "tgt": rng.integers(0, S, n).astype(np.int8),
                     "round": rng.integers(1, 6, n).astype(np.int32), **{k: _values(rng, n, odd) for k in TRAITS}}

    def seat_array(self, k: str) -> np.ndarray:
        return self.truth[k]

    def memo(self, key: Any, build: Any) -> Any:
        return self.rows if key == accounting.PERSONALITY_ROWS.key() else build()


@pytest.mark.parametrize("seed", range(20))
def test_personality_pooled_and_seat_sums_with_missing_values(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    c = _Fake(seed, odd=seed % 4 == 3)
    r = c.rows
    monkeypatch.setattr(pb, "BLOCK_ROWS", 16)
    got = pb.pooled_errors(c, r, slice(None), len(r["g"]))
    monkeypatch.setattr(accounting, "pooled_errors", lambda *a: None)
    want = accounting.personality_error(c)  # the ordered computation
    assert got is None if seed % 4 == 3 else got == want
    S = c.truth[TRAITS[0]].shape[1]
    key = lambda g, s: g.astype(np.int64) * S + s  # noqa: E731
    n_cells = c.m * S
    cell = np.ravel_multi_index((r["g"], r["tgt"]), (c.m, S))
    ref = [np.zeros(n_cells + 1) for _ in range(3)]
    k = key(r["g"], r["seat"])
    for t in TRAITS:  # each cell's rows in row order, one trait after another
        e, b, ok = _terms_ref(c.truth[t].ravel(), np.abs(50 - c.truth[t].ravel()), cell, r[t])
        ref[0] += np.bincount(k, weights=e, minlength=n_cells + 1)
        ref[2] += np.bincount(k, weights=b, minlength=n_cells + 1)
        ref[1] += np.bincount(k, weights=ok, minlength=n_cells + 1)
    for block in (1 << 40, 16):
        monkeypatch.setattr(pb.game_blocks, "__defaults__", (block,))
        got_cells = pb.seat_sums(c, r, key, n_cells)
        assert all(np.array_equal(x, y, equal_nan=True) for x, y in zip(got_cells, ref))


@pytest.mark.parametrize("seed", range(12))
def test_action_kinds_equal_per_row_map(seed: int) -> None:
    rng = np.random.default_rng(seed)
    vals = np.array(["vote", " Kill", "PROTECT ", "observe", "save", "accuse", "nan", None, "check"], dtype=object)
    col = pd.Series(pd.Categorical(vals[rng.integers(0, len(vals), int(rng.integers(0, 200)))]))
    ref = col.astype(str).str.strip().str.lower().map(accounting.ACTION_KIND).to_numpy(dtype=object)
    for c in (col, col.astype(object)):
        got = accounting._action_kinds(c)
        assert np.array_equal(pd.isna(got), pd.isna(ref)) and got[~pd.isna(got)].tolist() == ref[~pd.isna(ref)].tolist()


@pytest.fixture(scope="module")
def loaded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return loaded_corpora(tmp_path_factory.mktemp("counts"), ("demo", "mafiascope_en_demo"))


def _plan_rows_sorted(c) -> pd.DataFrame:
    """The reference: each plan's first later action by sort_values + drop_duplicates (forced by
    handing the selection a merge whose plan order is not sorted)."""
    real = pd.DataFrame.merge

    def merge(self, *a, **k):
        return real(self, *a, **k).iloc[::-1]

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(pd.DataFrame, "merge", merge)
        return accounting._plan_rows(c)


@pytest.mark.parametrize("name", ("demo", "mafiascope_en_demo"))
def test_plan_rows_by_runs_equal_sorted_frame(loaded, name: str) -> None:
    c = loaded[name]
    got, ref = accounting._plan_rows(c), _plan_rows_sorted(c)
    assert len(got) and list(got.columns) == list(ref.columns)
    assert all(got[k].tolist() == ref[k].tolist() for k in got.columns)
