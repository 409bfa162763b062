"""Where a result came from: package version, git commit (in a checkout), Python and key packages."""

from __future__ import annotations

import platform
import subprocess
from importlib import metadata
from pathlib import Path
from typing import Any

from . import __version__

KEY_PACKAGES = ("numpy", "pandas", "scipy", "pyarrow", "pydantic", "altair", "vl-convert-python", "openai")


def _git_commit() -> str | None:
    root = Path(__file__).resolve().parents[1]
    if not (root / ".git").exists():
        return None
    try:
        out = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return None
    sha = out.stdout.strip()
    return sha if out.returncode == 0 and sha else None


def _version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def provenance(extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """``{mafiascope_version, git_commit, python, packages, **extra}`` (commit None outside a checkout)."""
    out: dict[str, Any] = {
        "mafiascope_version": __version__,
        "git_commit": _git_commit(),
        "python": platform.python_version(),
        "packages": {p: v for p in KEY_PACKAGES if (v := _version(p)) is not None},
    }
    if extra:
        out.update(extra)
    return out
