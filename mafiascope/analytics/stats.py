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
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from functools import lru_cache

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


@lru_cache(maxsize=16)
def _multiplicities(m: int, B: int, seed: int, compat: bool) -> np.ndarray:
    if compat:
        idx = python_randrange_stream(m, B * m, seed).reshape(B, m)
    else:
        idx = np.random.default_rng(seed).integers(0, m, size=(B, m))
    cell = (np.arange(B, dtype=np.int64)[:, None] * m + idx).ravel()
    counts = np.bincount(cell, minlength=B * m).astype(np.float64).reshape(B, m)
    counts.setflags(write=False)
    return counts


def multiplicities(m: int, mode: Mode) -> np.ndarray:
    return _multiplicities(m, mode.boot, mode.seed, mode.is_compat)


def percentile_ci(values: np.ndarray) -> tuple[float, float] | None:
    v = np.sort(values[~np.isnan(values)])
    k = len(v)
    if k == 0:
        return None
    return (float(v[int(0.025 * k)]), float(v[min(k - 1, int(0.975 * k))]))


def cluster_ci(
    per_game: np.ndarray,
    stat: Callable[[np.ndarray], np.ndarray],
    mode: Mode,
) -> tuple[float, float] | None:
    """CI of ``stat`` over game-level resamples.

    ``per_game``: (m, k) sufficient statistics, one row per game in corpus order.
    ``stat``: maps pooled statistics (R, k) to (R,) values, NaN where undefined.
    Returns None when B = 0, there are no games, or no resample is defined.
    """
    per_game = np.asarray(per_game, dtype=np.float64)
    if per_game.ndim == 1:
        per_game = per_game[:, None]
    m = per_game.shape[0]
    if m == 0 or mode.boot == 0:
        return None
    pooled = multiplicities(m, mode) @ per_game
    with np.errstate(divide="ignore", invalid="ignore"):
        vals = np.asarray(stat(pooled), dtype=np.float64)
    return percentile_ci(vals)


def ratio_stat(num: int = 0, den: int = 1) -> Callable[[np.ndarray], np.ndarray]:
    """Pooled ratio column ``num`` / column ``den`` (NaN when the denominator is 0)."""

    def f(p: np.ndarray) -> np.ndarray:
        d = p[:, den]
        return np.where(d > 0, p[:, num] / np.where(d > 0, d, 1), np.nan)

    return f


def ratio_ci(per_game_num: np.ndarray, per_game_den: np.ndarray, mode: Mode) -> tuple[float, float] | None:
    return cluster_ci(np.column_stack([per_game_num, per_game_den]), ratio_stat(0, 1), mode)


def safe_ratio(k: float, n: float) -> float | None:
    return float(k) / float(n) if n else None


def round_or_none(x: float | None, nd: int = 6) -> float | None:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return None
    return round(float(x), nd)
