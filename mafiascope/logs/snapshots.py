"""Reading ``state.jsonl``: compact (schema_version 2 and 3) snapshot records rebuilt to full ones.

The writer (mafiascope.engine.snapshots.SnapshotEncoder) stores per record only the events
appended since the previous record (``events_from``), only the probe-memory entries that
changed (``delta``; since schema 3 an entry that its probe record in ``introspection.jsonl``
gives is stored as that record's step index), fields and players unchanged since the previous
record only by name (``state_same``, ``players_same``), and no acting contexts (``contexts: "derived"``: they are a function of
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

from .io import STATE_FILE, LogFormatError, TornLineWarning, iter_jsonl, iter_probe_records
from .probe_codec import ProbeDecoder

# state dict -> {seat name: acting context (chat messages)}; may raise on a damaged state
ContextBuilder = Callable[[dict[str, Any]], dict[str, list[dict[str, str]]]]


class SnapshotDecoder:
    """Rebuilds full records from compact ones (and passes full ones through).

    ``game_dir`` holds the ``introspection.jsonl`` that memory entries stored as step indexes
    refer to (read once, when the first such entry is met)."""

    def __init__(self, where: str = STATE_FILE, contexts: ContextBuilder | None = None,
                 game_dir: str | Path | None = None, pending_ok: bool = False) -> None:  # fmt: skip
        self.where = where
        self.pending_ok = pending_ok  # a reference to a record not written yet reads as {"pending": True, ...}
        self.contexts = contexts
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
        if hit is None and self.pending_ok:
            return {"step_index": entry, "value": None, "raw": False, "pending": True}
        if hit is None:
            raise LogFormatError(f"{at}: probe memory of {seat!r:.40} for {pid!r:.40} refers to its record of step {entry}, "
                                 "which introspection.jsonl does not hold (its answer may be pending: a game still running, "
                                 "or interrupted, which `mafiascope resume` finishes)")  # fmt: skip
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
            self._players = [
                {k: v for k, v in p.items() if k != "messages"} for p in rec.get("players") or [] if isinstance(p, dict)
            ]
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
        self._players = [
            {k: v for k, v in p.items() if k != "messages"} for p in full.get("players") or [] if isinstance(p, dict)
        ]
        full.pop("state_same", None)
        full.pop("players_same", None)
        mem = rec.get("probe_memory")
        if isinstance(mem, dict) and mem.get("delta"):
            for seat, per in (mem.get("seats") or {}).items():
                self._memory.setdefault(seat, {}).update({pid: self._entry(seat, pid, e, at) for pid, e in per.items()})
            full["probe_memory"] = {
                **{k: v for k, v in mem.items() if k not in ("seats", "delta")},
                "seats": copy.deepcopy(self._memory),
            }
        if rec.get("contexts") == "derived" and self.contexts is not None:
            try:
                contexts = self.contexts(full["state"])
            except Exception as exc:  # a foreign or damaged state: say where
                raise LogFormatError(
                    f"{at}: cannot rebuild the seats' contexts: {type(exc).__name__}: {str(exc)[:160]}"
                ) from None
            full["players"] = [{**p, "messages": contexts.get(str(p.get("name")), [])} for p in full.get("players") or []]
            full.pop("contexts", None)
        full.pop("events_from", None)
        return full


def iter_snapshots(path: str | Path, *, skip_corrupt: bool = False, contexts: ContextBuilder | None = None,
                   pending_ok: bool = False) -> Iterator[dict[str, Any]]:  # fmt: skip
    """Full snapshot records of a ``state.jsonl`` (either schema version). ``pending_ok``: a memory entry
    whose probe record is not written yet (a game interrupted while its probes drained) is
    ``{"step_index": k, "value": None, "raw": False, "pending": True}`` instead of an error."""
    dec = SnapshotDecoder(str(path), contexts, Path(path).parent, pending_ok)
    for i, rec in enumerate(iter_jsonl(path, skip_corrupt=skip_corrupt), start=1):
        yield dec.decode(rec, i)


def read_snapshots(path: str | Path, *, contexts: ContextBuilder | None = None,
                   pending_ok: bool = False) -> tuple[list[dict[str, Any]], bool]:  # fmt: skip
    """All full snapshot records and whether the file's last line was torn."""
    torn = False
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", TornLineWarning)
        rows = list(iter_snapshots(path, contexts=contexts, pending_ok=pending_ok))
    for w in caught:
        if issubclass(w.category, TornLineWarning):
            torn = True
        else:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return rows, torn
