"""Plan-action consistency per planner (docs/metrics.md §14.2, §16)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import accounting
from ..metric import Direction, GameBlock, Metric, Ratio, Source, Statistic

ORDER = 110


def _plans(c: Any, mode: Any) -> dict[str, np.ndarray]:
    j = accounting.plan_rows(c)
    return {"g": j["g"].to_numpy(dtype=np.int64), "seat": j["seat"].to_numpy(dtype=np.int64), "hit": j["hit"].to_numpy()}


PLANS = Source("scored plans", _plans)


def same_target(b: GameBlock) -> np.ndarray:
    j = b.rows(PLANS)
    return b.sums(j["g"], j["seat"], j["hit"], None)


METRICS = (
    Metric("plans", "plans", {PLANS: ("seat", "hit")}, same_target, ("same_target", "plans"), (
        Statistic("plans.rate", "plan-action consistency", Ratio("same_target", "plans"), "plans", Direction.HIGHER,
                  min_n=20),
    )),
)
