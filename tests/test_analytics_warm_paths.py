"""The warm report's array paths for F1, F3, dynamics and episodes give what the frame-based
computations they replaced gave: the step table (integer step codes vs pandas group-by and
joins), the episode selector's top suspects (vs the definition, :func:`episodes.top_suspects`),
F3's summaries from (predicted, actual) histograms (vs the per-pair sums they replaced), the
item arrays (vs ``items_with_probe``'s frame) and the sorted-run codes (vs ``np.unique``)."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pandas as pd
import pytest

from mafiascope.analytics import episodes, f3, f3_match
from mafiascope.analytics import labels as L
from mafiascope.analytics.dynamics import _codes
from mafiascope.analytics.frames import item_arrays, items_with_probe
from mafiascope.analytics.modes import COMPAT, Mode
from mafiascope.analytics.step_keys import fast_step_table
from mafiascope.analytics.intervals import cluster_ci, pooled
from mafiascope.analytics.stats import ratio_stat, round_or_none
from mafiascope.analytics.viewer import frame_step_table, step_table
from tests.loader_digest import loaded_corpora

NAMES = ("demo", "fixtures_v0", "fixtures_v1", "fixtures_v2", "mafiascope_en_demo", "mafiascope_ru_legacy", "malformed")


@pytest.fixture(scope="module")
def loaded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return loaded_corpora(tmp_path_factory.mktemp("warm_paths"), NAMES)


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype == object:
        return all(x == y or (x != x and y != y) for x, y in zip(a.tolist(), b.tolist()))
    return bool(np.array_equal(a, b, equal_nan=a.dtype.kind == "f"))


@pytest.mark.parametrize("name", NAMES)
def test_step_table_equals_frame_build(loaded, name: str) -> None:
    c = loaded[name]
    want, got = frame_step_table(c), fast_step_table(c)
    assert got is not None and list(got) == list(want)
    for k in want:
        assert _same(got[k], want[k]), f"{name}: step table column {k}"


def test_step_table_equals_frame_build_with_gaps(loaded) -> None:
    """Probes without a phase, messages without a speaker, a message-only step and shuffled event rows."""
    c = loaded["demo"]
    probes = c.probes.copy()
    probes.loc[probes.index[::7], "phase"] = None
    probes.loc[probes.index[::11], "timestamp"] = np.nan
    ev = c.events.copy()
    ev.loc[ev.index[::5], "player"] = -1
    msg = ev[ev["msg_seq"].to_numpy() >= 0].iloc[::3]  # second messages at some steps: first and last differ
    ev = pd.concat([ev, msg.assign(player=(msg["player"] + 1) % 5, ts=msg["ts"] + 0.5, kind=msg["kind"].iloc[::-1].to_numpy())])
    ev = ev.iloc[np.random.default_rng(3).permutation(len(ev))]
    d = c.with_tables(probes=probes, events=ev)
    want, got = frame_step_table(d), fast_step_table(d)
    for k in want:
        assert _same(got[k], want[k]), k
    assert (~got["has_message"]).any() and (got["speaker"] == -1).any()


@pytest.mark.parametrize("name", ["demo", "mafiascope_en_demo", "malformed"])
def test_ranking_tops_follow_the_definition(loaded, name: str) -> None:
    """Each living agent's top suspect at each discussion step, from its rankings at exactly that step."""
    c = loaded[name]
    st = step_table(c)
    disc = np.flatnonzero(st["disc"])
    Z = episodes._ranking_tops(c, st, disc)
    sr = items_with_probe(c, "sr", "suspicion_ranking")
    scores: dict[tuple[int, int, int, int], dict[int, float]] = {}
    for g, r, s, seat, t, v in zip(*(sr[k].to_numpy().tolist() for k in ("g", "round", "pms", "seat", "tgt", "score"))):
        if t >= 0 and seat >= 0 and v == v:
            cell = scores.setdefault((g, r, s, seat), {})
            cell[t] = max(cell.get(t, v), v)
    for i, row in enumerate(disc.tolist()):
        alive = set(np.flatnonzero(st["alive"][row]).tolist())
        for a in range(Z.shape[1]):
            if a not in alive:
                assert Z[i, a] == -2
                continue
            key = (int(st["g"][row]), int(st["round"][row]), int(st["seq"][row]), a)
            top = episodes.top_suspects(scores.get(key, {}), alive, a)
            assert Z[i, a] == (-1 if top is None else top), (name, key)
    assert len(disc)


