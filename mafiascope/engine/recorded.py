"""A recorded game's state rebuilt from its log alone (``game.jsonl``): the seats from the setup
record and the events as logged, so a seat's context at any probe step is
``observation.context_for(state, seat, step.events)``. What the probes of a game need after the
fact -- to finish calls a crash left pending, or to ask new questions of a finished game --
without its snapshots (studies run without them)."""

from __future__ import annotations

import json
from typing import Any

from ..logs import kinds as K
from .phases.base import ProbeStep, Reply
from .rules import RuleSet
from .state import GameState, Pending, Seat

LOG_ONLY_FIELDS = ("game_id", "ts")  # fields the runner adds to an event when it writes the line


class NotRebuildable(ValueError):
    """The log lacks what a seat's context is built from (one line: names the game and the field)."""


def state_from_log(setup: dict[str, Any], records: list[dict[str, Any]]) -> GameState:
    """The game's state with every logged event (``game_over`` aside): contexts at a step come from a prefix."""
    gid = str(setup.get("game_id") or "?")
    rules = setup.get("rules")
    if not isinstance(rules, dict):
        raise NotRebuildable(f"game {gid}: setup.rules is missing (not a game of this engine); its contexts cannot be rebuilt")
    players = setup.get("players")
    if not isinstance(players, list) or not players:
        raise NotRebuildable(f"game {gid}: setup.players is missing; its contexts cannot be rebuilt")
    language = str(setup.get("language") or "en")
    try:
        seats = [Seat(idx=int(p.get("idx", i) if p.get("idx") is not None else i), name=str(p["name"]), role=str(p["role"]),
                      backend=str(p.get("backend") or ""), model_label=str(p.get("model") or ""),
                      personality=p.get("personality") or {}, language=str(p.get("language") or language))
                 for i, p in enumerate(players)]  # fmt: skip
        events = [
            {k: v for k, v in r.items() if k not in LOG_ONLY_FIELDS} for r in records if K.of(r) not in (K.SETUP, K.GAME_OVER)
        ]
        return GameState(game_id=gid, rules=RuleSet.model_validate(rules), language=language, seed=int(setup.get("seed") or 0),
                         seats=seats, pending=Pending(stage="init"), events=events)  # fmt: skip
    except (KeyError, TypeError, ValueError) as exc:
        raise NotRebuildable(
            f"game {gid}: its setup record cannot seat the game ({type(exc).__name__}: {str(exc)[:160]})"
        ) from None


def _comparable(ev: dict[str, Any]) -> dict[str, Any]:
    """An event as a line of ``game.jsonl`` holds it, without what the runner or the host's retelling adds."""
    from .records import line

    out = json.loads(json.dumps(line({"game_id": "", **ev, "ts": 0.0})))
    for k in LOG_ONLY_FIELDS:
        out.pop(k, None)
    if out.get("kind") == K.HOST:  # an LLM host retells the template line (ten_text.narrate): the template is the move
        if "template_text" in out:
            out["text"] = out.pop("template_text")
        out.pop("host", None)
        out.pop("host_error", None)
    return out


def _recorded_reply(ev: dict[str, Any]) -> Reply:
    return Reply(str(ev.get("response") or ""), target=ev.get("target"), target_valid=ev.get("target_valid"),
                 parse_note=ev.get("parse_note"), fault=ev.get("fault"), reask=bool(ev.get("reask")),
                 first_reply=ev.get("first_reply"), targets=ev.get("targets"), retried_faults=ev.get("retried_faults"))  # fmt: skip


def steps_from_log(setup: dict[str, Any], records: list[dict[str, Any]]) -> list[ProbeStep]:
    """The probe steps a finished game passed, found by driving its rule family's phases over its logged moves.

    The engine's own loop (``play.game``) is replayed with each seat's recorded reply in place of a backend
    call: every event the phases emit must equal the next logged one (else :class:`NotRebuildable` names the
    event), so each step's round, seq, phase, speaker, probed seats, living seats and event count are the
    ones the runner wrote to ``probe_steps.jsonl`` when the game was played. ``ts`` is the time of the last
    event before the step (callers with the step's probe records use their timestamp)."""
    from .phases import phases_for
    from .phases.base import Resolve

    gid = str(setup.get("game_id") or "?")
    state = state_from_log(setup, [])
    logged = [r for r in records if K.of(r) not in (K.SETUP, K.GAME_OVER)]
    events = state_from_log(setup, records).events
    final = next((r for r in records if K.of(r) == K.GAME_OVER), None)
    phases = phases_for(state)
    phases.start(state)
    steps: list[ProbeStep] = []
    i = 0
    while not state.over:
        decision = phases.next(state)
        if isinstance(decision, Resolve):
            out = phases.resolve(state, decision)
        else:
            if i >= len(events):
                if final is not None and final.get("cut"):  # cut by a budget: the log ends mid-game
                    break
                raise NotRebuildable(f"game {gid}: its log ends where the rules ask {decision.seat} for {decision.kind}; "
                                     "its probe steps cannot be rebuilt")  # fmt: skip
            ev = events[i]
            if (ev.get("kind"), ev.get("player")) != (decision.kind, decision.seat):
                raise NotRebuildable(f"game {gid}: event {i + 1} of its log is {ev.get('kind')} by {ev.get('player')} where the "
                                     f"rules ask {decision.seat} for {decision.kind}; its probe steps cannot be rebuilt")  # fmt: skip
            out = phases.apply_reply(state, decision, _recorded_reply(ev))
        for ev in out.events:
            if ev["kind"] == K.GAME_OVER:
                state.events.append(ev)
                continue
            ev.setdefault("round", state.round)
            if i >= len(events) or _comparable(ev) != _comparable(events[i]):
                have = events[i].get("kind") if i < len(events) else "the end of the log"
                raise NotRebuildable(f"game {gid}: event {i + 1} of its log ({have}) is not the {ev['kind']} the rules make "
                                     "there; its probe steps cannot be rebuilt")  # fmt: skip
            state.events.append(events[i])  # the logged event (an LLM host's retelling included)
            i += 1
        if out.probe is not None:
            state.step_index += 1
            step = out.probe
            step.step_index, step.events, step.alive = state.step_index, len(state.events), state.alive_names()
            step.ts = float(logged[i - 1].get("ts") or 0.0) if i else 0.0
            steps.append(step)
    if i != len(events):
        raise NotRebuildable(
            f"game {gid}: the rules end the game at event {i} of its {len(events)}; its probe steps cannot be rebuilt"
        )
    return steps
