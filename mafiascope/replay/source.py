"""A recorded game as the source of forks: its setup, events, snapshots and probe records.

Everything a continuation needs is read from the game's own three JSONL files: the
configuration is rebuilt from ``setup.config`` (plus the battery in ``setup.probes``),
never from the caller's config, and the state from the ``state`` field of a
``state.jsonl`` record. Every problem is raised as :class:`ReplayError` with a message
meant for the user, before any game is started.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..config import ConfigError, GameConfig, config_from_setup, redacted_backends  # noqa: F401 - redacted_backends re-exported
from ..engine.snapshots import read_snapshots
from ..logs import BatterySnapshot, GameLog, LogFormatError, kinds, read_game
from ..logs.io import GAME_FILE, PROBE_FILE, STATE_FILE, TornLineWarning, is_game_dir, iter_probe_records, list_game_dirs
from ..logs.probe_codec import ProbeDecoder
from ..logs.schema import validate_game_id

Key = tuple[int, int]  # (round, msg_seq); msg_seq -1 = round end; (0, 0) = the start of the game
START: Key = (0, 0)


class ReplayError(ValueError):
    """A user-facing problem with a fork, experiment or resume request."""


def parse_key(text: str) -> Key:
    """``"1.8"`` -> (1, 8); ``"1.-1"`` / ``"1.end"`` -> (1, -1); ``"start"`` -> (0, 0)."""
    t = str(text).strip().lower()
    if t == "start":
        return START
    parts = t.split(".")
    if len(parts) != 2:
        raise ReplayError(f"step {text!r}: expected ROUND.SEQ such as 1.8 (1.-1 or 1.end = round end, 'start' = game start)")
    try:
        r = int(parts[0])
        s = -1 if parts[1] in ("end", "-1") else int(parts[1])
    except ValueError:
        raise ReplayError(f"step {text!r}: ROUND and SEQ must be integers (e.g. 1.8, 2.-1)") from None
    if r < 0 or s < -1:
        raise ReplayError(f"step {text!r}: round must be >= 0 and seq >= -1")
    return (r, s)


def fmt_key(key: Key | list[int]) -> str:
    r, s = key
    return "start" if (r, s) == START else f"{r}.{s}"


def find_game(game: str | Path, logs: str | Path | None = None) -> Path:
    """A game directory from a path, or from a game id looked up under ``logs``."""
    p = Path(game)
    if is_game_dir(p):
        return p
    if p.is_dir():
        raise ReplayError(f"{p}: not a game directory (no {GAME_FILE})")
    try:
        validate_game_id(str(game))
    except ValueError as exc:
        raise ReplayError(str(exc)) from None
    root = Path(logs or "logs")
    if is_game_dir(root / str(game)):
        return root / str(game)
    for d in list_game_dirs(root):
        if d.name == str(game):
            return d
    # prefix match, as ids are long
    hits = [d for d in list_game_dirs(root) if d.name.startswith(str(game))]
    if len(hits) == 1:
        return hits[0]
    if len(hits) > 1:
        raise ReplayError(f"game {game!r} is ambiguous under {root}: {', '.join(d.name for d in hits[:5])} ...")
    raise ReplayError(f"game {game!r} not found (looked under {root}; pass a game directory or --logs)")


def read_log(gdir: Path) -> GameLog:
    """The game's log (a torn last line skipped; a corrupt line elsewhere is a ReplayError naming file:line)."""
    try:
        with warnings.catch_warnings():  # a torn last line is a crash mid-write: expected, and said by the caller
            warnings.simplefilter("ignore", TornLineWarning)
            return read_game(gdir)
    except LogFormatError as exc:
        raise ReplayError(f"{gdir / GAME_FILE} is corrupt: {exc}") from None
    except OSError as exc:
        raise ReplayError(f"cannot read {gdir / GAME_FILE}: {exc}") from None


def _read_snapshots(path: Path, pending_ok: bool = False) -> tuple[list[dict[str, Any]], bool]:
    """Full snapshot records (compact ones rebuilt) and whether the last line was torn."""
    try:
        return read_snapshots(path, pending_ok)
    except LogFormatError as exc:
        raise ReplayError(f"{path} is corrupt: {exc}") from None
    except OSError as exc:
        raise ReplayError(f"cannot read {path}: {exc}") from None


@dataclass
class ForkPoint:
    key: Key
    phase: str
    stage: str
    remaining: list[str]
    alive: list[str]
    speaker: str | None
    kind: str | None
    step_index: int | None

    def as_dict(self) -> dict[str, Any]:
        return {
            "step": fmt_key(self.key), "round": self.key[0], "msg_seq": self.key[1], "phase": self.phase,
            "next_stage": self.stage, "remaining": self.remaining, "alive": len(self.alive),
            "speaker": self.speaker, "kind": self.kind,
        }  # fmt: skip


