"""Independent blocks of games computed on worker threads, results in block order.

The heavy analytics passes (the suspicion states, F3's matching, F1's kept columns) already work a
block of games at a time to bound their temporaries. numpy releases the GIL inside its large
kernels (element-wise loops, gathers, sorts, searches), so two blocks on two threads use both cores
of a small machine. A block function must be pure: it reads arrays handed to it (never the corpus'
memo or lazy tables, whose lock a building caller holds) and returns new ones. Results come back
in block order, so a caller's concatenation is the same as the sequential loop's, bit for bit.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")

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


_in_block = threading.local()  # ``token``: the block this thread runs now (None: none)


class Block:
    """The token of one running block: a corpus made while it runs (a game view) belongs to it."""

    __slots__ = ()


def current_block() -> Block | None:
    """The block this thread is running, or None outside block maps."""
    return getattr(_in_block, "token", None)


class BlockReadError(RuntimeError):
    """A block function read a corpus it was not handed (see :func:`map_blocks`)."""


def map_blocks(fn: Callable[[T], R], blocks: Sequence[T]) -> list[R]:
    """``[fn(b) for b in blocks]``, up to :func:`workers` blocks at a time, in block order. A block that
    maps blocks of its own (a build run on a game view, :mod:`.game_views`) runs them in turn: the
    outer blocks already use the threads.

    A block function must read only what it is handed: while it runs (on a worker thread, or in turn on
    this one), reading a corpus made outside the block -- its memo, its tables -- raises
    :class:`BlockReadError` at once. The caller may hold that corpus' lock while it waits for the blocks
    (a memoised build mapping blocks), so with two threads such a read would wait forever; the error
    makes the mistake the same immediate failure with one thread or many."""
    n = min(workers(), len(blocks))

    def run(b: T) -> R:
        outer = getattr(_in_block, "token", None)
        _in_block.token = Block()
        try:
            return fn(b)
        finally:
            _in_block.token = outer

    if n <= 1 or current_block() is not None:
        return [run(b) for b in blocks]
    with ThreadPoolExecutor(n, thread_name_prefix="mafiascope-block") as ex:
        out = list(ex.map(run, blocks))
    release_free_memory()  # the blocks' temporaries, freed in the workers' arenas
    return out


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
    of the suspicion states' blocks stayed resident into the next sections. The report calls this
    after each group of sections, once its intermediates are let go of."""
    if _TRIM is not None:
        _TRIM(0)
