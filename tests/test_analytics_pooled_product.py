"""The pooled product of the seat attribution gives, bit for bit, what the float64 products of
whole blocks gave (the form before count columns were pooled in float32): count columns in float32
(and again in float64 when a result reaches 2**24), the others in float64 products of two columns
or more; small products (resamples x games below the split size) in the old form itself."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from mafiascope.analytics import pooled_product, seats
from mafiascope.analytics.modes import Mode
from mafiascope.analytics.pooled_product import count_columns, pooled_columns
from mafiascope.analytics.stats import multiplicities
from tests.loader_digest import loaded_corpora

pytestmark = pytest.mark.filterwarnings("ignore:invalid value encountered")  # the NaN and inf columns


def _whole_blocks(mult: Any, blocks: list[np.ndarray]) -> np.ndarray:
    """The old form: whole blocks, ~256 columns a float64 product."""
    at = np.cumsum([0, *[b.shape[1] for b in blocks]])
    out, start = np.empty((mult.shape[0], at[-1])), 0
    while start < len(blocks):
        stop = start
        while stop < len(blocks) and (stop == start or at[stop + 1] - at[start] <= 256):
            stop += 1
        out[:, at[start]:at[stop]] = np.asarray(mult, dtype=np.float64) @ np.concatenate(blocks[start:stop], axis=1)
        start = stop
    return out


def _same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and np.array_equal(a.view(np.int64), b.view(np.int64))


def _blocks(rng: np.random.Generator, m: int) -> list[np.ndarray]:
    small = rng.integers(0, 300, size=(m, 3)).astype(float)
    big = rng.integers(0, 2**22, size=(m, 2)).astype(float)  # pooled sums beyond 2**24: float64 again
    real = rng.random((m, 1)) * 100  # one non-count column alone: must not become a matrix-vector product
    mixed = np.column_stack([rng.integers(0, 9, m), rng.random(m), -rng.integers(0, 9, m), rng.integers(0, 9, m) + 0.5])
    odd = rng.integers(0, 5, size=(m, 2)).astype(float)
    odd[m // 2, 0], odd[m // 3, 1] = np.nan, np.inf
    return [small, big, real, mixed, odd, np.zeros((m, 2))]


@pytest.mark.parametrize("m, boot", [(1, 400), (7, 400), (300, 400), (3000, 400), (9000, 1000)])
def test_pooled_columns_equal_the_whole_blocks_products(m: int, boot: int) -> None:
    rng = np.random.default_rng(m)
    mult = multiplicities(m, Mode(boot=boot, seed=m))
    split = m * boot >= pooled_product._SPLIT_MIN
    assert split == (m == 9000)
    blocks = _blocks(rng, m) * (30 if split else 1)  # 360 columns: two products of each type
    want = _whole_blocks(mult, blocks)
    assert _same_bits(pooled_columns(mult, blocks), want)
    assert _same_bits(pooled_columns(mult, blocks, [count_columns(b) for b in blocks]), want)
    if split:  # the same columns in other groupings (one block, blocks of one column)
        assert _same_bits(pooled_columns(mult, [np.hstack(blocks)]), want)
        assert _same_bits(pooled_columns(mult, [b[:, [j]] for b in blocks[:6] for j in range(b.shape[1])]), want[:, :14])


def test_a_lone_real_column_is_pooled_as_in_a_matrix_product() -> None:
    rng = np.random.default_rng(5)
    mult = multiplicities(9000, Mode(boot=1000, seed=1))
    real = rng.random((9000, 2)) * 1e3
    want = np.asarray(mult, dtype=np.float64) @ real
    got = pooled_columns(mult, [real[:, :1], rng.integers(0, 4, size=(9000, 3)).astype(float)])
    assert _same_bits(got[:, :1], want[:, :1])


def test_count_columns() -> None:
    x = np.array([[0, 1.5, -1, np.nan, 2**30, np.inf], [3, 2, 4, 1, 0, 1]])
    assert count_columns(x).tolist() == [True, False, False, False, True, True]
    assert count_columns(np.zeros((0, 3))).tolist() == [True] * 3
    assert count_columns(np.ones((4, 2, 3))).tolist() == [True] * 3  # (m, seats, k): per last-axis column


@pytest.fixture(scope="module")
def loaded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return loaded_corpora(tmp_path_factory.mktemp("pooled"), ("demo", "mafiascope_en_demo"))


@pytest.mark.parametrize("name", ["demo", "mafiascope_en_demo"])
def test_pooled_resamples_and_their_count_columns(loaded, name: str) -> None:
    c, mode = loaded[name], Mode(boot=300, seed=2)
    masks = [seats.seat_mask(c, model=m, role=r) for m in seats.models_of(c) for r in [None, *seats.roles_of(c)]]
    pers = [seats._PerGame(c, mode, mask) for mask in masks]
    got = seats._pooled_resamples(c, mode, pers)
    keys = list(seats._metrics(c))
    # every mask and metric with counted seats, pooled over its own games: the masks and metrics of one frame
    # (the same games) in one product, equal to the whole blocks' products over that frame's draws
    assert set(got) == {(i, k) for i in range(len(masks)) for k in keys if pers[i].games(k).any()}
    frames: dict[bytes, list[tuple[int, Any]]] = {}
    for k in keys:
        for i in range(len(masks)):
            if (i, k) in got:
                frames.setdefault(np.packbits(pers[i].games(k)).tobytes(), []).append((i, k))
    assert len(frames) > 1 if name == "demo" else frames  # demo: several models, several frames
    for members in frames.values():
        games = pers[members[0][0]].games(members[0][1])
        want = _whole_blocks(seats.frame_multiplicities(c, mode, games), [pers[i](k)[games] for i, k in members])
        assert _same_bits(np.hstack([got[m] for m in members]), want)
    n_counts = 0
    for metric in seats._metrics(c):  # a builder's count columns are count columns of every mask's sums
        flags = seats._count_columns(c, mode, metric)
        n_counts += int(flags.sum())
        for per in pers:
            assert not (flags & ~count_columns(per(metric))).any(), (name, metric.name)
    assert n_counts > 0


@pytest.mark.parametrize("name", ["demo", "mafiascope_en_demo"])
def test_many_seat_masks_pooled_together_give_each_masks_figures(loaded, name: str) -> None:
    """Every model's and model-role pair's figures, their intervals pooled in one product over all the
    masks' columns, are each mask's figures computed alone."""
    c, mode = loaded[name], Mode(boot=300, seed=2)
    masks = [seats.seat_mask(c, model=m, role=r) for m in seats.models_of(c) for r in [None, *seats.roles_of(c)]]
    together = seats.seat_metrics_many(c, mode, masks)
    assert len(together) == len(masks) > 2
    assert together == [seats.seat_metrics(c, mode, mask) for mask in masks]
    assert any(x["ci95"] is not None for fig in together for x in fig.values())
