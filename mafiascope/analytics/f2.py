"""F2 -- calibration (metrics.md section 5): bins of width 20 (100 folded into the top
bin), per-bin accuracy and mean confidence with Wilson 95% intervals and bootstrap CIs,
ECE and Brier; per corpus, per agent (game, seat) and per model.

Observations are exactly F1's committed items with a confidence in [0, 100].
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .corpus import Corpus
from .f1 import _ci, f1_items
from .modes import Mode
from .stats import cluster_ci, round_or_none, wilson

N_BINS = 5


def calibration_obs(c: Corpus, mode: Mode) -> pd.DataFrame:
    it = f1_items(c, mode)
    conf = it["conf"].to_numpy()
    keep = it["committed"].to_numpy() & ~np.isnan(conf) & (conf >= 0) & (conf <= 100)
    df = it[keep]
    conf = df["conf"].to_numpy()
    return df.assign(bin=np.minimum(N_BINS - 1, np.floor(conf / 20).astype(int)), outcome=df["correct"].astype(float))


def _bins_ece_brier(k: np.ndarray, n: np.ndarray, cs: np.ndarray, bsum: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Vectorised ECE and Brier over rows of pooled (k, n, conf_sum) per bin and Brier sums."""
    N = n.sum(1)
    with np.errstate(divide="ignore", invalid="ignore"):
        acc = k / n
        mc = cs / n / 100.0
        terms = np.where(n > 0, n / N[:, None] * np.abs(acc - mc), 0.0)
        ece = np.where(N > 0, terms.sum(1), np.nan)
        brier = np.where(N > 0, bsum / N, np.nan)
    return ece, brier


def calibration_summary(df: pd.DataFrame, m: int | None = None, mode: Mode | None = None, with_ci: bool = False) -> dict[str, Any]:
    conf = df["conf"].to_numpy()
    out_ = df["outcome"].to_numpy()
    b = df["bin"].to_numpy()
    n = np.bincount(b, minlength=N_BINS).astype(float)
    k = np.bincount(b, weights=out_, minlength=N_BINS)
    cs = np.bincount(b, weights=conf, minlength=N_BINS)
    bs = float(((conf / 100.0 - out_) ** 2).sum())
    ece, brier = _bins_ece_brier(k[None], n[None], cs[None], np.array([bs]))
    res: dict[str, Any] = {
        "n": int(n.sum()),
        "ece": round_or_none(ece[0]),
        "brier": round_or_none(brier[0]),
        "bins": {},
    }
    per_game = None
    if with_ci and m is not None and mode is not None:
        g = df["g"].to_numpy()
        cols = []
        for j in range(N_BINS):
            sel = b == j
            cols += [
                np.bincount(g[sel], weights=out_[sel], minlength=m),
                np.bincount(g[sel], minlength=m).astype(float),
                np.bincount(g[sel], weights=conf[sel], minlength=m),
            ]
        cols.append(np.bincount(g, weights=(conf / 100.0 - out_) ** 2, minlength=m))
        per_game = np.column_stack(cols)

        def _ece(p: np.ndarray) -> np.ndarray:
            return _bins_ece_brier(p[:, 0:15:3], p[:, 1:15:3], p[:, 2:15:3], p[:, 15])[0]

        def _brier(p: np.ndarray) -> np.ndarray:
            return _bins_ece_brier(p[:, 0:15:3], p[:, 1:15:3], p[:, 2:15:3], p[:, 15])[1]

        res["ece_ci95"] = _ci(cluster_ci(per_game, _ece, mode))
        res["brier_ci95"] = _ci(cluster_ci(per_game, _brier, mode))
    for j in range(N_BINS):
        if n[j] == 0:
            continue
        entry: dict[str, Any] = {
            "n": int(n[j]),
            "acc": round_or_none(k[j] / n[j]),
            "mean_conf": round_or_none(cs[j] / n[j]),
            "wilson95": [round_or_none(x) for x in wilson(k[j], n[j])],
        }
        if per_game is not None:
            entry["acc_ci95"] = _ci(
                cluster_ci(per_game[:, 3 * j : 3 * j + 2], lambda p: np.where(p[:, 1] > 0, p[:, 0] / np.where(p[:, 1] > 0, p[:, 1], 1), np.nan), mode)
            )
        res["bins"][f"{20 * j}-{20 * j + 19}"] = entry
    return res


def f2(c: Corpus, mode: Mode, *, breakdowns: bool = True) -> dict[str, Any]:
    df = calibration_obs(c, mode)
    res = calibration_summary(df, c.m, mode, with_ci=True)
    if breakdowns:
        models = c.players.set_index(["g", "seat"])["model"]
        key_model = models.reindex(pd.MultiIndex.from_arrays([df["g"], df["obs"]])).to_numpy()
        res["by_model"] = {
            str(mdl): calibration_summary(sub) for mdl, sub in df.assign(model=key_model).groupby("model", sort=True)
        }
        gid = c.games["game_id"].to_numpy()
        names = c.players.set_index(["g", "seat"])["name"]
        res["by_agent"] = [
            {"game_id": str(gid[g]), "agent": str(names.loc[(g, s)]), **calibration_summary(sub)}
            for (g, s), sub in df.groupby(["g", "obs"], sort=True)
        ]
    return res
