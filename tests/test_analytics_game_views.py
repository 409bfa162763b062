"""Builds the executor runs a block of games at a time on game views (:func:`mafiascope.analytics.executor.by_games`)
give exactly what they give on the whole corpus: the step table and the episodes, F4's vote units, F3's
report pairs, the dynamics' pairs, and the whole report. Views are forced here on small corpora, with blocks
of a few rows so that every corpus is split into many (seven- and ten-seat games mixed in ``demo``)."""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
import pandas as pd
import pytest

from mafiascope.analytics import dynamics, episodes, executor, f3, f4, personality_blocks as pb, runtime, viewer
from mafiascope.analytics import accounting
from mafiascope.analytics.frames import N_SEATS
from mafiascope.analytics.modes import COMPAT, Mode
from mafiascope.analytics.report import build_report
from mafiascope.analytics.viewer import step_table
from tests.loader_digest import loaded_corpora

NAMES = ("demo", "fixtures_v2", "mafiascope_en_demo", "malformed")
SIZES = (1, 40, 700)  # rows of the largest table per block: one game per block, a few, many


@pytest.fixture(scope="module")
def loaded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return loaded_corpora(tmp_path_factory.mktemp("views"), NAMES)


@pytest.fixture()
def views(monkeypatch: pytest.MonkeyPatch):
    """Set the views' block size (rows) for small corpora; None: no views (the whole corpus)."""

    def use(rows: int | None) -> None:
        monkeypatch.setattr(executor, "MIN_ROWS", 1 << 62 if rows is None else 0)
        monkeypatch.setattr(executor, "BLOCK_ROWS", rows or 1)

    return use


def _same_arrays(a: dict[str, np.ndarray], b: dict[str, np.ndarray], what: str) -> None:
    assert list(a) == list(b), what
    for k in a:
        assert a[k].dtype == b[k].dtype and a[k].shape == b[k].shape, (what, k)
        if a[k].dtype == object:
            assert pd.Series(a[k]).equals(pd.Series(b[k])), (what, k)
        else:
            assert np.array_equal(a[k], b[k], equal_nan=True), (what, k)


def _blocks(c) -> int:
    """How many blocks the views cut the corpus into (the sr table's)."""
    return len(executor.map_views(c, lambda v, lo, hi: None, {"sr": ()}) or [])


@pytest.mark.parametrize("name", NAMES)
def test_step_table_and_top_suspects_by_views_equal_the_whole(loaded, name: str, views) -> None:
    c = loaded[name]
    views(None)
    c.forget(viewer.STEP_TABLE.key(), episodes.EPISODE_COMPARISONS.key())
    whole_st, whole, counts = step_table(c), episodes.find_episodes(c), episodes.episode_counts(c)
    slots = episodes.episode_seat_counts(c)
    for rows in SIZES:
        views(rows)
        if rows == 1:
            assert _blocks(c) > 1 or c.m < 2, name
        c.forget(viewer.STEP_TABLE.key(), episodes.EPISODE_COMPARISONS.key())
        _same_arrays(step_table(c), whole_st, f"{name} {rows}")
        assert episodes.find_episodes(c) == whole and episodes.episode_counts(c) == counts, (name, rows)
        assert all(np.array_equal(a, b) for a, b in zip(episodes.episode_seat_counts(c), slots)), (name, rows)
    c.forget(viewer.STEP_TABLE.key(), episodes.EPISODE_COMPARISONS.key())


@pytest.mark.parametrize("name", NAMES)
def test_vote_units_by_views_equal_the_whole(loaded, name: str, views) -> None:
    c = loaded[name]
    for mode in (Mode(), COMPAT):
        views(None)
        c.forget(f4.F4_UNITS.key(mode, False))
        frame = f4.vote_units(c, mode, transcripts=False)
        for rows in SIZES:
            views(rows)
            c.forget(f4.F4_UNITS.key(mode, False))
            assert f4.vote_units(c, mode, transcripts=False).equals(frame), (name, mode.name, rows)
        c.forget(f4.F4_UNITS.key(mode, False))


@pytest.mark.parametrize("name", NAMES)
def test_f3_report_pairs_by_views_equal_the_whole(loaded, name: str, views) -> None:
    c = loaded[name]
    for mode in (Mode(), COMPAT):
        views(None)
        c.forget(f3.F3_LEAN_PAIR_ARRAYS.key(mode))
        whole = f3.pair_arrays(c, mode)
        for rows in SIZES:
            views(rows)
            c.forget(f3.F3_LEAN_PAIR_ARRAYS.key(mode))
            _same_arrays(f3.pair_arrays(c, mode), whole, f"{name} {mode.name} {rows}")
        c.forget(f3.F3_LEAN_PAIR_ARRAYS.key(mode))


