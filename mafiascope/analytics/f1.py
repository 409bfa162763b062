"""F1 -- first-order beliefs by round (docs/metrics.md §4).

Committed accuracy vs the permutation chance baseline, Unknown rate, Mafia recall vs
chance, pooled per round over games, each with a game-level cluster bootstrap CI.
compat: no alive filter on targets, English-only normalisation. default: targets must be
alive at the probe time, Russian synonyms accepted, Don counts as Mafia.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pandas as pd

from . import labels as L
from .executor import map_blocks
from .runtime import workers
from .corpus import Cached, Corpus
from .frames import (at_seats, death_ts, dense_groups, item_arrays, mafia_mask, played_by, seat_model_codes,
                     true_roles)
from .modes import Mode
from .intervals import ci_list, pooled_entry, ratio_ci
from .stats import round_or_none

F1_ARRAYS = Cached("f1_arrays")
F1_ITEMS = Cached("f1_items")
F1_ROUND_CODES = Cached("f1_round_codes")


_F1_COLS = ("g", "round", "obs", "tgt", "guess", "truth", "conf", "timestamp", "unknown", "committed", "correct",
            "tgt_mafia", "hit_mafia", "acc_chance", "rec_chance")


_BLOCK = 1 << 18  # probe runs per block of the (runs, seats) alive pass (a 1/4 M x seats float is ~2 MB per seat)


def _runs(g: np.ndarray, pi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(first item of each run of equal consecutive (game, probe row), each run's length). The alive
    state, the observer and the chance baselines depend on the probe only: they are computed once
    per run, not per item. Items are stored by game and record, so a run is a whole probe (several
    targets); any order is still right, only slower."""
    new = np.empty(len(pi), dtype=bool)
    new[:1] = True
    np.not_equal(pi[1:], pi[:-1], out=new[1:])
    new[1:] |= g[1:] != g[:-1]
    first = np.flatnonzero(new)
    return first, np.diff(np.r_[first, len(pi)])


