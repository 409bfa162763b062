"""Compact snapshots (``state.jsonl``): each record stores what the previous ones do not.

A snapshot is everything needed to continue a game from a step (the state, the seats'
acting contexts, the probe chaining memory). Written in full every step, the file grew
quadratically with the game (every context and the whole event list repeated at every
step: 1.6 MB for a short probed game). Since schema_version 2 a record holds:

* ``state`` with only the events appended since the previous record
  (``events_from`` = how many came before);
* ``players`` without ``messages``: a seat's acting context is a function of the state
  (:func:`~mafiascope.engine.observation.context_for`; the conformance checks assert it
  for every snapshot), so the reader rebuilds it (``contexts: "derived"``);
* ``probe_memory`` with only the seats' entries that changed (``delta: true``).

:func:`iter_snapshots` yields full records (schema_version 1 shape) from either version,
so forks, resume, audit and conformance read one shape. A delta whose base is missing
(lines removed from the middle of the file) is an error naming the line.
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..logs.io import LogFormatError, TornLineWarning, iter_jsonl
from ..logs.schema import SCHEMA_VERSION
from .observation import all_contexts
from .state import GameState


class SnapshotEncoder:
    """Turns full snapshot records into compact ones, in write order."""

    def __init__(self) -> None:
        self._events = 0
        self._memory: dict[str, dict[str, Any]] = {}

    def encode(self, record: dict[str, Any]) -> dict[str, Any]:
        out = dict(record)
        state = dict(record["state"])
        events = state.get("events") or []
        start = self._events if self._events <= len(events) else 0
        state["events"] = events[start:]
        out["state"] = state
        out["events_from"] = start
        self._events = len(events)
        out["players"] = [{k: v for k, v in p.items() if k != "messages"} for p in record.get("players") or []]
        out["contexts"] = "derived"
        mem = record.get("probe_memory")
        if isinstance(mem, dict):
            seats = mem.get("seats") or {}
            changed: dict[str, dict[str, Any]] = {}
            for seat, per in seats.items():
                for pid, entry in per.items():
                    if self._memory.get(seat, {}).get(pid) != entry:
                        changed.setdefault(seat, {})[pid] = entry
            out["probe_memory"] = {**{k: v for k, v in mem.items() if k != "seats"}, "seats": changed, "delta": True}
            self._memory = copy.deepcopy(seats)
        out["schema_version"] = SCHEMA_VERSION
        return out


class SnapshotDecoder:
    """Rebuilds full records from compact ones (and passes full ones through)."""

    def __init__(self, where: str = "state.jsonl") -> None:
        self.where = where
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
                                    "seats": copy.deepcopy(self._memory)}
        if rec.get("contexts") == "derived":
            try:
                gs = GameState.model_validate(full["state"])
                contexts = all_contexts(gs)
            except Exception as exc:  # a foreign or damaged state: say where
                raise LogFormatError(f"{at}: cannot rebuild the seats' contexts: {type(exc).__name__}: {str(exc)[:160]}") from None
            full["players"] = [{**p, "messages": contexts.get(str(p.get("name")), [])} for p in rec.get("players") or []]
            full.pop("contexts", None)
        full.pop("events_from", None)
        return full


def iter_snapshots(path: str | Path, *, skip_corrupt: bool = False) -> Iterator[dict[str, Any]]:
    """Full snapshot records of a ``state.jsonl`` (either schema version)."""
    dec = SnapshotDecoder(str(path))
    for i, rec in enumerate(iter_jsonl(path, skip_corrupt=skip_corrupt), start=1):
        yield dec.decode(rec, i)


def read_snapshots(path: str | Path) -> tuple[list[dict[str, Any]], bool]:
    """All full snapshot records and whether the file's last line was torn."""
    torn = False
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", TornLineWarning)
        rows = list(iter_snapshots(path))
    for w in caught:
        if issubclass(w.category, TornLineWarning):
            torn = True
        else:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return rows, torn
