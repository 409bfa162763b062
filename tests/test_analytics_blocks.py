"""The warm report's block-wise reductions give exactly what the whole-corpus computations they
replaced gave: F1's item arrays built a block of items at a time, personality's pooled errors from
per-(trait, round) sums of blocks, its seat cells summed over blocks cut at game boundaries.
F3's report pairs without the columns only the app reads, dynamics' L1 changes by blocks of pairs,
the report's episode counts without the candidates' records, item frames with few probe columns.
Blocks are made tiny here so that every corpus is split into many."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest

from mafiascope.analytics import accounting, dynamics, episodes, f1, f3, personality_blocks as pb
from mafiascope.analytics.frames import _PROBE_COLS, items_with_probe
from mafiascope.analytics.load import TRAITS
from mafiascope.analytics.modes import COMPAT, Mode
from tests.loader_digest import loaded_corpora

NAMES = ("demo", "fixtures_v2", "mafiascope_en_demo", "malformed")


@pytest.fixture(scope="module")
def loaded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return loaded_corpora(tmp_path_factory.mktemp("blocks"), NAMES)


def _blocks_equal_whole(c, name: str, module: Any, size_attr: str, memo: Any, build: Any, sizes: tuple[int, ...],
                        monkeypatch: pytest.MonkeyPatch) -> None:
    """``build(c, mode)`` with ``module.<size_attr>`` set to each of ``sizes`` equals it with one block
    (same keys, dtypes and values), both modes; ``memo`` is its memo key's head."""
    for mode in (Mode(), COMPAT):
        def run(size: int) -> dict[str, np.ndarray]:
            monkeypatch.setattr(module, size_attr, size)
            c.forget(memo.key(mode))
            return build(c, mode)

        whole = run(1 << 40)
        for size in sizes:
            got = run(size)
            assert list(got) == list(whole)
            for k in whole:
                assert got[k].dtype == whole[k].dtype, (name, mode.name, size, k)
                assert np.array_equal(got[k], whole[k], equal_nan=True), (name, mode.name, size, k)
        c.forget(memo.key(mode))


