"""Reading ``state.jsonl``: compact (schema_version 2) snapshot records rebuilt to full ones.

The writer (mafiascope.engine.snapshots.SnapshotEncoder) stores per record only the events
appended since the previous record (``events_from``), only the probe-memory entries that
changed (``delta``), and no acting contexts (``contexts: "derived"``: they are a function of
the state). Undoing the first two is pure bookkeeping and lives here; rebuilding the contexts
needs the engine, so the caller passes it in as ``contexts`` (the engine's
``derive_contexts``). Without it a derived record keeps ``contexts: "derived"`` and its
players carry no ``messages``. A delta whose base is missing is an error naming file:line.
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from .io import STATE_FILE, LogFormatError, TornLineWarning, iter_jsonl

# state dict -> {seat name: acting context (chat messages)}; may raise on a damaged state
ContextBuilder = Callable[[dict[str, Any]], dict[str, list[dict[str, str]]]]


class SnapshotDecoder:
    """Rebuilds full records from compact ones (and passes full ones through), in file order."""

    def __init__(self, where: str = STATE_FILE, contexts: ContextBuilder | None = None) -> None:
        self.where = where
        self.contexts = contexts
        self._events: list[dict[str, Any]] | None = None
        self._memory: dict[str, dict[str, Any]] = {}

    def decode(self, rec: dict[str, Any], line: int | None = None) -> dict[str, Any]:
        state = rec.get("state")
        if not isinstance(state, dict):
            return rec
        at = f"{self.where}:{line}" if line is not None else self.where
        if "events_from" not in rec:  # a full record (schema_version 1)
            self._events = list(state.get("events") or [])
            mem = rec.get("probe_memory")
            self._memory = copy.deepcopy((mem or {}).get("seats") or {}) if isinstance(mem, dict) else {}
            return rec
        start = int(rec["events_from"])
        if start and (self._events is None or len(self._events) < start):
            raise LogFormatError(f"{at}: snapshot continues {start} earlier events, but the records before it are missing")
        events = (self._events or [])[:start] + list(state.get("events") or [])
        self._events = events
        full = dict(rec)
        full["state"] = {**state, "events": list(events)}
        mem = rec.get("probe_memory")
        if isinstance(mem, dict) and mem.get("delta"):
            for seat, per in (mem.get("seats") or {}).items():
                self._memory.setdefault(seat, {}).update(per)
            full["probe_memory"] = {**{k: v for k, v in mem.items() if k not in ("seats", "delta")},
                                    "seats": copy.deepcopy(self._memory)}  # fmt: skip
        if rec.get("contexts") == "derived" and self.contexts is not None:
            try:
                contexts = self.contexts(full["state"])
            except Exception as exc:  # a foreign or damaged state: say where
                raise LogFormatError(f"{at}: cannot rebuild the seats' contexts: {type(exc).__name__}: {str(exc)[:160]}") from None
            full["players"] = [{**p, "messages": contexts.get(str(p.get("name")), [])} for p in rec.get("players") or []]
            full.pop("contexts", None)
        full.pop("events_from", None)
        return full


def iter_snapshots(path: str | Path, *, skip_corrupt: bool = False,
                   contexts: ContextBuilder | None = None) -> Iterator[dict[str, Any]]:  # fmt: skip
    """Full snapshot records of a ``state.jsonl`` (either schema version)."""
    dec = SnapshotDecoder(str(path), contexts)
    for i, rec in enumerate(iter_jsonl(path, skip_corrupt=skip_corrupt), start=1):
        yield dec.decode(rec, i)


def read_snapshots(path: str | Path, *, contexts: ContextBuilder | None = None) -> tuple[list[dict[str, Any]], bool]:
    """All full snapshot records and whether the file's last line was torn."""
    torn = False
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", TornLineWarning)
        rows = list(iter_snapshots(path, contexts=contexts))
    for w in caught:
        if issubclass(w.category, TornLineWarning):
            torn = True
        else:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return rows, torn
