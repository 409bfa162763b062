"""F3 -- second-order consistency, the "spotlight" over-prediction (docs/metrics.md §6).

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
from .frames import alive_at, items_with_probe, last_of_key, mafia_mask, order_key
from .modes import Mode
from .stats import batched_cis, cluster_ci, ratio_stat, round_or_none

CLASSES = L.ATTITUDES  # trusts, neutral, suspects (codes 0, 1, 2)


def _assessments(c: Corpus, mode: Mode) -> dict[str, np.ndarray]:
    """B's assessment entries as arrays: g, B, A, key, pi, b_round, guess, conf; the last entry
    per record and target (built once per :func:`f3_pairs`, which is memoised)."""
    it = items_with_probe(c, "ra", "role_assessment")
    guess = (it["role_en"] if mode.is_compat else it["role"]).to_numpy()
    pi, tgt, seat = it["pi"].to_numpy(), it["tgt"].to_numpy(), it["seat"].to_numpy()
    ok = np.flatnonzero((tgt >= 0) & (guess != L.UNUSABLE) & (seat >= 0))
    rows = ok[last_of_key(pi[ok].astype(np.int64) * 256 + tgt[ok])]  # last entry per record and target
    return {
        "g": it["g"].to_numpy()[rows], "B": seat[rows], "A": tgt[rows], "key": order_key(c, mode)[pi[rows]],
        "pi": pi[rows], "b_round": it["round"].to_numpy()[rows], "guess": guess[rows].astype(np.int64),
        "conf": np.nan_to_num(it["conf"].to_numpy()[rows], nan=0.0),
    }


def _pair_group(g: np.ndarray, B: np.ndarray, A: np.ndarray) -> np.ndarray:
    return (g.astype(np.int64) * 128 + B) * 128 + A


def _last_at_or_before(q_grp: np.ndarray, q_key: np.ndarray, r_grp: np.ndarray, r_key: np.ndarray,
                       r_tie: np.ndarray) -> np.ndarray:
    """Per query: the right row with the same group and the largest key <= the query's (-1: none);
    of right rows with equal (group, key) the one with the largest ``r_tie`` counts.

    ``merge_asof(direction="backward", allow_exact_matches=True, by=group)`` after keeping
    the last row per (group, key) in (key, tie) order.
    """
    if not len(q_key) or not len(r_key):
        return np.full(len(q_key), -1, dtype=np.int64)
    lo = min(int(q_key.min()), int(r_key.min()))
    span = max(int(q_key.max()), int(r_key.max())) - lo + 1
    if (max(int(q_grp.max()), int(r_grp.max())) + 1) * span < 2**62:
        qc, rc = q_grp * span + (q_key - lo), r_grp * span + (r_key - lo)
    else:  # pragma: no cover - keys too wide for one int64: use their ranks
        keys, rank = np.unique(np.concatenate([q_key, r_key]), return_inverse=True)
        rank = rank.reshape(-1).astype(np.int64)
        qc, rc = q_grp * len(keys) + rank[: len(q_key)], r_grp * len(keys) + rank[len(q_key):]
    order = np.lexsort((r_tie, rc))
    rs = rc[order]
    last = np.r_[rs[1:] != rs[:-1], True]
    rs, rows = rs[last], order[last]
    pos = np.searchsorted(rs, qc, side="right") - 1
    hit = rows[np.maximum(pos, 0)]
    return np.where((pos >= 0) & (r_grp[hit] == q_grp), hit, -1)


def f3_pairs(c: Corpus, mode: Mode, *, include_mafia_pairs: bool = False) -> pd.DataFrame:
    """Matched (A, B) pairs with A's stated attitude and B's guess/confidence; memoised.

    ``round`` and ``public_msg_seq`` are the step of A's social_map probe (``-1`` = round end),
    ``key`` its internal ordering key (mode-dependent; not for display).
    """

    def build() -> pd.DataFrame:
        it = items_with_probe(c, "sm", "social_map")
        g, A, B = it["g"].to_numpy(), it["seat"].to_numpy(), it["tgt"].to_numpy()
        ok = (A >= 0) & (B >= 0) & (A != B) & (it["att"].to_numpy() >= 0)
        if not mode.is_compat:
            ok &= alive_at(c, g, np.maximum(B, 0), it["timestamp"].to_numpy())
        rows = np.flatnonzero(ok)
        g, A, B = g[rows], A[rows], B[rows]
        key = order_key(c, mode)[it["pi"].to_numpy()[rows]]
        ass = _assessments(c, mode)
        j = _last_at_or_before(_pair_group(g, B, A), key, _pair_group(ass["g"], ass["B"], ass["A"]), ass["key"], ass["pi"])
        m = j >= 0
        jj = j[m]
        maf = mafia_mask(c)
        a_maf = maf[g[m], A[m]]
        return pd.DataFrame({
            "g": g[m], "A": A[m], "B": B[m], "key": key[m], "a_round": it["round"].to_numpy()[rows][m],
            "round": it["round"].to_numpy()[rows][m], "public_msg_seq": it["pms"].to_numpy()[rows][m],
            "pred": it["att"].to_numpy()[rows][m], "qi": np.flatnonzero(m),
            "b_round": ass["b_round"][jj], "guess": ass["guess"][jj], "conf": ass["conf"][jj],
            "a_mafia": a_maf, "mm": a_maf & maf[g[m], B[m]],
        })

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


@batched_cis
def f3(c: Corpus, mode: Mode, tau: float = 50, window: int | None = None, *, seats: np.ndarray | None = None) -> dict[str, Any]:
    """F3 summaries; ``seats`` (an (m, seats) mask) keeps only the pairs whose predictor A is a kept seat."""
    allp = f3_pairs(c, mode, include_mafia_pairs=True)
    if seats is not None:
        allp = allp[seats[allp["g"].to_numpy(), allp["A"].to_numpy()]]
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
