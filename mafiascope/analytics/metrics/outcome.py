"""The seat win rate (docs/metrics.md §16): seats of completed games on the winning side (draws lose)."""

from __future__ import annotations

import numpy as np

from ..metric import Direction, GameBlock, Metric, Ratio, Statistic

ORDER = 10


def wins(b: GameBlock) -> np.ndarray:
    done = np.asarray(b.games["completed"], dtype=bool)
    winner = np.asarray(b.games["winner"], dtype=object)
    won = np.where(b.mafia, (winner == "Mafia")[:, None], (winner == "Villagers")[:, None])
    out = np.zeros((b.m, b.seats, 2))
    S = min(b.seats, won.shape[1])
    out[:, :S, 0], out[:, :S, 1] = won[:, :S] & done[:, None], done[:, None]
    return out


METRICS = (
    Metric("seat_wins", "outcome", {"games": ("completed", "winner")}, wins, ("won", "seats"), (
        Statistic("outcome.seat_win_rate", "seat win rate", Ratio("won", "seats"), "seats", Direction.HIGHER),
    ), needs_probes=False),
)
