"""Progress of a long experiment, as a JSONL file another process (the app) can poll.

The CLI's ``--progress FILE`` writes ``{"event": "start", "total": N}``, one ``{"event": "unit", ...}``
per finished unit (a fork branch, a continuation, an A/B game, a re-asked state) and
``{"event": "done", "path": RESULT}`` when the result file is written. A reader never needs the
writer to have finished: :func:`read_progress` tolerates a torn last line.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from ..logs.io import JsonlWriter, iter_jsonl
from ..logs.schema import run_record


class Progress(BaseModel):
    """What a progress file says so far."""

    total: int | None = None  # units announced at the start (an upper bound for bifurcations: fewer variants may be found)
    done: int = 0
    errors: int = 0
    finished: bool = False
    result: str | None = None  # path of the result JSON, once written
    last: dict[str, Any] | None = None  # the last unit's record


class ProgressLog:
    """Writes a progress file; every method is a no-op without a path (the CLI without ``--progress``)."""

    def __init__(self, path: str | Path | None) -> None:
        self._w = JsonlWriter(path) if path else None

    def _put(self, event: str, **info: Any) -> None:
        if self._w is not None:
            self._w.write(progress_line({"event": event, "ts": round(time.time(), 3), **info}))

    def start(self, total: int, **info: Any) -> None:
        self._put("start", total=int(total), **info)

    def unit(self, **info: Any) -> None:
        self._put("unit", **info)

    def done(self, path: str | None, **info: Any) -> None:
        self._put("done", path=path, **info)
        if self._w is not None:
            self._w.close()


def progress_line(rec: dict[str, Any]) -> dict[str, Any]:
    """A progress record, once it validates against the schema (mafiascope/logs/schema.py)."""
    run_record("progress", rec)
    return rec


def read_progress(path: str | Path) -> Progress:
    p = Progress()
    path = Path(path)
    if not path.is_file():
        return p
    for rec in iter_jsonl(path):
        ev = rec.get("event")
        if ev == "start":
            p.total = int(rec.get("total") or 0)
        elif ev == "unit":
            p.done += 1
            p.errors += bool(rec.get("error"))
            p.last = rec
        elif ev == "done":
            p.finished, p.result = True, rec.get("path")
    return p
