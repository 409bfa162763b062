"""Belief dynamics per agent (docs/metrics.md §8, §16): suspicion volatility, top-suspect flip rate and
return rate of each seat's consecutive rankings, from the dynamics' ranking pairs."""

from __future__ import annotations

import numpy as np

from .. import dynamics
from ..metric import NUMBER, Direction, GameBlock, Metric, Ratio, Source, Statistic

ORDER = 80

PAIRS = Source("dynamics pairs", dynamics.pair_arrays)
COLUMNS = ("l1_sum", "l1_pairs", "flips", "flip_pairs", "returns")


def change_sums(b: GameBlock) -> np.ndarray:
    d = b.rows(PAIRS)
    l1 = d["l1"]
    has = ~np.isnan(l1)
    out = np.empty((b.m, b.seats, 5))
    out[..., :2] = b.sums(d["g"][has], d["agent"][has], l1[has], None)
    out[..., 2:] = b.sums(d["g"], d["agent"], d["flip"], d["flip_pair"], d["ret"])
    return out


METRICS = (
    Metric("dynamics", "dynamics", {PAIRS: ("agent", "l1", "flip", "flip_pair", "ret")}, change_sums, COLUMNS, (
        Statistic("dynamics.volatility", "suspicion volatility", Ratio("l1_sum", "l1_pairs"), "l1_pairs",
                  Direction.NEUTRAL, min_n=30, format=NUMBER),
        Statistic("dynamics.flip_rate", "top-suspect flip rate", Ratio("flips", "flip_pairs"), "flip_pairs",
                  Direction.NEUTRAL, min_n=30),
        Statistic("dynamics.return_rate", "return rate", Ratio("returns", "flips"), "flips", Direction.NEUTRAL,
                  min_n=20),
    )),
)
