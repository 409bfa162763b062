"""Where a probe call's outcome becomes a record: parsed, checked, normalised, compacted, appended.

One writer per probe file (a game's ``introspection.jsonl`` or a layer's): the in-game engine, the
completion of pending calls and ``probes ask`` (its Batch API path too) all write through it, so a
record means the same whichever path asked the question.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..backends.base import Completion
from ..logs.io import JsonlWriter
from ..logs.probe_codec import ProbeEncoder
from .dsl import Probe
from .probe_record import ProbeCost, probe_record
from .step_jobs import ChainValue, SeatJob


class RecordWriter:
    """Appends compact probe records to ``path`` and keeps their running totals (all, per probe, per seat)."""

    def __init__(self, path: str | Path, game_id: str, seats: list[str], templates: dict[str, str],
                 on_record: Callable[[dict[str, Any]], None] | None = None) -> None:  # fmt: skip
        self.game_id = game_id
        self.writer = JsonlWriter(Path(path))
        self.codec = ProbeEncoder(game_id, seats, templates)
        self.total = ProbeCost()
        self.by_probe: dict[str, ProbeCost] = {pid: ProbeCost() for pid in templates}
        self.by_seat: dict[str, ProbeCost] = {}
        self.on_record = on_record

    def write(self, job: SeatJob, probe: Probe, seq: int, question: str, c: Completion, raw_fallback: bool, started: float | None,
              finished: float | None, messages: list[dict[str, str]], values: dict[str, str | None] | None) -> ChainValue:  # fmt: skip
        rec, cv = probe_record(self.game_id, job, probe, seq, question, c, raw_fallback, started, finished, messages)
        self.writer.write_many(self.codec.encode(rec, probe.question_text() if question else None, values if question else None))
        for acc in (self.total, self.by_probe.setdefault(probe.id, ProbeCost()), self.by_seat.setdefault(job.seat, ProbeCost())):
            acc.count(rec)
        if self.on_record is not None:
            self.on_record(rec)
        return cv

    def close(self) -> None:
        self.writer.close()