def _run_tables(c: Corpus, roles: np.ndarray, maf: np.ndarray, g: np.ndarray, obs: np.ndarray,
                t: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per run (game ``g``, observer ``obs``, probe time ``t``): the alive mask (seats, runs), the
    accuracy chance per role code (runs, codes: the share of the alive others with that role), the
    recall chance (the share of Mafia among them) and the role codes. A block of runs at a time,
    seat by seat on (seats, runs) arrays: contiguous rows, no reduction over the short seat axis."""
    codes = np.unique(roles)
    code_t = np.ascontiguousarray(np.searchsorted(codes, roles).astype(np.int16).T)  # (seats, m)
    death_t, maf_t = np.ascontiguousarray(death_ts(c).T), np.ascontiguousarray(maf.T)
    n, seats = len(g), roles.shape[1]
    alive = np.empty((seats, n), dtype=bool)
    acc = np.empty((n, len(codes)))
    rec = np.empty(n)

    def block(lo: int) -> None:  # the rows of a block of runs, in place (blocks on worker threads)
        s = slice(lo, lo + _BLOCK)
        gb, ob = g[s].astype(np.intp), obs[s]
        a = alive[:, s]
        np.greater(death_t[:, gb], t[s], out=a)
        n_others = np.zeros(len(gb), dtype=np.int64)
        n_maf = np.zeros(len(gb), dtype=np.int64)
        same = np.zeros((len(codes), len(gb)), dtype=np.int64)
        for j in range(seats):
            o = a[j] & (ob != j)  # the alive others (runs without an observer are never kept)
            n_others += o
            n_maf += o & maf_t[j, gb]
            cj = code_t[j, gb]
            for k in range(len(codes)):
                same[k] += o & (cj == k)
        with np.errstate(divide="ignore", invalid="ignore"):
            acc[s] = np.where(n_others[:, None] > 0, same.T / n_others[:, None], np.nan)
            rec[s] = np.where(n_others > 0, n_maf / n_others, np.nan)

    map_blocks(block, range(0, n, _BLOCK))
    return alive, acc, rec, codes


def f1_arrays(c: Corpus, mode: Mode) -> dict[str, np.ndarray]:
    """The usable (observer, target) items' outcome columns as arrays (:func:`f1_items`'s columns); memoised.

    Read from the role-assessment items' few columns (no joined item frame); what depends on the
    probe only (its step columns, the alive seats, the chance baselines) is computed per run of
    a probe's items and gathered for the kept items, a block of runs at a time into the columns
    (no item-length index or temporary: a block's are reused, not fresh pages each)."""

    def build() -> dict[str, np.ndarray]:
        it = item_arrays(c, "ra", "role_assessment", ("g", "tgt", "role_en" if mode.is_compat else "role", "conf"))
        roles = true_roles(c, mode)
        maf = mafia_mask(c)
        g, pi = it["g"], it["pi"]
        items = {"g": g, "tgt": it["tgt"], "guess": it["role_en" if mode.is_compat else "role"], "conf": it["conf"]}
        first, length = _runs(g, pi)
        p = c.cols("probes", ["seat", "timestamp", "round"])
        pr = pi[first].astype(np.intp)
        rg, obs, ts = g[first], p["seat"].to_numpy()[pr], p["timestamp"].to_numpy()[pr]
        tables = _run_tables(c, roles, maf, rg, obs, ts)
        run_ok = (obs >= 0) & ~maf[rg, np.where(obs >= 0, obs, 0)]
        blocks = (first, length)
        keep = _kept_items(blocks, run_ok, obs, items, None if mode.is_compat else tables[0], roles.shape[1])
        runs = {"obs": obs, "round": p["round"].to_numpy()[pr], "timestamp": ts}
        return _kept_columns(keep, blocks, roles, maf, tables, items, runs)

    return c.memo(F1_ARRAYS.key(mode), build)


_RUNS = 1 << 17  # probe runs per block of the kept items' passes (a block's index arrays are a few MB)


def _blocks(first: np.ndarray, length: np.ndarray) -> list[tuple[int, int, int, int]]:
    """(first item, end item, first run, end run) of each block of consecutive runs (``_RUNS`` between
    the blocks in flight at once)."""
    out, lo = [], 0
    size = max(1, _RUNS // workers())  # the blocks in flight at once share the bound
    for r0 in range(0, len(first), size):
        r1 = min(r0 + size, len(first))
        hi = lo + int(length[r0:r1].sum())
        out.append((lo, hi, r0, r1))
        lo = hi
    return out


def _run_of_items(length: np.ndarray, r0: int, r1: int) -> np.ndarray:
    """Each item's run index for the runs [r0, r1)."""
    return np.repeat(np.arange(r0, r1), length[r0:r1])


def _kept_items(blocks: tuple[np.ndarray, np.ndarray], run_ok: np.ndarray, obs: np.ndarray,
                items: dict[str, np.ndarray], alive: np.ndarray | None, seats: int) -> np.ndarray:
    """Per item: kept (a usable guess about another seat by a probe whose observer is not Mafia and,
    with ``alive``, a target alive at the probe time); a block of runs at a time (blocks on worker
    threads, each writing its own items' flags)."""
    tgt, guess = items["tgt"], items["guess"]
    keep = np.empty(len(tgt), dtype=bool)
    length = blocks[1]

    def block(span: tuple[int, int, int, int]) -> None:
        lo, hi, r0, r1 = span
        rl = _run_of_items(length, r0, r1)
        kb, tb = keep[lo:hi], tgt[lo:hi]
        np.greater_equal(tb, 0, out=kb)
        kb &= run_ok[rl]
        kb &= tb != obs[rl]
        kb &= guess[lo:hi] != L.UNUSABLE
        at = np.flatnonzero(kb)
        t = tb[at]
        if len(t) and int(t.max()) >= seats:
            raise IndexError(f"target seat {int(t.max())} out of bounds for {seats} seats")
        if alive is not None:  # the target alive at the probe time
            kb[at] = alive[t, rl[at]]

    map_blocks(block, _blocks(*blocks))
    return keep


def _kept_columns(keep: np.ndarray, blocks: tuple[np.ndarray, np.ndarray], roles: np.ndarray, maf: np.ndarray,
                  tables: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray], items: dict[str, np.ndarray],
                  runs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """F1's columns of the kept items, filled a block of runs at a time: item columns gathered at the
    kept items, run columns at their runs, (game, target) lookups through one flat index. Each block's
    rows of the columns start after the earlier blocks' kept items (blocks on worker threads)."""
    n, seats = int(np.count_nonzero(keep)), roles.shape[1]
    _, acc, rec, codes = tables
    out = {k: np.empty(n, dtype=v.dtype) for k, v in (*items.items(), *runs.items())}
    out.update({"truth": np.empty(n, dtype=roles.dtype), "acc_chance": np.empty(n, dtype=acc.dtype),
                "rec_chance": np.empty(n, dtype=rec.dtype)})
    out.update({k: np.empty(n, dtype=bool) for k in ("unknown", "committed", "correct", "tgt_mafia", "hit_mafia")})
    code_of = np.searchsorted(codes, roles).astype(np.int8 if len(codes) < 128 else np.intp).ravel()
    spans = _blocks(*blocks)
    starts = np.cumsum([0, *(np.count_nonzero(keep[lo:hi]) for lo, hi, _, _ in spans)]).tolist()
    length = blocks[1]

    def block(i: int) -> None:
        lo, hi, r0, r1 = spans[i]
        at = np.flatnonzero(keep[lo:hi])
        s = slice(starts[i], starts[i + 1])
        r = _run_of_items(length, r0, r1)[at]
        at += lo
        col = {k: v[s] for k, v in out.items()}
        for k, v in items.items():
            col[k][:] = v[at]
        for k, v in runs.items():
            col[k][:] = v[r]
        col["rec_chance"][:] = rec[r]
        flat = col["g"].astype(np.intp)
        flat *= seats
        flat += col["tgt"]
        col["truth"][:] = roles.ravel()[flat]
        col["tgt_mafia"][:] = maf.ravel()[flat]
        r *= len(codes)
        r += code_of[flat]
        col["acc_chance"][:] = acc.ravel()[r]
        guess = col["guess"]
        np.equal(guess, L.UNKNOWN, out=col["unknown"])
        np.not_equal(guess, L.UNKNOWN, out=col["committed"])
        np.equal(guess, col["truth"], out=col["correct"])
        np.equal(guess, L.MAFIA, out=col["hit_mafia"])

    map_blocks(block, range(len(spans)))
    return {k: out[k] for k in _F1_COLS}


def f1_items(c: Corpus, mode: Mode) -> pd.DataFrame:
    """One row per usable (observer, target) item with outcome columns; memoised."""

    def build() -> pd.DataFrame:
        arrays = f1_arrays(c, mode)
        df = pd.DataFrame({k: arrays[k] for k in _F1_COLS})
        arrays.update({k: df[k].to_numpy() for k in _F1_COLS})  # the memoised arrays become views of the frame: one copy
        return df

    return c.memo(F1_ITEMS.key(mode), build)


_BINS = 1 << 22  # (round, game, outcome) bins of one count; more rounds x games are counted round by round
_CODES = 18  # outcome code of a row: (committed + correct) + 3 * (target Mafia + hit) + 9 * unknown
_DIGITS = np.arange(_CODES)
# the outcome codes of the rows each F1 ratio counts: (numerator, denominator) by its columns' names
CODE_SETS = {
    ("correct", "committed"): (_DIGITS % 3 == 2, _DIGITS % 3 >= 1),
    ("unknown", None): (_DIGITS >= 9, _DIGITS >= 0),
    ("hit_mafia", "tgt_mafia"): (_DIGITS // 3 % 3 == 2, _DIGITS // 3 % 3 >= 1),
}


def _round_codes(c: Corpus, mode: Mode) -> dict[str, np.ndarray]:
    """Per F1 row: its round's index in the sorted distinct ``rounds``, its outcome code, and whether
    its accuracy (recall) chance enters the round's mean; memoised (a few bytes a row)."""

    def build() -> dict[str, np.ndarray]:
        it = f1_arrays(c, mode)
        rnd, com, tm = it["round"], it["committed"], it["tgt_mafia"]
        lo = int(rnd.min()) if len(rnd) else 0
        span = int(rnd.max()) - lo + 1 if len(rnd) else 0
        if rnd.dtype.kind in "iu" and span <= _BINS:  # small integer rounds: by counting, not sorting
            present, ridx = dense_groups(rnd.astype(np.intp) - lo, span)
            rounds = present + lo
        else:
            rounds, ridx = np.unique(rnd, return_inverse=True)
        code = com.view(np.uint8) + (it["correct"] & com).view(np.uint8)
        code += 3 * (tm.view(np.uint8) + (it["hit_mafia"] & tm).view(np.uint8)) + 9 * it["unknown"].view(np.uint8)
        return {"rounds": rounds, "ridx": ridx.astype(np.int8 if len(rounds) < 128 else np.int32), "code": code,
                "acc_ok": com & ~np.isnan(it["acc_chance"]), "rec_ok": tm & ~np.isnan(it["rec_chance"])}

    return c.memo(F1_ROUND_CODES.key(mode), build)


def outcome_codes(c: Corpus, mode: Mode) -> np.ndarray:
    """Each F1 row's one-byte outcome code (one of ``_CODES``; memoised with the rows' rounds)."""
    return _round_codes(c, mode)["code"]


def _counts(m: int, n_rounds: int, ridx: np.ndarray, g: np.ndarray, code: np.ndarray) -> np.ndarray:
    """(rounds, games, codes) row counts: one count over (round, game, code) keys, or round by round
    when that many bins would be large."""
    if n_rounds * m * _CODES <= _BINS:
        key = (ridx.astype(np.intp) * m + g) * _CODES + code
        return np.bincount(key, minlength=n_rounds * m * _CODES).reshape(n_rounds, m, _CODES)
    out = np.empty((n_rounds, m, _CODES), dtype=np.int64)
    for i in range(n_rounds):
        r = ridx == i
        out[i] = np.bincount(g[r].astype(np.intp) * _CODES + code[r], minlength=m * _CODES).reshape(m, _CODES)
    return out


@pooled_entry
def f1_by_round(c: Corpus, mode: Mode, *, model: str | None = None, seats: np.ndarray | None = None) -> dict[str, Any]:
    """F1 per round; ``model`` keeps only the observers played by that model (mixed-model games),
    ``seats`` (an (m, seats) mask) only those observers. The per-game counts of all rounds come from
    one count of (round, game, outcome code) keys; the chance means take each round's rows in table
    order (as a groupby did)."""
    it, rc = f1_arrays(c, mode), _round_codes(c, mode)
    keep = None
    if model is not None:
        keep = played_by(c, it["g"], it["obs"], model)
    if seats is not None:
        sk = at_seats(seats, it["g"], it["obs"])
        keep = sk if keep is None else keep & sk
    return _rows_by_round(c, mode, it, rc, slice(None) if keep is None else np.flatnonzero(keep))


def f1_by_round_models(c: Corpus, mode: Mode, models: list[str]) -> Iterator[dict[str, Any]]:
    """``f1_by_round(c, mode, model=mdl)`` for each of ``models`` in turn. Each row's observer model
    is looked up once (one (game, seat) gather for all models, not one per model); a model's rows
    are then those of its one-byte code, in table order (the same rows, the same order).
    A generator: each model's intervals join the running batch when it is taken (as the per-model
    calls added them), or a batch of their own outside one."""
    it, rc = f1_arrays(c, mode), _round_codes(c, mode)
    names, codes = seat_model_codes(c)
    mk = at_seats(codes, it["g"], it["obs"]).astype(np.int8 if len(names) <= 127 else np.intp)
    for mdl in models:
        hit = np.flatnonzero(names == mdl)
        yield _rows_by_round(c, mode, it, rc, np.flatnonzero(mk == hit[0]) if len(hit) else np.zeros(0, np.intp))


@pooled_entry
def _rows_by_round(c: Corpus, mode: Mode, it: dict[str, np.ndarray], rc: dict[str, np.ndarray],
                   at: slice | np.ndarray) -> dict[str, Any]:
    """The per-round figures of the F1 rows ``at`` (ascending positions, or every row)."""
    ridx = rc["ridx"][at]
    present = np.flatnonzero(np.bincount(ridx, minlength=len(rc["rounds"])))
    n = _counts(c.m, len(rc["rounds"]), ridx, it["g"][at], rc["code"][at]).astype(float)
    chance = {k: _chance_means(it[f"{k}_chance"][at], ridx, rc[f"{k}_ok"][at], present) for k in ("acc", "rec")}
    rounds = rc["rounds"]
    out: dict[str, Any] = {}
    for i in present.tolist():
        cnt = n[i].reshape(-1, 2, 3, 3)  # (games, unknown, target Mafia + hit, committed + correct)
        ak, an = cnt[..., 2].sum((1, 2)), cnt[..., 1:].sum((1, 2, 3))
        uk, un = cnt[:, 1].sum((1, 2)), cnt.sum((1, 2, 3))
        rk, rn = cnt[:, :, 2].sum((1, 2)), cnt[:, :, 1:].sum((1, 2, 3))
        out[str(int(rounds[i]))] = {
            "acc": round_or_none(ak.sum() / an.sum() if an.sum() else None),
            "acc_n": int(an.sum()),
            "acc_chance": chance["acc"][i],
            "acc_ci95": _ci(ratio_ci(ak, an, mode)),
            "unk": round_or_none(uk.sum() / un.sum() if un.sum() else None),
            "unk_n": int(un.sum()),
            "unk_ci95": _ci(ratio_ci(uk, un, mode)),
            "recall": round_or_none(rk.sum() / rn.sum() if rn.sum() else None),
            "recall_n": int(rn.sum()),
            "recall_chance": chance["rec"][i],
            "recall_ci95": _ci(ratio_ci(rk, rn, mode)),
        }
    return out


def _chance_means(values: np.ndarray, ridx: np.ndarray, ok: np.ndarray, present: np.ndarray) -> dict[int, Any]:
    """Round index -> the rounded mean of its rows' chance values where ``ok`` (in table order, as
    the groupby summed them); one round's values at a time."""
    out = {}
    for i in present.tolist():
        v = values[ok & (ridx == i)]
        out[i] = round_or_none(v.mean() if len(v) else None)
    return out


_ci = ci_list  # rounded [lo, hi] of an interval (pending inside a batch)
