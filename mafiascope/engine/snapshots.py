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
so forks, resume, audit and conformance read one shape. The decoding itself lives in
:mod:`mafiascope.logs.snapshots` (logs sit below the engine); this module supplies the
context rebuild. A delta whose base is missing is an error naming the line.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ..logs.io import STATE_FILE
from ..logs.schema import SCHEMA_VERSION
from ..logs.snapshots import SnapshotDecoder as _Decoder
from ..logs.snapshots import iter_snapshots as _iter
from ..logs.snapshots import read_snapshots as _read
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


def derive_contexts(state: dict[str, Any]) -> dict[str, list[dict[str, str]]]:
    """Every seat's acting context rebuilt from a serialised state (the reader's ``contexts``)."""
    return all_contexts(GameState.model_validate(state))


class SnapshotDecoder(_Decoder):
    """The logs' decoder with the engine's context rebuild (full records, contexts included)."""

    def __init__(self, where: str = STATE_FILE, game_dir: str | Path | None = None) -> None:
        super().__init__(where, derive_contexts, game_dir)


def iter_snapshots(path: str | Path, *, skip_corrupt: bool = False) -> Iterator[dict[str, Any]]:
    """Full snapshot records of a ``state.jsonl`` (either schema version), contexts rebuilt."""
    return _iter(path, skip_corrupt=skip_corrupt, contexts=derive_contexts)


def read_snapshots(path: str | Path, pending_ok: bool = False) -> tuple[list[dict[str, Any]], bool]:
    """All full snapshot records and whether the file's last line was torn (``pending_ok``: logs.snapshots)."""
    return _read(path, contexts=derive_contexts, pending_ok=pending_ok)
