"""Per-backend limits shared by every game of a process.

:class:`ConcurrencyLimit` caps calls in flight; :class:`RateLimit` spaces call starts to
at most ``rpm`` per minute (a GCRA token bucket with a small burst). Both are plain
thread-safe objects rather than ``asyncio.Semaphore``/``Lock``: one backend instance is
shared by all games of a process (see :mod:`mafiascope.backends.registry`), and those
games may run on different event loops (a Streamlit worker thread, successive
``asyncio.run`` calls, pytest's per-test loops). asyncio primitives bind to the first loop
that waits on them; these hand slots across loops with ``call_soon_threadsafe``.
"""

from __future__ import annotations

import asyncio
import collections
import threading
import time
from typing import Any


class ConcurrencyLimit:
    """An async semaphore that works from any event loop and any thread."""

    def __init__(self, limit: int) -> None:
        if limit < 1:
            raise ValueError("max_concurrency must be >= 1")
        self.limit = int(limit)
        self._lock = threading.Lock()
        self._in_flight = 0
        self._waiters: collections.deque[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = collections.deque()
        self.max_seen = 0  # highest number of calls in flight so far (for tests and stats)

    @property
    def in_flight(self) -> int:
        return self._in_flight

    async def acquire(self) -> None:
        loop = asyncio.get_running_loop()
        with self._lock:
            if self._in_flight < self.limit and not self._waiters:
                self._in_flight += 1
                self.max_seen = max(self.max_seen, self._in_flight)
                return
            fut: asyncio.Future[None] = loop.create_future()
            entry = (loop, fut)
            self._waiters.append(entry)
        try:
            await fut  # release() hands its slot over: _in_flight already counts us
        except asyncio.CancelledError:
            with self._lock:
                try:
                    self._waiters.remove(entry)
                    handed_over = False
                except ValueError:
                    handed_over = True
            if handed_over:
                self.release()
            raise

    def release(self) -> None:
        with self._lock:
            while self._waiters:
                loop, fut = self._waiters.popleft()
                if loop.is_closed():
                    continue
                loop.call_soon_threadsafe(_resolve, fut)
                return  # slot transferred; in-flight count unchanged
            self._in_flight -= 1

    async def __aenter__(self) -> "ConcurrencyLimit":
        await self.acquire()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        self.release()


def _resolve(fut: asyncio.Future[None]) -> None:
    if not fut.done():
        fut.set_result(None)
    # a cancelled waiter was removed from the queue before cancellation completed, or
    # cancelled after the hand-over; acquire() releases the slot in that case


class RateLimit:
    """At most ``rpm`` call starts per minute, with a burst of ``burst`` calls.

    Generic cell rate algorithm: each acquire reserves the next start time under a lock
    and then sleeps outside it, so waiters from several loops are served in order.
    """

    def __init__(self, rpm: float, burst: int = 1) -> None:
        if rpm <= 0:
            raise ValueError("rpm must be > 0")
        self.rpm = float(rpm)
        self.interval = 60.0 / self.rpm
        self.tolerance = max(0, int(burst) - 1) * self.interval
        self._tat = 0.0  # theoretical arrival time of the next call
        self._lock = threading.Lock()
        self.waited_s = 0.0

    def reserve(self) -> float:
        """Reserve a start slot; return how many seconds to wait for it."""
        with self._lock:
            now = time.monotonic()
            start = max(now, self._tat - self.tolerance)
            self._tat = max(self._tat, now) + self.interval
            wait = start - now
            self.waited_s += wait
            return wait

    async def acquire(self) -> None:
        wait = self.reserve()
        if wait > 0:
            await asyncio.sleep(wait)


class Limits:
    """The concurrency cap and optional rate limit of one backend instance."""

    def __init__(self, max_concurrency: int = 8, rpm: float | None = None, burst: int = 1) -> None:
        self.concurrency = ConcurrencyLimit(max_concurrency)
        self.rate = RateLimit(rpm, burst) if rpm else None

    async def __aenter__(self) -> "Limits":
        if self.rate is not None:
            await self.rate.acquire()
        await self.concurrency.acquire()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        self.concurrency.release()

    def describe(self) -> dict[str, Any]:
        return {"max_concurrency": self.concurrency.limit, "rpm": self.rate.rpm if self.rate else None}
