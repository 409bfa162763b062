"""A recorded game's state rebuilt from its log alone (``game.jsonl``): the seats from the setup
record and the events as logged, so a seat's context at any probe step is
``observation.context_for(state, seat, step.events)``. What the probes of a game need after the
fact -- to finish calls a crash left pending, or to ask new questions of a finished game --
without its snapshots (studies run without them)."""

from __future__ import annotations

from typing import Any

from ..logs import kinds as K
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
        events = [{k: v for k, v in r.items() if k not in LOG_ONLY_FIELDS} for r in records if K.of(r) not in (K.SETUP, K.GAME_OVER)]
        return GameState(game_id=gid, rules=RuleSet.model_validate(rules), language=language, seed=int(setup.get("seed") or 0),
                         seats=seats, pending=Pending(stage="init"), events=events)  # fmt: skip
    except (KeyError, TypeError, ValueError) as exc:
        raise NotRebuildable(f"game {gid}: its setup record cannot seat the game ({type(exc).__name__}: {str(exc)[:160]})") from None
