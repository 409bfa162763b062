"""F1 per observer seat (docs/metrics.md §4, §16): committed accuracy, Unknown rate and Mafia recall of the
guesses each seat made, from F1's kept items (:func:`..f1.f1_arrays`) counted per seat and outcome code."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import f1
from ..corpus import Cached
from ..metric import Direction, GameBlock, Metric, Ratio, Source, Statistic

ORDER = 40
N_CODES = len(f1.CODE_SETS[("unknown", None)][1])


CODE_SUMS = Cached("f1_code_sums")


def _code_sums(c: Any, mode: Any) -> dict[str, np.ndarray]:
    """(m, seats, codes) F1 items per (game, observer seat) and outcome code, counted once for the three
    metrics (memoised with F1's other intermediates)."""

    def build() -> np.ndarray:
        it, S = f1.f1_arrays(c, mode), c.seat_array_obj("model").shape[1]
        key = np.multiply(it["g"], S, dtype=np.int64)
        key += it["obs"]
        key[(it["obs"] < 0) | (it["obs"] >= S)] = c.m * S  # past the kept cells
        key *= N_CODES
        key += f1.outcome_codes(c, mode)
        return np.bincount(key, minlength=(c.m * S + 1) * N_CODES)[: c.m * S * N_CODES].reshape(c.m, S, N_CODES)

    return {"counts": c.memo(CODE_SUMS.key(mode), build)}


CODES = Source("f1 items per seat and outcome", _code_sums, per_game=True)


def _counts(num: str, den: str | None) -> Any:
    """A kernel: the items of the outcome codes ``num`` counts, and of those ``den`` counts, per cell."""
    codes = f1.CODE_SETS[(num, den)]

    def kernel(b: GameBlock) -> np.ndarray:
        cnt = b.rows(CODES)["counts"]
        return np.stack([cnt[..., codes[0]].sum(-1), cnt[..., codes[1]].sum(-1)], axis=-1).astype(float)

    return kernel


METRICS = (
    Metric("f1 accuracy", "f1", {CODES: ("counts",)}, _counts("correct", "committed"), ("correct", "committed"), (
        Statistic("f1.accuracy", "F1 committed accuracy", Ratio("correct", "committed"), "committed", Direction.HIGHER,
                  min_n=30),)),
    Metric("f1 unknown", "f1", {CODES: ("counts",)}, _counts("unknown", None), ("unknown", "items"), (
        Statistic("f1.unknown_rate", "F1 Unknown rate", Ratio("unknown", "items"), "items", Direction.LOWER, min_n=30),)),
    Metric("f1 recall", "f1", {CODES: ("counts",)}, _counts("hit_mafia", "tgt_mafia"), ("hit_mafia", "tgt_mafia"), (
        Statistic("f1.mafia_recall", "F1 Mafia recall", Ratio("hit_mafia", "tgt_mafia"), "tgt_mafia", Direction.HIGHER,
                  min_n=30),)),
)
