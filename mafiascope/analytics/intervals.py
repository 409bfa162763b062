"""Cluster-bootstrap intervals (docs/metrics.md §9) and their pooling into one matrix product.

:func:`cluster_ci` gives an :class:`Interval` of a statistic over game-level resamples. Outside a pooled
batch its value is known at once; inside one (:func:`pooled`, which the executor opens around each report
section and the app around each of its calls) every interval of the batch is pooled by one product over
all their columns when the batch ends (reading the B x m multiplicity matrix once per section instead of
once per interval, ~150 times a report), and :func:`pooled` returns its function's result with every
interval replaced by its value (a metric's public function is a :func:`pooled_entry`: it joins a running
batch, or runs in one of its own). Each column's product is the same dot product as alone, so the intervals
are unchanged (``tests/test_analytics_ci_batch.py``; a BLAS library may sum the games in another order
for another product width, within the last bits).
"""

from __future__ import annotations

import contextvars
import functools
from collections.abc import Callable
from typing import Any, Generic, TypeVar, overload

import numpy as np

from .modes import Mode
from .resample_frames import framed
from .stats import multiplicities, percentile_ci, ratio_stat, round_or_none

T = TypeVar("T")
U = TypeVar("U")
Bounds = tuple[float, float]
Stat = Callable[[np.ndarray], np.ndarray]


class Interval(Generic[T]):
    """A value that may wait for its batch's product: an interval ``(lo, hi)`` (or None: no resample
    defined, or no resamples), or a function of one (:meth:`then`)."""

    __slots__ = ("_src", "_fn", "_value", "_done")

    def __init__(self, src: Interval[Any] | None = None, fn: Callable[[Any], T] | None = None):
        self._src, self._fn, self._value, self._done = src, fn, None, False

    @classmethod
    def known(cls, value: T) -> Interval[T]:
        out: Interval[T] = cls()
        out._value, out._done = value, True
        return out

    def then(self, fn: Callable[[T], U]) -> Interval[U]:
        return Interval(self, fn)

    def value(self) -> T:
        if not self._done:
            if self._src is None or self._fn is None:
                raise RuntimeError("bootstrap interval read before its batch was pooled")
            self._value, self._done = self._fn(self._src.value()), True
        return self._value  # type: ignore[return-value]


def _interval(stat: Stat, pooled_sums: np.ndarray) -> Bounds | None:
    with np.errstate(divide="ignore", invalid="ignore"):
        vals = np.asarray(stat(pooled_sums), dtype=np.float64)
    return percentile_ci(vals)


def cluster_ci(per_game: np.ndarray, stat: Stat, mode: Mode) -> Interval[Bounds | None]:
    """The interval of ``stat`` over game-level resamples.

    ``per_game``: (m, k) sufficient statistics, one row per game in corpus order (inside a
    :func:`.resample_frames.resampling_frame`, only the frame's games are resampled, with the frame's draws).
    ``stat``: maps pooled statistics (R, k) to (R,) values, NaN where undefined. None when B = 0, there are
    no games, or no resample is defined."""
    per_game = np.asarray(per_game, dtype=np.float64)
    if per_game.ndim == 1:
        per_game = per_game[:, None]
    per_game, mode = framed(per_game, mode)
    m = per_game.shape[0]
    if m == 0 or mode.boot == 0:
        return Interval.known(None)
    batch = _BATCH.get()
    if batch is not None:
        return batch.add(per_game, stat, mode)
    return Interval.known(_interval(stat, multiplicities(m, mode) @ per_game))


def ratio_ci(per_game_num: np.ndarray, per_game_den: np.ndarray, mode: Mode) -> Interval[Bounds | None]:
    return cluster_ci(np.column_stack([per_game_num, per_game_den]), ratio_stat(0, 1), mode)


