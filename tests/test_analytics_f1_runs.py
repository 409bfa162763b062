"""F1's arrays computed once per run of a probe's items, and its per-round figures from one count of
(round, game, outcome code) keys, give exactly what the per-item computation and the per-round
sort with weighted per-game sums they replaced gave (keys, dtypes, values, key order), both modes,
for the whole corpus, a model's observers and seat masks; also with every item its own run and
with the counts taken round by round."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from mafiascope.analytics import f1
from mafiascope.analytics import labels as L
from mafiascope.analytics.frames import alive_matrix, item_arrays, mafia_mask, played_by, true_roles
from mafiascope.analytics.modes import COMPAT, Mode
from mafiascope.analytics.intervals import pooled_entry, ratio_ci
from mafiascope.analytics.stats import round_or_none
from tests.loader_digest import loaded_corpora

NAMES = ("demo", "fixtures_v2", "mafiascope_en_demo", "mafiascope_ru_legacy", "malformed")


@pytest.fixture(scope="module")
def loaded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return loaded_corpora(tmp_path_factory.mktemp("f1runs"), NAMES)


def _arrays_by_item(c, mode: Mode) -> dict[str, np.ndarray]:
    """The per-item definition: an (items, seats) alive mask and role comparison for every item."""
    it = item_arrays(c, "ra", "role_assessment", ("g", "tgt", "role_en" if mode.is_compat else "role", "conf"),
                     ("seat", "timestamp", "round"))
    roles, maf = true_roles(c, mode), mafia_mask(c)
    g, obs, tgt = it["g"], it["seat"], it["tgt"]
    guess = it["role_en" if mode.is_compat else "role"]
    ok = (obs >= 0) & (tgt >= 0) & (tgt != obs) & (guess != L.UNUSABLE) & ~maf[g, np.where(obs >= 0, obs, 0)]
    at = np.flatnonzero(ok)
    g, obs, tgt, guess = g[at], obs[at], tgt[at], guess[at]
    alive = alive_matrix(c, g, it["timestamp"][at])
    rows = np.arange(len(g))
    if not mode.is_compat:
        keep = alive[rows, tgt]
        at, g, obs, tgt, guess, alive = at[keep], g[keep], obs[keep], tgt[keep], guess[keep], alive[keep]
        rows = np.arange(len(g))
    alive[rows, obs] = False
    n = alive.sum(1)
    truth = roles[g, tgt]
    same = (alive & (roles[g] == truth[:, None])).sum(1)
    n_maf = (alive & maf[g]).sum(1)
    with np.errstate(divide="ignore", invalid="ignore"):
        acc, rec = np.where(n > 0, same / n, np.nan), np.where(n > 0, n_maf / n, np.nan)
    out = {"g": g, "round": it["round"][at], "obs": obs, "tgt": tgt, "guess": guess, "truth": truth,
           "conf": it["conf"][at], "timestamp": it["timestamp"][at], "unknown": guess == L.UNKNOWN,
           "committed": guess != L.UNKNOWN, "correct": guess == truth, "tgt_mafia": maf[g, tgt],
           "hit_mafia": guess == L.MAFIA, "acc_chance": acc, "rec_chance": rec}
    return {k: out[k] for k in f1._F1_COLS}


@pooled_entry
def _by_round_by_sort(c, mode: Mode, model: str | None = None, seats: np.ndarray | None = None) -> dict[str, Any]:
    """The replaced f1_by_round: a stable sort by round, weighted per-game sums per round."""
    it = f1.f1_arrays(c, mode)
    keep = None if model is None else played_by(c, it["g"], it["obs"], model)
    if seats is not None:
        keep = seats[it["g"], it["obs"]] if keep is None else keep & seats[it["g"], it["obs"]]
    at = slice(None) if keep is None else np.flatnonzero(keep)
    col = {k: v[at] for k, v in it.items()}
    order = np.argsort(col["round"], kind="stable")
    rs = col["round"][order]
    bounds = np.flatnonzero(np.r_[True, rs[1:] != rs[:-1]]) if len(rs) else np.zeros(0, dtype=np.int64)
    out: dict[str, Any] = {}

    def per_game(sel, w) -> np.ndarray:
        return np.bincount(col["g"][sel], weights=w, minlength=c.m)

    for lo, hi in zip(bounds.tolist(), [*bounds[1:].tolist(), len(rs)]):
        sel = order[lo:hi]
        com, tm, ac, rc = col["committed"][sel], col["tgt_mafia"][sel], col["acc_chance"][sel], col["rec_chance"][sel]
        ak, an = per_game(sel, (col["correct"][sel] & com).astype(float)), per_game(sel, com.astype(float))
        uk, un = per_game(sel, col["unknown"][sel].astype(float)), per_game(sel, np.ones(len(sel)))
        rk, rn = per_game(sel, (col["hit_mafia"][sel] & tm).astype(float)), per_game(sel, tm.astype(float))
        acc_ch, rec_ch = ac[com & ~np.isnan(ac)], rc[tm & ~np.isnan(rc)]
        out[str(int(rs[lo]))] = {
            "acc": round_or_none(ak.sum() / an.sum() if an.sum() else None), "acc_n": int(an.sum()),
            "acc_chance": round_or_none(acc_ch.mean() if len(acc_ch) else None),
            "acc_ci95": f1._ci(ratio_ci(ak, an, mode)),
            "unk": round_or_none(uk.sum() / un.sum() if un.sum() else None), "unk_n": int(un.sum()),
            "unk_ci95": f1._ci(ratio_ci(uk, un, mode)),
            "recall": round_or_none(rk.sum() / rn.sum() if rn.sum() else None), "recall_n": int(rn.sum()),
            "recall_chance": round_or_none(rec_ch.mean() if len(rec_ch) else None),
            "recall_ci95": f1._ci(ratio_ci(rk, rn, mode)),
        }
    return out


def _assert_same_arrays(got: dict[str, np.ndarray], want: dict[str, np.ndarray], where: Any) -> None:
    assert list(got) == list(want), where
    for k in want:
        assert got[k].dtype == want[k].dtype, (where, k)
        assert np.array_equal(got[k], want[k], equal_nan=True), (where, k)


@pytest.mark.parametrize("name", NAMES)
def test_f1_arrays_per_run_equal_per_item(loaded, name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    c = loaded[name]
    for mode in (Mode(), COMPAT):
        want = _arrays_by_item(c, mode)
        c.forget(f1.F1_ARRAYS.key(mode))
        _assert_same_arrays(f1.f1_arrays(c, mode), want, (name, mode.name))
        with monkeypatch.context() as mp:  # every item its own run (items in no useful order)
            mp.setattr(f1, "_runs", lambda g, pi: (np.arange(len(pi)), np.ones(len(pi), dtype=np.int64)))
            c.forget(f1.F1_ARRAYS.key(mode))
            _assert_same_arrays(f1.f1_arrays(c, mode), want, (name, mode.name, "one item a run"))
        for runs in (1, 3):  # the kept items filled a few runs at a time (blocks end inside a game)
            with monkeypatch.context() as mp:
                mp.setattr(f1, "_RUNS", runs)
                c.forget(f1.F1_ARRAYS.key(mode))
                _assert_same_arrays(f1.f1_arrays(c, mode), want, (name, mode.name, "blocks of", runs))
        c.forget(f1.F1_ARRAYS.key(mode), f1.F1_ROUND_CODES.key(mode))


def test_runs_split_at_every_probe_or_game_change() -> None:
    g = np.array([0, 0, 0, 1, 1, 1, 1, 2], dtype=np.int32)
    pi = np.array([5, 5, 6, 6, 6, 2, 2, 2], dtype=np.int32)  # (1, 6) after (0, 6): a new run
    first, length = f1._runs(g, pi)
    assert first.tolist() == [0, 2, 3, 5, 7] and length.tolist() == [2, 1, 2, 2, 1]
    first, length = f1._runs(g[:0], pi[:0])
    assert first.tolist() == [] and length.tolist() == []


@pytest.mark.parametrize("name", NAMES)
def test_f1_by_round_counts_equal_sorted_weighted_sums(loaded, name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    c = loaded[name]
    rng = np.random.default_rng(3)
    shape = c.seat_array("role_code").shape
    masks = (None, rng.random(shape) < 0.5, np.zeros(shape, dtype=bool), rng.random(shape) < 0.1)
    models = [None, *sorted({str(m) for m in c.seat_array_obj("model").ravel() if m is not None}), "no such model"]
    for mode in (Mode(boot=50), COMPAT):
        for bins in (1 << 22, 1):  # one count of every (round, game, code), or round by round (and rounds sorted)
            monkeypatch.setattr(f1, "_BINS", bins)
            c.forget(f1.F1_ROUND_CODES.key(mode))
            for model in models:
                for seats in masks:
                    got = f1.f1_by_round(c, mode, model=model, seats=seats)
                    want = _by_round_by_sort(c, mode, model, seats)
                    assert list(got) == list(want), (name, mode.name, bins, model)
                    assert got == want, (name, mode.name, bins, model)
        c.forget(f1.F1_ROUND_CODES.key(mode))


@pooled_entry
def _per_model_calls(c, mode: Mode, models: list[str]) -> list[Any]:
    return [f1.f1_by_round(c, mode, model=mdl) for mdl in models]


@pooled_entry
def _per_model_grouped(c, mode: Mode, models: list[str]) -> list[Any]:
    return list(f1.f1_by_round_models(c, mode, models))


@pytest.mark.parametrize("name", NAMES)
def test_f1_by_round_models_equal_one_call_per_model(loaded, name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """One grouping by (model, round) gives each model exactly its filtered call's figures (key order,
    counts, chance means, intervals in the same batch order), for every model, an unknown one and
    repeats; one count and round by round."""
    c = loaded[name]
    seated = sorted({str(m) for m in c.seat_array_obj("model").ravel() if m is not None})
    models = [*seated, "no such model", *seated[:1]]
    for mode in (Mode(boot=50), COMPAT):
        for bins in (1 << 22, 1):
            monkeypatch.setattr(f1, "_BINS", bins)
            want = _per_model_calls(c, mode, models)
            got = _per_model_grouped(c, mode, models)
            assert [list(x) for x in got] == [list(x) for x in want], (name, mode.name, bins)
            assert got == want, (name, mode.name, bins)


def test_f1_by_round_models_table_order_within_a_round(loaded) -> None:
    """The chance means take a (model, round)'s rows in table order: with values whose sum depends
    on the order, the grouped means still equal the filtered call's."""
    c = loaded["demo"]
    mode = Mode(boot=0)
    it = f1.f1_arrays(c, mode)
    saved = {k: it[k].copy() for k in ("acc_chance", "rec_chance")}
    try:
        rng = np.random.default_rng(5)
        for k in saved:
            it[k][:] = rng.choice([1e16, 1.0, -1e16, 3.0], size=len(it[k]))
        models = sorted({str(m) for m in c.seat_array_obj("model").ravel() if m is not None})
        assert _per_model_grouped(c, mode, models) == _per_model_calls(c, mode, models)
    finally:
        for k, v in saved.items():
            it[k][:] = v
