"""A report's Python values built from whole arrays: rounding, per-group sums, object building.

Each function gives exactly what the per-value Python code it replaces gives (pinned in
``tests/test_arrays_out.py``); the arithmetic runs on arrays and Python objects are made once, at the end.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np

from .stats import round_or_none

_EXACT = 2.0**52  # |v * 10**nd| below this: half-integers are doubles, p - floor(p) is exact


def rounded_list(x: np.ndarray, nd: int = 6) -> list[float | None]:
    """``[round_or_none(v, nd) for v in x]``, rounded on the whole array.

    Python's ``round(v, nd)`` is the double nearest to ``Y / 10**nd``, Y the integer nearest to the exact
    ``e = v * 10**nd`` (ties to even); ``rint(p) / 10**nd`` with ``p = fl(e)`` is the double nearest to
    ``rint(p) / 10**nd`` (an exact integer over an exact power of ten). Below 2**52 the half-integers are
    doubles and rounding to nearest is monotonic, so p stays between the same two half-integers as e, or
    lands on one: where p is no half-integer, ``rint(p) == Y``. The half-integers, the non-finite and the
    huge go through ``round_or_none`` itself.
    """
    v = np.asarray(x, dtype=np.float64).reshape(-1)
    scale = 10.0**nd
    p = v * scale
    with np.errstate(invalid="ignore"):
        safe = (np.abs(p) < _EXACT) & (p - np.floor(p) != 0.5)  # p - floor(p) is exact below 2**52
    out = (np.rint(p) / scale).tolist()
    for i in np.flatnonzero(~safe).tolist():
        out[i] = round_or_none(float(v[i]), nd)
    return out


def stable_order(keys: np.ndarray, n_keys: int) -> np.ndarray:
    """``np.argsort(keys, kind="stable")`` for integer keys in [0, n_keys): a radix sort on 16-bit keys
    when they fit (numpy's stable sort of int64 keys is a merge sort, 5-7x slower on unsorted keys)."""
    if n_keys <= 1 << 16:
        return np.argsort(keys.astype(np.uint16), kind="stable")
    return np.argsort(keys, kind="stable")


def group_sums(x: np.ndarray, keys: np.ndarray, n_groups: int) -> np.ndarray:
    """``[float(x[keys == j].sum()) for j in range(n_groups)]``: numpy's pairwise sum of each group's values
    in row order (0.0 for an empty group), for every group in one ``np.add.reduceat``.

    The groups' values are gathered into contiguous runs (a stable order keeps each group's row order),
    each run headed by a 0.0: ``a.sum()`` is ``0.0 + pairwise(a)`` whereas ``reduceat`` starts a run from
    its first value, so the heading zero makes each run's sum the group's ``sum()`` bit for bit."""
    if n_groups == 0:
        return np.zeros(0)
    counts = np.bincount(keys, minlength=n_groups)
    heads = np.zeros(n_groups, dtype=np.int64)
    np.cumsum(counts[:-1], out=heads[1:])
    heads += np.arange(n_groups)
    runs = np.zeros(len(x) + n_groups)
    rows = np.ones(len(runs), dtype=bool)
    rows[heads] = False
    runs[rows] = x[stable_order(keys, n_groups)]
    return np.add.reduceat(runs, heads)


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while a report's many acyclic containers are made: none of them
    can be collected, yet each generation-0 threshold reached would walk them (and the rest of the heap)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()
