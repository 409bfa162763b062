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
so forks, resume, audit and conformance read one shape. The decoding itself lives in
:mod:`mafiascope.logs.snapshots` (logs sit below the engine); this module supplies the
context rebuild. A delta whose base is missing is an error naming the line.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..logs.io import STATE_FILE
from ..logs.schema import SCHEMA_VERSION
from ..logs.snapshots import SnapshotDecoder as _Decoder
from ..logs.snapshots import iter_snapshots as _iter
from ..logs.snapshots import read_snapshots as _read
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


def derive_contexts(state: dict[str, Any]) -> dict[str, list[dict[str, str]]]:
    """Every seat's acting context rebuilt from a serialised state (the reader's ``contexts``)."""
    return all_contexts(GameState.model_validate(state))


class SnapshotDecoder(_Decoder):
    """The logs' decoder with the engine's context rebuild (full records, contexts included)."""

    def __init__(self, where: str = STATE_FILE) -> None:
        super().__init__(where, derive_contexts)


def iter_snapshots(path: str | Path, *, skip_corrupt: bool = False) -> Iterator[dict[str, Any]]:
    """Full snapshot records of a ``state.jsonl`` (either schema version), contexts rebuilt."""
    return _iter(path, skip_corrupt=skip_corrupt, contexts=derive_contexts)


def read_snapshots(path: str | Path) -> tuple[list[dict[str, Any]], bool]:
    """All full snapshot records and whether the file's last line was torn."""
    return _read(path, contexts=derive_contexts)