def _summary_by_rows(P: dict[str, np.ndarray], tau: float, window: int | None, m: int, mode: Mode,
                     sel: np.ndarray | None) -> dict[str, Any]:
    """F3's summary as computed before the histogram path: per-pair masks and weighted per-game sums."""
    keep = np.ones(len(P["g"]), dtype=bool) if sel is None else sel
    if window is not None:
        keep = keep & (P["b_round"] >= P["a_round"] - window)
    pred = P["pred"][keep]
    act = f3.actual_attitude(P["guess"], P["conf"], tau)[keep]
    n = len(pred)
    correct = pred == act

    def first_seen(x: np.ndarray) -> list[int]:
        return [v for _, v in sorted((int(np.argmax(x == v)), v) for v in range(3) if (x == v).any())]

    act_counts = {f3.CLASSES[a]: int((act == a).sum()) for a in first_seen(act)}
    pred_counts = {f3.CLASSES[p]: int((pred == p).sum()) for p in first_seen(pred)}
    maj_class = max(act_counts, key=lambda k: act_counts[k]) if act_counts else None
    acc = correct.mean() if n else None
    maj = act_counts[maj_class] / n if n else None
    ps, as_ = int((pred == L.SUSPECTS).sum()), int((act == L.SUSPECTS).sum())
    g = P["g"][keep]
    cols = [np.bincount(g, minlength=m).astype(float), np.bincount(g, weights=correct.astype(float), minlength=m)]
    cols += [np.bincount(g, weights=(act == a).astype(float), minlength=m) for a in range(3)]
    cols.append(np.bincount(g, weights=(pred == L.SUSPECTS).astype(float), minlength=m))
    pg = np.column_stack(cols)
    nz = lambda p: np.where(p[:, 0] > 0, p[:, 0], np.nan)  # noqa: E731
    ci = lambda i: None if i.value() is None else [round_or_none(i.value()[0]), round_or_none(i.value()[1])]  # noqa: E731
    return {"n": n, "accuracy": round_or_none(acc), "majority_class": maj_class, "majority_baseline": round_or_none(maj),
            "diff": round_or_none(acc - maj if n else None), "pred_counts": pred_counts, "actual_counts": act_counts,
            "suspects_ratio": round_or_none(ps / as_ if as_ else None), "pred_suspects": ps, "actual_suspects": as_,
            "acc_ci95": ci(cluster_ci(pg, lambda p: p[:, 1] / nz(p), mode)),
            "diff_ci95": ci(cluster_ci(pg, lambda p: (p[:, 1] - p[:, 2:5].max(1)) / nz(p), mode)),
            "ratio_ci95": ci(cluster_ci(pg, ratio_stat(5, 4), mode))}


