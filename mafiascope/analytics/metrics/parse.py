"""The probe parse rate per probed seat (docs/metrics.md §10): records with a usable repaired answer."""

from __future__ import annotations

import numpy as np

from ..row_values import K_NONE
from ..metric import Direction, GameBlock, Metric, Ratio, Statistic

ORDER = 30


def parsed(b: GameBlock) -> np.ndarray:
    p = b.rows("probes")
    return b.sums(p["g"], p["seat"], p["eff_kind"] != K_NONE, None)


METRICS = (
    Metric("parse", "parse", {"probes": ("seat", "eff_kind")}, parsed, ("parsed", "records"), (
        Statistic("parse.parse_rate", "probe parse rate", Ratio("parsed", "records"), "records", Direction.HIGHER,
                  min_n=30),
    )),
)
