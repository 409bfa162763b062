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
from .corpus import Cached, Corpus
from .f3_match import match, rows_where, usable_queries
from .frames import item_arrays, item_col as _item_col, mafia_mask, order_key
from .executor import by_games, seat_memo
from .modes import Mode
from .intervals import ci_list as _ci, cluster_ci, pooled_entry
from .stats import ratio_stat, round_or_none

CLASSES = L.ATTITUDES  # trusts, neutral, suspects (codes 0, 1, 2)
F3_PAIR_ARRAYS = Cached("f3_pair_arrays")
F3_LEAN_PAIR_ARRAYS = Cached("f3_lean_pair_arrays")
F3_PAIRS = Cached("f3_pairs")


_PAIR_COLS = ("g", "A", "B", "key", "a_round", "round", "public_msg_seq", "pred", "qi", "b_round", "guess", "conf",
              "a_mafia", "mm")
_LEAN_PAIR_COLS = ("g", "A", "a_round", "pred", "b_round", "guess", "conf", "a_mafia", "mm")


def _pair_arrays(c: Corpus, mode: Mode, full: bool = True) -> dict[str, np.ndarray]:
    """Every matched pair (Mafia-Mafia pairs included) as arrays, :func:`f3_pairs`'s columns; memoised.
    ``full=False``: only the columns the report's summaries and seat cells read (:data:`_LEAN_PAIR_COLS`,
    ``guess`` in its stored dtype), about half the memory at 10,000 games."""

    def build() -> dict[str, np.ndarray]:
        if full:  # (the full pairs' ``qi`` numbers the whole corpus' usable items: built on the whole corpus)
            return _pairs(c, mode, True)
        # a pair is within one game, and pairs come in the social-map items' order, game by game
        return by_games(c, lambda view, lo, hi: _pairs(view, mode, False), _pair_tables(mode), seat_memo(c))

    return c.memo((F3_PAIR_ARRAYS if full else F3_LEAN_PAIR_ARRAYS).key(mode), build)


def _pair_tables(mode: Mode) -> dict[str, tuple[str, ...]]:
    """What the lean pairs' build reads besides the seats' roles and death times."""
    return {"probes": ("probe_id", "seat", "timestamp", "round", "pms", "probe_seq"), "sm": ("rec", "tgt", "att"),
            "ra": ("rec", "tgt", "role_en" if mode.is_compat else "role", "conf")}


def _pairs(c: Corpus, mode: Mode, full: bool) -> dict[str, np.ndarray]:
    """:func:`_pair_arrays`' build."""
    it = item_arrays(c, "sm", "social_map", ("g", "tgt", "att"), ("seat",))
    rows = usable_queries(c, mode, it)  # the usable social-map items
    col = "role_en" if mode.is_compat else "role"
    ra = item_arrays(c, "ra", "role_assessment", ("g", "tgt", col), ("seat",))
    r_ok = rows_where(len(ra["g"]), lambda s: (ra["tgt"][s] >= 0) & (ra[col][s] != L.UNUSABLE) & (ra["seat"][s] >= 0))
    qrows, brows = match(c, mode, it, rows, ra, r_ok)  # matched (social map, assessment) items
    del r_ok
    if len(qrows) > 1 and not bool((qrows[1:] > qrows[:-1]).all()):  # item rows not in game order: table order
        order = np.argsort(qrows, kind="stable")
        qrows, brows = qrows[order], brows[order]
        del order
    # the pair columns one after the other, each input let go of after its last use (the
    # items' gathered columns are as long as the tables)
    out: dict[str, np.ndarray] = {"qi": np.searchsorted(rows, qrows)} if full else {}
    del rows
    out["b_round"] = c.cols("probes", ["round"])["round"].to_numpy()[ra["pi"][brows]]
    del ra
    guess = _item_col(c, "ra", "role_assessment", col, brows)
    out["guess"] = guess.astype(np.int64) if full else guess  # the report only compares the codes
    out["conf"] = np.nan_to_num(_item_col(c, "ra", "role_assessment", "conf", brows), copy=False, nan=0.0)  # a fresh gather
    del brows, guess
    g, A, B = it["g"][qrows], it["seat"][qrows], it["tgt"][qrows]
    maf = mafia_mask(c)
    a_pi = it["pi"][qrows]
    p = c.cols("probes", ["round", "pms"] if full else ["round"])
    out.update({"g": g, "A": A, "a_round": p["round"].to_numpy()[a_pi], "pred": it["att"][qrows], "a_mafia": maf[g, A]})
    out["mm"] = out["a_mafia"] & maf[g, B]
    if full:
        out.update({"B": B, "key": order_key(c, mode)[a_pi], "round": out["a_round"], "public_msg_seq": p["pms"].to_numpy()[a_pi]})
    del it, qrows, a_pi
    return {k: out[k] for k in (_PAIR_COLS if full else _LEAN_PAIR_COLS)}


