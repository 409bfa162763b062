"""Backend registry: YAML ``backends:`` entries -> Backend instances.

Each entry is validated by its spec model (specs.py, re-exported here) chosen by its ``type``.

Instances are shared per process: :func:`build_backends` keeps a cache keyed by
``(name, spec JSON)``, so every game of a process shares one backend's concurrency cap and
``rpm`` limit, while a second config that reuses a name with a *different* spec gets its
own instance (the original keyed by name only and silently reused the first one).

Types: ``bot`` (offline players), ``openai`` (any OpenAI-compatible endpoint),
``bus`` (an external worker through the model bus hub), ``human`` (moves from the app
or a terminal).
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

from .base import Backend
from .specs import (
    BackendSpec,
    BotSpec,
    BusSpec,
    HumanSpec,
    OpenAISpec,
    Source,
    mark_source,
    parse_backend_spec,
    parse_backend_specs,
    spec_source,
)

T = TypeVar("T")

__all__ = [
    "BackendSpec",
    "BotSpec",
    "BusSpec",
    "HumanSpec",
    "OpenAISpec",
    "Source",
    "build_backend",
    "build_backends",
    "clear_cache",
    "close_all",
    "describe_backends",
    "get_backend",
    "mark_source",
    "parse_backend_spec",
    "parse_backend_specs",
    "spec_source",
]


# --------------------------------------------------------------------------- construction


def build_backend(name: str, spec: Any, *, logs_dir: str | os.PathLike[str] | None = None) -> Backend:
    """A new backend instance (no cache). ``logs_dir`` is where human seats exchange files."""
    spec = parse_backend_spec(name, spec)
    if isinstance(spec, BotSpec):
        from .bot import BotBackend

        return BotBackend(name, preset=spec.preset, model_label=spec.model)
    if isinstance(spec, OpenAISpec):
        from .openai_backend import OpenAIBackend

        return OpenAIBackend(name, spec)
    if isinstance(spec, BusSpec):
        from .bus.client import BusBackend

        return BusBackend(name, spec)
    if isinstance(spec, HumanSpec):
        from .human import HumanBackend, HumanStdinBackend

        label = spec.label or "human"
        source = spec_source(spec)
        if source is not Source.OPERATOR and (spec.logs_dir is not None or spec.mode == "stdin"):
            # a roster, a log or the app's form could otherwise make a game write pending moves (the seat's private
            # prompt) into any directory of the machine, or read the server's own stdin
            what = "logs_dir" if spec.logs_dir is not None else "mode: stdin"
            raise ValueError(
                f"backend {name!r} (human): {what} is honoured only in a config file you named on the command "
                f"line, not in {source.value}; leave it out (moves are exchanged in the game's logs directory)"
            )
        if spec.mode == "stdin":
            return HumanStdinBackend(name, timeout_s=spec.timeout_s, model_label=label)
        where = spec.logs_dir or logs_dir or os.environ.get("MAFIASCOPE_LOGS_DIR") or "logs"
        return HumanBackend(name, where, timeout_s=spec.timeout_s, model_label=label)
    raise ValueError(f"backend {name!r}: unsupported type {getattr(spec, 'type', spec)!r}")


_CACHE: dict[tuple[str, str], Backend] = {}
_CACHE_LOCK = threading.Lock()


def _cache_key(name: str, spec: Any, logs_dir: Any) -> tuple[str, str]:
    key = spec.model_dump_json() + f"|source={spec_source(spec).name}"  # an operator's instance is not a log's
    if isinstance(spec, HumanSpec) and spec.logs_dir is None:
        key += f"|logs_dir={os.fspath(logs_dir) if logs_dir else ''}"
    return name, key


def get_backend(name: str, spec: Any, *, logs_dir: str | os.PathLike[str] | None = None) -> Backend:
    """The process-wide shared instance for ``(name, spec)``."""
    spec = parse_backend_spec(name, spec)
    key = _cache_key(name, spec, logs_dir)
    with _CACHE_LOCK:
        inst = _CACHE.get(key)
        if inst is None:
            inst = build_backend(name, spec, logs_dir=logs_dir)
            _CACHE[key] = inst
        return inst


def build_backends(specs: dict[str, Any], *, logs_dir: str | os.PathLike[str] | None = None) -> dict[str, Backend]:
    """Shared instances for a config's ``backends:`` mapping (validated first, all errors at once)."""
    parsed = parse_backend_specs(dict(specs))
    return {name: get_backend(name, spec, logs_dir=logs_dir) for name, spec in parsed.items()}


def describe_backends(backends: dict[str, Backend]) -> dict[str, dict[str, Any]]:
    """Provenance per backend name for setup/game_over records (no secrets)."""
    return {name: b.describe() for name, b in backends.items()}


async def close_all() -> None:
    """Close the HTTP clients of cached backends that belong to the running loop (tests, shutdown)."""
    with _CACHE_LOCK:
        items = list(_CACHE.values())
    for b in items:
        try:
            await b.aclose()
        except Exception:
            pass


def run_closing(coro: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(coro)``, then close the HTTP clients that loop opened.

    The shared backends keep one HTTP client per event loop; a loop that ends without closing
    them leaves aiohttp's "Unclosed client session" warnings on the user's terminal at exit.
    """

    async def main() -> T:
        try:
            return await coro
        finally:
            await close_all()

    return asyncio.run(main())


def clear_cache() -> None:
    """Forget every shared instance (tests)."""
    with _CACHE_LOCK:
        _CACHE.clear()
