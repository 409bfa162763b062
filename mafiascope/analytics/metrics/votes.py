"""Town votes on a true Mafia member, per voter (docs/metrics.md §16): of the tally votes cast by seats
of the town, those cast on a seat of the Mafia side. No probes needed."""

from __future__ import annotations

import numpy as np

from ..metric import MIN_VOTES, Direction, GameBlock, Metric, Ratio, Statistic

ORDER = 20


def town_votes(b: GameBlock) -> np.ndarray:
    """Per (game, voter): its tally votes on a Mafia-side seat, and its tally votes, for town voters."""
    v = b.rows("votes")
    voter, target = v["voter"].astype(np.int64), v["target"].astype(np.int64)
    at = np.flatnonzero((voter >= 0) & (target >= 0))
    g, voter, target = v["g"][at], voter[at], target[at]
    town = np.flatnonzero(~b.mafia[g, voter])
    g, voter, target = g[town], voter[town], target[town]
    return b.sums(g, voter, b.mafia[g, target], None)


METRICS = (
    Metric("town votes", "votes", {"votes": ("voter", "target")}, town_votes, ("on_mafia", "town_votes"), (
        Statistic("votes.town_on_mafia_rate", "town votes on Mafia", Ratio("on_mafia", "town_votes"), "town_votes",
                  Direction.HIGHER, min_n=MIN_VOTES),
    ), needs_probes=False),
)