def pair_arrays(c: Corpus, mode: Mode) -> dict[str, np.ndarray]:
    """The report's columns of the pairs (the seat cells and :func:`f3` read them; no frame): the full
    pairs' when they are memoised already (the app's pairs view), else only these columns."""
    full = c.peek(F3_PAIR_ARRAYS.key(mode))
    return full if full is not None else _pair_arrays(c, mode, full=False)


def f3_pairs(c: Corpus, mode: Mode, *, include_mafia_pairs: bool = False) -> pd.DataFrame:
    """Matched (A, B) pairs with A's stated attitude and B's guess/confidence; memoised.

    ``round`` and ``public_msg_seq`` are the step of A's social_map probe (``-1`` = round end),
    ``key`` its internal ordering key (mode-dependent; not for display).
    """

    def build() -> pd.DataFrame:
        arrays = _pair_arrays(c, mode)
        df = pd.DataFrame({k: arrays[k] for k in _PAIR_COLS})
        arrays.update({k: df[k].to_numpy() for k in _PAIR_COLS})  # the memoised arrays become views of the frame
        return df

    df = c.memo(F3_PAIRS.key(mode), build)
    return df if include_mafia_pairs else df[~df["mm"].to_numpy()]


def actual_attitude(guess: np.ndarray, conf: np.ndarray, tau: float) -> np.ndarray:
    sure = conf >= tau
    out = np.full(len(guess), L.NEUTRAL, dtype=np.int64)
    out[sure & ((guess == L.MAFIA) | (guess == L.DON))] = L.SUSPECTS
    out[sure & ((guess == L.VILLAGER) | (guess == L.DOCTOR) | (guess == L.SHERIFF))] = L.TRUSTS
    return out


class _Pairs:
    """Columns of the pairs as arrays, with each pair's (predicted, actual) attitude per threshold
    as one small code (``pred * 3 + actual``) computed once: a summary is then a histogram of codes.

    ``counts(tau)``: one pass over the pairs gives every summary at ``tau`` (and ``taus``) its counts: per game, per
    class (:data:`_CLASS_OF`) and per window flag (``windows``: a bit each, set when the assessment is
    at most that many rounds older than the probe), the pairs of each code."""

    def __init__(self, cols: Any, windows: tuple[int, ...] = (), taus: tuple[float, ...] = ()):
        self.g = np.asarray(cols["g"])
        self.pred = np.asarray(cols["pred"])
        self.guess, self.conf = np.asarray(cols["guess"]), np.asarray(cols["conf"])
        self.a_round, self.b_round = np.asarray(cols["a_round"]), np.asarray(cols["b_round"])
        self.mm, self.a_mafia = np.asarray(cols["mm"]), np.asarray(cols["a_mafia"])
        self.k = int(self.pred.max(initial=0)) + 1  # predicted classes (attitude codes are 0..2)
        self.windows, self.taus = windows, taus
        self._code: dict[float, np.ndarray] = {}
        self._counts: dict[tuple[float, int], np.ndarray] = {}

    def code(self, tau: float) -> np.ndarray:
        if tau not in self._code:
            self._code[tau] = codes_of(self.pred, self.guess, self.conf, tau)
        return self._code[tau]

    def cls(self, s: slice) -> np.ndarray:
        """The pairs' classes: 0 Mafia-Mafia, 1 canonical with an innocent predictor, 2 with a Mafia one."""
        return np.where(self.mm[s], 0, 1 + self.a_mafia[s].astype(np.int64))

    def in_window(self, s: slice, window: int) -> np.ndarray:
        return self.b_round[s] >= self.a_round[s] - window

    def counts(self, tau: float, m: int) -> np.ndarray:
        """(m, classes, window flags, k * 3) integer counts, a chunk of pairs at a time (counts add
        exactly); those of every threshold in ``taus`` in the same pass (their keys but the code shared)."""
        if (tau, m) not in self._counts:
            taus = [t for t in dict.fromkeys((tau, *self.taus)) if (t, m) not in self._counts]
            nc, nw = self.k * 3, 1 << len(self.windows)
            codes = [self.code(t) for t in taus]
            outs = [np.zeros(m * 3 * nw * nc, dtype=np.int64) for _ in taus]
            for s in _chunks(len(self.g)):
                key = self.g[s].astype(np.int64) * 3 + self.cls(s)
                for w in self.windows:
                    key = key * 2 + self.in_window(s, w)
                key *= nc
                for code, out in zip(codes, outs):
                    out += np.bincount(key + code[s], minlength=len(out))
            self._counts.update({(t, m): out.reshape(m, 3, nw, nc) for t, out in zip(taus, outs)})
        return self._counts[(tau, m)]


