"""Wilson intervals and the game-level cluster bootstrap (docs/metrics.md §9).

The bootstrap works on a matrix of per-game sufficient statistics (games in corpus
order, one row each). A resample is a vector of multiplicities; pooling a resample is a
matrix product, so all B resamples of a statistic are evaluated at once. The
multiplicity matrix depends only on (number of games, B, seed, mode) and is cached:

* compat mode uses Python ``random.Random(seed).randrange(m)``'s sequence, B x m draws in
  order, exactly as the original (every CI re-seeds, so all CIs share the same draws); the
  sequence is computed with numpy's MT19937 from the same state (:func:`python_randrange_stream`);
* default mode draws it with ``numpy.random.default_rng(seed)``.

Percentile CI: ``sorted[int(0.025 K)]``, ``sorted[min(K-1, int(0.975 K))]`` over the K
resamples whose statistic is defined (no interpolation), in both modes.

Intervals over these resamples, and their pooling into one product per report section:
:mod:`.intervals`.
"""

from __future__ import annotations

import contextlib
import contextvars
import math
import random
import weakref
from collections.abc import Callable, Iterator
from functools import lru_cache
from typing import Any

import numpy as np

from .modes import Mode

Z95 = 1.959964


def wilson(k: float, n: float, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval; (0, 1) for n = 0; clipped to [0, 1]."""
    if n <= 0:
        return (0.0, 1.0)
    p = k / n
    den = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / den
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return (max(0.0, centre - half), min(1.0, centre + half))


def wilson_arrays(k: np.ndarray, n: np.ndarray, z: float = Z95) -> tuple[np.ndarray, np.ndarray]:
    """:func:`wilson` elementwise for n > 0: the same operations in the same order (same values)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        p = k / n
        den = 1 + z * z / n
        centre = (p + z * z / (2 * n)) / den
        half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return np.maximum(0.0, centre - half), np.minimum(1.0, centre + half)


def python_randrange_stream(m: int, n: int, seed: int) -> np.ndarray:
    """``[random.Random(seed).randrange(m) for _ in range(n)]``, computed with numpy.

    CPython's ``randrange(m)`` draws ``getrandbits(k)`` (k = m.bit_length(): the top k bits
    of one 32-bit Mersenne Twister output) until the value is below m. numpy's MT19937 with
    the same state yields the same 32-bit outputs, so rejection sampling over a block of them
    gives the identical sequence (checked against the Python loop in the tests).
    """
    k = m.bit_length()
    if m <= 0 or k > 32:  # pragma: no cover - more than 2**32 games
        rng = random.Random(seed)
        return np.array([rng.randrange(m) for _ in range(n)], dtype=np.int64)
    state = random.Random(seed).getstate()[1]
    bg = np.random.MT19937()
    bg.state = {"bit_generator": "MT19937", "state": {"key": np.array(state[:624], dtype=np.uint32), "pos": state[624]}}
    out = np.empty(n, dtype=np.int64)
    filled = 0
    while filled < n:
        need = n - filled
        raw = bg.random_raw(int(need * (1 << k) / m) + 64)  # expected draws for `need` acceptances, plus slack
        r = (raw >> np.uint64(32 - k)).astype(np.int64)
        acc = r[r < m][:need]
        out[filled : filled + len(acc)] = acc
        filled += len(acc)
    return out


class Multiplicities:
    """The (B, m) multiplicity matrix (resamples x games), kept between products as the smallest
    unsigned integer type that holds its largest count (one byte a cell at any realistic size: 10 MB
    instead of float64's 80 at 10,000 games and B = 1,000, held from the first interval to the end of
    a report). ``mult @ per_game`` is the product of the float64 matrix, made whole for that product:
    the same BLAS call on the same values, so the same result bit for bit (a product a block of
    resamples at a time is not: OpenBLAS splits the rows between its threads by the row count)."""

    __slots__ = ("counts", "__weakref__")

    def __init__(self, counts: np.ndarray):
        self.counts = counts

    @property
    def shape(self) -> tuple[int, int]:
        return self.counts.shape  # type: ignore[return-value]

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        dt = np.dtype(np.float64 if dtype is None else dtype)
        held = _DENSE.get()
        if held is None or dt != np.float64:  # float32 (the seat pooling's, once a group) is half as large: made anew
            return self.counts.astype(dt)
        return held.get(self)

    def __matmul__(self, per_game: np.ndarray) -> np.ndarray:
        return np.asarray(self) @ per_game


class DenseHold:
    """The float64 matrices of :class:`Multiplicities` made during one :func:`dense_multiplicities`
    scope, kept for its later products: a report pools ~15 batches over the same (B, m) matrix, and
    each conversion was a fresh B x m float64 array (80 MB at 10,000 games and B = 1,000, its pages
    faulted in anew each time). At most ``budget`` bytes are held; beyond it a conversion is made
    per product as outside a scope. The arrays are read-only: a product never writes its operands."""

    def __init__(self, budget: int):
        self.budget, self.used = budget, 0
        self.arrays: dict[int, tuple[weakref.ref, np.ndarray]] = {}  # id of the matrix: (the matrix, its float64)

    def get(self, mult: Multiplicities) -> np.ndarray:
        got = self.arrays.get(id(mult))
        if got is not None and got[0]() is mult:
            return got[1]
        arr = mult.counts.astype(np.float64)
        if self.used + arr.nbytes <= self.budget:
            arr.setflags(write=False)
            self.arrays[id(mult)] = (weakref.ref(mult), arr)
            self.used += arr.nbytes
        return arr


_DENSE: contextvars.ContextVar[DenseHold | None] = contextvars.ContextVar("mafiascope_dense_mult", default=None)
DENSE_BUDGET = 96 << 20  # bytes of float64 multiplicity matrices a scope keeps (80 MB at 10,000 games x 1,000)


@contextlib.contextmanager
def dense_multiplicities(budget: int = DENSE_BUDGET) -> Iterator[DenseHold]:
    """Keep the float conversions of the multiplicity matrices for the scope's duration (nested
    scopes share the outermost one); let go of them at its end."""
    if _DENSE.get() is not None:
        yield _DENSE.get()  # type: ignore[misc]
        return
    hold = DenseHold(budget)
    token = _DENSE.set(hold)
    try:
        yield hold
    finally:
        _DENSE.reset(token)
        hold.arrays.clear()


def _smallest_counts(counts: np.ndarray) -> np.ndarray:
    """``counts`` (non-negative integers) in the smallest unsigned dtype that holds their largest value."""
    return counts.astype(np.min_scalar_type(int(counts.max()) if counts.size else 0))


def _row_counts(idx: np.ndarray, m: int) -> np.ndarray:
    """``counts[b, j]`` = occurrences of ``j`` in ``idx[b]``: one bincount per row (its m counters stay
    in cache; one bincount over B x m flat cells scatters into a B x m int64 array and was ~10x slower)."""
    B = idx.shape[0]
    out = np.empty((B, m), dtype=np.min_scalar_type(m))
    for b in range(B):
        out[b] = np.bincount(idx[b], minlength=m)
    return out


@lru_cache(maxsize=16)
def _multiplicities(m: int, B: int, seed: int, compat: bool) -> Multiplicities:
    if compat:
        idx = python_randrange_stream(m, B * m, seed).reshape(B, m)
    else:
        idx = np.random.default_rng(seed).integers(0, m, size=(B, m))
    counts = _smallest_counts(_row_counts(idx, m))
    del idx
    counts.setflags(write=False)
    return Multiplicities(counts)


def multiplicities(m: int, mode: Mode) -> Multiplicities:
    return _multiplicities(m, mode.boot, mode.seed, mode.is_compat)


def percentile_ci(values: np.ndarray) -> tuple[float, float] | None:
    v = np.sort(values[~np.isnan(values)])
    k = len(v)
    if k == 0:
        return None
    return (float(v[int(0.025 * k)]), float(v[min(k - 1, int(0.975 * k))]))


def ratio_stat(num: int = 0, den: int = 1) -> Callable[[np.ndarray], np.ndarray]:
    """Pooled ratio column ``num`` / column ``den`` (NaN when the denominator is 0)."""

    def f(p: np.ndarray) -> np.ndarray:
        d = p[:, den]
        return np.where(d > 0, p[:, num] / np.where(d > 0, d, 1), np.nan)

    return f


def safe_ratio(k: float, n: float) -> float | None:
    return float(k) / float(n) if n else None


def round_or_none(x: float | None, nd: int = 6) -> float | None:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return None
    return round(float(x), nd)
