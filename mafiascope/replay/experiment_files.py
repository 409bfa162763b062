"""Where a batch's records live (``<logs>/experiments/``) and how they are written."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from ..logs.paths import inside
from ..redaction import scrub

EXPERIMENTS_DIR = "experiments"


def experiments_dir(logs_dir: str | Path) -> Path:
    return Path(logs_dir) / EXPERIMENTS_DIR


def write_json_atomic(path: Path, obj: Any, *, root: str | Path | None = None) -> None:
    """Write ``obj`` as JSON to ``path`` via a temporary file and a rename; with ``root`` (the logs
    directory) the path must lie inside it with no symlink on the way (mafiascope.logs.paths)."""
    if root is not None:
        path = inside(root, path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + f".tmp{os.getpid()}")
    tmp.write_text(json.dumps(scrub(obj), ensure_ascii=False, indent=1, default=str), encoding="utf-8")
    os.replace(tmp, path)
