"""The accty paths give exactly what the code they replaced gave: F4's last record before a time by
one seat sort, each unit's items by a search within its game, the parse section from one table of
(probe id, flags) and its seat cells by one count, personality's section and seat cells from one pass
of whole-number sums, the plans' counts per action kind by factorising."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest

from mafiascope.analytics import accounting, f4, last_before, parse_counts
from mafiascope.analytics.metrics.personality import SUMS as PERSONALITY
from mafiascope.analytics import personality_blocks as pb
from mafiascope.analytics.load import K_NONE, TRAITS
from mafiascope.analytics.modes import COMPAT_CHOICES, Mode
from tests.loader_digest import loaded_corpora
from tests.test_analytics_cell_paths import _last_probe_merge
from tests.test_analytics_count_paths import _Fake, _probes, _terms_ref


@pytest.mark.parametrize("seed", range(30))
def test_last_probe_before_by_seat_equals_merge(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n_rec, n_units, games, seats = int(rng.integers(0, 120)), int(rng.integers(0, 80)), int(rng.integers(1, 6)), 5
    g = np.sort(rng.integers(0, games, n_rec)).astype(np.int32)
    ts = np.zeros(n_rec)
    for gg in np.unique(g):  # each game's times in row order, with ties
        at = g == gg
        ts[at] = np.sort(rng.integers(0, 12, int(at.sum()))).astype(float)
    pi = np.sort(rng.choice(10 * n_rec + 1, n_rec, replace=False))
    recs = {"g": g, "seat": rng.integers(-1 if seed % 2 else 0, seats, n_rec).astype(np.int8), "timestamp": ts, "pi": pi}
    t = rng.integers(-1, 14, n_units).astype(float)
    t[rng.random(n_units) < 0.1] = np.nan
    ug, voter = rng.integers(0, games + 1, n_units), rng.integers(0, seats + 1, n_units)
    ix = last_before.record_index(recs)
    assert "seat_key" in ix  # the seat-sorted index, not the general one
    assert np.array_equal(last_before.last_probe_before(ug, voter, t, ix), _last_probe_merge(ug, voter, t, recs))
    if n_rec > 2 and g[0] == g[1]:  # a later time before an earlier one in a game: the general index
        bad = {**recs, "timestamp": ts.copy(), "seat": recs["seat"].copy()}
        bad["timestamp"][0], bad["seat"][:2] = ts[1] + 1, 0
        ix = last_before.record_index(bad)
        assert "seat_key" not in ix
        assert np.array_equal(last_before.last_probe_before(ug, voter, t, ix), _last_probe_merge(ug, voter, t, bad))


@pytest.mark.parametrize("seed", range(20))
def test_bisect_left_equals_searchsorted_per_range(seed: int) -> None:
    rng = np.random.default_rng(seed)
    a = np.sort(rng.integers(0, 30, 200)).astype(float)
    lo = rng.integers(0, 200, 50)
    hi = np.minimum(200, lo + rng.integers(0, 40, 50))
    x = rng.integers(-2, 33, 50).astype(float)
    order = rng.permutation(200)  # a read through an order: a[order] sorted
    b = np.empty(200)
    b[order] = a
    ref = [lo[i] + np.searchsorted(a[lo[i]:hi[i]], x[i], "left") for i in range(50)]
    assert last_before.bisect_left(a, lo, hi, x).tolist() == ref
    assert last_before.bisect_left(b, lo, hi, x, order).tolist() == ref


@pytest.mark.parametrize("seed", range(30))
def test_probe_items_equal_unit_items(seed: int) -> None:
    rng = np.random.default_rng(seed)
    m, n_items, n_units = int(rng.integers(1, 6)), int(rng.integers(0, 300)), int(rng.integers(0, 60))
    n_probes = rng.integers(1, 40, m)
    start = np.r_[0, np.cumsum(n_probes)[:-1]]
    g = np.sort(rng.integers(0, m, n_items)).astype(np.int32)
    rec = np.zeros(n_items, dtype=np.int32)
    for gg in range(m):
        at = g == gg
        rec[at] = np.sort(rng.integers(0, n_probes[gg], int(at.sum())))
    ug = rng.integers(0, m, n_units)
    urec = np.where(rng.random(n_units) < 0.2, -1, rng.integers(0, n_probes[ug] + 1))
    pis = np.where(urec >= 0, start[ug] + urec, -1)
    pis[urec >= n_probes[ug]] = -1  # a record past the game's last: none
    urec[pis < 0] = -1
    bounds = last_before.item_bounds(g, rec, m)
    assert bounds is not None
    ref = last_before.unit_items(pis, start[g] + rec)
    got = last_before.probe_items(bounds, rec, ug, urec)
    assert all(np.array_equal(x, y) for x, y in zip(got, ref))
    if n_items > 1 and len(np.unique(rec)) > 1:  # records out of order within a game: declined
        assert last_before.item_bounds(g, rec[::-1].copy(), m) is None or bool((np.diff(g) > 0).all())
    assert last_before.item_bounds(g, rec, m - 1 if n_items and g[-1] == m - 1 else m) is None or not n_items \
        or g[-1] < m - 1


@pytest.fixture(scope="module")
def loaded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return loaded_corpora(tmp_path_factory.mktemp("acct"), ("demo", "mafiascope_en_demo"))


def _modes() -> tuple[Mode, ...]:
    return Mode(boot=0), Mode(boot=0, compat=COMPAT_CHOICES[0])


@pytest.mark.parametrize("name", ("demo", "mafiascope_en_demo"))
def test_vote_units_equal_the_general_paths(loaded, name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """F4's units with the seat index and the in-game item search against the frames they replaced."""
    c = loaded[name]
    taken: list[str] = []
    real_bounds = last_before.item_bounds
    monkeypatch.setattr(last_before, "item_bounds", lambda *a: taken.append("bounds") or real_bounds(*a))
    got = {m: f4.vote_units(c, m, transcripts=False) for m in _modes()}
    assert taken and all(len(u) for u in got.values())
    c.forget(*[k for k in c.memo_keys() if k[0] is f4.F4_UNITS])
    monkeypatch.setattr(last_before, "item_bounds", lambda *a: None)
    monkeypatch.setattr(last_before, "_in_time_order", lambda *a: False)
    for m, u in got.items():
        ref = f4.vote_units(c, m, transcripts=False)
        pd.testing.assert_frame_equal(u, ref)  # values (NaN where no prediction), dtypes, columns
    c.forget(*[k for k in c.memo_keys() if k[0] is f4.F4_UNITS])