@overload
def ci_list(ci: Interval[Bounds | None], nd: int = 6) -> Interval[list[float | None] | None]: ...
@overload
def ci_list(ci: Bounds | None, nd: int = 6) -> list[float | None] | None: ...
def ci_list(ci: Any, nd: int = 6) -> Any:
    """``[lo, hi]`` rounded (None stays None); of an :class:`Interval`, an interval of that list."""
    if isinstance(ci, Interval):
        return ci.then(lambda v: ci_list(v, nd))
    return None if ci is None else [round_or_none(ci[0], nd), round_or_none(ci[1], nd)]


class _Batch:
    """Intervals waiting for their product, pooled per (games, B, seed, mode) in one product at :meth:`flush`."""

    COLS = 512  # columns per product (bounds the (m, cols) and (B, cols) temporaries)

    def __init__(self) -> None:
        self.items: list[tuple[tuple[int, Mode], np.ndarray, Stat, Interval[Any]]] = []

    def add(self, per_game: np.ndarray, stat: Stat, mode: Mode) -> Interval[Bounds | None]:
        p: Interval[Bounds | None] = Interval()
        self.items.append(((per_game.shape[0], mode), per_game, stat, p))
        return p

    def flush(self) -> None:
        groups: dict[tuple[int, Mode], list[int]] = {}
        for i, item in enumerate(self.items):
            groups.setdefault(item[0], []).append(i)
        for (m, mode), idx in groups.items():
            arrays: dict[int, tuple[np.ndarray, int]] = {}  # one copy of an array several intervals share
            start = 0
            for i in idx:
                a = self.items[i][1]
                if id(a) not in arrays:
                    arrays[id(a)] = (a, start)
                    start += a.shape[1]
            cols = np.empty((m, start))
            for a, at in arrays.values():
                cols[:, at:at + a.shape[1]] = a
            mult = np.asarray(multiplicities(m, mode))  # float64 (kept in a dense_multiplicities scope)
            sums = np.empty((mult.shape[0], start))
            for lo in range(0, start, self.COLS):
                sums[:, lo:lo + self.COLS] = mult @ cols[:, lo:lo + self.COLS]
            del mult, cols
            for i in idx:
                _, a, stat, p = self.items[i]
                at = arrays[id(a)][1]
                p._value, p._done = _interval(stat, sums[:, at:at + a.shape[1]]), True
        self.items.clear()


_BATCH: contextvars.ContextVar[_Batch | None] = contextvars.ContextVar("mafiascope_ci_batch", default=None)


def resolve(obj: Any) -> Any:
    """``obj`` with every :class:`Interval` in its dicts and lists replaced by its value (in place)."""
    if isinstance(obj, Interval):
        return obj.value()
    stack = [obj]  # a loop, not recursion: a report holds ~10^5 containers at 10,000 games
    while stack:
        x = stack.pop()
        items = x.items() if type(x) is dict else enumerate(x) if type(x) is list else ()
        for k, v in items:
            t = type(v)
            if t is dict or t is list:
                stack.append(v)
            elif t is Interval:
                x[k] = v.value()
    return obj


F = TypeVar("F", bound=Callable[..., Any])


def pooled(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``fn(*args, **kwargs)`` with the intervals it makes pooled in one batch of their own at its end; its
    result holds their values, never an :class:`Interval` (also when called inside another batch: a memoised
    result must hold values)."""
    batch = _Batch()
    token = _BATCH.set(batch)
    try:
        out = fn(*args, **kwargs)
        batch.flush()
    finally:
        _BATCH.reset(token)
    return resolve(out)


def pooled_entry(fn: F) -> F:
    """A function whose intervals are pooled: called within a running batch it joins it (its result then
    holds :class:`Interval` s that the batch's end resolves); otherwise it runs in a batch of its own
    (:func:`pooled`) and its result holds values."""

    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> Any:
        if _BATCH.get() is not None:
            return fn(*args, **kwargs)
        return pooled(fn, *args, **kwargs)

    return run  # type: ignore[return-value]