class ParentGame:
    """A recorded game loaded for forking (and resuming)."""

    def __init__(self, path: Path, *, need_snapshots: bool = True, pending_ok: bool = False):
        """``pending_ok``: read snapshots whose probe memory names records not written yet (a game that died
        while its probes drained); such entries carry ``pending: True`` (only for finding its resume point)."""
        self.dir = Path(path)
        self.probe_templates: dict[str, str] = {}  # filled by probe_records()
        self.log = read_log(self.dir)
        self.setup: dict[str, Any] = self.log.raw_setup
        self.game_id: str = self.log.game_id
        self.records = self.log.records
        self.finished = self.log.finished
        state_path = self.dir / STATE_FILE
        self.snapshots: list[dict[str, Any]] = []
        self.torn_state = False
        if state_path.is_file():
            self.snapshots, self.torn_state = _read_snapshots(state_path, pending_ok)
            self.snapshots = [s for s in self.snapshots if isinstance(s.get("state"), dict)]
        elif need_snapshots:
            raise ReplayError(
                f"game {self.game_id}: no {STATE_FILE} in {self.dir} (the game was played with snapshots off); it cannot be forked"
            )
        self._by_key = {(int(s["round"]), int(s["msg_seq"])): i for i, s in enumerate(self.snapshots)}

    @classmethod
    def load(cls, game: str | Path, logs: str | Path | None = None, *, need_snapshots: bool = True) -> "ParentGame":
        return cls(find_game(game, logs), need_snapshots=need_snapshots)

    # ------------------------------------------------------------------ lookups
    def keys(self) -> list[Key]:
        return [(int(s["round"]), int(s["msg_seq"])) for s in self.snapshots]

    def has(self, key: Key) -> bool:
        return key in self._by_key or (key == START and self._can_start())

    def snapshot(self, key: Key) -> dict[str, Any]:
        i = self._by_key.get(key)
        if i is None:
            hint = " (the last line of state.jsonl is torn: that step was not saved completely)" if self.torn_state else ""
            near = ", ".join(fmt_key(k) for k in self.keys()[-6:])
            raise ReplayError(
                f"game {self.game_id}: no snapshot at step {fmt_key(key)}{hint}; "
                f"use `mafiascope fork {self.game_id} --list` to see the fork points (last: {near or 'none'})"
            )
        return self.snapshots[i]

    def previous_key(self, key: Key) -> Key | None:
        """The snapshot just before step ``key`` (by file order), START for the first, None if impossible."""
        if key in self._by_key:
            i = self._by_key[key]
            if i > 0:
                return self.keys()[i - 1]
            return START if self._can_start() else None
        return None

    def utterance(self, key: Key) -> dict[str, Any] | None:
        for ev in self.records:
            if kinds.of(ev) in kinds.UTTERANCE_KINDS and ev.get("round") == key[0] and ev.get("msg_seq") == key[1]:
                return ev
        return None

    def fork_points(self) -> list[ForkPoint]:
        out = []
        for s in self.snapshots:
            key = (int(s["round"]), int(s["msg_seq"]))
            ev = self.utterance(key)
            pend = s.get("pending") or {}
            out.append(
                ForkPoint(key, str(s.get("phase", "")), str(pend.get("stage", "")), list(pend.get("remaining") or []),
                          list(s.get("alive") or []), ev.get("player") if ev else None, kinds.of(ev) if ev else None,
                          s.get("step_index"))  # fmt: skip
            )
        return out

    def inherited_records(self, n_events: int) -> list[dict[str, Any]]:
        """The parent's first ``n_events`` event records (the history a restored state carries)."""
        return [r for r in self.records if kinds.of(r) != kinds.GAME_OVER][:n_events]

    def probe_records(self) -> list[dict[str, Any]]:
        """The parent's probe records (full shape); their question templates land in ``probe_templates``
        so a copy can be written compact again (:class:`mafiascope.logs.probe_codec.ProbeEncoder`)."""
        path = self.dir / PROBE_FILE
        dec = ProbeDecoder()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", TornLineWarning)
                rows = list(iter_probe_records(self.dir, skip_corrupt=False, decoder=dec))
        except LogFormatError as exc:
            raise ReplayError(f"{path} is corrupt: {exc}") from None
        except OSError as exc:
            raise ReplayError(f"cannot read {path}: {exc}") from None
        self.probe_templates = dec.templates()
        return rows

    # ------------------------------------------------------------------ rebuilding
    def config(self) -> GameConfig:
        """The parent's configuration rebuilt from its own setup record."""
        battery = self.log.setup.probes.definitions() if self.log.setup.probes is not None else None
        try:
            return config_from_setup(self.setup, battery)
        except ConfigError as exc:
            raise ReplayError(str(exc)) from None

    def _can_start(self) -> bool:
        return isinstance(self.setup.get("config"), dict) and self.setup.get("seed") is not None


def battery_list(probes: Any) -> list[dict[str, Any]] | None:
    """The probe definitions recorded in ``setup.probes`` (every recorded shape: logs.BatterySnapshot), or None."""
    if probes is None:
        return None
    if not isinstance(probes, BatterySnapshot):
        try:
            probes = BatterySnapshot.model_validate(probes)
        except ValueError:  # pydantic ValidationError: not a battery we can read
            return None
    return probes.definitions() or None
