"""Personality attribution error reduced a block of estimates at a time (no per-estimate error
column for the whole corpus, one pass over the rows instead of one per round).

Why the values are the same as the ordered computation in :mod:`.accounting`:

- the pooled means (per trait, per round) are sums divided by counts. When every estimate and
  every generating trait value is a whole number, each error is a whole number and every
  partial sum is a whole number below 2**53, so float64 adds them exactly in any order and in
  any grouping. Otherwise :func:`pooled_errors` declines (None) and the caller keeps the
  ordered computation.
- the per-(game, seat) sums of the seat cells are taken over blocks cut at game boundaries of
  rows sorted by game: each cell's rows are summed in the same order within one block, so the
  sums are the same for any values.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from .executor import map_blocks
from .corpus import Cached
from .load import TRAITS
from .stats import round_or_none

BLOCK_ROWS = 1 << 19  # estimates per block (about 4 MB per float column of a block)
PERSONALITY_WHOLE_SUMS = Cached("personality_whole_sums")


def _whole(x: np.ndarray) -> bool:
    """Every value finite and a whole number (``x - rint(x)`` is NaN at an infinity or a NaN)."""
    with np.errstate(invalid="ignore"):
        return not np.any(x - np.rint(x))


def _terms(truth: np.ndarray, base50: np.ndarray, cell: np.ndarray, est: np.ndarray
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per estimate: |estimate - truth| and |50 - truth| (0 where either value is missing), and
    the rows where one is missing. Summing the zeros leaves every sum as the sum over the present
    rows alone (x + 0.0 == x), without gathering those rows first. A missing value makes the
    difference NaN, so only the few NaN differences are looked at again (two infinities of one
    sign are present values whose difference is NaN, as before)."""
    err = np.subtract(est, truth.take(cell))
    np.abs(err, out=err)
    miss = np.flatnonzero(np.isnan(err))
    base = base50.take(cell)
    if len(miss):
        miss = miss[np.isnan(est[miss]) | np.isnan(truth.take(cell[miss]))]
        err[miss] = 0.0
        base[miss] = 0.0
    return err, base, miss


def _counts(key: np.ndarray, total: np.ndarray, miss: np.ndarray, size: int) -> np.ndarray:
    """Per key: the rows without a missing value (``total`` = every row's count; ``miss`` = the few
    rows with one)."""
    return total - np.bincount(key[miss], minlength=size) if len(miss) else total


def _rows(col: np.ndarray, at: Any, lo: int, hi: int) -> np.ndarray:
    """Rows ``lo:hi`` of ``col[at]`` without gathering the whole column."""
    return col[lo:hi] if isinstance(at, slice) else col[at[lo:hi]]


