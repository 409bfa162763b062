"""Results of the app's costly analytics calls and its game index, kept on disk between server
processes, so a fresh process renders the Dashboard of a 1,000-game corpus from files instead
of recomputing every figure (st.cache_data only lives as long as the process).

Entries live under ``<user cache root>/app`` (the root of mafiascope.cache_root.user_cache_root:
``$MAFIASCOPE_CACHE_DIR``, else ``$XDG_CACHE_HOME/mafiascope``, else ``~/.cache/mafiascope``),
never in a corpus or the checkout. A key holds the caller's digest of the games' files (paths
and (size, mtime) signatures), the metric mode and a fingerprint of the analytics code, so a
changed game, mode or metric never serves an old figure. Files are written by this process
only (pickle), atomically; unreadable or stale entries are ignored and recomputed; the oldest
entries beyond :data:`MAX_ENTRIES` are removed.
"""

from __future__ import annotations

import functools
import hashlib
import os
import pickle
import tempfile
from pathlib import Path
from typing import Any, Callable, TypeVar

from mafiascope.cache_root import user_cache_root

MAX_ENTRIES = 256
ENV_OFF = "MAFIASCOPE_APP_DISK_CACHE"  # "0": keep results in memory only

T = TypeVar("T")


def enabled() -> bool:
    return os.environ.get(ENV_OFF, "1") != "0"


def root() -> Path:
    return user_cache_root() / "app"


@functools.lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """Hash of the analytics package's source (names, sizes, contents): a new metric definition
    invalidates every stored result."""
    import mafiascope.analytics as pkg

    h = hashlib.sha1()
    for p in sorted(Path(pkg.__file__).parent.glob("*.py")):
        h.update(p.name.encode())
        h.update(p.read_bytes())
    return h.hexdigest()[:16]


def _path(name: str, key: Any) -> Path:
    digest = hashlib.sha1(repr((name, key, code_fingerprint())).encode()).hexdigest()
    return root() / f"{name}-{digest}.pkl"


def load(name: str, key: Any) -> tuple[bool, Any]:
    """(found, value) of a stored entry."""
    if not enabled():
        return False, None
    p = _path(name, key)
    try:
        with open(p, "rb") as fh:
            value = pickle.load(fh)
    except (OSError, EOFError, pickle.UnpicklingError, AttributeError, ImportError, IndexError, TypeError, ValueError):
        return False, None
    try:
        os.utime(p)  # recently used: kept by the pruning
    except OSError:
        pass
    return True, value


def store(name: str, key: Any, value: Any) -> None:
    """Write an entry (best effort: an unwritable cache directory only costs the recomputation)."""
    if not enabled():
        return
    p = _path(name, key)
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=p.parent, prefix=".", suffix=".tmp")
        with os.fdopen(fd, "wb") as fh:
            pickle.dump(value, fh, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, p)
        _prune(p.parent)
    except (OSError, pickle.PicklingError, TypeError, AttributeError):
        try:
            os.unlink(tmp)  # type: ignore[possibly-undefined]
        except (OSError, NameError):
            pass


def _prune(d: Path) -> None:
    files = sorted(d.glob("*.pkl"), key=lambda f: f.stat().st_mtime)
    for f in files[: max(0, len(files) - MAX_ENTRIES)]:
        f.unlink(missing_ok=True)


def has(name: str, key: Any) -> bool:
    """Whether an entry is stored (not read)."""
    return enabled() and _path(name, key).is_file()


def entry_key(key: str, mode: Any, args: tuple, context: Callable[[], Any]) -> tuple:
    """The key :func:`persist` stores a call under."""
    return (key, repr(mode), args, context())


def persist(name: str, context: Callable[[], Any] = lambda: None) -> Callable[[Callable[..., T]], Callable[..., T]]:
    """Decorate a cached analytics call ``f(_dirs, key, mode, *args)``: its result is read from
    disk when stored under (key, mode, args, ``context()``), else computed and stored. ``_dirs``
    is covered by ``key`` (the digest of the selection and its files' signatures); ``context``
    returns any other choice the call depends on (e.g. whether invalid games are included)."""

    def deco(fn: Callable[..., T]) -> Callable[..., T]:
        @functools.wraps(fn)
        def wrapper(_dirs: tuple[str, ...], key: str, mode: Any, *args: Any) -> T:
            k = entry_key(key, mode, args, context)
            found, value = load(name, k)
            if found:
                return value
            value = fn(_dirs, key, mode, *args)
            store(name, k, value)
            return value

        return wrapper

    return deco
