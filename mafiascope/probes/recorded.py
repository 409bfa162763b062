"""A recorded game seen by the probe engine: its probe steps, the seats' contexts at each, its battery.

Everything comes from the game's own files: the setup and events of ``game.jsonl`` (the state the
contexts are rebuilt from: :func:`mafiascope.engine.recorded.state_from_log`), the step lines of
``probe_steps.jsonl`` (which seats were probed where, and after how many events; for a game without
it, its snapshots or a replay of its logged moves through its rules), the battery
recorded in ``setup.probes``, and the answers already in ``introspection.jsonl``. Used to finish
calls a crash left pending (:mod:`.pending`) and to ask a battery of a finished game.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..config import ConfigError, GameConfig, config_from_setup
from ..engine.phases.base import ProbeStep
from ..engine.recorded import NotRebuildable, state_from_log, steps_from_log
from ..engine.state import GameState
from ..logs import BatterySnapshot, LogFormatError, iter_probe_records, read_game
from ..logs.io import TornLineWarning
from ..logs.probe_lines import chain_value
from ..logs import kinds as K
from ..logs.probe_steps import ProbeSteps, StepLine, read_probe_steps
from .dsl import Battery, Probe
from .step_jobs import ChainValue, applies, step_kind

CallKey = tuple[int, str, str]  # (step index, seat name, probe id)


class RecordError(ValueError):
    """A game whose probe steps or contexts cannot be rebuilt (one line naming the game and why)."""


def probe_step(line: StepLine) -> ProbeStep:
    """The engine's step from its ``probe_steps.jsonl`` line."""
    return ProbeStep(line.round, line.public_msg_seq, line.phase, list(line.seats), speaker=line.speaker, step_index=line.k,
                     events=line.events, alive=list(line.alive), ts=line.ts)  # fmt: skip


def step_calls(battery: Battery, step: ProbeStep) -> list[tuple[str, Probe]]:
    """(seat, probe) of every call the battery asks at the step, in the engine's order."""
    kind = step_kind(step)
    return [(seat, p) for seat in step.seats for p in battery.active if applies(p, kind, seat == step.speaker)]


def answered_calls(game_dir: str | Path) -> dict[CallKey, ChainValue]:
    """Every call ``introspection.jsonl`` holds a record of (answered, failed or skipped), with what it
    gives a later chained question."""
    out: dict[CallKey, ChainValue] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TornLineWarning)  # a crash mid-write: that call is pending again
        for rec in iter_probe_records(game_dir, skip_corrupt=True):
            k, name, pid = rec.get("step_index"), rec.get("player_name"), rec.get("probe_id")
            if isinstance(k, int) and isinstance(name, str) and isinstance(pid, str):
                text, raw = chain_value(rec)
                out[(k, name, pid)] = ChainValue(text, raw)
    return out


@dataclass
class RecordedGame:
    dir: Path
    game_id: str
    setup: dict[str, Any]
    records: list[dict[str, Any]]
    steps: ProbeSteps
    finished: bool  # game.jsonl ends with game_over

    @classmethod
    def load(cls, game_dir: str | Path) -> "RecordedGame":
        gdir = Path(game_dir)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", TornLineWarning)
                log = read_game(gdir, skip_corrupt=True)
                steps = read_probe_steps(gdir)
        except (OSError, LogFormatError) as exc:
            raise RecordError(f"{gdir.name}: {exc}") from None
        return cls(gdir, log.game_id, log.raw_setup, log.records, steps, log.finished)

    def state(self) -> GameState:
        try:
            return state_from_log(self.setup, self.records)
        except NotRebuildable as exc:
            raise RecordError(str(exc)) from None

    def config(self) -> GameConfig:
        probes = self.setup.get("probes")
        try:
            battery = BatterySnapshot.model_validate(probes).definitions() if isinstance(probes, dict) else None
            cfg = config_from_setup(self.setup, battery)
        except (ConfigError, ValueError) as exc:
            raise RecordError(str(exc)) from None
        cfg.probes.enabled = True
        return cfg

    def probe_steps(self, upto: int | None = None) -> list[ProbeStep]:
        return [probe_step(s) for s in self.steps.steps if upto is None or s.k <= upto]

    # ------------------------------------------------------------------ asking a finished game
    @property
    def original(self) -> bool:
        """Recorded by the original MafiaScope (its setup has no schema_version), maybe imported."""
        return "schema_version" not in self.setup

    @property
    def language(self) -> str:
        return str(self.setup.get("language") or (self.setup.get("config") or {}).get("language") or "en")

    def seat_names(self) -> list[str]:
        return [str(p.get("name")) for p in self.setup.get("players") or [] if isinstance(p, dict)]

    def seat_backends(self) -> list[str]:
        return [str(p.get("backend")) for p in self.setup.get("players") or [] if isinstance(p, dict)]

    def state_for_asking(self) -> GameState:
        """The state the contexts are rebuilt from; an original game's seats only (its contexts are recorded)."""
        if not self.original:
            return self.state()
        setup = {**self.setup, "rules": self.setup.get("rules") or {}}
        try:
            return state_from_log(setup, [])
        except NotRebuildable as exc:
            raise RecordError(str(exc)) from None

    def asking_steps(self) -> list[ProbeStep]:
        """The game's probe steps with what each seat knew there: ``probe_steps.jsonl``; for a game of ours
        older than it, its snapshots (the events each holds), else the steps its rules pass replaying its
        logged moves (:meth:`steps_from_log`); for an original game, the contexts its snapshots recorded.
        Else a :class:`RecordError` naming the game."""
        if self.steps.steps:
            return self.probe_steps()
        from ..logs.io import STATE_FILE

        if not (self.dir / STATE_FILE).is_file():
            if self.original:
                raise RecordError(f"game {self.game_id}: no probe_steps.jsonl and no snapshots (state.jsonl): the seats' contexts "
                                  "at its steps cannot be rebuilt")  # fmt: skip
            return self.steps_from_log()
        try:
            snaps = _read_snapshots(self.dir)
        except (OSError, LogFormatError) as exc:
            raise RecordError(f"game {self.game_id}: {exc}") from None
        speakers = {(r.get("round"), r.get("msg_seq")): r.get("player") for r in self.records if K.of(r) in K.UTTERANCE_KINDS}
        steps = _steps_of_original(snaps, speakers) if self.original else _steps_of_snapshots(snaps, speakers, self.dir)
        if not steps:
            raise RecordError(f"game {self.game_id}: its snapshots hold no probe step whose contexts can be rebuilt")
        return steps

    def steps_from_log(self) -> list[ProbeStep]:
        """The steps the engine finds replaying the game's logged moves (:func:`~mafiascope.engine.recorded.steps_from_log`),
        each stamped with its probe records' time where it has any."""
        try:
            steps = steps_from_log(self.setup, self.records)
        except NotRebuildable as exc:
            raise RecordError(f"{exc} (and it has no probe_steps.jsonl nor snapshots)") from None
        times = _step_times(self.dir)
        for s in steps:
            s.ts = times.get(s.step_index, s.ts)
        return steps


