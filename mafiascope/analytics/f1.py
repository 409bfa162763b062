"""F1 -- first-order beliefs by round (docs/metrics.md §4).

Committed accuracy vs the permutation chance baseline, Unknown rate, Mafia recall vs
chance, pooled per round over games, each with a game-level cluster bootstrap CI.
compat: no alive filter on targets, English-only normalisation. default: targets must be
alive at the probe time, Russian synonyms accepted, Don counts as Mafia.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from . import labels as L
from .corpus import Corpus
from .frames import alive_matrix, item_arrays, mafia_mask, played_by, true_roles
from .modes import Mode
from .stats import batched_cis, ci_list, ratio_ci, round_or_none


_F1_COLS = ("g", "round", "obs", "tgt", "guess", "truth", "conf", "timestamp", "unknown", "committed", "correct",
            "tgt_mafia", "hit_mafia", "acc_chance", "rec_chance")


_BLOCK = 1 << 18  # kept items per block of F1's row-wise passes (a 1/4 M x seats bool is ~2 MB per seat)


def _f1_block(c: Corpus, mode: Mode, roles: np.ndarray, maf: np.ndarray, g_all: np.ndarray, obs_all: np.ndarray,
              tgt_all: np.ndarray, guess_all: np.ndarray, ts_all: np.ndarray, at: np.ndarray) -> dict[str, np.ndarray]:
    """F1's outcome columns of the kept items ``at`` (rows of the item arrays), ``at`` itself after
    default mode's alive filter; each row's values depend on that row only."""
    g, obs, tgt, guess = g_all[at], obs_all[at], tgt_all[at], guess_all[at]
    alive = alive_matrix(c, g, ts_all[at])
    rows = np.arange(len(g))
    if not mode.is_compat:
        keep = alive[rows, tgt]
        at, g, obs, tgt, guess, alive = at[keep], g[keep], obs[keep], tgt[keep], guess[keep], alive[keep]
        rows = np.arange(len(g))
    alive_others = alive
    alive_others[rows, obs] = False  # alive is not read again
    n_others = alive_others.sum(1)
    truth = roles[g, tgt]
    small = roles.min(initial=0) >= -128 and roles.max(initial=0) < 128  # role codes: one byte per (item, seat)
    rg = roles.astype(np.int8)[g] if small else roles[g]
    same = (alive_others & (rg == truth[:, None])).sum(1)
    del rg
    maf_g = maf[g]
    n_maf_others = (alive_others & maf_g).sum(1)
    with np.errstate(divide="ignore", invalid="ignore"):
        acc_chance = np.where(n_others > 0, same / n_others, np.nan)
        rec_chance = np.where(n_others > 0, n_maf_others / n_others, np.nan)
    return {
        "at": at, "g": g, "obs": obs, "tgt": tgt, "guess": guess, "truth": truth,
        "unknown": guess == L.UNKNOWN, "committed": guess != L.UNKNOWN, "correct": guess == truth,
        "tgt_mafia": maf_g[rows, tgt], "hit_mafia": guess == L.MAFIA,
        "acc_chance": acc_chance, "rec_chance": rec_chance,
    }


def f1_arrays(c: Corpus, mode: Mode) -> dict[str, np.ndarray]:
    """The usable (observer, target) items' outcome columns as arrays (:func:`f1_items`'s columns); memoised.

    Read from the role-assessment items' few columns (no joined item frame); the per-item dense
    (items, seats) passes use one-byte roles."""

    def build() -> dict[str, np.ndarray]:
        it = item_arrays(c, "ra", "role_assessment", ("g", "tgt", "role_en" if mode.is_compat else "role", "conf"),
                         ("seat", "timestamp", "round"))
        roles = true_roles(c, mode)
        maf = mafia_mask(c)
        g, obs, tgt = it["g"], it["seat"], it["tgt"]
        guess = it["role_en" if mode.is_compat else "role"]
        ok = (obs >= 0) & (tgt >= 0) & (tgt != obs) & (guess != L.UNUSABLE)
        ok &= ~maf[g, np.where(obs >= 0, obs, 0)]
        at = np.flatnonzero(ok)  # the kept items' rows (only three more columns are read)
        del ok
        # every step below is row by row: a block of kept items at a time bounds the dense
        # (items, seats) temporaries; the blocks' results are concatenated in row order
        parts = [_f1_block(c, mode, roles, maf, g, obs, tgt, guess, it["timestamp"], at[lo:lo + _BLOCK])
                 for lo in range(0, len(at), _BLOCK)] or [_f1_block(c, mode, roles, maf, g, obs, tgt, guess,
                                                                     it["timestamp"], at)]
        out = {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
        del parts
        at = out.pop("at")
        out.update({"round": it["round"][at], "conf": it["conf"][at], "timestamp": it["timestamp"][at]})
        return {k: out[k] for k in _F1_COLS}

    return c.memo(("f1_arrays", mode), build)


def f1_items(c: Corpus, mode: Mode) -> pd.DataFrame:
    """One row per usable (observer, target) item with outcome columns; memoised."""

    def build() -> pd.DataFrame:
        arrays = f1_arrays(c, mode)
        df = pd.DataFrame({k: arrays[k] for k in _F1_COLS})
        arrays.update({k: df[k].to_numpy() for k in _F1_COLS})  # the memoised arrays become views of the frame: one copy
        return df

    return c.memo(("f1_items", mode), build)


def _per_game(g: np.ndarray, m: int, num: np.ndarray, den: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return np.bincount(g, weights=num, minlength=m), np.bincount(g, weights=den, minlength=m)


@batched_cis
def f1_by_round(c: Corpus, mode: Mode, *, model: str | None = None, seats: np.ndarray | None = None) -> dict[str, Any]:
    """F1 per round; ``model`` keeps only the observers played by that model (mixed-model games),
    ``seats`` (an (m, seats) mask) only those observers."""
    it = f1_arrays(c, mode)
    keep = None
    if model is not None:
        keep = played_by(c, it["g"], it["obs"], model)
    if seats is not None:
        sk = seats[it["g"], it["obs"]]
        keep = sk if keep is None else keep & sk
    at = slice(None) if keep is None else np.flatnonzero(keep)
    cols = {k: it[k][at] for k in ("g", "round", "committed", "correct", "unknown", "tgt_mafia", "hit_mafia",
                                   "acc_chance", "rec_chance")}
    out: dict[str, Any] = {}
    # each round's rows in table order (as a groupby): one stable sort by round, then slices
    order = np.argsort(cols["round"], kind="stable")
    rs = cols["round"][order]
    bounds = np.flatnonzero(np.r_[True, rs[1:] != rs[:-1]]) if len(rs) else np.zeros(0, dtype=np.int64)
    for lo, hi in zip(bounds.tolist(), [*bounds[1:].tolist(), len(rs)]):
        rnd = rs[lo]
        sel = order[lo:hi]
        g = cols["g"][sel]
        com = cols["committed"][sel]
        corr = cols["correct"][sel] & com
        unk = cols["unknown"][sel]
        tm = cols["tgt_mafia"][sel]
        hit = cols["hit_mafia"][sel] & tm
        ac = cols["acc_chance"][sel]
        rc = cols["rec_chance"][sel]
        ak, an = _per_game(g, c.m, corr.astype(float), com.astype(float))
        uk, un = _per_game(g, c.m, unk.astype(float), np.ones(len(sel)))
        rk, rn = _per_game(g, c.m, hit.astype(float), tm.astype(float))
        acc_ch = ac[com & ~np.isnan(ac)]
        rec_ch = rc[tm & ~np.isnan(rc)]
        out[str(int(rnd))] = {
            "acc": round_or_none(ak.sum() / an.sum() if an.sum() else None),
            "acc_n": int(an.sum()),
            "acc_chance": round_or_none(acc_ch.mean() if len(acc_ch) else None),
            "acc_ci95": _ci(ratio_ci(ak, an, mode)),
            "unk": round_or_none(uk.sum() / un.sum() if un.sum() else None),
            "unk_n": int(un.sum()),
            "unk_ci95": _ci(ratio_ci(uk, un, mode)),
            "recall": round_or_none(rk.sum() / rn.sum() if rn.sum() else None),
            "recall_n": int(rn.sum()),
            "recall_chance": round_or_none(rec_ch.mean() if len(rec_ch) else None),
            "recall_ci95": _ci(ratio_ci(rk, rn, mode)),
        }
    return out


_ci = ci_list  # rounded [lo, hi] of an interval (pending inside a batch)
