"""Episode switching per agent (docs/metrics.md §12, §16): of the complete comparisons a living agent took
part in, those in which its top suspect changed."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import episodes
from ..metric import Direction, GameBlock, Metric, Ratio, Source, Statistic

ORDER = 90


def _slots(c: Any, mode: Any) -> dict[str, np.ndarray]:
    slots, switches = episodes.episode_seat_counts(c)
    return {"slots": slots, "switches": switches}


SLOTS = Source("episode slots", _slots, per_game=True)


def switching(b: GameBlock) -> np.ndarray:
    e = b.rows(SLOTS)
    out = np.zeros((b.m, b.seats, 2))
    S = min(b.seats, e["slots"].shape[1])
    out[:, :S, 0], out[:, :S, 1] = e["switches"][:, :S], e["slots"][:, :S]
    return out


METRICS = (
    Metric("episodes", "episodes", {SLOTS: ("slots", "switches")}, switching, ("switches", "slots"), (
        Statistic("episodes.switch_rate", "episode switching rate", Ratio("switches", "slots"), "slots", Direction.NEUTRAL,
                  min_n=50),
    )),
)
