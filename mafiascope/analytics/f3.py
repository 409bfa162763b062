"""F3 -- second-order consistency, the "spotlight" over-prediction (metrics.md section 6).

A pair = A's ``social_map.toward_me`` item about B (predicted attitude) matched with B's
latest ``role_assessment`` (by ordering key, equal keys allowed) that has an entry for A,
mapped to an attitude with threshold tau. Mafia-Mafia pairs are excluded (canonical).
compat: no alive filter on B, round-end probes sort first in their round.
default: B must be alive at A's probe time; round-end probes sort last.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from . import labels as L
from .corpus import Corpus
from .f1 import _ci
from .frames import alive_at, items_with_probe, mafia_mask, order_key, pidx
from .modes import Mode
from .stats import cluster_ci, ratio_stat, round_or_none

CLASSES = L.ATTITUDES  # trusts, neutral, suspects (codes 0, 1, 2)


def _assessments(c: Corpus, mode: Mode) -> pd.DataFrame:
    """B's assessment entries: (g, B, A, key, guess, conf), last entry per record and target
    (built once per :func:`f3_pairs`, which is memoised)."""
    it = items_with_probe(c, "ra", "role_assessment")
    guess = (it["role_en"] if mode.is_compat else it["role"]).to_numpy()
    ok = (it["tgt"].to_numpy() >= 0) & (guess != L.UNUSABLE) & (it["seat"].to_numpy() >= 0)
    it = it[ok].assign(guess=guess[ok])
    dup = pd.Series(it["pi"].to_numpy(dtype=np.int64) * 256 + it["tgt"].to_numpy()).duplicated(keep="last")
    it = it[~dup.to_numpy()]  # last entry per record and target
    key = order_key(c, mode)[it["pi"].to_numpy()]
    df = pd.DataFrame(
        {
            "g": it["g"].to_numpy(), "B": it["seat"].to_numpy(), "A": it["tgt"].to_numpy(), "key": key,
            "pi": it["pi"].to_numpy(), "b_round": it["round"].to_numpy(), "guess": it["guess"].to_numpy(),
            "conf": np.nan_to_num(it["conf"].to_numpy(), nan=0.0),
        }
    )
    # several records with the same key: the later one (file order) wins
    return df.sort_values(["key", "pi"], kind="stable").drop_duplicates(["g", "B", "A", "key"], keep="last")


def _pair_group(df: pd.DataFrame) -> np.ndarray:
    return (df["g"].to_numpy(dtype=np.int64) * 128 + df["B"].to_numpy()) * 128 + df["A"].to_numpy()


def _last_at_or_before(q_grp: np.ndarray, q_key: np.ndarray, r_grp: np.ndarray, r_key: np.ndarray) -> np.ndarray:
    """Per query: row of the right side with the same group and the largest key <= the query's (-1: none).

    ``merge_asof(direction="backward", allow_exact_matches=True, by=group)`` for right rows
    with unique (group, key).
    """
    keys, rank = np.unique(np.concatenate([q_key, r_key]), return_inverse=True)
    rank = rank.reshape(-1).astype(np.int64)
    qc = q_grp * len(keys) + rank[: len(q_key)]
    rc = r_grp * len(keys) + rank[len(q_key):]
    order = np.argsort(rc, kind="stable")
    pos = np.searchsorted(rc[order], qc, side="right") - 1
    hit = order[np.maximum(pos, 0)]
    return np.where((pos >= 0) & (r_grp[hit] == q_grp), hit, -1)


def f3_pairs(c: Corpus, mode: Mode, *, include_mafia_pairs: bool = False) -> pd.DataFrame:
    """Matched (A, B) pairs with A's stated attitude and B's guess/confidence; memoised."""

    def build() -> pd.DataFrame:
        it = items_with_probe(c, "sm", "social_map")
        A = it["seat"].to_numpy()
        B = it["tgt"].to_numpy()
        ok = (A >= 0) & (B >= 0) & (A != B) & (it["att"].to_numpy() >= 0)
        it = it[ok]
        if not mode.is_compat:
            alive = alive_at(c, it["g"].to_numpy(), it["tgt"].to_numpy(), it["timestamp"].to_numpy())
            it = it[alive]
        q = pd.DataFrame(
            {
                "g": it["g"].to_numpy(), "A": it["seat"].to_numpy(), "B": it["tgt"].to_numpy(),
                "key": order_key(c, mode)[it["pi"].to_numpy()], "a_round": it["round"].to_numpy(),
                "pred": it["att"].to_numpy(), "qi": np.arange(len(it)),
            }
        )
        ass = _assessments(c, mode)
        j = _last_at_or_before(_pair_group(q), q["key"].to_numpy(), _pair_group(ass), ass["key"].to_numpy())
        merged = q[j >= 0].assign(**{col: ass[col].to_numpy()[j[j >= 0]] for col in ("b_round", "guess", "conf")})
        merged["guess"] = merged["guess"].astype(int)
        maf = mafia_mask(c)
        g = merged["g"].to_numpy()
        merged["a_mafia"] = maf[g, merged["A"].to_numpy()]
        merged["mm"] = merged["a_mafia"].to_numpy() & maf[g, merged["B"].to_numpy()]
        return merged.reset_index(drop=True)

    df = c.memo(("f3_pairs", mode), build)
    return df if include_mafia_pairs else df[~df["mm"].to_numpy()]


def actual_attitude(guess: np.ndarray, conf: np.ndarray, tau: float) -> np.ndarray:
    sure = conf >= tau
    out = np.full(len(guess), L.NEUTRAL, dtype=np.int64)
    out[sure & ((guess == L.MAFIA) | (guess == L.DON))] = L.SUSPECTS
    out[sure & np.isin(guess, (L.VILLAGER, L.DOCTOR, L.SHERIFF))] = L.TRUSTS
    return out


def _first_seen(x: np.ndarray, values: range) -> list[int]:
    """The values present in ``x`` in order of first occurrence (``pd.unique`` order)."""
    firsts = [(int(np.argmax(hit)), v) for v in values for hit in [x == v] if hit.any()]
    return [v for _, v in sorted(firsts)]


class _Pairs:
    """Columns of the pairs as arrays, with the actual attitude per threshold computed once."""

    def __init__(self, df: pd.DataFrame):
        self.g, self.pred = df["g"].to_numpy(), df["pred"].to_numpy()
        self.guess, self.conf = df["guess"].to_numpy(), df["conf"].to_numpy()
        self.a_round, self.b_round = df["a_round"].to_numpy(), df["b_round"].to_numpy()
        self._act: dict[float, np.ndarray] = {}

    def act(self, tau: float) -> np.ndarray:
        if tau not in self._act:
            self._act[tau] = actual_attitude(self.guess, self.conf, tau)
        return self._act[tau]


def _summary(pairs: _Pairs | pd.DataFrame, tau: float, window: int | None, m: int, mode: Mode, with_ci: bool,
             sel: np.ndarray | None = None) -> dict[str, Any]:
    P = pairs if isinstance(pairs, _Pairs) else _Pairs(pairs)
    keep = np.ones(len(P.g), dtype=bool) if sel is None else sel
    if window is not None:
        keep = keep & (P.b_round >= P.a_round - window)
    pred = P.pred[keep]
    act = P.act(tau)[keep]
    n = len(pred)
    correct = pred == act
    act_counts = {CLASSES[a]: int((act == a).sum()) for a in _first_seen(act, range(3))}
    pred_counts = {CLASSES[p]: int((pred == p).sum()) for p in _first_seen(pred, range(3))}
    maj_class = max(act_counts, key=lambda k: act_counts[k]) if act_counts else None  # first-seen wins ties
    acc = correct.mean() if n else None
    maj = act_counts[maj_class] / n if n else None
    ps, as_ = int((pred == L.SUSPECTS).sum()), int((act == L.SUSPECTS).sum())
    res: dict[str, Any] = {
        "n": n,
        "accuracy": round_or_none(acc),
        "majority_class": maj_class,
        "majority_baseline": round_or_none(maj),
        "diff": round_or_none(acc - maj if n else None),
        "pred_counts": pred_counts,
        "actual_counts": act_counts,
        "suspects_ratio": round_or_none(ps / as_ if as_ else None),
        "pred_suspects": ps,
        "actual_suspects": as_,
    }
    if with_ci:
        g = P.g[keep]
        cols = [np.bincount(g, minlength=m).astype(float), np.bincount(g, weights=correct.astype(float), minlength=m)]
        cols += [np.bincount(g, weights=(act == a).astype(float), minlength=m) for a in range(3)]
        cols.append(np.bincount(g, weights=(pred == L.SUSPECTS).astype(float), minlength=m))
        pg = np.column_stack(cols)
        nz = lambda p: np.where(p[:, 0] > 0, p[:, 0], np.nan)  # noqa: E731
        res["acc_ci95"] = _ci(cluster_ci(pg, lambda p: p[:, 1] / nz(p), mode))
        res["diff_ci95"] = _ci(cluster_ci(pg, lambda p: (p[:, 1] - p[:, 2:5].max(1)) / nz(p), mode))
        res["ratio_ci95"] = _ci(cluster_ci(pg, ratio_stat(5, 4), mode))
    return res


def f3(c: Corpus, mode: Mode, tau: float = 50, window: int | None = None) -> dict[str, Any]:
    allp = f3_pairs(c, mode, include_mafia_pairs=True)
    P = _Pairs(allp)
    mm = allp["mm"].to_numpy()
    a_maf = allp["a_mafia"].to_numpy()
    can = ~mm
    out: dict[str, Any] = {
        "canonical": _summary(P, tau, window, c.m, mode, True, can),
        "innocent_predictors": _summary(P, tau, window, c.m, mode, True, can & ~a_maf),
        "mafia_predictors": _summary(P, tau, window, c.m, mode, True, can & a_maf),
        "legacy_mafia_pairs_included": _summary(P, tau, window, c.m, mode, False),
        "grid": {},
    }
    for t in (30, 50, 70):
        for w, wname in ((None, "nowin"), (1, "win1")):
            out["grid"][f"thr{t}_{wname}"] = _summary(P, t, w, c.m, mode, w is None, can)
    return out
