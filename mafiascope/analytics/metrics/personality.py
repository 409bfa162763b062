"""Personality attribution error per estimating seat (docs/metrics.md §14.1, §16): the absolute error of
its Big-Five estimates of other seats, and against the constant-50 baseline."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import accounting, personality_blocks
from ..metric import UNBOUNDED, Direction, GameBlock, Metric, Ratio, Source, Statistic

ORDER = 100


def _seat_sums(c: Any, mode: Any) -> dict[str, np.ndarray]:
    """Per (game, estimator seat): errors summed over traits, trait estimates, the baseline's errors; from
    the sums the personality section takes (whole-number estimates) or a pass over the estimates."""
    r = accounting.personality_rows(c)
    m, S = c.m, c.seat_array_obj("model").shape[1]
    n = m * S

    def cell(g: np.ndarray, s: np.ndarray) -> np.ndarray:
        k = np.multiply(g, S, dtype=np.int64)
        k += s
        k[(s < 0) | (s >= S)] = n
        return k

    sums = personality_blocks.whole_sums(c, r)
    cells = sums["cells"] if sums is not None and sums["shape"] == (m, S) else personality_blocks.seat_sums(c, r, cell, n)
    err, count, base = (x[:n].reshape(m, S) for x in cells)
    return {"sums": np.stack([err, count, base], axis=-1)}


SUMS = Source("personality seat sums", _seat_sums, per_game=True)


def error_sums(b: GameBlock) -> np.ndarray:
    return b.rows(SUMS)["sums"]


def minus_baseline(p: np.ndarray) -> np.ndarray:
    return np.where(p[:, 1] > 0, (p[:, 0] - p[:, 2]) / np.where(p[:, 1] > 0, p[:, 1], 1), np.nan)


METRICS = (
    Metric("personality", "personality", {SUMS: ("sums",)}, error_sums, ("abs_error", "estimates", "baseline_error"), (
        Statistic("personality.mae", "personality MAE", Ratio("abs_error", "estimates"), "estimates", Direction.LOWER,
                  min_n=100, format=UNBOUNDED),
        Statistic("personality.mae_minus_baseline", "personality MAE - constant-50 MAE", minus_baseline, "estimates",
                  Direction.LOWER, min_n=100, format=UNBOUNDED),
    )),
)
