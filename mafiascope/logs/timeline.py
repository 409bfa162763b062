"""The timeline of one game: step order, who was alive and who spoke at each step, and each
player's beliefs carried forward from their latest answered probe.

A step is a (round, msg_seq) that a logged record (a seat's reply, the night analysis ...) or a
probe record carries (:class:`~mafiascope.logs.steps.StepKey`), in chronological order. Per
step: its phase (the first record's kind as a phase, else the first probe's phase;
``round_end`` for a round's end), its time (earliest probe call, else the first record's), its
speaker (the last record there with a seat), and the seats alive then (no death logged
strictly before that time). Each record of game.jsonl becomes visible at one step: a
message at its own step, any other record at the first step not earlier than it.

This is presentation bookkeeping, no metric; the app's game model reads it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from . import kinds as K
from .steps import ROUND_END, StepKey, step_label, step_order

PHASE_OF_KIND = {
    K.INTRO: "intro",
    K.NIGHT_MAFIA: "night",
    K.NIGHT_DOCTOR: "night",
    K.NIGHT_SHERIFF: "night",
    K.NIGHT_DON: "night",
    K.MAFIA_TALK: "night",
    K.DAY_DISCUSS: "day_discuss",
    K.DAY_VOTE: "day_vote",
    K.LAST_WORDS: "day_vote",
    K.BEST_MOVE: "day_discuss",
    K.DEFENCE: "day_vote",
}
ROUND_END_PHASE = "round_end"


@dataclass(frozen=True)
class TimelineStep:
    idx: int
    round: int
    seq: int  # msg_seq; ROUND_END (-1) = round end
    label: str
    phase: str
    ts: float
    speaker: str | None = None
    event_idx: int | None = None  # index into the events of the step's own message
    alive: frozenset[str] = frozenset()

    @property
    def key(self) -> StepKey:
        return StepKey(self.round, self.seq)


Belief = tuple[Any, bool]  # (parsed answer, carried forward from an earlier step)


@dataclass
class Timeline:
    steps: list[TimelineStep]
    event_step: list[int]  # per event (file order, setup excluded): the first step at which it is visible
    # beliefs[agent][step] -> {probe_id: (answer, carried_forward)}
    beliefs: dict[str, list[dict[str, Belief]]] = field(default_factory=dict)

    @property
    def labels(self) -> list[str]:
        return [s.label for s in self.steps]

    def index(self, key: StepKey | str | Sequence[int]) -> int | None:
        """Position of a step given as a StepKey, a label (any form StepKey.parse reads) or a pair."""
        try:
            k = StepKey.of(key)
        except ValueError:
            return None
        return next((s.idx for s in self.steps if s.round == k.round and s.seq == k.msg_seq), None)

    def belief(self, agent: str, step: int, probe_id: str) -> Belief:
        rows = self.beliefs.get(agent)
        if not rows or step < 0 or step >= len(rows):
            return None, False
        return rows[step].get(probe_id, (None, False))

    @classmethod
    def build(cls, names: Iterable[str], events: Sequence[dict[str, Any]], probes: Iterable[dict[str, Any]]) -> Timeline:
        """From the game's seat names, its events (setup excluded) and its probe records (dicts)."""
        names = list(names)
        probes = list(probes)
        keys: dict[tuple[int, int], dict[str, Any]] = {}

        def slot(k: tuple[int, int]) -> dict[str, Any]:
            return keys.setdefault(k, {"ts": math.inf, "phase": None, "speaker": None, "event": None, "msg_ts": math.inf})

        for i, e in enumerate(events):
            k = _message_key(e)
            if k is None:
                continue
            d = slot(k)
            if d["event"] is None:  # the first record at the step sets its phase and time
                d["event"], d["phase"], d["msg_ts"] = i, PHASE_OF_KIND.get(e["kind"], e["kind"]), _num(e.get("ts"))
            if isinstance(e.get("player"), str):  # the speaker: the last record at the step with a seat
                d["speaker"] = e["player"]
        for p in probes:
            k = _probe_key(p)
            if k is None:
                continue
            d = slot(k)
            d["ts"] = min(d["ts"], _num(p.get("timestamp")))
            if not d["phase"] and p.get("phase"):
                d["phase"] = p.get("phase")
        order = sorted(keys, key=lambda k: step_order(*k))
        deaths: dict[str, float] = {}
        for e in events:
            victim = K.death_of(e)
            if victim is not None and victim not in deaths:
                deaths[victim] = _num(e.get("ts"))
        steps: list[TimelineStep] = []
        for idx, k in enumerate(order):
            d = keys[k]
            ts = d["ts"] if d["ts"] != math.inf else d["msg_ts"]
            phase = ROUND_END_PHASE if k[1] == ROUND_END else (d["phase"] or "unknown")
            alive = frozenset(n for n in names if not (n in deaths and deaths[n] < ts))
            steps.append(TimelineStep(idx, k[0], k[1], step_label(*k), str(phase), ts, d["speaker"], d["event"], alive))
        at = {k: i for i, k in enumerate(order)}

        event_step: list[int] = []
        step_ts = [s.ts for s in steps]
        for e in events:
            k = _message_key(e)
            own = at.get(k) if k is not None else None
            if own is None:
                ts = _num(e.get("ts"))
                own = next((j for j, t in enumerate(step_ts) if t >= ts), len(steps))
                if e.get("kind") == K.GAME_OVER and steps:
                    own = len(steps) - 1
            event_step.append(own)

        fresh: dict[str, list[dict[str, Any]]] = {n: [dict() for _ in steps] for n in names}
        for p in probes:
            name = p.get("player_name")
            k = _probe_key(p)
            if name not in fresh or not p.get("answer_parse_ok") or k is None:
                continue
            fresh[name][at[k]][str(p.get("probe_id"))] = p.get("answer_parsed")
        beliefs: dict[str, list[dict[str, Belief]]] = {}
        for name, rows in fresh.items():
            cur: dict[str, Belief] = {}
            out = []
            for r in rows:
                cur = {pid: (v, True) for pid, (v, _) in cur.items()}
                cur.update({pid: (v, False) for pid, v in r.items()})
                out.append(dict(cur))
            beliefs[name] = out
        return cls(steps, event_step, beliefs)


def _message_key(e: dict[str, Any]) -> tuple[int, int] | None:
    """The step of a record that carries a message number (a seat's reply, the night analysis ...)."""
    seq = e.get("msg_seq")
    if isinstance(seq, int) and not isinstance(seq, bool) and isinstance(e.get("kind"), str) and e["kind"] != K.SETUP:
        return int(e.get("round") or 0), seq
    return None


def _probe_key(p: dict[str, Any]) -> tuple[int, int] | None:
    try:
        return int(p.get("round")), int(p.get("public_msg_seq"))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None


def _num(v: Any, default: float = math.inf) -> float:
    try:
        f = float(v)
        return default if math.isnan(f) else f
    except (TypeError, ValueError):
        return default
