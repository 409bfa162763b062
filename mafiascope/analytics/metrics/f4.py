"""F4 per voter seat (docs/metrics.md §7, §16): how often a voter's pre-vote top suspect, or (town voters)
a seat it had labelled Mafia, is the seat it voted for; from F4's vote units (:func:`..f4.vote_units`)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .. import f4
from ..metric import MIN_VOTES, Direction, GameBlock, Metric, Ratio, Source, Statistic

ORDER = 70

UNIT_COLUMNS = ("g", "voter", "target", "mafia_voter", "top1", "committed_set")


def _units(c: Any, mode: Any) -> dict[str, np.ndarray]:
    u = f4.vote_units(c, mode, transcripts=False)
    if not len(u):
        return {k: np.zeros(0, dtype=np.int64 if k in ("g", "voter", "target") else object) for k in UNIT_COLUMNS}
    return {k: u[k].to_numpy() for k in UNIT_COLUMNS}


UNITS = Source("f4 vote units", _units)


def _hits(col: str, mafia: bool, is_set: bool = False) -> Any:
    """A kernel: per voter cell, the counted votes of one voter side whose prediction ``col`` (a seat, or a
    set of seats) holds the voted seat, and the votes with such a prediction."""

    def kernel(b: GameBlock) -> np.ndarray:
        u = b.rows(UNITS)
        at = np.flatnonzero((u["mafia_voter"] == mafia) & pd.notna(u[col]))
        if is_set:
            hit = np.array([t in s for t, s in zip(u["target"][at], u[col][at])], dtype=float)
        else:
            hit = (u[col][at] == u["target"][at]).astype(float)
        return b.sums(u["g"][at], u["voter"][at], hit, None)

    return kernel


READS = {UNITS: UNIT_COLUMNS[1:]}
METRICS = (
    Metric("f4 top-1, town", "f4", READS, _hits("top1", False), ("hits", "votes"), (
        Statistic("f4.top1.innocent", "F4 top-1 hit (town voters)", Ratio("hits", "votes"), "votes", Direction.HIGHER,
                  min_n=MIN_VOTES),)),
    Metric("f4 top-1, Mafia", "f4", READS, _hits("top1", True), ("hits", "votes"), (
        Statistic("f4.top1.mafia", "F4 top-1 hit (Mafia voters)", Ratio("hits", "votes"), "votes", Direction.NEUTRAL,
                  min_n=MIN_VOTES),)),
    Metric("f4 committed set, town", "f4", READS, _hits("committed_set", False, True), ("hits", "votes"), (
        Statistic("f4.committed_set.innocent", "F4 committed-set hit (town voters)", Ratio("hits", "votes"), "votes",
                  Direction.HIGHER, min_n=MIN_VOTES),)),
)