@pytest.mark.parametrize("chunk", [7, 1 << 20])
@pytest.mark.parametrize("seed", range(4))
def test_f3_summary_equals_per_pair_sums(seed: int, chunk: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every class selection and window from one pass of counts per threshold, also summed a few pairs
    at a time (``_SUM_CHUNK``): the same counts, first-seen orders and intervals as per-pair sums."""
    monkeypatch.setattr(f3, "_SUM_CHUNK", chunk)
    rng = np.random.default_rng(seed)
    m, n = 9, [0, 1, 40, 600][seed]
    P = {"g": np.sort(rng.integers(0, m, n)).astype(np.int32), "pred": rng.integers(0, 3, n).astype(np.int8),
         "guess": rng.choice([L.VILLAGER, L.MAFIA, L.DON, L.DOCTOR, L.SHERIFF, L.UNKNOWN], n).astype(np.int64),
         "conf": rng.choice([0.0, 30.0, 49.5, 50.0, 70.0, 100.0], n), "a_round": rng.integers(1, 5, n).astype(np.int32),
         "mm": rng.random(n) < 0.2, "a_mafia": rng.random(n) < 0.4}
    P["b_round"] = (P["a_round"] - rng.integers(0, 4, n)).astype(np.int32)
    P["mm"] &= P["a_mafia"]
    masks = {"canonical": ~P["mm"], "innocent": ~P["mm"] & ~P["a_mafia"], "mafia": ~P["mm"] & P["a_mafia"], "all": None}
    for windows, taus in (((1,), ()), ((1, 2), ()), ((1,), (70, 30, 50))):  # counts of one threshold, of several at once
        pairs = f3._Pairs(P, windows, taus=taus)
        for mode in (Mode(boot=50), Mode(boot=50, compat=COMPAT.compat)):
            for tau in (30, 50, 70):
                for window in (None,) + windows:
                    for sel, s in masks.items():
                        got = pooled(f3._summary, pairs, tau, window, m, mode, True, sel)
                        want = _summary_by_rows(P, tau, window, m, mode, s)
                        assert json.dumps(got) == json.dumps(want), (tau, window, sel)  # key order (first seen) included


def test_f3_codes_equal_the_attitudes() -> None:
    """The int8 table lookup of ``codes_of`` gives ``pred * 3 + actual_attitude`` (NaN and unusable guesses too)."""
    rng = np.random.default_rng(3)
    n = 500
    pred, guess = rng.integers(0, 3, n).astype(np.int8), rng.integers(-1, 6, n).astype(np.int8)
    conf = rng.choice([np.nan, 0.0, 30.0, 49.5, 50.0, 100.0], n)
    for tau in (0, 30, 50, 70):
        want = pred.astype(np.int64) * 3 + f3.actual_attitude(guess, conf, tau)
        for g in (guess, guess.astype(np.int64)):  # the int8 path and the general one
            got = f3.codes_of(pred, g, conf, tau)
            assert got.dtype == np.int8 and got.tolist() == want.tolist(), (tau, g.dtype)


@pytest.mark.parametrize("name", ["demo", "malformed", "mafiascope_en_demo"])
def test_item_arrays_equal_the_joined_frame(loaded, name: str) -> None:
    c = loaded[name]
    for table, pid, cols in (("ra", "role_assessment", ("g", "tgt", "role", "role_en", "conf")),
                             ("sm", "social_map", ("g", "tgt", "att")), ("sr", "suspicion_ranking", ("g", "tgt", "score", "src")),
                             ("sr", None, ("g", "pos"))):
        want = items_with_probe(c, table, pid)
        got = item_arrays(c, table, pid, cols, ("seat", "timestamp", "round", "pms"))
        for k in cols + ("seat", "timestamp", "round", "pms", "pi"):
            w = want[k].to_numpy()
            assert np.array_equal(got[k], w, equal_nan=w.dtype.kind == "f"), (table, pid, k)
        assert all(got[k].dtype == want[k].dtype for k in cols + ("seat", "timestamp", "round", "pms")), (table, pid)


@pytest.mark.parametrize("x", [np.array([3, 3, 5, 9, 9, 9]), np.array([5, 3, 9, 3]), np.array([], dtype=np.int64)])
def test_codes_equal_unique(x: np.ndarray) -> None:
    u, inv = _codes(x)
    wu, winv = np.unique(x, return_inverse=True)
    assert np.array_equal(u, wu) and np.array_equal(inv, winv.reshape(-1))



@pytest.mark.parametrize("name", ["demo", "mafiascope_en_demo", "malformed"])
def test_f3_pairs_do_not_depend_on_the_matching_blocks(loaded, name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Games matched a few at a time give the pairs all games matched at once give (same rows, same order)."""
    c = loaded[name]
    for mode in (Mode(), COMPAT):
        whole = f3._pair_arrays(c, mode)
        monkeypatch.setattr(f3_match, "_BLOCK_ITEMS", 40)
        assert len(f3_match._game_blocks(c.m, c.sm["g"].to_numpy())) > 1 or c.m < 2
        c.forget(f3.F3_PAIR_ARRAYS.key(mode))
        blocked = f3._pair_arrays(c, mode)
        monkeypatch.undo()
        assert list(blocked) == list(whole)
        for k in whole:
            assert blocked[k].dtype == whole[k].dtype and np.array_equal(blocked[k], whole[k]), (name, mode.name, k)
