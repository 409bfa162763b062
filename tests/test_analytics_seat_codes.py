"""The seat attribution's integer shortcuts give exactly what the object and float computations
they replaced gave: seat masks from factorised model/role codes (``models == model`` on the object
seat array), the cell keys written in place (the two-``where`` form), the alive matrix tested
once per run of (game, time) rows (every row's death times gathered and compared), and probe rows
from game bounds (every row's game start gathered)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest

from mafiascope.analytics import frames, seats
from mafiascope.analytics.metric import GameBlock
from mafiascope.analytics.modes import Mode
from tests.loader_digest import loaded_corpora

NAMES = ("demo", "fixtures_v2", "mafiascope_en_demo", "malformed")


@pytest.fixture(scope="module")
def loaded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return loaded_corpora(tmp_path_factory.mktemp("seat_codes"), NAMES)


def _object_mask(c, model: str | None, role: str | None) -> np.ndarray:
    models = c.seat_array_obj("model")
    keep = np.not_equal(models, None)
    if model is not None:
        keep &= models == model
    if role is not None:
        keep &= c.seat_array_obj("role") == role
    return keep


@pytest.mark.parametrize("name", NAMES)
def test_seat_masks_from_codes_equal_the_object_comparison(loaded, name: str) -> None:
    c = loaded[name]
    models = [None, "no such model", *{str(x) for x in c.seat_array_obj("model").ravel() if x is not None}]
    roles = [None, "no such role", *{str(x) for x in c.seat_array_obj("role").ravel() if x is not None}]
    for model in models:
        for role in roles:
            got = seats.seat_mask(c, model=model, role=role)
            assert got.dtype == bool and np.array_equal(got, _object_mask(c, model, role)), (name, model, role)
    # the memoised "seated" mask is not changed by a caller's mask
    seats.seat_mask(c, model="no such model")[...] = False
    assert np.array_equal(seats.seat_mask(c), _object_mask(c, None, None))


class _FakeCorpus:
    def __init__(self, models: np.ndarray, roles: np.ndarray):
        self.arrays, self._memo = {"model": models, "role": roles}, {}

    def seat_array_obj(self, col: str) -> np.ndarray:
        return self.arrays[col]

    def memo(self, key: Any, fn: Any) -> Any:
        if key not in self._memo:
            self._memo[key] = fn()
        return self._memo[key]


def test_seat_masks_with_none_and_nan_slots() -> None:
    models = np.array([["a", None, float("nan")], ["b", "a", None]], dtype=object)
    roles = np.array([["Mafia", "Villager", None], [float("nan"), "Mafia", "Mafia"]], dtype=object)
    c = _FakeCorpus(models, roles)
    for model in (None, "a", "b", "c"):
        for role in (None, "Mafia", "Villager"):
            assert np.array_equal(seats.seat_mask(c, model=model, role=role), _object_mask(c, model, role))  # type: ignore[arg-type]


class _Deaths:
    def __init__(self, d: np.ndarray):
        self.d = d

    def seat_array(self, col: str, fill: float = np.nan) -> np.ndarray:
        assert col == "death_ts"
        return self.d


@pytest.mark.parametrize("strict", [False, True])
def test_alive_matrix_by_runs_equals_every_row(strict: bool) -> None:
    rng = np.random.default_rng(7)
    d = rng.integers(0, 6, (30, 5)).astype(float)
    d[rng.random(d.shape) < 0.3] = np.inf
    d[:, 4] = -np.inf  # a padding seat
    runs = rng.integers(1, 6, 400)
    g = np.repeat(np.sort(rng.integers(0, 30, 400)), runs)
    t = np.repeat(rng.integers(0, 7, 400).astype(float), runs)
    t[rng.random(len(t)) < 0.05] = np.nan
    t[rng.random(len(t)) < 0.05] = -0.0
    c = _Deaths(d)
    for gg, tt in ((g, t), (g[::-1].copy(), t[::-1].copy()), (g[:1], t[:1]), (g[:0], t[:0])):
        want = d[gg] >= tt[:, None] if strict else d[gg] > tt[:, None]
        got = frames.alive_matrix(c, gg, tt, strict=strict)  # type: ignore[arg-type]
        assert got.shape == want.shape and got.dtype == bool and np.array_equal(got, want)
        got[:, 0] = True  # callers write into it: their own array


class _Probes:
    def __init__(self, g: np.ndarray, m: int):
        self.g, self.m, self._memo = g, m, {}

    def cols(self, table: str, cols: list[str]) -> pd.DataFrame:
        return pd.DataFrame({"g": self.g})

    def memo(self, key: Any, fn: Any) -> Any:
        if key not in self._memo:
            self._memo[key] = fn()
        return self._memo[key]


def _counted_start(g: np.ndarray, m: int) -> np.ndarray:
    counts = np.bincount(g, minlength=m)
    return np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)


@pytest.mark.parametrize("m", [1, 9])
def test_probe_start_and_pidx_by_game_bounds_equal_the_gathers(m: int) -> None:
    rng = np.random.default_rng(m)
    g = np.sort(rng.integers(0, m, 300)).astype(np.int32)
    g[g == m // 2] = max(m // 2 - 1, 0)  # a game without probes
    c = _Probes(g, m)
    start = frames.probe_start(c)  # type: ignore[arg-type]
    assert start.dtype == np.int64 and np.array_equal(start, _counted_start(g, m))
    sorted_items = np.sort(rng.integers(0, m, 500)).astype(np.int32)
    for gi in (sorted_items, rng.permutation(sorted_items), sorted_items[:0]):
        items = pd.DataFrame({"g": gi, "rec": rng.integers(0, 5, len(gi)).astype(np.int32)})
        got = frames.pidx(c, items)  # type: ignore[arg-type]
        want = start[gi.astype(np.int64)] + items["rec"].to_numpy(dtype=np.int64)
        assert got.dtype == np.int64 and np.array_equal(got, want)
    assert np.array_equal(frames.game_bounds(sorted_items, m), np.searchsorted(sorted_items, np.arange(m + 1)))
    assert frames.game_bounds(rng.permutation(sorted_items), m) is None or m == 1
    assert frames.game_bounds(np.array([0, m], dtype=np.int32), m) is None
    assert frames.game_bounds(np.array([-1, 0], dtype=np.int32), m) is None
    unsorted = _Probes(rng.permutation(g), m)
    assert np.array_equal(frames.probe_start(unsorted), _counted_start(g, m))  # type: ignore[arg-type]


class _Models:
    def __init__(self, models: np.ndarray):
        self.models, self._memo = models, {}

    def seat_array_obj(self, col: str) -> np.ndarray:
        return self.models

    def memo(self, key: Any, fn: Any) -> Any:
        if key not in self._memo:
            self._memo[key] = fn()
        return self._memo[key]


def test_played_by_flat_gather_equals_the_2d_codes() -> None:
    rng = np.random.default_rng(11)
    models = rng.choice(np.array(["a", "b", "c", None], dtype=object), (20, 6))
    c = _Models(models)
    names, codes = frames.seat_model_codes(c)  # type: ignore[arg-type]
    g = rng.integers(0, 20, 500).astype(np.int32)
    for seat in (rng.integers(0, 6, 500).astype(np.int8), rng.integers(-6, 6, 500), np.full(500, 5)):
        for model in ("a", "b", "None", "zz"):
            want = codes[g, seat] == np.flatnonzero(names == model)[0] if model in names else np.zeros(len(g), bool)
            got = frames.played_by(c, g, seat, model)  # type: ignore[arg-type]
            assert got.dtype == bool and np.array_equal(got, want), (model, seat.dtype)
    assert frames.played_by(c, g[:0], g[:0], "a").shape == (0,)  # type: ignore[arg-type]
    with pytest.raises(IndexError):
        frames.played_by(c, g, np.full(500, 6), "a")  # type: ignore[arg-type]




def _block(m: int, S: int) -> GameBlock:
    return GameBlock(0, m, Mode(), S, np.zeros((m, S), np.int8), np.zeros((m, S), bool), np.full((m, S), np.inf), {}, {})


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64, np.uint8])
def test_block_sums_add_each_cells_rows_in_row_order(dtype) -> None:
    """A kernel's per-(game, seat) sums: each cell adds its rows' weights left to right (so sums of floats are
    the same on any block of whole games); rows whose seat is not a seat slot count for no cell."""
    rng = np.random.default_rng(5)
    m, S, n = 30, 7, 3000
    b = _block(m, S)
    g = rng.integers(0, m, n).astype(np.int32)
    s = rng.integers(-2 if np.dtype(dtype).kind != "u" else 0, S + 3, n).astype(dtype)
    w = rng.random(n) * 10.0 ** rng.integers(-3, 4, n)
    flag = rng.random(n) < 0.4
    want = np.zeros((m, S, 3))
    for gi, si, wi, fi in zip(g.tolist(), s.tolist(), w.tolist(), flag.tolist()):
        if 0 <= si < S:
            want[gi, si] += (wi, fi, 1)
    got = b.sums(g, s, w, flag, None)
    assert got.dtype == np.float64 and np.array_equal(got, want)
    code = rng.integers(0, 5, n)
    cnt = b.counts(g, s, code, 5)
    assert cnt.sum() == ((s >= 0) & (s < S)).sum() and np.array_equal(cnt.sum(-1), want[..., 2])
    assert b.sums(g[:0], s[:0], w[:0]).shape == (m, S, 1)
