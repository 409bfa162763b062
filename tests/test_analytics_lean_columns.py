"""The 10,000-game report's memory paths give what the computations they replaced gave: item frames
built from only the item columns a metric uses (vs the whole table), personality rows from the
item arrays (vs the joined frame), personality errors one trait and one round at a time (vs every
trait's errors kept at once), F1's and F3's seat cells and F2's observations from the memoised
arrays (vs the item and pair frames), and a table's columns released except a kept few."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest

from mafiascope.analytics import accounting, f2
from mafiascope.analytics import labels as L
from mafiascope.analytics.corpus import LAZY_TABLES
from mafiascope.analytics.f1 import f1_items
from mafiascope.analytics.f2 import N_BINS, calibration_obs
from mafiascope.analytics.f3 import actual_attitude, f3_pairs
from mafiascope.analytics.frames import items_with_probe
from mafiascope.analytics.load import TRAITS
from mafiascope.analytics.modes import COMPAT, Mode
from mafiascope.analytics.stats import round_or_none
from tests.loader_digest import loaded_corpora

NAMES = ("demo", "fixtures_v2", "mafiascope_en_demo", "malformed")


@pytest.fixture(scope="module")
def loaded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return loaded_corpora(tmp_path_factory.mktemp("lean_columns"), NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_items_with_probe_on_some_columns_equals_the_whole_frame(loaded, name: str) -> None:
    c = loaded[name]
    cases = [("sr", None, True, ["pos", "tgt"]), ("ra", None, True, ["tgt", "role"]), ("ra", None, True, ["tgt", "exact"]),
             ("pp", "personality_profile", False, ["tgt", *TRAITS]), ("pa", None, False, ["tgt", "action"]),
             ("sm", "social_map", False, ["att"])]
    for table, pid, raw, cols in cases:
        c.release(*LAZY_TABLES)
        some = items_with_probe(c, table, pid, raw_only=raw, cols=cols)
        assert c._tables[table]._frame is None  # the whole table was not read
        whole = items_with_probe(c, table, pid, raw_only=raw)
        assert len(some) and len(some) == len(whole) or not len(whole), (name, table)
        pd.testing.assert_frame_equal(some, whole[list(some.columns)], check_exact=True, obj=f"{name} {table}")
        assert {"g", "rec", "pi", "seat", "round", "pms", "timestamp", "parse_ok", *cols} <= set(some.columns)


def _personality_rows_by_frame(c) -> dict[str, np.ndarray]:
    """The definition: the joined item frame of every column, filtered."""
    it = items_with_probe(c, "pp", "personality_profile")
    t, sp = it["tgt"].to_numpy(), it["seat"].to_numpy()
    at = np.flatnonzero((t >= 0) & (t != sp))
    out = {"g": it["g"].to_numpy()[at], "seat": sp[at], "tgt": t[at], "round": it["round"].to_numpy()[at]}
    for k in TRAITS:
        out[k] = it[k].to_numpy()[at]
    return out


def _personality_error_all_traits(c, seats: np.ndarray | None) -> dict[str, Any]:
    """The computation the per-trait, per-round one replaced: every trait's errors kept at once."""
    r = accounting.personality_rows(c)
    sp = r["seat"]
    keep = np.ones(len(sp), dtype=bool)
    if seats is not None:
        sp64 = sp.astype(np.int64)
        keep &= (sp64 >= 0) & seats[r["g"].astype(np.int64), np.maximum(sp64, 0)]
    n_kept = int(keep.sum())
    if not n_kept:
        return {"n": 0}
    at = slice(None) if n_kept == len(keep) else np.flatnonzero(keep)
    g, t = r["g"][at], r["tgt"][at]
    out: dict[str, Any] = {"n": n_kept, "mae": {}, "baseline50_mae": {}, "by_round": {}}
    errs = {}
    for k in TRAITS:
        truth = c.seat_array(k)[g, t]
        est = r[k][at]
        ok = ~np.isnan(truth) & ~np.isnan(est)
        errs[k] = (np.where(ok, np.abs(est - truth), np.nan), np.where(ok, np.abs(50 - truth), np.nan))
        out["mae"][k] = round_or_none(np.nanmean(errs[k][0]) if ok.any() else None)
        out["baseline50_mae"][k] = round_or_none(np.nanmean(errs[k][1]) if ok.any() else None)
    rnd = r["round"][at]
    order = np.argsort(rnd, kind="stable")
    rounds, starts = np.unique(rnd[order], return_index=True)
    ends = np.r_[starts[1:], len(rnd)]
    for rd, a, z in zip(rounds.tolist(), starts.tolist(), ends.tolist()):
        rows = order[a:z]
        out["by_round"][str(rd)] = {
            "mae": round_or_none(np.nanmean(np.concatenate([errs[k][0][rows] for k in TRAITS]))),
            "baseline50_mae": round_or_none(np.nanmean(np.concatenate([errs[k][1][rows] for k in TRAITS]))),
        }
    return out


@pytest.mark.parametrize("name", NAMES)
def test_personality_rows_and_errors_equal_their_definitions(loaded, name: str) -> None:
    c = loaded[name]
    c.forget(accounting.PERSONALITY_ROWS.key())
    got, want = accounting.personality_rows(c), _personality_rows_by_frame(c)
    assert list(got) == list(want)
    for k in want:
        assert got[k].dtype == want[k].dtype and np.array_equal(got[k], want[k], equal_nan=True), (name, k)
    rng = np.random.default_rng(7)
    shape = c.seat_array("role_code").shape
    for seats in (None, rng.random(shape) < 0.5, np.zeros(shape, dtype=bool), rng.random(shape) < 0.1):
        assert accounting.personality_error(c, seats=seats) == _personality_error_all_traits(c, seats), name


def test_release_columns_keeps_the_named_and_reads_the_rest_again(loaded) -> None:
    c = loaded["demo"]
    c.release(*LAZY_TABLES)
    whole = c.probes.copy()
    kept = c.cols("probes", ["g", "seat"])["seat"]
    c.release_columns("probes", ["g", "seat"])
    t = c._tables["probes"]
    assert t._frame is None and set(t._cols) == {"g", "seat"} and np.shares_memory(t._cols["seat"].to_numpy(), kept.to_numpy())
    pd.testing.assert_frame_equal(c.probes, whole, check_exact=True)  # the others read again, same values
    c.release_columns("probes", [])
    assert not t._cols and t._frame is None


def _calibration_obs_by_frame(c, mode) -> pd.DataFrame:
    it = f1_items(c, mode)
    conf = it["conf"].to_numpy()
    at = np.flatnonzero(it["committed"].to_numpy() & ~np.isnan(conf) & (conf >= 0) & (conf <= 100))
    conf, correct = conf[at], it["correct"].to_numpy()[at]
    return pd.DataFrame({"g": it["g"].to_numpy()[at], "obs": it["obs"].to_numpy()[at], "conf": conf, "correct": correct,
                         "bin": np.minimum(N_BINS - 1, np.floor(conf / 20).astype(int)), "outcome": correct.astype(float)})


@pytest.mark.parametrize("name", NAMES)
def test_calibration_from_arrays_equals_the_frames(loaded, name: str) -> None:
    """F2's observations read the memoised arrays, not the item frames."""
    c = loaded[name]
    for mode in (Mode(), COMPAT):
        c.forget(f2.CALIBRATION_OBS.key(mode))
        pd.testing.assert_frame_equal(calibration_obs(c, mode), _calibration_obs_by_frame(c, mode), check_exact=True)
