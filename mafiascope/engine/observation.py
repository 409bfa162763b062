"""What seat i could know at step t, as the chat context the seat is shown.

The context is derived from the event list alone: an event reaches a seat only if it
is public (``visible_to`` is None) or names the seat in ``visible_to``. The seat's own
turns become (user, assistant) pairs; other visible events become observation lines
that are delivered with the seat's next turn (or its next probe). This is the only
place contexts are built, so isolation is proved by testing this one function.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..logs.schema import UTTERANCE_KINDS
from . import prompts
from .state import GameState, Seat

PROBE_HEADER = "[PRIVATE PROBE - answer honestly]"

# kind -> renderer(event, viewer_seat, pack, state) -> line or None. Rule families add theirs.
Renderer = Callable[[dict[str, Any], Seat, prompts.Pack, GameState], str | None]
RENDERERS: dict[str, Renderer] = {}


def renders(*kinds: str) -> Callable[[Renderer], Renderer]:
    def deco(fn: Renderer) -> Renderer:
        for k in kinds:
            RENDERERS[k] = fn
        return fn

    return deco


def visible(event: dict[str, Any], seat_name: str) -> bool:
    vt = event.get("visible_to")
    return vt is None or seat_name in vt


@renders("intro")
def _intro(ev: dict[str, Any], seat: Seat, p: prompts.Pack, st: GameState) -> str | None:
    return (
        p.obs_silent.format(name=ev["player"]) if ev.get("fault") else p.obs_intro.format(name=ev["player"], text=ev["response"])
    )


@renders("day_discuss", "last_words", "defence", "mafia_talk")
def _said(ev: dict[str, Any], seat: Seat, p: prompts.Pack, st: GameState) -> str | None:
    return (
        p.obs_silent.format(name=ev["player"]) if ev.get("fault") else p.obs_said.format(name=ev["player"], text=ev["response"])
    )


@renders("day_vote")
def _voted(ev: dict[str, Any], seat: Seat, p: prompts.Pack, st: GameState) -> str | None:
    if ev.get("fault") or not ev.get("response"):
        return p.obs_abstained.format(name=ev["player"])
    return p.obs_voted.format(name=ev["player"], text=ev["response"])


@renders("night_mafia")
def _ally(ev: dict[str, Any], seat: Seat, p: prompts.Pack, st: GameState) -> str | None:
    target = ev.get("target") if ev.get("target_valid") else None
    return p.obs_ally_choice.format(name=ev["player"], target=target or "-")


@renders("night_sheriff_result")
def _check(ev: dict[str, Any], seat: Seat, p: prompts.Pack, st: GameState) -> str | None:
    verdict = p.verdict_mafia if ev["result"] == "Mafia" else p.verdict_not_mafia
    return p.obs_check.format(target=ev["checked"], verdict=verdict)


@renders("night_analysis")
def _night(ev: dict[str, Any], seat: Seat, p: prompts.Pack, st: GameState) -> str | None:
    return p.obs_night_result.format(result=ev["night_result"])


@renders("day_eliminate")
def _elim(ev: dict[str, Any], seat: Seat, p: prompts.Pack, st: GameState) -> str | None:
    if ev.get("revealed"):
        return p.obs_eliminated_role.format(name=ev["eliminated"], role=p.role_names.get(ev["role"], ev["role"]))
    return p.obs_eliminated.format(name=ev["eliminated"])


@renders("no_elimination")
def _noelim(ev: dict[str, Any], seat: Seat, p: prompts.Pack, st: GameState) -> str | None:
    return p.obs_no_elimination.format(reason=p.reasons.get(ev["reason"], ev["reason"]))


@renders("host")
def _host(ev: dict[str, Any], seat: Seat, p: prompts.Pack, st: GameState) -> str | None:
    return ev["text"]


# ---------------------------------------------------------------- ten-seat (tournament) events


@renders("best_move")
def _best_move(ev: dict[str, Any], seat: Seat, p: prompts.Pack, st: GameState) -> str | None:
    return (
        p.obs_silent.format(name=ev["player"]) if ev.get("fault") else p.obs_said.format(name=ev["player"], text=ev["response"])
    )


@renders("nomination")
def _nomination(ev: dict[str, Any], seat: Seat, p: prompts.Pack, st: GameState) -> str | None:
    return p.ten["obs_nomination"].format(name=ev["nominator"], target=ev["nominee"])


@renders("night_don_result")
def _don_check(ev: dict[str, Any], seat: Seat, p: prompts.Pack, st: GameState) -> str | None:
    verdict = p.ten["verdict_sheriff"] if ev["result"] == "Sheriff" else p.ten["verdict_not_sheriff"]
    return p.ten["obs_don_check"].format(target=ev["checked"], verdict=verdict)


@renders("shot_order")
def _shot_order(ev: dict[str, Any], seat: Seat, p: prompts.Pack, st: GameState) -> str | None:
    return p.ten["obs_shot_order"].format(order=", ".join(ev["order"]) or p.ten["no_order"])


@dataclass
class Context:
    messages: list[dict[str, str]]  # system + completed (user, assistant) turns
    pending: list[str] = field(default_factory=list)  # observation lines not yet delivered

    def with_instruction(self, instruction: str) -> list[dict[str, str]]:
        """A new message list for an acting turn (the stored context is not changed)."""
        return [*self.messages, {"role": "user", "content": join_user(self.pending, instruction)}]

    def with_probe(self, question: str) -> list[dict[str, str]]:
        return self.with_instruction(f"{PROBE_HEADER}\n{question}")


def join_user(lines: list[str], instruction: str) -> str:
    return "\n".join(lines) + ("\n\n" if lines else "") + instruction


def system_prompt_for(state: GameState, seat: Seat) -> str:
    p = prompts.pack(seat.language)
    partners = [s.name for s in state.seats if s.is_mafia and s.name != seat.name] if seat.is_mafia else []
    rules_text = prompts.ten_rules_text(p, state.rules.variant) if state.rules.family == "tournament" else None
    don = next((s.name for s in state.seats if s.role == "Don" and s.name in partners), None)
    return prompts.system_prompt(p, name=seat.name, role=seat.role, partners=partners, personality=seat.personality.model_dump(),
                                 rules_text=rules_text, don=don)  # fmt: skip


def context_for(state: GameState, seat_name: str, upto: int | None = None) -> Context:
    """The acting context of ``seat_name`` built from ``state.events[:upto]``."""
    seat = state.seat(seat_name)
    p = prompts.pack(seat.language)
    messages = [{"role": "system", "content": system_prompt_for(state, seat)}]
    pending: list[str] = []
    events = state.events if upto is None else state.events[:upto]
    for ev in events:
        if not visible(ev, seat_name):
            continue
        if ev.get("player") == seat_name and ev["kind"] in UTTERANCE_KINDS:
            if ev.get("fault"):
                continue  # a failed turn adds nothing; its observations stay pending
            messages.append({"role": "user", "content": join_user(pending, ev.get("prompt") or "")})
            messages.append({"role": "assistant", "content": ev["response"]})
            pending = []
            continue
        render = RENDERERS.get(ev["kind"])
        line = render(ev, seat, p, state) if render else None
        if line:
            pending.append(line)
    return Context(messages, pending)


def all_contexts(state: GameState) -> dict[str, list[dict[str, str]]]:
    """Every seat's acting context including undelivered lines (for snapshots and audits)."""
    out = {}
    for s in state.seats:
        ctx = context_for(state, s.name)
        msgs = list(ctx.messages)
        if ctx.pending:
            msgs.append({"role": "user", "content": "\n".join(ctx.pending)})
        out[s.name] = msgs
    return out
