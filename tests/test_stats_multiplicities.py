"""The bootstrap multiplicity matrix kept as small integers: the same counts, the same products."""

from __future__ import annotations

import numpy as np
import pytest

from mafiascope.analytics.modes import Mode
from mafiascope.analytics.intervals import cluster_ci
from mafiascope.analytics.stats import (
    _multiplicities,
    _smallest_counts,
    multiplicities,
    percentile_ci,
    python_randrange_stream,
    ratio_stat,
)


def _reference(m: int, B: int, seed: int, compat: bool) -> np.ndarray:
    """The float64 matrix as it was kept before: each resample's draws counted per game."""
    if compat:
        idx = python_randrange_stream(m, B * m, seed).reshape(B, m)
    else:
        idx = np.random.default_rng(seed).integers(0, m, size=(B, m))
    ref = np.zeros((B, m))
    for b in range(B):
        np.add.at(ref[b], idx[b], 1.0)
    return ref


@pytest.mark.parametrize(("m", "B", "seed", "compat"), [(1, 7, 0, False), (37, 301, 3, False), (37, 301, 3, True),
                                                       (2000, 50, 0, True), (300, 1000, 5, False)])
def test_counts_are_the_float_matrix_in_one_byte(m: int, B: int, seed: int, compat: bool) -> None:
    _multiplicities.cache_clear()
    mult = _multiplicities(m, B, seed, compat)
    ref = _reference(m, B, seed, compat)
    assert mult.counts.dtype == np.uint8 and mult.counts.nbytes == B * m  # an eighth of float64's
    assert not mult.counts.flags.writeable
    assert mult.shape == (B, m)
    full = np.asarray(mult)
    assert full.dtype == np.float64 and np.array_equal(full, ref)


def test_smallest_dtype_holds_the_largest_count() -> None:
    assert _smallest_counts(np.array([0, 3, 255])).dtype == np.uint8
    assert _smallest_counts(np.array([0, 256])).dtype == np.uint16
    assert _smallest_counts(np.array([1, 70_000])).dtype == np.uint32
    assert _smallest_counts(np.zeros(0, dtype=np.int64)).dtype == np.uint8
    big = np.array([[65_535, 0], [1, 65_536]])
    assert np.array_equal(_smallest_counts(big), big)


def test_products_are_the_float_products_bit_for_bit() -> None:
    rng = np.random.default_rng(11)
    m, B = 500, 333
    mult = multiplicities(m, Mode(boot=B, seed=2))
    ref = _reference(m, B, 2, False)
    wide = rng.random((m, 40)) * rng.exponential(9, (m, 40))  # float sums exercise the summation order
    cases = [wide, wide[:, ::3], np.asfortranarray(wide), wide[:, 5], rng.integers(0, 9, (m, 3)),
             wide.astype(np.float32)]
    for x in cases:
        got = mult @ x
        want = ref @ x
        assert got.dtype == want.dtype and got.shape == want.shape
        assert np.array_equal(got, want)


@pytest.mark.parametrize("mode", [Mode(boot=250, seed=4), Mode(boot=120, compat="mafiascope-2026-07")])
def test_intervals_are_the_ones_of_the_float_matrix(mode: Mode) -> None:
    rng = np.random.default_rng(5)
    per_game = np.column_stack([rng.random(60) * 4, rng.integers(1, 6, 60).astype(float)])
    ref = _reference(60, mode.boot, mode.seed, mode.is_compat)
    with np.errstate(divide="ignore", invalid="ignore"):
        want = percentile_ci(ratio_stat(0, 1)(ref @ per_game))
    assert cluster_ci(per_game, ratio_stat(0, 1), mode).value() == want


def test_row_counts_match_a_flat_bincount() -> None:
    from mafiascope.analytics.stats import _row_counts

    rng = np.random.default_rng(3)
    for m, B in [(1, 4), (9, 300), (257, 40), (70_000, 2)]:  # 257: counts need two bytes in the row pass
        idx = rng.integers(0, m, size=(B, m))
        flat = np.bincount((np.arange(B)[:, None] * m + idx).ravel(), minlength=B * m).reshape(B, m)
        got = _row_counts(idx, m)
        assert np.array_equal(got, flat) and got.dtype.kind == "u"
    assert _row_counts(np.zeros((3, 0), dtype=np.int64), 0).shape == (3, 0)


def test_dense_scope_keeps_one_conversion_with_the_same_products() -> None:
    from mafiascope.analytics.stats import _DENSE, dense_multiplicities

    mult = multiplicities(400, Mode(boot=150, seed=8))
    x = np.random.default_rng(2).random((400, 6))
    outside = mult @ x
    assert "__matmul__" in type(mult).__dict__  # the product is the matrix's own, not numpy's __rmatmul__
    assert np.asarray(mult) is not np.asarray(mult)  # no scope: a fresh conversion per product
    with dense_multiplicities() as hold:
        a, b = np.asarray(mult), np.asarray(mult)
        assert a is b and not a.flags.writeable and hold.used == a.nbytes
        assert np.asarray(mult, dtype=np.float32) is not np.asarray(mult, dtype=np.float32)  # not kept
        assert np.array_equal(np.asarray(mult, dtype=np.float32), mult.counts) and hold.used == a.nbytes
        assert np.array_equal(mult @ x, outside)
        with dense_multiplicities() as inner:  # nested: the outer scope's hold
            assert inner is hold
        assert np.asarray(mult).dtype == np.float64 and np.asarray(mult, dtype=np.uint16).flags.writeable
    assert _DENSE.get() is None and not hold.arrays  # let go of at the scope's end
    with dense_multiplicities(budget=100) as small:  # over the budget: converted per product, nothing kept
        assert np.asarray(mult) is not np.asarray(mult) and small.used == 0