def _round_index(rnd: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(sorted distinct rounds, each row's index in them): ``np.unique(..., return_inverse=True)``."""
    if len(rnd) and int(rnd.max()) - int(rnd.min()) < 1 << 20:  # small integers: by counting, not sorting
        lo = int(rnd.min())
        shifted = rnd.astype(np.int64) - lo
        present = np.flatnonzero(np.bincount(shifted))
        rank = np.zeros(int(present[-1]) + 1, dtype=np.int64)
        rank[present] = np.arange(len(present))
        return present + lo, rank[shifted]
    rounds, inv = np.unique(rnd, return_inverse=True)
    return rounds, inv.reshape(-1)


def pooled_errors(c: Any, r: dict[str, np.ndarray], at: Any, n_kept: int) -> dict[str, Any] | None:
    """:func:`.accounting.personality_error`'s figures from per-(trait, round) sums and counts of the
    kept rows ``at`` of :func:`.accounting.personality_rows` (a slice or row numbers); None when an
    estimate or a generating value is not a whole number (then only the ordered sums are exact)."""
    truths = [c.seat_array(k) for k in TRAITS]
    if not all(_whole(v[~np.isnan(v)]) for v in truths):
        return None
    shape = truths[0].shape
    base50 = [np.abs(50 - v).ravel() for v in truths]
    rounds, ridx = _round_index(r["round"][at])
    R = len(rounds)
    err, base = np.zeros((len(TRAITS), R)), np.zeros((len(TRAITS), R))
    n = np.zeros((len(TRAITS), R), dtype=np.int64)
    for lo in range(0, n_kept, BLOCK_ROWS):
        hi = min(n_kept, lo + BLOCK_ROWS)
        cell = np.ravel_multi_index((_rows(r["g"], at, lo, hi), _rows(r["tgt"], at, lo, hi)), shape)
        ri = ridx[lo:hi]
        rows = np.bincount(ri, minlength=R)
        for i, k in enumerate(TRAITS):
            e, b, miss = _terms(truths[i].ravel(), base50[i], cell, _rows(r[k], at, lo, hi))
            if not _whole(e):
                return None
            err[i] += np.bincount(ri, weights=e, minlength=R)
            base[i] += np.bincount(ri, weights=b, minlength=R)
            n[i] += _counts(ri, rows, miss, R)
    return _pooled_out(n_kept, (err.sum(1), base.sum(1), n.sum(1)), rounds, (err.sum(0), base.sum(0), n.sum(0)))


def _pooled_out(n_kept: int, traits: tuple[np.ndarray, ...], rounds: np.ndarray, by_round: tuple[np.ndarray, ...]
                ) -> dict[str, Any]:
    """The personality section from (errors, baseline errors, pairs) summed per trait and per round."""
    out: dict[str, Any] = {"n": n_kept, "mae": {}, "baseline50_mae": {}, "by_round": {}}
    err, base, tot_n = traits
    for i, k in enumerate(TRAITS):
        out["mae"][k] = round_or_none(err[i] / tot_n[i] if tot_n[i] else None)
        out["baseline50_mae"][k] = round_or_none(base[i] / tot_n[i] if tot_n[i] else None)
    rn = by_round[2]
    with np.errstate(divide="ignore", invalid="ignore"):  # a round without an estimate pair: NaN, as nanmean gives
        means = by_round[0] / rn, by_round[1] / rn
    for j, rd in enumerate(rounds.tolist()):
        out["by_round"][str(rd)] = {"mae": round_or_none(means[0][j]), "baseline50_mae": round_or_none(means[1][j])}
    return out


def game_blocks(g: np.ndarray, rows: int = BLOCK_ROWS) -> list[tuple[int, int]]:
    """Row ranges [lo, hi) of about ``rows`` rows, cut only where the game changes (``g`` sorted);
    one range when ``g`` is not sorted."""
    n = len(g)
    if n <= rows or not bool((g[1:] >= g[:-1]).all()):
        return [(0, n)]
    edges = [0]
    while edges[-1] + rows < n:
        at = g[edges[-1] + rows]  # the game at the block's nominal end starts the next block
        cut = int(np.searchsorted(g, at, side="left"))
        if cut <= edges[-1]:  # one game longer than a block: it is the block
            cut = int(np.searchsorted(g, at, side="right"))
        edges.append(cut)
    if edges[-1] < n:
        edges.append(n)
    return list(zip(edges[:-1], edges[1:]))


def seat_sums(c: Any, r: dict[str, np.ndarray], key: Any, n_cells: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per cell (``key(g, seat)`` in [0, n_cells], the last = no cell): the absolute errors summed
    over traits, the estimate pairs, the constant-50 baseline's errors (cells' sums in row order)."""
    shape = c.seat_array(TRAITS[0]).shape
    truths = [c.seat_array(t).ravel() for t in TRAITS]
    base50 = [np.abs(50 - t) for t in truths]
    err, base, n = (np.zeros(n_cells + 1) for _ in range(3))
    for lo, hi in game_blocks(r["g"]):
        k = key(r["g"][lo:hi], r["seat"][lo:hi])
        cell = np.ravel_multi_index((r["g"][lo:hi], r["tgt"][lo:hi]), shape)
        rows = np.bincount(k, minlength=n_cells + 1)
        for truth, b50, trait in zip(truths, base50, TRAITS):
            e, b, miss = _terms(truth, b50, cell, r[trait][lo:hi])
            err += np.bincount(k, weights=e, minlength=n_cells + 1)
            base += np.bincount(k, weights=b, minlength=n_cells + 1)
            n += _counts(k, rows, miss, n_cells + 1)
    return err, n, base


def whole_sums(c: Any, r: dict[str, np.ndarray]) -> dict[str, Any] | None:
    """Every estimate's sums, memoised, from one pass over the rows: per trait (errors, baseline errors,
    pairs), per round (the same over the traits) and per (game, estimator seat) cell (:func:`seat_sums`'
    cells of an (m, seats) grid, the last one for a seat outside it): the personality section and its
    seat statistics computed the same error terms twice before. None when an estimate or a generating
    value is not a whole number (or the rounds span more than 2**20): then each keeps its own path.

    With whole numbers every error, every per-row sum over the traits and every partial sum is a
    whole number below 2**53, exact in float64 in any order: the same values as :func:`pooled_errors`
    and :func:`seat_sums`, with one weighted count per block and quantity instead of one per trait."""
    rows, sums = c.memo(PERSONALITY_WHOLE_SUMS.key(), lambda: (r, _whole_sums(c, r)))
    return sums if rows is r else _whole_sums(c, r)  # the memo holds the sums of these rows only


def _whole_sums(c: Any, r: dict[str, np.ndarray]) -> dict[str, Any] | None:
    truths = [c.seat_array(k) for k in TRAITS]
    rnd, n_rows = r["round"], len(r["g"])
    if not n_rows or not all(_whole(v[~np.isnan(v)]) for v in truths):
        return None
    r0, span = int(rnd.min()), int(rnd.max()) - int(rnd.min()) + 1
    if span > 1 << 20:
        return None
    shape, T = truths[0].shape, len(TRAITS)
    flat = [v.ravel() for v in truths]
    base50 = [np.abs(50 - v) for v in flat]
    n_cells = shape[0] * shape[1]
    traits, by_round, cells = np.zeros((3, T)), np.zeros((3, span)), np.zeros((3, n_cells + 1))
    rows_r = np.zeros(span, dtype=np.int64)
    lock = threading.Lock()

    def block(lo: int) -> bool:
        """One block's sums added to the totals (False: an error that is not a whole number). Blocks run on
        worker threads: every partial sum is a whole number below 2**53, so the totals are the same in any
        order, and only one block's arrays are held per thread."""
        hi = min(n_rows, lo + BLOCK_ROWS)
        b_traits, b_round, b_cells = np.zeros((3, T)), np.zeros((3, span)), np.zeros((3, n_cells + 1))
        g, seat = r["g"][lo:hi], r["seat"][lo:hi]
        cell = np.ravel_multi_index((g, r["tgt"][lo:hi]), shape)
        ri = rnd[lo:hi].astype(np.intp) - r0
        ck = np.multiply(g, shape[1], dtype=np.intp)
        ck += seat
        ck[(seat < 0) | (seat >= shape[1])] = n_cells
        e_all, b_all, misses = np.zeros(hi - lo), np.zeros(hi - lo), []
        for i, k in enumerate(TRAITS):
            e, b, miss = _terms(flat[i], base50[i], cell, r[k][lo:hi])
            if not _whole(e):
                return False
            b_traits[:, i] += (e.sum(), b.sum(), hi - lo - len(miss))
            e_all += e
            b_all += b
            misses.append(miss)
        miss = np.concatenate(misses)
        b_rows = np.zeros(span, dtype=np.int64)
        for key, out, size in ((ri, b_round, span), (ck, b_cells, n_cells + 1)):
            rows = np.bincount(key, minlength=size)
            if out is b_round:
                b_rows += rows
            out[0] += np.bincount(key, weights=e_all, minlength=size)
            out[1] += np.bincount(key, weights=b_all, minlength=size)
            out[2] += T * rows - np.bincount(key[miss], minlength=size)
        with lock:
            for total, part in ((traits, b_traits), (by_round, b_round), (cells, b_cells), (rows_r, b_rows)):
                total += part
        return True

    if not all(map_blocks(block, range(0, n_rows, BLOCK_ROWS))):
        return None
    present = np.flatnonzero(rows_r)  # the rounds with an estimate (np.unique of the rounds)
    return {"traits": traits, "rounds": present + r0, "by_round": by_round[:, present],
            "cells": cells[[0, 2, 1]], "shape": shape}  # cells as seat_sums gives them: errors, pairs, baseline


def pooled_from(sums: dict[str, Any] | None, n_kept: int) -> dict[str, Any] | None:
    """:func:`pooled_errors`' figures from :func:`whole_sums` (None when those declined)."""
    return None if sums is None else _pooled_out(n_kept, tuple(sums["traits"]), sums["rounds"], tuple(sums["by_round"]))
