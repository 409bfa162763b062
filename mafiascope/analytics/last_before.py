"""F4's pre-vote rule as sorted searches: each vote's last probe record of its voter strictly before
a time (docs/metrics.md §7), without merging every vote with every record of its voter."""

from __future__ import annotations

from typing import Any

import numpy as np


def record_index(recs: dict[str, np.ndarray]) -> dict[str, Any]:
    """The records of one probe kind sorted by (agent, time rank) with a running maximum of the probe
    row per agent, for :func:`last_probe_before` (built once, searched for every variant's units).

    A record's time rank is its position among the sorted record times and a unit's the number of
    record times strictly below its time, so a record ranks below a unit exactly when its time is
    below the unit's; NaN times (before nothing) are left out.
    """
    keep = ~np.isnan(recs["timestamp"]) & (recs["seat"] >= 0)
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
    n = np.where(pis >= 0, np.searchsorted(sp, pis, "right") - lo, 0)
    unit = np.repeat(np.arange(len(pis)), n)
    ends = np.cumsum(n)
    rows = np.arange(ends[-1] if len(ends) else 0) + np.repeat(lo - (ends - n), n)
    return unit, (rows if order is None else order[rows])


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
