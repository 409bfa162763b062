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
* ``probe_memory`` with only the seats' entries that changed (``delta: true``); since
  schema_version 3 an entry whose value is what its probe record in ``introspection.jsonl``
  gives (:func:`mafiascope.logs.probe_codec.chain_value`, checked when it is written) is stored
  as that record's step index alone and rebuilt from the record, so answers are not stored twice.

:func:`iter_snapshots` yields full records (schema_version 1 shape) from either version,
so forks, resume, audit and conformance read one shape. A delta whose base is missing
(lines removed from the middle of the file) is an error naming the line.
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ..logs.io import LogFormatError, TornLineWarning, iter_jsonl, iter_probe_records
from ..logs.probe_codec import ProbeDecoder
from ..logs.schema import SCHEMA_VERSION
from .observation import all_contexts
from .state import GameState


ChainLookup = Callable[[str, str, int], "tuple[str | None, bool] | None"]


class SnapshotEncoder:
    """Turns full snapshot records into compact ones, in write order.

    ``chain_value(seat, probe_id, step_index)`` gives (text, raw) of a probe record in this game's
    ``introspection.jsonl`` (the probe engine's, or the encoder that wrote a copied prefix); a memory
    entry equal to it is stored as the record's step index."""

    def __init__(self, chain_value: ChainLookup | None = None) -> None:
        self._chain = chain_value
        self._events = 0
        self._memory: dict[str, dict[str, Any]] = {}
        self._state: dict[str, Any] = {}
        self._players: list[dict[str, Any]] | None = None

    def encode(self, record: dict[str, Any]) -> dict[str, Any]:
        out = dict(record)
        state = dict(record["state"])
        events = state.get("events") or []
        start = self._events if self._events <= len(events) else 0
        state["events"] = events[start:]
        same = [k for k, v in state.items() if k != "events" and k in self._state and self._state[k] == v]
        self._state = {k: v for k, v in state.items() if k != "events"}
        for k in same:
            del state[k]
        if same:
            out["state_same"] = same
        out["state"] = state
        out["events_from"] = start
        self._events = len(events)
        players = [{k: v for k, v in p.items() if k != "messages"} for p in record.get("players") or []]
        if players and players == self._players:
            del out["players"]
            out["players_same"] = True
        else:
            out["players"] = players
        self._players = players
        out["contexts"] = "derived"
        mem = record.get("probe_memory")
        if isinstance(mem, dict):
            seats = mem.get("seats") or {}
            changed: dict[str, dict[str, Any]] = {}
            for seat, per in seats.items():
                for pid, entry in per.items():
                    if self._memory.get(seat, {}).get(pid) != entry:
                        changed.setdefault(seat, {})[pid] = self._ref(seat, pid, entry)
            out["probe_memory"] = {**{k: v for k, v in mem.items() if k != "seats"}, "seats": changed, "delta": True}
            self._memory = copy.deepcopy(seats)
        out["schema_version"] = SCHEMA_VERSION
        return out

    def _ref(self, seat: str, pid: str, entry: Any) -> Any:
        """A memory entry whose value its probe record gives, as that record's step index."""
        if self._chain is None or not isinstance(entry, dict) or set(entry) != {"step_index", "value", "raw"}:
            return entry
        k = entry["step_index"]
        if not isinstance(k, int) or isinstance(k, bool):
            return entry
        hit = self._chain(seat, pid, k)
        return k if hit is not None and hit == (entry["value"], entry["raw"]) else entry