_SIDE = np.full(256, L.NEUTRAL, dtype=np.int8)  # a sure guess's attitude, by int8 role code modulo 256
_SIDE[[L.MAFIA, L.DON]] = L.SUSPECTS
_SIDE[[L.VILLAGER, L.DOCTOR, L.SHERIFF]] = L.TRUSTS


def codes_of(pred: np.ndarray, guess: np.ndarray, conf: np.ndarray, tau: float) -> np.ndarray:
    """Each pair's ``pred * 3 + actual attitude`` at ``tau`` (int8 when it fits), a chunk of pairs at a time."""
    k = int(pred.max(initial=0)) + 1
    small = k * 3 <= 127
    code = np.empty(len(pred), dtype=np.int8 if small else np.int64)
    for s in _chunks(len(code)):  # no pair-long int64 temporaries
        if small and guess.dtype == np.int8:  # :func:`actual_attitude` by a table lookup, in int8 throughout
            code[s] = np.where(conf[s] >= tau, np.take(_SIDE, guess[s], mode="wrap"), np.int8(L.NEUTRAL))
            code[s] += pred[s] * 3
        else:
            code[s] = pred[s].astype(np.int64) * 3 + actual_attitude(guess[s], conf[s], tau)
    return code


_SUM_CHUNK = 1 << 20  # pairs summed at a time in the summaries: bounds their gathers and int64 keys


def _chunks(n: int) -> list[slice]:
    return [slice(lo, lo + _SUM_CHUNK) for lo in range(0, n, _SUM_CHUNK)]


def first_rows(code: np.ndarray, values: list[int], kept: Any = None) -> dict[int, int]:
    """Each value's first row in ``code`` (every value occurs): ``int(np.argmax(code == v))``, read
    in growing slices from the start (the values all occur early in a corpus's pairs) instead of
    one pass over every pair per value. ``kept(slice)`` (a mask or None): only those rows count
    (rows still numbered in ``code``)."""
    out: dict[int, int] = {}
    need, lo, step = set(values), 0, 4096
    while need and lo < len(code):
        part = code[lo:lo + step]
        k = None if kept is None else kept(slice(lo, lo + step))
        for v in sorted(need):
            hit = np.flatnonzero(part == v if k is None else (part == v) & k)
            if len(hit):
                out[v] = lo + int(hit[0])
                need.discard(v)
        lo, step = lo + step, step * 4
    return {v: out[v] for v in values}


def _first_seen(first: dict[int, int], values: range) -> list[int]:
    """The values present in order of first occurrence (``pd.unique`` order); ``first``: value -> first row."""
    return sorted((v for v in values if v in first), key=lambda v: first[v])


_CLASS_OF = {"canonical": (1, 2), "innocent": (1,), "mafia": (2,), "all": (0, 1, 2)}