def _step_times(game_dir: Path) -> dict[int, float]:
    """The time of each step that has probe records (the records' ``timestamp`` is the step's capture time)."""
    times: dict[int, float] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TornLineWarning)
        for rec in iter_probe_records(game_dir, skip_corrupt=True):
            k, t = rec.get("step_index"), rec.get("timestamp")
            if isinstance(k, int) and isinstance(t, (int, float)):
                times.setdefault(k, float(t))
    return times


def _read_snapshots(game_dir: Path) -> list[dict[str, Any]]:
    from ..logs.io import STATE_FILE
    from ..logs.snapshots import iter_snapshots

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TornLineWarning)
        return list(iter_snapshots(game_dir / STATE_FILE, skip_corrupt=True, pending_ok=True))


def _seats_of(phase: str, speaker: Any, alive: list[str]) -> list[str]:
    """Who the engine probes at a step: the actor alone after a night action, else the living seats."""
    if speaker and phase.startswith("night") and phase != "night_analysis":
        return [str(speaker)]
    return list(alive)


def _steps_of_snapshots(snaps: list[dict[str, Any]], speakers: dict[Any, Any], game_dir: Path) -> list[ProbeStep]:
    """A game of ours without probe_steps.jsonl: a step per snapshot that opened one (the first snapshot of each
    step index), its contexts from the events that snapshot holds, its time from the step's probe records."""
    times = _step_times(game_dir)
    out, seen = [], set()
    for s in snaps:
        k, state = s.get("step_index"), s.get("state")
        if not isinstance(k, int) or k < 1 or k in seen or not isinstance(state, dict):
            continue
        seen.add(k)
        rnd, seq, phase = int(s["round"]), int(s["msg_seq"]), str(s.get("phase") or "")
        alive = [str(a) for a in s.get("alive") or []]
        speaker = speakers.get((rnd, seq)) if seq != -1 else None
        out.append(ProbeStep(rnd, seq, phase, _seats_of(phase, speaker, alive), speaker=speaker, step_index=k,
                             events=len(state.get("events") or []), alive=alive, ts=times.get(k, float(s.get("ts") or 0.0))))  # fmt: skip
    return out


def _steps_of_original(snaps: list[dict[str, Any]], speakers: dict[Any, Any]) -> list[ProbeStep]:
    """An original MafiaScope game: a step per snapshot, numbered in order, its seats' contexts as recorded
    (``players[].messages``; a trailing user message holds the observations not yet answered)."""
    from ..engine.observation import Context

    out = []
    for i, s in enumerate(snaps, start=1):
        players = [p for p in s.get("players") or [] if isinstance(p, dict) and isinstance(p.get("messages"), list)]
        if not players:
            continue
        contexts = {}
        for p in players:
            msgs = [{"role": str(m.get("role")), "content": str(m.get("content") or "")} for m in p["messages"] if isinstance(m, dict)]
            pending: list[str] = []
            if msgs and msgs[-1]["role"] == "user":
                pending = msgs.pop()["content"].split("\n")
            contexts[str(p.get("name"))] = Context(msgs, pending)
        rnd, seq, phase = int(s.get("round") or 0), int(s.get("msg_seq") or 0), str(s.get("phase") or "")
        alive = [str(a) for a in s.get("alive") or [] if str(a) in contexts]
        speaker = speakers.get((rnd, seq)) if seq != -1 else None
        out.append(ProbeStep(rnd, seq, phase, _seats_of(phase, speaker, alive), speaker=speaker, step_index=i, alive=alive,
                             ts=float(s.get("ts") or 0.0), contexts=contexts))  # fmt: skip
    return out
