"""One game's logs as one typed object: :func:`read_game` reads a game directory once.

``GameLog.setup`` is the typed :class:`~mafiascope.logs.schema.Setup` (its battery a
:class:`~mafiascope.logs.battery.BatterySnapshot`); ``records`` are game.jsonl's other
records as read (dicts, file order) and ``events`` the same records typed by kind; probe
records come through :func:`~mafiascope.logs.io.iter_probe_records` on first use; snapshots
are decoded from state.jsonl only when asked for. ``timeline()`` is the step model every
viewer shares (:class:`~mafiascope.logs.timeline.Timeline`).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, TypeVar

from pydantic import ValidationError

from . import kinds as K
from .io import (
    GAME_FILE,
    PROBE_FILE,
    STATE_FILE,
    LogFormatError,
    TornLineWarning,
    iter_probe_records,
    list_game_dirs,
    read_jsonl_lines,
)
from .schema import Event, GameOver, ProbeRecord, Setup, Snapshot, parse_event
from .snapshots import ContextBuilder, iter_snapshots
from .timeline import Timeline

E = TypeVar("E", bound=Event)


class MissingSetupError(LogFormatError):
    """game.jsonl is empty or does not start with a setup record (a game not started, or not a game)."""


class InvalidRecordWarning(TornLineWarning):
    """A record that is valid JSON but not a valid record of its kind was skipped."""


@dataclass
class GameLog:
    dir: Path
    raw_setup: dict[str, Any]  # the setup record as read (untyped)
    records: list[dict[str, Any]]  # game.jsonl after the setup record, as read (file order)
    lines: list[int] = field(default_factory=list)  # each record's line in game.jsonl
    skip_corrupt: bool = False
    setup_line: int = 1

    @cached_property
    def setup(self) -> Setup:
        """The typed setup record, validated on first use (LogFormatError naming file:line if it does not)."""
        try:
            return Setup.model_validate(self.raw_setup)
        except ValidationError as exc:
            raise LogFormatError(f"{self.dir / GAME_FILE}:{self.setup_line}: invalid setup record: {_first_error(exc)}") from None

    @property
    def game_id(self) -> str:
        gid = self.raw_setup.get("game_id")
        return gid if isinstance(gid, str) and gid else self.setup.game_id

    @property
    def names(self) -> list[str]:
        return [p.name for p in self.setup.players]

    @property
    def roles(self) -> dict[str, str]:
        return {p.name: p.role for p in self.setup.players}

    @cached_property
    def events(self) -> list[Event]:
        """The records typed by kind (Utterance, NightKill, VoteTally, GameOver, ...; unknown kinds: Event)."""
        out: list[Event] = []
        for line, rec in zip(self.lines, self.records, strict=False):
            try:
                ev = parse_event(rec if "game_id" in rec else {**rec, "game_id": self.game_id})  # hand-made logs omit it
            except ValidationError as exc:
                msg = f"{self.dir / GAME_FILE}:{line}: invalid {rec.get('kind')!s:.40} record: {_first_error(exc)}"
                if not self.skip_corrupt:
                    raise LogFormatError(msg) from None
                warnings.warn(msg + " (skipped)", InvalidRecordWarning, stacklevel=2)
                continue
            out.append(ev)  # type: ignore[arg-type]
        return out

    def events_of(self, *types: type[E]) -> list[E]:
        """The events of the given model classes, e.g. ``log.events_of(NightKill, DayEliminate)``."""
        return [e for e in self.events if isinstance(e, types)]

    def records_of(self, *kinds: str) -> list[dict[str, Any]]:
        """The raw records of the given kinds (constants in mafiascope.logs.kinds)."""
        return [r for r in self.records if r.get("kind") in kinds]

    @property
    def game_over(self) -> GameOver | None:
        over = next((r for r in reversed(self.records) if r.get("kind") == K.GAME_OVER), None)
        return GameOver.model_validate(over) if over is not None else None

    @property
    def finished(self) -> bool:
        return any(r.get("kind") == K.GAME_OVER for r in self.records)

    @cached_property
    def probe_dicts(self) -> list[dict[str, Any]]:
        """The probe records as stored (expanded by iter_probe_records), call order."""
        return list(iter_probe_records(self.dir))

    @cached_property
    def probes(self) -> list[ProbeRecord]:
        """The probe records typed; a record that does not validate is skipped with a warning."""
        out = []
        for n, rec in enumerate(self.probe_dicts, start=1):
            try:
                out.append(ProbeRecord.model_validate(rec))
            except ValidationError as exc:
                warnings.warn(
                    f"{self.dir / PROBE_FILE}: record {n}: {_first_error(exc)} (skipped)", InvalidRecordWarning, stacklevel=2
                )
        return out

    @property
    def has_snapshots(self) -> bool:
        return (self.dir / STATE_FILE).is_file()

    def iter_snapshot_dicts(self, contexts: ContextBuilder | None = None) -> Iterator[dict[str, Any]]:
        """Full snapshot records (compact ones rebuilt), read now. ``contexts`` rebuilds the seats'
        acting contexts of compact records (``mafiascope.engine.snapshots.derive_contexts``); without
        it they keep ``contexts == "derived"`` and no messages."""
        if self.has_snapshots:
            yield from iter_snapshots(self.dir / STATE_FILE, skip_corrupt=self.skip_corrupt, contexts=contexts)

    def snapshots(self, contexts: ContextBuilder | None = None) -> list[Snapshot]:
        """The snapshots typed (read from state.jsonl on each call: they are large)."""
        return [Snapshot.model_validate(s) for s in self.iter_snapshot_dicts(contexts)]

    def timeline(self) -> Timeline:
        return self._timeline

    @cached_property
    def _timeline(self) -> Timeline:
        return Timeline.build(self.names, self.records, self.probe_dicts)


def read_game(path: str | Path, *, skip_corrupt: bool = False) -> GameLog:
    """Read a game directory (or its game.jsonl) once. The first record must be the setup
    (:class:`MissingSetupError` otherwise).

    A torn last line is skipped with a warning naming file:line; a corrupt line elsewhere is a
    :class:`LogFormatError` naming file:line unless ``skip_corrupt`` (then skipped with a warning).
    Records are typed on first use of ``setup`` / ``events``: one that does not validate is a
    LogFormatError naming file:line (``events`` with ``skip_corrupt``: skipped with a warning)."""
    gdir = Path(path)
    if gdir.name == GAME_FILE and gdir.is_file():
        gdir = gdir.parent
    gfile = gdir / GAME_FILE
    if not gfile.is_file():
        raise FileNotFoundError(f"{gdir}: not a game directory (no {GAME_FILE})")
    numbered = read_jsonl_lines(gfile, skip_corrupt=skip_corrupt)
    if not numbered or numbered[0][1].get("kind") != K.SETUP:
        line = numbered[0][0] if numbered else 1
        raise MissingSetupError(f"{gfile}:{line}: the first record is not a setup record")
    line, first = numbered[0]
    rest = numbered[1:]
    return GameLog(gdir, first, [r for _, r in rest], [n for n, _ in rest], skip_corrupt, line)


def iter_games(root: str | Path, *, skip_corrupt: bool = False) -> Iterator[GameLog]:
    """Every game under ``root`` (the root itself, its children or grandchildren), by name."""
    for d in list_game_dirs(root):
        yield read_game(d, skip_corrupt=skip_corrupt)


def _first_error(exc: ValidationError) -> str:
    err = exc.errors()[0]
    loc = ".".join(str(x) for x in err.get("loc", ()))
    return f"{loc}: {err.get('msg')}" if loc else str(err.get("msg"))