def _summary(P: _Pairs, tau: float, window: int | None, m: int, mode: Mode, with_ci: bool,
             sel: str = "canonical") -> dict[str, Any]:
    """The summary of the pairs of classes ``_CLASS_OF[sel]`` (within ``window`` rounds, one of
    ``P.windows``) from ``P.counts(tau)``; the first-seen orders read the kept pairs themselves."""
    classes = _CLASS_OF[sel]
    flags = np.arange(1 << len(P.windows))
    if window is not None:  # the flags with this window's bit set
        flags = flags[((flags >> (len(P.windows) - 1 - P.windows.index(window))) & 1) == 1]

    def kept(s: slice) -> np.ndarray | None:  # the selection and window, a slice of pairs at a time
        k = None if len(classes) == 3 else np.isin(P.cls(s), classes)
        if window is not None:
            win = P.in_window(s, window)
            k = win if k is None else k & win
        return k

    hg = P.counts(tau, m)[:, list(classes)][:, :, flags].sum((1, 2))  # (m, k * 3)
    flat = hg.sum(0)
    code = P.code(tau)
    h = flat.reshape(P.k, 3)  # [predicted, actual] counts
    n = int(flat.sum())
    at_code = first_rows(code, np.flatnonzero(flat).tolist(), kept)  # each code's first kept row (their order counts)
    first_act = {a: min(at_code[p * 3 + a] for p in range(P.k) if h[p, a]) for a in range(3) if h[:, a].any()}
    first_pred = {p: min(at_code[p * 3 + a] for a in range(3) if h[p, a]) for p in range(min(P.k, 3)) if h[p].any()}
    act_n, pred_n = h.sum(0), h.sum(1)
    n_correct = int(sum(h[i, i] for i in range(min(P.k, 3))))
    act_counts = {CLASSES[a]: int(act_n[a]) for a in _first_seen(first_act, range(3))}
    pred_counts = {CLASSES[p]: int(pred_n[p]) for p in _first_seen(first_pred, range(3))}
    maj_class = max(act_counts, key=lambda k: act_counts[k]) if act_counts else None  # first-seen wins ties
    acc = np.float64(n_correct) / n if n else None  # as the mean of the per-pair hits (an exact sum, one division)
    maj = act_counts[maj_class] / n if n else None
    ps = int(pred_n[L.SUSPECTS]) if P.k > L.SUSPECTS else 0
    as_ = int(act_n[L.SUSPECTS])
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
        hg = hg.reshape(m, P.k, 3)  # per game [predicted, actual] counts
        cols = [hg.sum((1, 2)), sum(hg[:, i, i] for i in range(min(P.k, 3)))] + [hg[:, :, a].sum(1) for a in range(3)]
        cols.append(hg[:, L.SUSPECTS].sum(1) if P.k > L.SUSPECTS else np.zeros(m, dtype=np.int64))
        pg = np.column_stack(cols).astype(float)  # integer counts: the same floats as summed 0/1 weights
        nz = lambda p: np.where(p[:, 0] > 0, p[:, 0], np.nan)  # noqa: E731
        res["acc_ci95"] = _ci(cluster_ci(pg, lambda p: p[:, 1] / nz(p), mode))
        res["diff_ci95"] = _ci(cluster_ci(pg, lambda p: (p[:, 1] - p[:, 2:5].max(1)) / nz(p), mode))
        res["ratio_ci95"] = _ci(cluster_ci(pg, ratio_stat(5, 4), mode))
    return res


_GRID_TAUS = (30, 50, 70)


@pooled_entry
def f3(c: Corpus, mode: Mode, tau: float = 50, window: int | None = None, *, seats: np.ndarray | None = None) -> dict[str, Any]:
    """F3 summaries; ``seats`` (an (m, seats) mask) keeps only the pairs whose predictor A is a kept seat.
    Each threshold's counts come from one pass over the pairs (:meth:`_Pairs.counts`), shared by its summaries."""
    allp = pair_arrays(c, mode)
    windows = tuple(sorted({1} | ({window} if window is not None else set())))
    if seats is not None:
        at = np.flatnonzero(seats[allp["g"], allp["A"]])
        allp = {k: allp[k][at] for k in ("g", "pred", "guess", "conf", "a_round", "b_round", "mm", "a_mafia")}
    P = _Pairs(allp, windows, (tau, *_GRID_TAUS))
    out: dict[str, Any] = {
        "canonical": _summary(P, tau, window, c.m, mode, True),
        "innocent_predictors": _summary(P, tau, window, c.m, mode, True, "innocent"),
        "mafia_predictors": _summary(P, tau, window, c.m, mode, True, "mafia"),
        "legacy_mafia_pairs_included": _summary(P, tau, window, c.m, mode, False, "all"),
        "grid": {},
    }
    for t in _GRID_TAUS:
        for w, wname in ((None, "nowin"), (1, "win1")):
            out["grid"][f"thr{t}_{wname}"] = _summary(P, t, w, c.m, mode, w is None)
    return out
