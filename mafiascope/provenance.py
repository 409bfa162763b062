"""Where a result came from: package version, git commit (when run from a checkout),
Python and key package versions, plus whatever the caller adds (spec hash, seeds ...).

    provenance({"spec_hash": ..., "seeds": [...]}) -> {"mafiascope_version": "0.1.0", "git_commit": ..., ...}

Small and generic on purpose: every output that reports figures (study plans, ledgers,
status, reports, analyze/compare/dynamics/episodes JSON) stamps itself with it.
"""

from __future__ import annotations

import functools
import hashlib
import json
import platform
import subprocess
from importlib import metadata
from pathlib import Path
from typing import Any

from . import __version__

KEY_PACKAGES = ("pydantic", "numpy", "pandas", "scipy", "pyarrow", "openai", "pyyaml", "altair", "vl-convert-python", "ray",
                "streamlit")
_REPO = Path(__file__).resolve().parent.parent


@functools.lru_cache(maxsize=1)
def git_commit() -> str | None:
    """The checkout's HEAD commit (``+dirty`` when tracked files changed), or None outside a checkout."""
    if not (_REPO / ".git").exists():
        return None
    try:
        head = subprocess.run(["git", "-C", str(_REPO), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5)
        if head.returncode != 0:
            return None
        dirty = subprocess.run(["git", "-C", str(_REPO), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=5)  # fmt: skip
        return head.stdout.strip() + ("+dirty" if dirty.returncode == 0 and dirty.stdout.strip() else "")
    except (OSError, subprocess.SubprocessError):
        return None


@functools.lru_cache(maxsize=1)
def package_versions() -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for name in KEY_PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def content_hash(obj: Any) -> str:
    """A stable sha256 of JSON-able data (keys sorted), e.g. of a parsed spec."""
    text = json.dumps(obj, sort_keys=True, ensure_ascii=False, default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def provenance(extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """``{mafiascope_version, git_commit, python, platform, packages, **extra}`` (commit None outside a checkout)."""
    out: dict[str, Any] = {
        "mafiascope_version": __version__,
        "git_commit": git_commit(),
        "python": platform.python_version(),
        "platform": platform.platform(terse=True),
        "packages": dict(package_versions()),
    }
    if extra:
        out.update(extra)
    return out
