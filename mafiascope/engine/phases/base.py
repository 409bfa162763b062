"""What a rule family provides to the runner: the next decision, and how to apply it.

``next(state)`` is a pure function of the state: either :class:`Ask` (a seat must
reply) or :class:`Resolve` (the engine settles something: a night, a tally, a round end).
``apply_reply``/``resolve`` mutate the state and return the events to log plus the probe
step the reply opened, if any. The runner is the same loop for every family.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from ...logs.schema import GameOver, Utterance
from ..markers import Markers
from ..records import event
from ..state import GameState


@dataclass
class Ask:
    seat: str
    kind: str  # event kind the reply becomes (intro, day_discuss, day_vote, night_mafia ...)
    instruction: str
    action: str | None = None  # a key of the family's ``markers`` (vote, kill, ...); None = free speech
    candidates: list[str] = field(default_factory=list)
    visible_to: list[str] | None = None
    optional_target: bool = False  # a missing target is fine (e.g. nominations)


@dataclass
class Resolve:
    name: str


@dataclass
class Reply:
    text: str
    target: str | None = None
    target_valid: bool | None = None
    parse_note: str | None = None
    fault: dict[str, Any] | None = None  # {"error", "attempts", "fallback"}
    reask: bool = False
    first_reply: str | None = None
    latency_ms: int = 0
    targets: list[str] | None = None  # list actions (suspects, nominations)
    retried_faults: list[dict[str, Any]] | None = None  # faults a retry absorbed (the move still happened)


@dataclass
class ProbeStep:
    """A point after which seats are probed (the key of the probe records)."""

    round: int
    public_msg_seq: int  # -1 = round end
    phase: str  # intro | night | night_analysis | day_discuss | day_vote | round_end | ...
    seats: list[str]  # who is probed
    speaker: str | None = None
    step_index: int = 0  # the runner numbers the steps (1, 2, ...) and stamps the two fields below
    events: int | None = None  # game events the seats' contexts are built from (len(state.events) at the step)
    alive: list[str] | None = None  # the living players at the step (the questions' {players})
    ts: float = 0.0  # capture time (the probe records' timestamp)
    contexts: dict[str, Any] | None = None  # seat -> its Context as recorded (games whose events cannot rebuild it)


@dataclass
class Outcome:
    events: list[dict[str, Any]] = field(default_factory=list)
    probe: ProbeStep | None = None
    snapshot: bool = True


class Phases(Protocol):
    markers: Markers  # the protocol lines (VOTE:, ACTION: ...) the runner reads replies with

    def start(self, state: GameState) -> None: ...

    def next(self, state: GameState) -> Ask | Resolve: ...

    def apply_reply(self, state: GameState, ask: Ask, reply: Reply) -> Outcome: ...

    def resolve(self, state: GameState, decision: Resolve) -> Outcome: ...


def utterance_event(state: GameState, ask: Ask, reply: Reply) -> dict[str, Any]:
    """The event (a schema Utterance) for a seat's reply; occupies the next msg_seq of the round."""
    state.msg_seq += 1
    seat = state.seat(ask.seat)
    fields: dict[str, Any] = {
        "kind": ask.kind,
        "round": state.round,
        "msg_seq": state.msg_seq,
        "player": ask.seat,
        "player_idx": seat.idx,
        "response": reply.text,
        "prompt": ask.instruction,
        "visible_to": ask.visible_to,
    }
    if ask.action:
        fields.update(action=ask.action, target=reply.target, target_valid=reply.target_valid, parse_note=reply.parse_note)
    if reply.targets is not None:
        fields["targets"] = reply.targets
    if reply.fault:
        fields["fault"] = reply.fault
    if reply.retried_faults:
        fields["retried_faults"] = reply.retried_faults
    if reply.reask:
        fields["reask"] = True
        fields["first_reply"] = reply.first_reply
    return event(Utterance, state.game_id, **fields)


def win_check(state: GameState) -> tuple[str, str] | None:
    """(winner, reason) when a side has won, else None."""
    mafia = sum(1 for s in state.seats if s.alive and s.is_mafia)
    others = sum(1 for s in state.seats if s.alive and not s.is_mafia)
    if mafia == 0:
        return "Villagers", "no_mafia_left"
    if mafia >= others:
        return "Mafia", "mafia_parity"
    return None


def game_over_event(state: GameState, winner: str, reason: str) -> dict[str, Any]:
    state.over = True
    state.winner, state.reason = winner, reason
    state.pending.stage = "game_over"
    state.pending.remaining = []
    return event(
        GameOver, state.game_id, round=state.round, winner=winner, reason=reason, roles={s.name: s.role for s in state.seats}
    )


def game_over(state: GameState, winner: str, reason: str) -> Outcome:
    """The game ends: its game_over event, no probe step, no snapshot."""
    return Outcome([game_over_event(state, winner, reason)], None, snapshot=False)


def round_end(
    state: GameState, next_round: Callable[[GameState, int], object], end: Callable[[GameState, str, str], Outcome] = game_over
) -> Outcome:
    """The end of a round, for every rule family: the seats are probed at the round-end step
    (``public_msg_seq`` -1); at the round cap the game is a draw (``end``: the family's game over),
    else ``next_round(state, round + 1)`` starts the next round."""
    rnd = state.round
    state.phase = "round_end"
    probe = ProbeStep(rnd, -1, "round_end", state.alive_names())
    if rnd >= state.rules.max_rounds:
        out = end(state, "Draw", "round_cap")
        out.probe = probe
        return out
    next_round(state, rnd + 1)
    return Outcome([], probe)


def plurality(votes: list[str]) -> tuple[list[str], int]:
    """The most-voted targets (several on a tie) and their count; order of first vote kept."""
    counts: dict[str, int] = {}
    for v in votes:
        counts[v] = counts.get(v, 0) + 1
    if not counts:
        return [], 0
    top = max(counts.values())
    return [k for k, c in counts.items() if c == top], top