class _Probes:
    """What the parse section reads of a corpus: the probe columns and the number of games."""

    def __init__(self, p: pd.DataFrame):
        self.p, self.m = p, 3

    def cols(self, table: str, cols: list[str]) -> pd.DataFrame:
        return self.p[cols]


@pytest.mark.parametrize("seed", range(24))
def test_parse_from_flags_equals_row_counts(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    p = _probes(seed)
    rng = np.random.default_rng(seed)
    n = len(p)
    p = p.assign(g=rng.integers(0, 3, n).astype(np.int32), seat=rng.integers(-1, 4, n).astype(np.int8),
                 repaired=rng.random(n) < 0.2, transport=rng.random(n) < 0.1,
                 tokens_prompt=np.where(rng.random(n) < 0.1, np.nan, rng.integers(0, 90, n)).astype(float),
                 tokens_completion=rng.integers(0, 50, n).astype(float))
    c = _Probes(p)
    assert parse_counts.countable(p)
    seats = rng.random((3, 4)) < 0.7
    got = [accounting.parse_accounting(c, Mode(boot=0)), accounting.parse_accounting(c, Mode(boot=0), seats=seats)]
    monkeypatch.setattr(accounting, "countable", lambda p: False)
    ref = [accounting.parse_accounting(c, Mode(boot=0)), accounting.parse_accounting(c, Mode(boot=0), seats=seats)]
    for x, y in zip(got, ref):
        assert x == y and list(x) == list(y) and [list(d) for d in (x["by_probe_raw"], x["by_probe_repaired"])] == \
            [list(d) for d in (y["by_probe_raw"], y["by_probe_repaired"])]


class _Memo(_Fake):
    """The personality fake with a real memo (the whole-number sums are memoised)."""

    def __init__(self, seed: int, odd: bool):
        super().__init__(seed, odd)
        self._m: dict[Any, Any] = {"personality_rows": self.rows}

    def memo(self, key: Any, build: Any) -> Any:
        if key not in self._m:
            self._m[key] = build()
        return self._m[key]


@pytest.mark.parametrize("seed", range(20))
def test_whole_sums_equal_pooled_errors_and_seat_sums(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    odd = seed % 4 == 3
    c = _Memo(seed, odd)
    r = c.rows
    monkeypatch.setattr(pb, "BLOCK_ROWS", 16 if seed % 2 else 1 << 19)
    sums = pb.whole_sums(c, r)
    if odd:  # fractions or infinities: declined, each keeps its own path
        assert sums is None and pb.pooled_from(sums, len(r["g"])) is None
        return
    S = c.truth[TRAITS[0]].shape[1]
    assert pb.pooled_from(sums, len(r["g"])) == pb.pooled_errors(c, r, slice(None), len(r["g"]))
    ref = pb.seat_sums(c, r, lambda g, s: g.astype(np.int64) * S + s, c.m * S)
    assert all(np.array_equal(x, y) for x, y in zip(sums["cells"], ref)) and sums["shape"] == (c.m, S)
    assert sums["rounds"].tolist() == np.unique(r["round"]).tolist()
    cell = np.ravel_multi_index((r["g"], r["tgt"]), (c.m, S))
    e, _, ok = _terms_ref(c.truth["O"].ravel(), np.abs(50 - c.truth["O"].ravel()), cell, r["O"])
    assert sums["traits"][0, 0] == e.sum() and sums["traits"][2, 0] == ok.sum()


@pytest.mark.parametrize("name", ("demo", "mafiascope_en_demo"))
def test_personality_section_and_cells_from_whole_sums(loaded, name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    c = loaded[name]
    c.forget(pb.PERSONALITY_WHOLE_SUMS.key())
    got = accounting.personality_error(c), PERSONALITY.build(c, Mode(boot=0))["sums"]
    assert c.peek(pb.PERSONALITY_WHOLE_SUMS.key()) is not None
    c.forget(pb.PERSONALITY_WHOLE_SUMS.key())
    monkeypatch.setattr(pb, "_whole_sums", lambda *a: None)
    ref = accounting.personality_error(c), PERSONALITY.build(c, Mode(boot=0))["sums"]
    c.forget(pb.PERSONALITY_WHOLE_SUMS.key())
    assert got[0] == ref[0] and np.array_equal(got[1], ref[1])


@pytest.mark.parametrize("seed", range(12))
def test_by_kind_equals_dict_updates(seed: int) -> None:
    rng = np.random.default_rng(seed)
    kinds = np.array(["day_vote", "night_mafia", "night_doctor", "night_sheriff"], dtype=object)[
        rng.integers(0, 4, int(rng.integers(0, 300)))]
    hit = rng.random(len(kinds)) < 0.4
    ref: dict[str, list[int]] = {}
    for kd, h in zip(kinds.tolist(), hit.astype(int).tolist()):
        e = ref.setdefault(kd, [0, 0])
        e[0] += h
        e[1] += 1
    got = accounting.by_kind(kinds, hit)
    assert got == ref and list(got) == list(ref)


def test_raw_items_keep_the_stored_answers_items_only(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Items of a repaired answer (src 1) share their record's rows: the in-game search drops them as the
    joined frame of raw items does."""
    from pathlib import Path

    from mafiascope.analytics.corpus import load_corpus
    from mafiascope.analytics.frames import eq

    c = load_corpus(Path(__file__).resolve().parents[1] / "data" / "demo", cache_dir=tmp_path, probed_only=False)
    rng = np.random.default_rng(3)
    sr = c.sr.copy()
    sr["src"] = (rng.random(len(sr)) < 0.3).astype(sr["src"].dtype)
    c.sr = sr
    p = c.cols("probes", ["g", "parse_ok", "probe_id"])
    at = np.flatnonzero(p["parse_ok"].to_numpy() & eq(p["probe_id"], "suspicion_ranking"))
    pis = np.where(rng.random(200) < 0.1, -1, rng.choice(at, 200))
    g_u = p["g"].to_numpy()[np.maximum(pis, 0)]
    got = last_before.raw_items(c, "sr", ["pos", "tgt"], g_u)(pis)
    monkeypatch.setattr(last_before, "item_bounds", lambda *a: None)
    ref = last_before.raw_items(c, "sr", ["pos", "tgt"], g_u)(pis)
    assert np.array_equal(got[0], ref[0]) and len(got[0]) > 100
    assert all(np.array_equal(got[1][k], ref[1][k]) for k in ("pos", "tgt"))


def test_whole_sums_decline_fractional_estimates() -> None:
    c = _Memo(0, odd=False)  # whole generating values
    c.rows["C"] = c.rows["C"] + 0.5
    assert pb.whole_sums(c, c.rows) is None


@pytest.mark.parametrize("name", ("demo", "mafiascope_en_demo"))
def test_personality_rows_by_record_runs_equal_item_arrays(loaded, name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    c = loaded[name]
    c.forget(accounting.PERSONALITY_ROWS.key())
    got = accounting.personality_rows(c)
    c.forget(accounting.PERSONALITY_ROWS.key())
    monkeypatch.setattr(accounting, "by_record_runs", lambda *a: None)
    ref = accounting.personality_rows(c)
    c.forget(accounting.PERSONALITY_ROWS.key())
    assert list(got) == list(ref) and len(ref["g"])
    assert all(got[k].dtype == ref[k].dtype and np.array_equal(got[k], ref[k], equal_nan=True) for k in ref)
    cols = ("g", "tgt", "O")
    assert last_before.by_record_runs(c, "pp", "role_assessment", cols, ("seat",)) is None  # not that probe's items
    monkeypatch.setattr(last_before, "item_bounds", lambda *a: None)  # items out of (game, record) order
    assert last_before.by_record_runs(c, "pp", "personality_profile", cols, ("seat",)) is None


class _Tables:
    """A corpus of given tables (no memo kept)."""

    def __init__(self, tables: dict[str, pd.DataFrame], m: int):
        self.tables, self.m = tables, m

    def cols(self, table: str, cols: list[str]) -> pd.DataFrame:
        return self.tables[table][list(cols)]

    def memo(self, key: Any, build: Any) -> Any:
        return build()

    def n_rows(self, table: str) -> int:
        return len(self.tables[table])


@pytest.mark.parametrize("seed", range(12))
def test_by_record_runs_equal_item_arrays(seed: int) -> None:
    """Runs end where the game changes even when two games' records share a number."""
    from mafiascope.analytics.frames import item_arrays

    rng = np.random.default_rng(seed)
    m, per = 4, 3
    probes = pd.DataFrame({"g": np.repeat(np.arange(m), per).astype(np.int32),
                           "probe_id": pd.Categorical(["personality_profile"] * (m * per)),
                           "seat": rng.integers(0, 7, m * per).astype(np.int8), "round": rng.integers(1, 5, m * per)})
    g = np.repeat(np.arange(m), 2).astype(np.int32)  # each game's items: one record, the same number in every game
    items = pd.DataFrame({"g": g, "rec": np.full(len(g), 2, dtype=np.int32), "tgt": rng.integers(0, 7, len(g))})
    c = _Tables({"probes": probes, "pp": items}, m)
    got = last_before.by_record_runs(c, "pp", "personality_profile", ("g", "tgt"), ("seat", "round"))
    ref = item_arrays(c, "pp", "personality_profile", ("g", "tgt"), ("seat", "round"))
    assert got is not None and all(np.array_equal(got[k], ref[k]) for k in got)
