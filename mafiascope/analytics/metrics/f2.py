"""F2 calibration per observer seat (docs/metrics.md §5, §16): ECE and Brier of each seat's guesses, from
the per-(game, seat) bin sums F2 takes in its one pass over the observations (:func:`..f2.obs_cells`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import f2
from ..f2_cells import COLS, N_BINS
from ..metric import NUMBER, Direction, GameBlock, Metric, Source, Statistic

ORDER = 50

COLUMNS = (*(f"bin{j}_{x}" for j in range(N_BINS) for x in ("correct", "n", "conf_sum")), "brier_sum")


def _agent_sums(c: Any, mode: Any) -> dict[str, np.ndarray]:
    cells = f2.obs_cells(c, mode)
    S = c.seat_array_obj("model").shape[1]
    out = np.zeros((c.m * S, COLS))
    out[cells.agents] = cells.agent_cols
    return {"sums": out.reshape(c.m, S, COLS)}


SUMS = Source("f2 seat sums", _agent_sums, per_game=True)
GUESSES = tuple(f"bin{j}_n" for j in range(N_BINS))


def seat_sums(b: GameBlock) -> np.ndarray:
    return b.rows(SUMS)["sums"]


METRICS = (
    Metric("f2", "f2", {SUMS: ("sums",)}, seat_sums, COLUMNS, (
        Statistic("f2.ece", "F2 ECE", f2.ece_stat, GUESSES, Direction.LOWER, min_n=100, format=NUMBER),
        Statistic("f2.brier", "F2 Brier", f2.brier_stat, GUESSES, Direction.LOWER, min_n=100, format=NUMBER),
    )),
)