class SnapshotDecoder:
    """Rebuilds full records from compact ones (and passes full ones through).

    ``game_dir`` holds the ``introspection.jsonl`` that memory entries stored as step indexes
    refer to (read once, when the first such entry is met)."""

    def __init__(self, where: str = "state.jsonl", game_dir: str | Path | None = None) -> None:
        self.where = where
        self.game_dir = Path(game_dir) if game_dir is not None else None
        self._probes: ProbeDecoder | None = None
        self._events: list[dict[str, Any]] | None = None
        self._memory: dict[str, dict[str, Any]] = {}
        self._state: dict[str, Any] | None = None  # the previous record's state (events aside) and players
        self._players: list[dict[str, Any]] | None = None
        self._order: list[str] | None = None

    def _entry(self, seat: str, pid: str, entry: Any, at: str) -> Any:
        if isinstance(entry, dict) or isinstance(entry, bool) or not isinstance(entry, int):
            return entry
        hit = None
        for attempt in range(2):  # the file may have grown since it was read (a game being written)
            if self._probes is None or attempt:
                if self.game_dir is None:
                    break
                self._probes = ProbeDecoder()
                for _ in iter_probe_records(self.game_dir, decoder=self._probes):
                    pass
            hit = self._probes.chain_value(seat, pid, entry)
            if hit is not None:
                break
        if hit is None:
            raise LogFormatError(f"{at}: probe memory of {seat!r:.40} for {pid!r:.40} refers to its record of step {entry}, "
                                 "which introspection.jsonl does not hold")  # fmt: skip
        return {"step_index": entry, "value": hit[0], "raw": hit[1]}

    def decode(self, rec: dict[str, Any], line: int | None = None) -> dict[str, Any]:
        state = rec.get("state")
        if not isinstance(state, dict):
            return rec
        at = f"{self.where}:{line}" if line is not None else self.where
        if "events_from" not in rec:  # a full record (schema_version 1)
            self._events = list(state.get("events") or [])
            self._state = {k: v for k, v in state.items() if k != "events"}
            self._order = list(state)
            self._players = [{k: v for k, v in p.items() if k != "messages"} for p in rec.get("players") or [] if isinstance(p, dict)]
            mem = rec.get("probe_memory")
            self._memory = copy.deepcopy((mem or {}).get("seats") or {}) if isinstance(mem, dict) else {}
            return rec
        start = int(rec["events_from"])
        if start and (self._events is None or len(self._events) < start):
            raise LogFormatError(f"{at}: snapshot continues {start} earlier events, but the records before it are missing")
        events = (self._events or [])[:start] + list(state.get("events") or [])
        self._events = events
        full = dict(rec)
        same = rec.get("state_same") or []
        if (same or rec.get("players_same")) and self._state is None:
            raise LogFormatError(f"{at}: snapshot repeats fields of the record before it, but that record is missing")
        prev = self._state or {}
        st = {**state, **{k: copy.deepcopy(prev[k]) for k in same if k in prev}, "events": list(events)}
        if self._order is not None and set(st) == set(self._order):
            st = {k: st[k] for k in self._order}  # the writer's key order
        full["state"] = st
        self._order = list(st)
        self._state = {k: v for k, v in st.items() if k != "events"}
        if rec.get("players_same"):
            full["players"] = copy.deepcopy(self._players or [])
        self._players = [{k: v for k, v in p.items() if k != "messages"} for p in full.get("players") or [] if isinstance(p, dict)]
        full.pop("state_same", None)
        full.pop("players_same", None)
        mem = rec.get("probe_memory")
        if isinstance(mem, dict) and mem.get("delta"):
            for seat, per in (mem.get("seats") or {}).items():
                self._memory.setdefault(seat, {}).update({pid: self._entry(seat, pid, e, at) for pid, e in per.items()})
            full["probe_memory"] = {**{k: v for k, v in mem.items() if k not in ("seats", "delta")},
                                    "seats": copy.deepcopy(self._memory)}
        if rec.get("contexts") == "derived":
            try:
                gs = GameState.model_validate(full["state"])
                contexts = all_contexts(gs)
            except Exception as exc:  # a foreign or damaged state: say where
                raise LogFormatError(f"{at}: cannot rebuild the seats' contexts: {type(exc).__name__}: {str(exc)[:160]}") from None
            full["players"] = [{**p, "messages": contexts.get(str(p.get("name")), [])} for p in full.get("players") or []]
            full.pop("contexts", None)
        full.pop("events_from", None)
        return full


def iter_snapshots(path: str | Path, *, skip_corrupt: bool = False) -> Iterator[dict[str, Any]]:
    """Full snapshot records of a ``state.jsonl`` (either schema version)."""
    dec = SnapshotDecoder(str(path), Path(path).parent)
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
