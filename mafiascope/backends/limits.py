"""Per-backend limits shared by every game of a process.

:class:`ConcurrencyLimit` caps calls in flight; :class:`RateLimit` spaces call starts to
at most ``rpm`` per minute (a GCRA token bucket with a small burst). Both serve waiters by
priority, acts before probes (:data:`ACT`, :data:`PROBE`), then in arrival order: a seat's
move never queues behind the probes of earlier steps, so probing cannot slow the game
down; probes take whatever capacity the acts leave. A waiter may give a deadline
(``max_wait``): past it, it leaves the queue with :class:`QueueTimeout` (probes that lag
too far behind the game are skipped and counted, see :mod:`mafiascope.probes.scheduler`).

Both are plain thread-safe objects rather than ``asyncio.Semaphore``/``Lock``: one backend
instance is shared by all games of a process (see :mod:`mafiascope.backends.registry`),
and those games may run on different event loops (a Streamlit worker thread, successive
``asyncio.run`` calls, pytest's per-test loops, the probe engine's own loop). asyncio
primitives bind to the first loop that waits on them; these hand slots across loops with
``call_soon_threadsafe``.

A concurrency cap left unset is sized from demand: every game registers how many calls it
may want at once on the backend (its seats, plus one step's probes of those seats, see
:meth:`Limits.demand`), and the cap is the sum over running games, within
``[AUTO_MIN, AUTO_MAX]``.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import itertools
import threading
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

ACT = 0  # seats' moves: always served first
PROBE = 1
AUTO_MIN = 8
AUTO_MAX = 256


class QueueTimeout(Exception):
    """A waiter gave up: it waited longer than its ``max_wait`` for a slot."""

    def __init__(self, waited_s: float, what: str) -> None:
        super().__init__(f"waited {waited_s:.1f}s for the backend's {what}")
        self.waited_s = waited_s
        self.what = what


class _Waiter:
    __slots__ = ("priority", "seq", "loop", "fut")

    def __init__(self, priority: int, seq: int, loop: asyncio.AbstractEventLoop) -> None:
        self.priority, self.seq, self.loop = priority, seq, loop
        self.fut: asyncio.Future[None] = loop.create_future()

    def __lt__(self, other: _Waiter) -> bool:
        return (self.priority, self.seq) < (other.priority, other.seq)

    def wake(self) -> None:
        if not self.loop.is_closed():
            self.loop.call_soon_threadsafe(_resolve, self.fut)


def _resolve(fut: asyncio.Future[None]) -> None:
    if not fut.done():
        fut.set_result(None)


async def _wait(fut: asyncio.Future[None], timeout: float | None) -> bool:
    """True when ``fut`` resolved, False on timeout (``fut`` itself is never cancelled)."""
    if timeout is None:
        await asyncio.shield(fut)
        return True
    if timeout <= 0:
        return fut.done()
    try:
        await asyncio.wait_for(asyncio.shield(fut), timeout)
        return True
    except TimeoutError:
        return fut.done()


class ConcurrencyLimit:
    """An async priority semaphore that works from any event loop and any thread.

    ``limit=None`` sizes the cap from the demand games register (:meth:`add_demand`).
    """

    def __init__(self, limit: int | None) -> None:
        if limit is not None and limit < 1:
            raise ValueError("max_concurrency must be >= 1")
        self.fixed = limit
        self._demand = 0
        self._lock = threading.Lock()
        self._in_flight = 0
        self._heap: list[_Waiter] = []
        self._seq = itertools.count()
        self.max_seen = 0  # highest number of calls in flight so far (for tests and stats)

    @property
    def limit(self) -> int:
        if self.fixed is not None:
            return self.fixed
        return max(AUTO_MIN, min(AUTO_MAX, self._demand))

    @property
    def in_flight(self) -> int:
        return self._in_flight

    def add_demand(self, n: int) -> None:
        """A game starts (n > 0) or ends (n < 0); an auto-sized cap follows the total."""
        with self._lock:
            self._demand = max(0, self._demand + n)
            self._hand_over()

    async def acquire(self, priority: int = ACT, max_wait: float | None = None) -> None:
        loop = asyncio.get_running_loop()
        t0 = time.monotonic()
        with self._lock:
            if self._in_flight < self.limit and not self._heap:
                self._take()
                return
            w = _Waiter(priority, next(self._seq), loop)
            heapq.heappush(self._heap, w)
        try:
            got = await _wait(w.fut, max_wait)
        except asyncio.CancelledError:
            if not self._abandon(w):  # the slot was handed over already: give it back
                self.release()
            raise
        if not got and self._abandon(w):  # (handed over just as the wait ran out: keep the slot)
            raise QueueTimeout(time.monotonic() - t0, "concurrency cap")

    def _abandon(self, w: _Waiter) -> bool:
        """Remove a waiter that gives up; False if a slot was already handed to it."""
        with self._lock:
            if w in self._heap:
                self._heap.remove(w)
                heapq.heapify(self._heap)
                return True
            return False

    def _take(self) -> None:
        self._in_flight += 1
        self.max_seen = max(self.max_seen, self._in_flight)

    def _hand_over(self) -> None:
        # caller holds the lock
        while self._heap and self._in_flight < self.limit:
            w = heapq.heappop(self._heap)
            if w.loop.is_closed():
                continue
            self._take()
            w.wake()

    def release(self) -> None:
        with self._lock:
            self._in_flight -= 1
            self._hand_over()

    async def __aenter__(self) -> ConcurrencyLimit:
        await self.acquire()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        self.release()


class RateLimit:
    """At most ``rpm`` call starts per minute, with a burst of ``burst`` calls, by priority.

    Generic cell rate algorithm: a call may start once ``now >= tat - tolerance``, and each
    start moves the theoretical arrival time ``tat`` one interval on. Only the head of the
    priority queue sleeps until the next start time; the others wait to become head.

    A move right after a probe start may take one interval of headroom
    (``now >= tat - tolerance - interval``): a probe backlog keeps ``tat`` about one interval
    ahead, and without it every move would wait up to an interval behind the probe that
    started just before it. A stream of moves alone is spaced exactly as before; the long-run
    rate stays ``rpm`` (every start moves ``tat`` on), and ``tat`` never runs more than one
    interval further ahead than the burst allows.
    """

    def __init__(self, rpm: float, burst: int = 1) -> None:
        if rpm <= 0:
            raise ValueError("rpm must be > 0")
        self.rpm = float(rpm)
        self.interval = 60.0 / self.rpm
        self.tolerance = max(0, int(burst) - 1) * self.interval
        self._tat = 0.0  # theoretical arrival time of the next call
        self._last_probe = False  # the last start was a probe's (a move may then use the headroom)
        self._lock = threading.Lock()
        self._heap: list[_Waiter] = []
        self._seq = itertools.count()
        self.waited_s = 0.0

    def _earliest(self, priority: int) -> float:
        # caller holds the lock: the first time a call of this priority may start
        headroom = self.interval if priority == ACT and self._last_probe else 0.0
        return self._tat - self.tolerance - headroom

    def _try_take(self, now: float, priority: int) -> bool:
        # caller holds the lock
        if now >= self._earliest(priority):
            self._tat = max(self._tat, now) + self.interval
            self._last_probe = priority != ACT
            return True
        return False

    def _wake_head(self) -> None:
        if self._heap:
            self._heap[0].wake()

    async def acquire(self, priority: int = ACT, max_wait: float | None = None) -> None:
        loop = asyncio.get_running_loop()
        t0 = time.monotonic()
        with self._lock:
            if not self._heap and self._try_take(t0, priority):
                return
            w = _Waiter(priority, next(self._seq), loop)
            heapq.heappush(self._heap, w)
        try:
            while True:
                with self._lock:
                    now = time.monotonic()
                    head = self._heap[0] is w
                    if head and self._try_take(now, priority):
                        heapq.heappop(self._heap)
                        self.waited_s += now - t0
                        self._wake_head()
                        return
                    sleep = (self._earliest(priority) - now) if head else None
                    if not head and w.fut.done():  # woken, but a higher priority came first
                        w.fut = loop.create_future()
                left = None if max_wait is None else max_wait - (now - t0)
                if left is not None and left <= 0:
                    raise QueueTimeout(now - t0, f"rate limit ({self.rpm:g} rpm)")
                if head:
                    assert sleep is not None
                    await asyncio.sleep(max(0.0, sleep if left is None else min(sleep, left)))
                else:
                    await _wait(w.fut, left)
        except BaseException:
            with self._lock:
                if w in self._heap:
                    was_head = self._heap[0] is w
                    self._heap.remove(w)
                    heapq.heapify(self._heap)
                    if was_head:
                        self._wake_head()
            raise


def lagged_completion(backend: str, exc: QueueTimeout, attempts: int, t0: float) -> Any:
    """The failed completion of a call that gave up waiting for the backend (never retried)."""
    from .base import Completion

    return Completion(
        ok=False,
        error=f"lagged: {exc} (skipped; see probes.max_lag_s)",
        attempts=attempts,
        latency_ms=int((time.monotonic() - t0) * 1000),
        meta={"backend": backend, "lagged": True},
    )


def priority_of(kind: str) -> int:
    """A call's place in the backends' queues: acts before probes."""
    return PROBE if kind == "probe" else ACT


class Limits:
    """The concurrency cap and optional rate limit of one backend instance.

    ``async with limits.slot(PROBE, max_wait=...)`` waits for the rate limit, then a
    concurrency slot, each by priority; ``async with limits`` is an act's slot.
    """

    def __init__(self, max_concurrency: int | None = None, rpm: float | None = None, burst: int = 1) -> None:
        self.concurrency = ConcurrencyLimit(max_concurrency)
        self.rate = RateLimit(rpm, burst) if rpm else None
        self.probes_pending = 0  # probe calls scheduled on this backend and not finished (every game)
        self.hold_s = 1.0  # moving average of how long a call holds its slot (seconds)
        self._lock = threading.Lock()

    def add_pending(self, n: int) -> None:
        with self._lock:
            self.probes_pending = max(0, self.probes_pending + n)

    def backlog_seconds(self, calls: int) -> float:
        """How long ``calls`` queued calls need to start here: the rate limit's spacing, or with a
        fixed concurrency cap the average slot time per cap; 0 when neither limits throughput
        (auto-sized caps grow with the games' demand)."""
        if self.rate is not None:
            return calls * self.rate.interval
        if self.concurrency.fixed is not None:
            return calls * self.hold_s / self.concurrency.fixed
        return 0.0

    @contextlib.asynccontextmanager
    async def slot(self, priority: int = ACT, max_wait: float | None = None) -> AsyncIterator[Limits]:
        t0 = time.monotonic()
        if self.rate is not None:
            await self.rate.acquire(priority, max_wait)
        left = None if max_wait is None else max(0.0, max_wait - (time.monotonic() - t0))
        await self.concurrency.acquire(priority, left)
        t1 = time.monotonic()
        try:
            yield self
        finally:
            self.concurrency.release()
            self.hold_s += 0.1 * ((time.monotonic() - t1) - self.hold_s)

    @contextlib.contextmanager
    def demand(self, n: int) -> Iterator[None]:
        """Register a game's peak demand on this backend for as long as it runs."""
        self.concurrency.add_demand(n)
        try:
            yield
        finally:
            self.concurrency.add_demand(-n)

    async def __aenter__(self) -> Limits:
        if self.rate is not None:
            await self.rate.acquire()
        await self.concurrency.acquire()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        self.concurrency.release()

    def describe(self) -> dict[str, Any]:
        c = self.concurrency
        return {"max_concurrency": c.fixed if c.fixed is not None else "auto", "rpm": self.rate.rpm if self.rate else None}
