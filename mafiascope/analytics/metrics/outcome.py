"""Game outcomes per seat (docs/metrics.md §16): the seat win rate, the win rate on each side and the
side-adjusted score, over completed games with more than one model at the table (draws lose).

A game one model plays alone (self-play) is left out: every seat of it is that model's, so its seats'
wins are exactly the side's share (2/7 or 5/7 in a classic game) and say nothing about the model's skill.
The seat win rate is confounded with the side a model drew (a Mafia seat wins more or less often than a
town seat under each rule set), so comparisons use the win rate per side and the side-adjusted score: a
seat's win minus its side's base rate -- the share of wins of that side over the counted games with the
same rules and table (rule set, seats, Mafia seats) -- averaged over the model's seats.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..corpus import Cached
from ..frames import models_at_table
from ..metric import NUMBER, Direction, GameBlock, Metric, Place, Ratio, Source, Statistic

ORDER = 10
MIN_SEATS = 20  # seats of a side (or in all) below which an outcome figure is fragile

SIDE_BASE = Cached("side_base", report=True)


def counted(c: Any, mode: Any) -> np.ndarray:
    """The games whose seats the outcome statistics count: completed, with more than one model seated."""
    return np.asarray(c.games["completed"], dtype=bool) & (models_at_table(c) > 1)


def _base(c: Any, mode: Any) -> dict[str, np.ndarray]:
    """Per game, the Mafia side's and the town's base rate: their share of wins over the counted games of
    the game's rules and table (NaN for a game not counted)."""

    def build() -> dict[str, np.ndarray]:
        keep = counted(c, mode)
        g = c.games
        key = (g["rule_set"].astype(str) + "\x00" + g["n_players"].astype(str) + "\x00" + g["n_mafia"].astype(str)).to_numpy()
        winner = g["winner"].astype(str).to_numpy()
        out = {"base_mafia": np.full(c.m, np.nan), "base_town": np.full(c.m, np.nan)}
        if keep.any():
            _, grp = np.unique(key, return_inverse=True)
            n = np.bincount(grp[keep], minlength=grp.max() + 1).astype(float)
            for side, who in (("base_mafia", "Mafia"), ("base_town", "Villagers")):
                wins = np.bincount(grp[keep], weights=(winner[keep] == who).astype(float), minlength=len(n))
                rate = np.divide(wins, n, out=np.full(len(n), np.nan), where=n > 0)
                out[side] = np.where(keep, rate[grp], np.nan)
        return out

    return c.memo(SIDE_BASE.key(), build)


BASE = Source("side base rates", _base, per_game=True)
COLUMNS = ("won", "seats", "won_mafia", "mafia_seats", "won_town", "town_seats", "adjusted")


def wins(b: GameBlock) -> np.ndarray:
    """Per (game, seat) of a completed game: won, 1, the same split by side, and won minus the side's base rate."""
    done = np.asarray(b.games["completed"], dtype=bool)[:, None]
    winner = np.asarray(b.games["winner"], dtype=object)
    won = np.where(b.mafia, (winner == "Mafia")[:, None], (winner == "Villagers")[:, None]) & done
    base = b.rows(BASE)
    side_base = np.where(b.mafia, base["base_mafia"][:, None], base["base_town"][:, None])
    out = np.zeros((b.m, b.seats, len(COLUMNS)))
    S = min(b.seats, won.shape[1])
    maf, w, d = b.mafia[:, :S], won[:, :S], np.broadcast_to(done, won.shape)[:, :S]
    out[:, :S, 0], out[:, :S, 1] = w, d
    out[:, :S, 2], out[:, :S, 3] = w & maf, d & maf
    out[:, :S, 4], out[:, :S, 5] = w & ~maf, d & ~maf
    out[:, :S, 6] = np.where(d & ~np.isnan(side_base[:, :S]), w - np.nan_to_num(side_base[:, :S]), 0.0)
    return out


NOT_COMPARED = frozenset({Place.BY_MODEL, Place.REPORT_DIR})  # the seat win rate: confounded with the side drawn

METRICS = (
    Metric("seat outcomes", "outcome", {"games": ("completed", "winner"), BASE: ("base_mafia", "base_town")}, wins,
           COLUMNS, (
               Statistic("outcome.seat_win_rate", "seat win rate (side not adjusted)", Ratio("won", "seats"), "seats",
                         Direction.HIGHER, min_n=MIN_SEATS, shown=NOT_COMPARED),
               Statistic("outcome.win_rate_mafia", "win rate as Mafia", Ratio("won_mafia", "mafia_seats"), "mafia_seats",
                         Direction.HIGHER, min_n=MIN_SEATS),
               Statistic("outcome.win_rate_town", "win rate as town", Ratio("won_town", "town_seats"), "town_seats",
                         Direction.HIGHER, min_n=MIN_SEATS),
               Statistic("outcome.side_adjusted", "side-adjusted score", Ratio("adjusted", "seats"),
                         "seats", Direction.HIGHER, min_n=MIN_SEATS, format=NUMBER),
           ), needs_probes=False, games=counted),
)
