"""F3 per predictor seat (docs/metrics.md §6, §16): the spotlight ratio, accuracy and accuracy minus the
majority baseline of the canonical pairs (tau 50, no window, Mafia-Mafia pairs out) each seat predicted."""

from __future__ import annotations

import numpy as np

from .. import f3
from .. import labels as L
from ..metric import UNBOUNDED, Direction, GameBlock, Metric, Ratio, Source, Statistic

ORDER = 60
TAU = 50

PAIRS = Source("f3 pairs", f3.pair_arrays)
COLUMNS = ("n", "correct", "actual_trusts", "actual_neutral", "actual_suspects", "predicted_suspects")


def pair_counts(b: GameBlock) -> np.ndarray:
    """Each canonical pair's (predicted, actual) attitude at tau 50 counted per (game, predictor) cell."""
    p = b.rows(PAIRS)
    at = np.flatnonzero(~p["mm"])
    pred = p["pred"][at]
    k = max(3, int(pred.max(initial=0)) + 1)  # predicted classes: code = pred * 3 + actual
    h = b.counts(p["g"][at], p["A"][at], f3.codes_of(pred, p["guess"][at], p["conf"][at], TAU), k * 3)
    h = h.reshape(b.m, b.seats, k, 3)  # per cell [predicted, actual]
    cols = [h.sum((2, 3)), h[:, :, np.arange(3), np.arange(3)].sum(-1), h[..., 0].sum(-1), h[..., 1].sum(-1),
            h[..., 2].sum(-1), h[:, :, L.SUSPECTS].sum(-1)]
    return np.stack(cols, axis=-1).astype(float)


def accuracy_minus_majority(p: np.ndarray) -> np.ndarray:
    return np.where(p[:, 0] > 0, (p[:, 1] - p[:, 2:5].max(1)) / np.where(p[:, 0] > 0, p[:, 0], 1), np.nan)


METRICS = (
    Metric("f3", "f3", {PAIRS: ("A", "pred", "guess", "conf", "mm")}, pair_counts, COLUMNS, (
        Statistic("f3.ratio", "F3 spotlight ratio", Ratio("predicted_suspects", "actual_suspects"), "n",
                  Direction.NEUTRAL, min_n=30, format=UNBOUNDED),
        Statistic("f3.accuracy", "F3 accuracy", Ratio("correct", "n"), "n", Direction.HIGHER, min_n=30),
        Statistic("f3.diff", "F3 accuracy - majority", accuracy_minus_majority, "n", Direction.HIGHER,
                  min_n=30),
    )),
)