@pytest.mark.parametrize("name", NAMES)
def test_dynamics_pairs_by_views_equal_the_whole(loaded, name: str, views) -> None:
    c = loaded[name]
    for mode in (Mode(), COMPAT):
        views(None)
        c.forget(dynamics.DYN_STATES.key(mode), dynamics.DYN_PAIR_ARRAYS.key(mode))
        whole = dynamics.pair_arrays(c, mode)
        for rows in SIZES:
            views(rows)
            c.forget(dynamics.DYN_STATES.key(mode), dynamics.DYN_PAIR_ARRAYS.key(mode))
            _same_arrays(dynamics.pair_arrays(c, mode), whole, f"{name} {mode.name} {rows}")
        c.forget(dynamics.DYN_STATES.key(mode), dynamics.DYN_PAIR_ARRAYS.key(mode))


def test_views_need_rows_in_game_order_and_a_big_enough_corpus(loaded, views) -> None:
    c = loaded["demo"]
    assert executor.map_views(c, lambda v, lo, hi: v.m, {"probes": ("seat",)}) is None  # small: no views by default
    views(50)
    parts = executor.map_views(c, lambda v, lo, hi: (v.m, int(v.cols("probes", ["g"])["g"].max())), {"probes": ("seat",)})
    assert [p[0] for p in parts][0] == 0 and parts[-1][1] == c.m
    assert all(a[1] == b[0] for a, b in zip(parts, parts[1:]))  # consecutive, every game once
    assert all(m == hi - lo and top == m - 1 for lo, hi, (m, top) in parts)  # each view's own game numbers
    shuffled = c.with_tables(probes=c.probes.sample(frac=1.0, random_state=1).reset_index(drop=True))
    assert executor.map_views(shuffled, lambda v, lo, hi: 0, {"probes": ("seat",)}) is None  # not in game order
    with pytest.raises(KeyError, match="built on the corpus first"):
        executor.map_views(c.with_tables(), lambda v, lo, hi: 0, {"probes": ("seat",)}, memo=(N_SEATS.key(),))


def test_a_view_is_not_split_again_and_nested_blocks_run_in_turn(loaded, views, monkeypatch) -> None:
    c = loaded["demo"]
    views(50)
    seen: list[Any] = []

    def inner(view, lo, hi):
        names = []
        executor.map_blocks(lambda i: names.append(threading.current_thread().name), [0, 1, 2])
        return executor.map_views(view, lambda v, a, b: 0, {"probes": ("seat",)}), set(names)

    monkeypatch.setenv(runtime.ENV, "2")
    for lo, hi, (again, names) in executor.map_views(c, inner, {"probes": ("seat",)}):
        seen.append(again)
        assert len(names) == 1  # the worker's own thread: no pool inside a block
    assert seen and all(x is None for x in seen)


def test_concat_rows_offsets_game_numbers_and_empties_the_parts() -> None:
    parts = [(0, 2, {"g": np.array([0, 1], dtype=np.int32), "x": np.array([1.0, 2.0])}),
             (2, 3, {"g": np.zeros(0, dtype=np.int32), "x": np.zeros(0)}),
             (3, 5, {"g": np.array([1, 1], dtype=np.int32), "x": np.array([3.0, 4.0])})]
    out = executor.concat_rows(parts)
    assert out["g"].tolist() == [0, 1, 4, 4] and out["g"].dtype == np.int32 and out["x"].tolist() == [1, 2, 3, 4]
    assert parts == []


@pytest.mark.parametrize("name", ["demo", "mafiascope_en_demo"])
def test_whole_report_with_views_equals_the_report_without(loaded, name: str, views) -> None:
    c = loaded[name]
    views(None)
    want = build_report(c, Mode(boot=50), transcripts=False)
    views(40)
    assert build_report(c, Mode(boot=50), transcripts=False) == want


def test_personality_sums_on_threads_equal_one_thread(loaded, monkeypatch: pytest.MonkeyPatch) -> None:
    c = loaded["demo"]
    r = accounting.personality_rows(c)
    monkeypatch.setattr(pb, "BLOCK_ROWS", 1 << 40)
    c.forget(pb.PERSONALITY_WHOLE_SUMS.key())
    one = pb.whole_sums(c, r)
    assert one is not None
    for block, threads in ((7, "2"), (7, "1"), (100, "2")):
        monkeypatch.setattr(pb, "BLOCK_ROWS", block)
        monkeypatch.setenv(runtime.ENV, threads)
        c.forget(pb.PERSONALITY_WHOLE_SUMS.key())
        got = pb.whole_sums(c, r)
        assert set(got) == set(one)
        for k in one:
            assert np.array_equal(np.asarray(got[k]), np.asarray(one[k])), (block, threads, k)
    frac = dict(r)
    frac["O"] = frac["O"] + np.where(np.arange(len(frac["O"])) == len(frac["O"]) - 1, 0.5, 0.0)  # the last block only
    monkeypatch.setattr(pb, "BLOCK_ROWS", 7)
    c.forget(pb.PERSONALITY_WHOLE_SUMS.key())
    assert pb.whole_sums(c, frac) is None
    c.forget(pb.PERSONALITY_WHOLE_SUMS.key())
