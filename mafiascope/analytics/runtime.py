"""The process-level settings the analytics run under: how many worker threads, which block a thread
is running (who may read a corpus), the cyclic garbage collector paused while a report runs, and the
allocator's free pages handed back. Low in the package: the corpus, its lazy tables and the executor
(:mod:`.executor`) read them; metric code never does."""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

ENV = "MAFIASCOPE_ANALYTICS_THREADS"  # worker threads (1: the plain sequential loop)


def workers() -> int:
    """Threads for block maps: ``MAFIASCOPE_ANALYTICS_THREADS`` if set, else up to 2 of the CPUs this
    process may use (two blocks at a time bound the temporaries to twice a block's)."""
    raw = os.environ.get(ENV, "").strip()
    if raw:
        try:
            return max(1, int(raw))
        except ValueError:
            raise ValueError(f"{ENV} must be a whole number of threads, got {raw!r}") from None
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        cpus = os.cpu_count() or 1
    return max(1, min(2, cpus))


# ----------------------------------------------------------------------------- running blocks

_in_block = threading.local()  # ``token``: the block this thread runs now (None: none)


class Block:
    """The token of one running block: a corpus made while it runs (a game view) belongs to it."""

    __slots__ = ()


def current_block() -> Block | None:
    """The block this thread is running, or None outside block maps."""
    return getattr(_in_block, "token", None)


@contextmanager
def running_block() -> Iterator[Block]:
    """This thread runs a new block for the ``with`` body (blocks nest: the outer one is restored)."""
    outer = getattr(_in_block, "token", None)
    _in_block.token = token = Block()
    try:
        yield token
    finally:
        _in_block.token = outer


class BlockReadError(RuntimeError):
    """A block function read a corpus it was not handed (see :func:`.executor.map_blocks`)."""


# ----------------------------------------------------------------------------- the garbage collector

_lock = threading.Lock()
_holders = 0
_was_on = False


@contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic garbage collector off while the block runs; back on after the last holder if it was on.

    A report allocates many short-lived containers (pandas' and its own), which set off ~130
    collections at 10,000 games (0.18-0.24 s of the main thread's time) that freed 26 objects in
    all: the report's large arrays are freed by reference counting. Reports running at once (app
    sessions) share one pause: the collector comes back when the last of them ends, and only if it
    was on when the first began. Values do not change: the collector only frees unreachable objects."""
    global _holders, _was_on
    with _lock:
        if _holders == 0:
            _was_on = gc.isenabled()
            gc.disable()
        _holders += 1
    try:
        yield
    finally:
        with _lock:
            _holders -= 1
            if _holders == 0 and _was_on:
                gc.enable()


# ----------------------------------------------------------------------------- free memory


def _libc_trim() -> Callable[[int], int] | None:
    name = ctypes.util.find_library("c")
    try:
        fn = getattr(ctypes.CDLL(name), "malloc_trim") if name else None
    except (OSError, AttributeError):  # not glibc (musl, macOS): nothing to hand back this way
        return None
    if fn is not None:
        fn.argtypes, fn.restype = [ctypes.c_size_t], ctypes.c_int
    return fn


_TRIM = _libc_trim()


def release_free_memory() -> None:
    """Hand the allocator's free pages back to the system (glibc ``malloc_trim``; elsewhere nothing).

    The worker threads allocate their blocks' arrays from their own malloc arenas, and a mid-sized
    array freed there (below the dynamic mmap threshold) stays in the arena: at 10,000 games ~250 MB
    of the suspicion states' blocks stayed resident into the next sections. The executor calls this
    after each map of blocks and after each group of a report's sections."""
    if _TRIM is not None:
        _TRIM(0)
