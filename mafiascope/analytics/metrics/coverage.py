"""Probe coverage per probed seat (docs/metrics.md §10): of the calls the battery scheduled, the share that
got an answer, and the share skipped for lagging (only with ``probes.max_lag_s``; a skipped call has no
probe row: the loader counts it per seat in ``players.probes_skipped``). Shown per model, not compared:
it says how complete a model's measurements are, not how the model plays."""

from __future__ import annotations

import numpy as np

from ..metric import Direction, GameBlock, Metric, Place, Ratio, Statistic

ORDER = 31
SHOWN = frozenset({Place.BY_MODEL, Place.REPORT_DIR})


def coverage(b: GameBlock) -> np.ndarray:
    p, pl = b.rows("probes"), b.rows("players")
    sent = b.sums(p["g"], p["seat"], ~np.asarray(p["transport"], dtype=bool), None)  # answered, sent
    skipped = b.sums(pl["g"], pl["seat"], np.asarray(pl["probes_skipped"], dtype=float))[..., 0]
    return np.stack([sent[..., 0], sent[..., 1] + skipped, skipped], axis=-1)


METRICS = (
    Metric("probe_coverage", "parse", {"probes": ("seat", "transport"), "players": ("seat", "probes_skipped")}, coverage,
           ("answered", "scheduled", "skipped"), (
        Statistic("probes.answered_share", "probe answers kept", Ratio("answered", "scheduled"), "scheduled", Direction.HIGHER,
                  min_n=30, shown=SHOWN),
        Statistic("probes.skipped_share", "probe calls skipped", Ratio("skipped", "scheduled"), "scheduled", Direction.LOWER,
                  min_n=30, shown=SHOWN),
    )),
)
