"""Where mafiascope keeps caches and scratch files: the user's cache directory, never a corpus or the
checkout. Standard library only, so the app can ask without importing the analytics stack."""

from __future__ import annotations

import os
from pathlib import Path

ENV_CACHE_DIR = "MAFIASCOPE_CACHE_DIR"


def user_cache_root() -> Path:
    """``$MAFIASCOPE_CACHE_DIR``, else ``$XDG_CACHE_HOME/mafiascope``, else ``~/.cache/mafiascope``."""
    env = os.environ.get(ENV_CACHE_DIR)
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg and Path(xdg).is_absolute() else Path.home() / ".cache"
    return base / "mafiascope"
