"""Rule families: each provides the :class:`~.base.Phases` protocol (classic.py, tournament.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..state import GameState
    from .base import Phases


def phases_for(state: GameState) -> Phases:
    if state.rules.family == "classic":
        from .classic import ClassicPhases

        return ClassicPhases()
    from . import tournament

    return tournament.TournamentPhases()
