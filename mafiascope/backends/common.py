"""Helpers shared by the network backends: think-stripping, redaction, retry waits (credentials: clients.py)."""

from __future__ import annotations

import asyncio
import email.utils
import math
import random
import re
import time
import weakref
from collections.abc import Callable
from typing import Any, Generic, TypeVar
from urllib.parse import urlsplit

from ..redaction import scrub_text

_THINK_BLOCK = re.compile(r"<think(?:ing)?>.*?</think(?:ing)?>", re.IGNORECASE | re.DOTALL)
_THINK_CLOSE = re.compile(r"</think(?:ing)?>", re.IGNORECASE)
_THINK_OPEN = re.compile(r"<think(?:ing)?>", re.IGNORECASE)


def strip_think(text: str | None) -> tuple[str, bool]:
    """Remove reasoning blocks (``<think>...</think>``) from a reply.

    Also handles a reply that only carries the closing tag (the server swallowed the
    opening one: keep what follows the last ``</think>``) and an unclosed ``<think>``
    (the budget ran out while thinking: keep what precedes it). Returns
    ``(text, stripped)``.
    """
    if not text:
        return "", False
    out = _THINK_BLOCK.sub("", text)
    parts = _THINK_CLOSE.split(out)
    if len(parts) > 1:
        out = parts[-1]
    m = _THINK_OPEN.search(out)
    if m:
        out = out[: m.start()]
    out = out.strip()
    return out, out != text.strip()


def redact(text: str, *secrets: str | None) -> str:
    """Remove secrets (any 8+ character fragment of them or of a registered secret), URL credentials
    and anything that looks like a bearer token or API key from text (mafiascope.redaction)."""
    return scrub_text(text, *secrets)


def host_of(url: str | None) -> str | None:
    """``host[:port]`` of a URL, without scheme, credentials, path or query."""
    if not url:
        return None
    parts = urlsplit(url if "://" in url else f"http://{url}")
    host = parts.hostname or ""
    return f"{host}:{parts.port}" if parts.port else host


def parse_retry_after(headers: Any) -> float | None:
    """Seconds to wait from ``retry-after-ms`` / ``retry-after`` (seconds or HTTP date)."""
    if headers is None:
        return None
    for header, divisor in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        raw = headers.get(header)
        if raw is None:
            continue
        try:
            v = float(raw) / divisor
            if math.isfinite(v) and v >= 0:
                return v
        except ValueError:
            pass
    raw = headers.get("retry-after")
    if raw:
        try:
            parsed = email.utils.parsedate_tz(raw)
            if parsed is not None:
                return max(0.0, float(email.utils.mktime_tz(parsed) - time.time()))
        except (TypeError, ValueError, OverflowError):
            return None
    return None


def backoff_delay(retry_index: int, base: float, cap: float, rng: random.Random) -> float:
    """Exponential backoff with up to 25% downward jitter (the openai SDK's schedule)."""
    return min(base * (2.0**retry_index), cap) * (1.0 - 0.25 * rng.random())


T = TypeVar("T")


class PerLoop(Generic[T]):
    """One lazily built object per running event loop (HTTP clients are loop-bound)."""

    def __init__(self, factory: Callable[[], T]) -> None:
        self._factory = factory
        self._items: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, T] = weakref.WeakKeyDictionary()
        self._by_id: dict[int, tuple[asyncio.AbstractEventLoop, T]] = {}  # loops without weakref support

    def get(self) -> T:
        loop = asyncio.get_running_loop()
        try:
            item = self._items.get(loop)
        except TypeError:
            entry = self._by_id.get(id(loop))
            item = entry[1] if entry is not None and entry[0] is loop else None
        if item is None:
            item = self._factory()
            try:
                self._items[loop] = item
            except TypeError:
                self._by_id = {k: v for k, v in self._by_id.items() if not v[0].is_closed()}
                self._by_id[id(loop)] = (loop, item)
        return item

    def pop_current(self) -> T | None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return None
        try:
            return self._items.pop(loop, None)
        except TypeError:
            entry = self._by_id.pop(id(loop), None)
            return entry[1] if entry is not None else None


def on_stop_signals(callback: Callable[[], Any]) -> None:
    """Call ``callback`` on SIGINT/SIGTERM in the running loop (servers run from the CLI)."""
    import signal

    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            loop.add_signal_handler(sig, callback)
        except (NotImplementedError, RuntimeError):
            pass


async def wait_for_stop_signal() -> None:
    stop = asyncio.Event()
    on_stop_signals(stop.set)
    await stop.wait()
