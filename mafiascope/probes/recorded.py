"""A recorded game seen by the probe engine: its probe steps, the seats' contexts at each, its battery.

Everything comes from the game's own files: the setup and events of ``game.jsonl`` (the state the
contexts are rebuilt from: :func:`mafiascope.engine.recorded.state_from_log`), the step lines of
``probe_steps.jsonl`` (which seats were probed where, and after how many events), the battery
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
from ..engine.recorded import NotRebuildable, state_from_log
from ..engine.state import GameState
from ..logs import BatterySnapshot, LogFormatError, iter_probe_records, read_game
from ..logs.io import TornLineWarning
from ..logs.probe_lines import chain_value
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
