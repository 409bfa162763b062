"""Seat masks (a model's, a role's seats) are the seats whose setup names that model and role, None and NaN
slots included; a kernel's per-(game, seat) sums add each cell's rows in row order."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from mafiascope.analytics import seats
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
