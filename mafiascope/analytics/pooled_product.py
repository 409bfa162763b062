"""The multiplicity matrix times many per-game columns at once, with the float64 product's values.

The seat attribution pools every metric builder's columns for every seat mask under the same
resamples (hundreds of columns at 10,000 games). Nearly all of them are counts: non-negative
integers. Such a column is pooled in float32 (half the bytes and twice the SIMD lanes of float64:
~2.3x faster) whenever every pooled value is below 2**24: each product and each partial sum of the
BLAS is then an integer below 2**24 (rounding is monotone, so no partial sum of non-negative terms
exceeds the final one), hence exact in float32 as in float64, whatever order the library sums in.
A column whose float32 result reaches 2**24 is pooled again in float64; the other columns take the
float64 product, in products of two columns or more (a one-column product is numpy's matrix-vector
call, whose sums differ from the matrix product's in the last bits).

A float64 column's bits depend on the BLAS path its product takes, not on its neighbours, once the
product is large: OpenBLAS sends small products (B x m x columns up to ~10**6) to other kernels, so
a product of fewer columns could sum differently there. Below :data:`_SPLIT_MIN` resamples x games
every column is therefore pooled as before the split, whole blocks ~256 columns at a time in float64
(those products cost little).
"""

from __future__ import annotations

from typing import Any

import numpy as np

_F32_EXACT = float(2**24)  # every integer below this is a float32
_WIDTH = 256  # columns per product: bounded (games x columns) temporaries
_SPLIT_MIN = 1 << 23  # resamples x games from which a product of two columns is large (2 * 2**23 >> 10**6)


def count_columns(x: np.ndarray) -> np.ndarray:
    """Per column of ``x`` (its last axis): every value a non-negative integer (NaN is not; a value
    too large for float32 is caught by :func:`pooled_columns`' check of the results)."""
    flat = x.reshape(-1, x.shape[-1])
    with np.errstate(invalid="ignore"):
        return ((flat >= 0) & (flat == np.trunc(flat))).all(0)


def pooled_columns(mult: Any, blocks: list[np.ndarray], counts: list[np.ndarray] | None = None) -> np.ndarray:
    """``np.hstack([mult @ b for b in blocks])`` for a (B, m) ``mult`` of non-negative integer counts
    (the multiplicities) and (m, k_i) float64 blocks, bit for bit, without the float64 product for
    the columns the float32 one gives exactly (the module docstring). ``counts``: each block's
    :func:`count_columns` when the caller knows them (they hold for sums of such columns)."""
    sizes = [x.shape[1] for x in blocks]
    at = np.cumsum([0, *sizes])
    out = np.empty((mult.shape[0], int(at[-1])))
    if mult.shape[0] * mult.shape[1] < _SPLIT_MIN:
        return _pooled_blocks(mult, blocks, at, out)
    ok = np.concatenate([count_columns(x) for x in blocks] if counts is None else counts) if blocks \
        else np.zeros(0, dtype=bool)
    f32 = np.flatnonzero(ok)
    if len(f32):
        m32 = np.asarray(mult, dtype=np.float32)
        for lo in range(0, len(f32), _WIDTH):
            cols = f32[lo: lo + _WIDTH]
            r = m32 @ _gather(blocks, at, cols, np.float32)
            ok[cols] = r.max(0) < _F32_EXACT if len(r) else True  # False: pooled again in float64
            out[:, cols] = r
        del m32
    f64 = np.flatnonzero(~ok)
    if len(f64):
        m64 = np.asarray(mult, dtype=np.float64)
        for lo in range(0, len(f64), _WIDTH):
            cols = f64[lo: lo + _WIDTH]
            two = cols if len(cols) > 1 else np.repeat(cols, 2)  # never a matrix-vector product
            out[:, cols] = (m64 @ _gather(blocks, at, two, np.float64))[:, : len(cols)]
    return out


def _pooled_blocks(mult: Any, blocks: list[np.ndarray], at: np.ndarray, out: np.ndarray) -> np.ndarray:
    """Whole blocks in float64, ~:data:`_WIDTH` columns a product (a block wider than that alone)."""
    start = 0
    while start < len(blocks):
        stop = start + 1
        while stop < len(blocks) and at[stop + 1] - at[start] <= _WIDTH:
            stop += 1
        out[:, at[start]: at[stop]] = mult @ np.concatenate(blocks[start:stop], axis=1)
        start = stop
    return out


def _gather(blocks: list[np.ndarray], at: np.ndarray, cols: np.ndarray, dtype: Any) -> np.ndarray:
    """The (m, len(cols)) C-order matrix of the global columns ``cols`` (sorted; block i holds
    columns at[i]:at[i + 1]), copied a block at a time."""
    x = np.empty((blocks[0].shape[0], len(cols)), dtype=dtype)
    which = np.searchsorted(at, cols, side="right") - 1
    t = 0
    for b in np.unique(which).tolist():
        j = cols[which == b] - at[b]
        whole = len(j) == blocks[b].shape[1]  # (sorted, distinct: every column in order)
        x[:, t: t + len(j)] = blocks[b] if whole else blocks[b][:, j]
        t += len(j)
    return x
