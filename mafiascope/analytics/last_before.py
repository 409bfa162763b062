"""F4's pre-vote rule as sorted searches: each vote's last probe record of its voter strictly before
a time (docs/metrics.md §7), without merging every vote with every record of its voter; and items
stored in (game, record) order found or annotated by their records, not by every item's probe row."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .corpus import Corpus
from .frames import eq, items_with_probe, probe_start


def record_index(recs: dict[str, np.ndarray]) -> dict[str, Any]:
    """The records of one probe kind indexed for :func:`last_probe_before` (built once, searched for
    every variant's units); NaN times (before nothing) and records without a seat are left out.

    Records in game order whose times never decrease within a game (a game's log is written in time
    order) are grouped by seat with one stable sort of the seat codes (:func:`_seat_index`): each
    agent's records are then in time order and its last record before a time is its largest row.
    Otherwise they are sorted by (agent, time rank) with a running maximum of the probe row per agent:
    a record's time rank is its position among the sorted record times and a unit's the number of
    record times strictly below its time, so a record ranks below a unit exactly when its time is
    below the unit's.
    """
    keep = ~np.isnan(recs["timestamp"]) & (recs["seat"] >= 0)
    every = bool(keep.all())
    g, seat, rt = (recs[k] if every else recs[k][keep] for k in ("g", "seat", "timestamp"))
    if _in_time_order(g, rt):
        return _seat_index(g, seat, rt, recs["pi"] if every else recs["pi"][keep])
    rt, pi = recs["timestamp"][keep], recs["pi"][keep].astype(np.int64)
    by_time = np.argsort(rt, kind="stable")  # record times are nearly sorted: a cheap sort
    times = rt[by_time]
    rank = np.empty(len(rt), dtype=np.int64)
    rank[by_time] = np.arange(len(times))
    width = int(recs["seat"][keep].max(initial=0)) + 1
    n = len(times) + 1
    key = (recs["g"][keep].astype(np.int64) * width + recs["seat"][keep]) * n + rank
    order = np.argsort(key, kind="stable")
    key, pi = key[order], pi[order]
    agent = key // n
    top = int(pi.max(initial=0)) + 1
    running = np.maximum.accumulate(agent * top + pi) if len(pi) else pi  # each agent's values exceed earlier agents'
    return {"times": times, "width": width, "n": n, "key": key, "agent": agent, "top": top, "running": running}


def last_probe_before(g: np.ndarray, voter: np.ndarray, t: np.ndarray, ix: dict[str, Any]) -> np.ndarray:
    """Per unit: the largest probe row (``pi``, file order) of the voter's records (:func:`record_index`)
    with a timestamp strictly before ``t``; -1 if none (a NaN time has nothing before it).

    Sorted searches instead of a merge of every unit with every record of its voter: a unit's answer
    is its agent's running maximum just before the unit's own (agent, time rank).
    """
    out = np.full(len(g), -1, dtype=np.int64)
    if "seat_key" in ix:
        return _last_by_seat(g, voter, t, ix, out)
    if not len(ix["key"]):
        return out
    width, n = ix["width"], ix["n"]
    ua = g.astype(np.int64) * width + voter
    at = np.searchsorted(ix["key"], ua * n + np.searchsorted(ix["times"], t, "left"), "left") - 1
    hit = (at >= 0) & ~np.isnan(t) & (voter < width)
    hit[hit] = ix["agent"][at[hit]] == ua[hit]
    out[hit] = ix["running"][at[hit]] - ua[hit] * ix["top"]
    return out


def unit_items(pis: np.ndarray, item_pi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(unit, item row) of every item whose probe row is its unit's (``pis``; -1 = none): units in
    order, each unit's items in item order, as ``merge(units, items, on="pi")`` lists them.

    An item's probe row runs in sorted ranges (items are stored by game and record), so each unit's
    items are one range found by two binary searches instead of a hash join."""
    order = None if bool((item_pi[1:] >= item_pi[:-1]).all()) else np.argsort(item_pi, kind="stable")
    sp = item_pi if order is None else item_pi[order]
    lo = np.searchsorted(sp, pis, "left")
    unit, rows = _ranges(lo, np.where(pis >= 0, np.searchsorted(sp, pis, "right") - lo, 0))
    return unit, (rows if order is None else order[rows])


def _ranges(lo: np.ndarray, n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(unit, row) of every row of each unit's range ``lo[u] .. lo[u] + n[u] - 1``, units in order."""
    unit = np.repeat(np.arange(len(lo)), n)
    ends = np.cumsum(n)
    return unit, np.arange(ends[-1] if len(ends) else 0) + np.repeat(lo - (ends - n), n)


def first_min(unit: np.ndarray, val: np.ndarray) -> np.ndarray:
    """Per run of equal ``unit`` (sorted): the position of its first row with the run's smallest
    ``val`` (integers), as a stable sort by (unit, val) followed by ``drop_duplicates(unit)`` keeps."""
    if not len(unit):
        return np.zeros(0, dtype=np.int64)
    starts = np.flatnonzero(np.r_[True, unit[1:] != unit[:-1]])
    least = np.minimum.reduceat(val, starts)
    at = np.flatnonzero(val == np.repeat(least, np.diff(np.r_[starts, len(unit)])))
    return at[np.r_[True, unit[at][1:] != unit[at][:-1]]]


def distinct_pairs(unit: np.ndarray, val: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct (unit, val) pairs (val a small non-negative integer) sorted by unit then val."""
    width = int(val.max(initial=0)) + 1
    key = np.sort(unit.astype(np.int64) * width + val)
    key = key[np.r_[True, key[1:] != key[:-1]]] if len(key) else key
    return key // width, key % width


def _in_time_order(g: np.ndarray, t: np.ndarray) -> bool:
    """Games in order (from 0) and, within a game, times that never decrease (no NaN)."""
    if len(g) < 2:
        return not len(g) or (g[0] >= 0 and not np.isnan(t[0]))
    same = g[1:] == g[:-1]
    return bool(g[0] >= 0 and (g[1:] >= g[:-1]).all() and ((t[1:] >= t[:-1]) | ~same).all() and not np.isnan(t[-1]))


def _seat_index(g: np.ndarray, seat: np.ndarray, t: np.ndarray, pi: np.ndarray) -> dict[str, Any]:
    """Records grouped by (seat, game), each agent's in row order (= time order, :func:`_in_time_order`):
    one stable sort of the seat codes (a radix sort for one-byte seats) instead of two sorts."""
    order = np.argsort(seat, kind="stable")
    m = int(g[-1]) + 1 if len(g) else 1
    key = np.multiply(seat, m, dtype=np.int64)
    key += g
    # the times and rows stay in row order, read through ``order`` at the few positions a search visits
    return {"seat_key": key.take(order), "m": m, "order": order, "times": t, "pi": pi}


def _last_by_seat(g: np.ndarray, voter: np.ndarray, t: np.ndarray, ix: dict[str, Any], out: np.ndarray) -> np.ndarray:
    """:func:`last_probe_before` on a :func:`_seat_index`: the agent's records are one range of the
    sorted (seat, game) keys, and those before ``t`` its prefix of times below ``t``."""
    m = ix["m"]
    g, voter = np.asarray(g, dtype=np.int64), np.asarray(voter, dtype=np.int64)
    ua = np.where((g >= 0) & (g < m) & (voter >= 0), voter * m + g, -1)  # -1: no agent has it
    lo = np.searchsorted(ix["seat_key"], ua, "left")
    at = bisect_left(ix["times"], lo, np.searchsorted(ix["seat_key"], ua, "right"), t, ix["order"])
    hit = at > lo  # a NaN time is below nothing: no record before it
    out[hit] = ix["pi"][ix["order"][at[hit] - 1]]
    return out


def bisect_left(a: np.ndarray, lo: np.ndarray, hi: np.ndarray, x: np.ndarray, order: np.ndarray | None = None
                ) -> np.ndarray:
    """Per query: the first position in ``a[lo:hi]`` (``a[order][lo:hi]`` with ``order``; sorted there)
    whose value is not below ``x`` (``hi`` if none): ``np.searchsorted`` within each query's own
    range, all queries halved at once."""
    lo, hi = lo.astype(np.int64), hi.astype(np.int64)
    act = np.flatnonzero(lo < hi)
    while len(act):
        mid = (lo[act] + hi[act]) // 2
        below = a[mid if order is None else order[mid]] < x[act]
        lo[act[below]] = mid[below] + 1
        hi[act[~below]] = mid[~below]
        act = act[lo[act] < hi[act]]
    return lo


_CHECK_ROWS = 1 << 20  # rows compared at a time by :func:`item_bounds` (small temporaries)


def item_bounds(item_g: np.ndarray, item_rec: np.ndarray, m: int) -> np.ndarray | None:
    """(m + 1,) offsets of each game's items when the items are stored in (game, record) order with
    games in [0, m), as the loader writes them; None otherwise (then only a search of every item's
    probe row finds them: :func:`unit_items`)."""
    n = len(item_g)
    if n and (item_g[0] < 0 or item_g[-1] >= m):
        return None
    for lo in range(0, max(n - 1, 0), _CHECK_ROWS):
        hi = min(n, lo + _CHECK_ROWS + 1)
        g, r = item_g[lo:hi], item_rec[lo:hi]
        up, same = g[1:] > g[:-1], g[1:] == g[:-1]
        if not (up | (same & (r[1:] >= r[:-1]))).all():
            return None
    return np.searchsorted(item_g, np.arange(m + 1, dtype=item_g.dtype)).astype(np.int64)  # no int64 copy of item_g


def probe_items(bounds: np.ndarray, item_rec: np.ndarray, g: np.ndarray, rec: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray]:
    """(unit, item row) of the items of each unit's probe record (game ``g``, record ``rec``; -1 =
    none) in :func:`unit_items`' order, found by a search within the unit's game's items
    (:func:`item_bounds`) instead of computing every item's probe row."""
    ok = rec >= 0
    gs = np.where(ok, g, 0)
    lo = bisect_left(item_rec, bounds[gs], bounds[gs + 1], rec)
    hi = bisect_left(item_rec, lo, bounds[gs + 1], rec + 1)  # records are integers: the end of rec's run
    return _ranges(lo, np.where(ok, hi - lo, 0))


Found = tuple[np.ndarray, dict[str, np.ndarray]]


def raw_items(c: Corpus, table: str, cols: list[str], g_u: np.ndarray) -> Callable[[np.ndarray], Found]:
    """A finder: probe rows of the units (parse-ok records of the units' games, -1 = none) -> (unit,
    ``cols`` of the stored answer's items of each unit's record), as the merge of the units with
    ``items_with_probe(raw_only=True)`` gives them.

    Items stored in (game, record) order are found by a search within each unit's game
    (:func:`probe_items`: the few hundred thousand units' items, not every item's probe
    row and gathered columns, ten million rows at 10,000 games); otherwise from the joined frame."""
    df = c.cols(table, ["g", "rec", "src", *cols])
    bounds = item_bounds(df["g"].to_numpy(), df["rec"].to_numpy(), c.m)
    if bounds is None:
        it = items_with_probe(c, table, raw_only=True, cols=cols, probe_cols=())
        item_pi, vals = it["pi"].to_numpy(), {k: it[k].to_numpy() for k in cols}

        def by_pi(pis: np.ndarray) -> Found:
            unit, rows = unit_items(pis, item_pi)
            return unit, {k: v[rows] for k, v in vals.items()}

        return by_pi
    rec, src, vals = df["rec"].to_numpy(), df["src"].to_numpy(), {k: df[k].to_numpy() for k in cols}
    start = probe_start(c)

    def by_game(pis: np.ndarray) -> Found:
        unit, rows = probe_items(bounds, rec, g_u, np.where(pis >= 0, pis - start[g_u], -1))
        raw = src[rows] == 0  # the stored answer's items (the records parsed: ``pis`` are parse-ok rows)
        unit, rows = unit[raw], rows[raw]
        return unit, {k: v[rows] for k, v in vals.items()}

    return by_game


def others(found: Found, in_others: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> Found:
    """The found items whose target is one of the unit's others."""
    unit, it = found
    keep = in_others(unit, it["tgt"])
    return unit[keep], {k: v[keep] for k, v in it.items()}


def by_record_runs(c: Corpus, table: str, probe_id: str, cols: tuple[str, ...], probe_cols: tuple[str, ...]
                   ) -> dict[str, np.ndarray] | None:
    """:func:`.frames.item_arrays`' columns (without ``pi``) when the items are stored in (game, record)
    order and every item is one of ``probe_id``'s (else None): each record's probe columns are read once
    and repeated over its run of items, instead of a probe row computed and gathered for every item."""
    df = c.cols(table, list(dict.fromkeys(["g", "rec", *cols])))
    g, rec = df["g"].to_numpy(), df["rec"].to_numpy()
    if item_bounds(g, rec, c.m) is None:
        return None
    starts = np.flatnonzero(np.r_[True, (rec[1:] != rec[:-1]) | (g[1:] != g[:-1])]) if len(g) else np.zeros(0, np.int64)
    pi = probe_start(c)[g[starts]] + rec[starts]
    p = c.cols("probes", ["probe_id", *probe_cols])
    if not eq(p["probe_id"], probe_id)[pi].all():
        return None
    n = np.diff(np.r_[starts, len(g)])
    return {**{k: df[k].to_numpy() for k in cols}, **{k: np.repeat(p[k].to_numpy()[pi], n) for k in probe_cols}}
