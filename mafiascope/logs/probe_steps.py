"""``probe_steps.jsonl``: a game's probe points, one line per step, and the end of its acts.

    {"kind": "step", "k": 7, "round": 1, "public_msg_seq": 3, "phase": "day_discuss", "speaker": "Ann",
     "seats": ["Ann", ...], "alive": ["Ann", ...], "events": 12, "ts": 1733000000.1}
    {"kind": "acts_done", "final": {...the game_over record without its probe figures...}, "ts": ...}

A ``step`` line is written the moment the engine reaches a probe point, before any of its
probe calls starts: ``seats`` are the seats probed there, ``alive`` the ``{players}`` a
question names, ``events`` how many game events (``game.jsonl`` records after the setup)
the seats' contexts are built from, ``ts`` the capture time (the probe records'
``timestamp``). Every scheduled probe call ends in exactly one record of
``introspection.jsonl`` (answered, failed or skipped), so a call is *pending* when its step
is here and its record is not: the file is the durable queue that ``mafiascope resume``
finishes after a crash (mafiascope.probes.pending). ``acts_done`` is written when the
game's last move is made and its probes may still be draining; ``game_over`` follows
once they are done. The same lines let probes be asked after the fact (issue 36): a seat's
context at step ``k`` is a function of the setup and the first ``events`` records.

Written for every game (probed or not), by the engine's runner; read with
:func:`read_probe_steps`.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from .io import LogFormatError, TornLineWarning, dumps, iter_jsonl_lines
from .schema import Record

STEPS_FILE = "probe_steps.jsonl"
STEP = "step"
ACTS_DONE = "acts_done"


class StepLine(Record):
    kind: str = STEP
    k: int
    round: int
    public_msg_seq: int
    phase: str
    speaker: str | None = None
    seats: list[str]
    alive: list[str]
    events: int
    ts: float = 0.0


class ActsDone(Record):
    kind: str = ACTS_DONE
    final: dict[str, Any]
    ts: float = 0.0


@dataclass
class ProbeSteps:
    steps: list[StepLine] = field(default_factory=list)  # step order (k ascending); a repeated k keeps its last line
    acts_done: dict[str, Any] | None = None  # the final record written when the last move was made
    torn: bool = False  # the last line was torn (a crash mid-write)

    def by_k(self) -> dict[int, StepLine]:
        return {s.k: s for s in self.steps}


def read_probe_steps(game_dir: str | Path) -> ProbeSteps:
    """The game's probe points (empty when the file is absent: older games, imported ones).

    A torn last line is skipped (a crash mid-write; its step had no call started); a line that
    does not validate is a :class:`LogFormatError` naming file:line."""
    path = Path(game_dir) / STEPS_FILE
    out = ProbeSteps()
    if not path.is_file():
        return out
    by_k: dict[int, StepLine] = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", TornLineWarning)
        for n, obj in iter_jsonl_lines(path):
            try:
                if obj.get("kind") == ACTS_DONE:
                    out.acts_done = ActsDone.model_validate(obj).final
                else:
                    st = StepLine.model_validate(obj)
                    by_k[st.k] = st
            except ValidationError as exc:
                err = exc.errors()[0]
                raise LogFormatError(f"{path}:{n}: {'.'.join(map(str, err['loc']))}: {err['msg']}") from None
    out.torn = any(issubclass(w.category, TornLineWarning) for w in caught)
    out.steps = [by_k[k] for k in sorted(by_k)]
    return out


def step_line(k: int, rnd: int, seq: int, phase: str, speaker: str | None, seats: list[str], alive: list[str], events: int,
              ts: float) -> dict[str, Any]:  # fmt: skip
    """One ``step`` line as the runner writes it."""
    return StepLine(k=k, round=rnd, public_msg_seq=seq, phase=phase, speaker=speaker, seats=list(seats), alive=list(alive),
                    events=events, ts=ts).model_dump()  # fmt: skip


def acts_done_line(final: dict[str, Any], ts: float) -> dict[str, Any]:
    return ActsDone(final=final, ts=ts).model_dump()


def is_skipped(rec: dict[str, Any]) -> bool:
    """A probe record of a call that was never sent (it lagged behind ``probes.max_lag_s``): not a
    measurement, so never a call, a transport error, a parse failure or spend."""
    return bool(rec.get("lagged"))


def copy_steps(src_dir: str | Path, dst_dir: str | Path, upto: int) -> int:
    """Write the ``step`` lines of ``src_dir`` up to step ``upto`` into ``dst_dir`` (a resume or fork keeping
    the game's first steps; the continuation appends its own). Returns how many."""
    src = Path(src_dir) / STEPS_FILE
    kept = [s for s in read_probe_steps(src_dir).steps if s.k <= upto] if src.is_file() else []
    if kept:
        with open(Path(dst_dir) / STEPS_FILE, "w", encoding="utf-8") as fh:
            fh.write("".join(dumps(s.model_dump()) + "\n" for s in kept))
    return len(kept)
