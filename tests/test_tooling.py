"""Lint, format and type checks of the code pyproject.toml covers, so CI (which runs the README's test command)
runs them: `ruff check`, `ruff format --check` and `mypy`, each with its configuration from pyproject.toml
(the covered paths are listed there once: [tool.ruff] include, [tool.ruff.format] exclude, [tool.mypy] files)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow


def _run(tmp_path: Path, *cmd: str) -> subprocess.CompletedProcess[str]:
    tool = shutil.which(cmd[0], path=str(Path(sys.executable).parent)) or shutil.which(cmd[0])
    assert tool, f"{cmd[0]} is not installed: pip install -r requirements-dev.txt"
    env = {**os.environ, "RUFF_CACHE_DIR": str(tmp_path / "ruff"), "MYPY_CACHE_DIR": str(tmp_path / "mypy")}
    return subprocess.run([tool, *cmd[1:]], cwd=REPO, env=env, capture_output=True, text=True, timeout=600)


def test_ruff_check(tmp_path):
    out = _run(tmp_path, "ruff", "check", "--no-fix", "--output-format", "concise")
    assert out.returncode == 0, out.stdout[-6000:] + out.stderr[-2000:]


def test_ruff_format(tmp_path):
    out = _run(tmp_path, "ruff", "format", "--check")
    assert out.returncode == 0, out.stdout[-6000:] + out.stderr[-2000:]


def test_mypy(tmp_path):
    out = _run(tmp_path, "mypy")
    assert out.returncode == 0, out.stdout[-8000:] + out.stderr[-2000:]