@pytest.mark.parametrize("name", NAMES)
def test_f1_arrays_by_blocks_equal_one_block(loaded, name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    _blocks_equal_whole(loaded[name], name, f1, "_BLOCK", f1.F1_ARRAYS, f1.f1_arrays, (1, 7, 100), monkeypatch)


def _ordered(c, seats) -> dict[str, Any]:
    """personality_error's ordered computation (the pooled path declined)."""
    real = accounting.pooled_errors
    accounting.pooled_errors = lambda *a: None
    try:
        return accounting.personality_error(c, seats=seats)
    finally:
        accounting.pooled_errors = real


def _masks(c) -> list[np.ndarray | None]:
    rng = np.random.default_rng(11)
    shape = c.seat_array("role_code").shape
    return [None, rng.random(shape) < 0.5, np.zeros(shape, dtype=bool), rng.random(shape) < 0.1]


@pytest.mark.parametrize("name", NAMES)
def test_personality_pooled_by_blocks_equals_the_ordered_errors(loaded, name: str,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    c = loaded[name]
    r = accounting.personality_rows(c)
    whole = all(pb._whole(r[k][~np.isnan(r[k])]) for k in TRAITS)
    if name == "demo":
        assert whole and len(r["g"])  # the bots' estimates are whole numbers: the pooled path is taken
    for block in (1 << 40, 3):
        monkeypatch.setattr(pb, "BLOCK_ROWS", block)
        for seats in _masks(c):
            want = _ordered(c, seats)
            assert accounting.personality_error(c, seats=seats) == want, (name, block)
            keep = np.ones(len(r["g"]), dtype=bool) if seats is None else seats[r["g"], np.maximum(r["seat"], 0)]
            if keep.any() and whole:
                at = np.flatnonzero(keep)
                assert pb.pooled_errors(c, r, at, len(at)) == want, (name, block)


def test_personality_pooled_declines_fractional_estimates(loaded) -> None:
    c = loaded["demo"]
    r = dict(accounting.personality_rows(c))
    r[TRAITS[0]] = r[TRAITS[0]] + 0.25
    assert pb.pooled_errors(c, r, slice(None), len(r["g"])) is None


@pytest.mark.parametrize("rows", [1, 2, 3, 10, 100])
def test_game_blocks_cut_only_between_games(rows: int) -> None:
    g = np.repeat(np.arange(12), [1, 5, 0, 2, 9, 1, 1, 3, 0, 4, 2, 6])
    blocks = pb.game_blocks(g, rows)
    assert blocks[0][0] == 0 and blocks[-1][1] == len(g)
    assert all(a[1] == b[0] for a, b in zip(blocks, blocks[1:])) and all(lo < hi for lo, hi in blocks)
    for lo, hi in blocks:
        assert lo == 0 or g[lo] != g[lo - 1]  # a game never spans two blocks
        assert hi - lo <= rows or len(set(g[lo:hi].tolist())) == 1  # at most a block, or one longer game
    assert pb.game_blocks(g[::-1], 2) == [(0, len(g))]  # not sorted: one block


@pytest.mark.parametrize("name", NAMES)
def test_f3_report_pair_columns_equal_the_full_pairs(loaded, name: str) -> None:
    """The report's pairs (no key, qi, B, step columns; ``guess`` in its stored dtype) are the full pairs' columns."""
    c = loaded[name]
    for mode in (Mode(), COMPAT):
        c.forget(f3.F3_PAIR_ARRAYS.key(mode), f3.F3_LEAN_PAIR_ARRAYS.key(mode))
        lean = f3.pair_arrays(c, mode)
        by_lean = f3.f3(c, mode)
        full = f3._pair_arrays(c, mode)
        assert f3.pair_arrays(c, mode) is full  # memoised full pairs are reused, not matched again
        assert f3.f3(c, mode) == by_lean, (name, mode.name)
        assert set(lean) == set(f3._LEAN_PAIR_COLS) < set(full)
        for k in lean:
            assert np.array_equal(lean[k].astype(full[k].dtype), full[k], equal_nan=True), (name, mode.name, k)
            assert lean[k].dtype == full[k].dtype or k == "guess", (name, k)


def _l1_whole(c, mode: Mode) -> np.ndarray:
    """The computation the blocks replaced: every pair's dense rows at once."""
    st = dynamics.suspicion_states(c, mode)
    V, g, ag = st["V"], st["g"], st["agent"]
    same = np.zeros(len(g), dtype=bool)
    same[1:] = (g[1:] == g[:-1]) & (ag[1:] == ag[:-1])
    cur = np.flatnonzero(same)
    a, b = V[cur - 1], V[cur]
    common = ~np.isnan(a) & ~np.isnan(b)
    sa, sb = np.where(common, a, 0).sum(1), np.where(common, b, 0).sum(1)
    with np.errstate(invalid="ignore", divide="ignore"):
        l1 = np.abs(np.where(common, a, 0) / sa[:, None] - np.where(common, b, 0) / sb[:, None]).sum(1)
    return np.where(common.any(1) & (sa > 0) & (sb > 0), l1, np.nan)


@pytest.mark.parametrize("name", NAMES)
def test_dynamics_pairs_by_blocks_equal_one_block(loaded, name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    c = loaded[name]
    for mode in (Mode(), COMPAT):
        monkeypatch.setattr(dynamics, "_BLOCK", 1 << 40)
        whole = dynamics._build_pairs(c, mode)
        assert np.array_equal(whole["l1"], _l1_whole(c, mode), equal_nan=True), name
        for block in (1, 3, 50):
            monkeypatch.setattr(dynamics, "_BLOCK", block)
            got = dynamics._build_pairs(c, mode)
            assert list(got) == list(whole)
            for k in whole:
                assert got[k].dtype == whole[k].dtype and np.array_equal(got[k], whole[k], equal_nan=True), (name, k)


def test_f3_first_rows_equal_argmax() -> None:
    rng = np.random.default_rng(3)
    for n, k, late in ((0, 3, 0), (5, 3, 0), (20_000, 9, 0), (200_000, 9, 150_000), (70_000, 4, 69_999)):
        code = rng.integers(0, k, n).astype(np.int8)
        if late and n:
            code[code == k - 1] = 0
            code[late] = k - 1  # a value seen first far into the pairs
        values = np.flatnonzero(np.bincount(code, minlength=k)).tolist()
        assert f3.first_rows(code, values) == {v: int(np.argmax(code == v)) for v in values}, (n, k, late)
    for pos in (0, 1, 4095, 4096, 4097, 20479, 20480, 20481, 86015, 86016, 86017, 349_000):
        code = np.zeros(350_000, dtype=np.int8)
        code[pos] = 2
        assert f3.first_rows(code, [0, 2]) == {0: int(pos == 0), 2: pos}, pos  # slice edges


def test_episode_counts_equal_the_episode_records(loaded) -> None:
    merged = 0
    for name in NAMES:
        c = loaded[name]
        for gap in (0, 1, 2, 5, 100):
            e = episodes.find_episodes(c, merge_gap=gap)
            want = {"comparisons": e["comparisons"], "complete": e["complete"], "d_positive": e["d_positive"],
                    "windows": len(e["windows"])}
            assert episodes.episode_counts(c, merge_gap=gap) == want, (name, gap)
            merged += want["windows"] < want["d_positive"]
    assert merged  # some windows merge candidates: the rule is exercised


@pytest.mark.parametrize("frac", [False, True])
def test_personality_blocks_with_missing_estimates(loaded, frac: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """Estimates missing here and there (and fractional ones): both block paths skip exactly those rows."""
    c = loaded["demo"]
    r = dict(accounting.personality_rows(c))
    rng = np.random.default_rng(5)
    for k in TRAITS:
        v = r[k].astype(float) + (0.5 if frac else 0.0)
        v[rng.random(len(v)) < 0.3] = np.nan
        r[k] = v
    monkeypatch.setattr(accounting, "personality_rows", lambda c: r)
    monkeypatch.setattr(pb, "BLOCK_ROWS", 4)
    monkeypatch.setattr(pb.game_blocks, "__defaults__", (4,))
    assert accounting.personality_error(c) == _ordered(c, None)
    assert (pb.pooled_errors(c, r, slice(None), len(r["g"])) is None) == frac


@pytest.mark.parametrize("name", NAMES)
def test_items_with_few_probe_columns_equal_the_whole_frame(loaded, name: str) -> None:
    """F4's and plans' item frames gather only the probe columns they read: the same rows and values."""
    c = loaded[name]
    cases = [("sr", True, ["pos", "tgt"], ()), ("ra", True, ["tgt", "role"], ()), ("ra", True, ["tgt", "exact"], ()),
             ("pa", False, ["tgt", "action"], ("seat", "round", "timestamp"))]
    for table, raw, cols, probe_cols in cases:
        some = items_with_probe(c, table, raw_only=raw, cols=cols, probe_cols=probe_cols)
        whole = items_with_probe(c, table, raw_only=raw, cols=cols)
        assert list(some.columns) == [k for k in whole.columns if k not in _PROBE_COLS or k in probe_cols]
        pd.testing.assert_frame_equal(some, whole[list(some.columns)], check_exact=True, obj=f"{name} {table}")


@pytest.mark.parametrize("name", NAMES)
def test_suspicion_states_by_game_blocks_equal_one_block(loaded, name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The states built a block of games at a time (1, 7, 50 items a block) equal the one-block build
    (the demo corpora have several games: many blocks; the others one game: a block longer than asked)."""
    c = loaded[name]
    assert len(dynamics.suspicion_states(c, Mode())["g"]) > 1, name
    _blocks_equal_whole(c, name, dynamics, "_STATE_ITEMS", dynamics.DYN_STATES, dynamics.suspicion_states, (1, 7, 50), monkeypatch)


@pytest.mark.parametrize("name", NAMES)
def test_f2_observations_by_chunks_equal_one_gather(loaded, name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """F2's kept observations gathered a chunk at a time (chunks on worker threads) are the one gather's."""
    from mafiascope.analytics import f2

    c = loaded[name]
    for mode in (Mode(), COMPAT):
        it = f1.f1_arrays(c, mode)
        conf = it["conf"]
        at = np.flatnonzero(it["committed"] & ~np.isnan(conf) & (conf >= 0) & (conf <= 100))
        want = {"g": it["g"][at], "obs": it["obs"][at], "conf": conf[at], "correct": it["correct"][at],
                "bin": np.minimum(4, np.floor(conf[at] / 20)).astype(np.int8), "outcome": it["correct"][at].astype(float)}
        for chunk in (1, 5, 1 << 20):
            monkeypatch.setattr(f2, "_OBS_CHUNK", chunk)
            got = f2._obs_rows(c, mode)
            assert list(got) == list(want)
            for k in want:
                assert got[k].dtype == want[k].dtype and np.array_equal(got[k], want[k]), (name, mode.name, chunk, k)
