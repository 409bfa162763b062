"""Protocol-line markers as data: which words open a ``VOTE: X`` / ``ACTION: Kill X`` line.

A rule family supplies its :class:`Markers` (``ClassicPhases.markers``,
``TournamentPhases.markers``) and the runner passes them to the parser; nothing mutates
another module's table at import time. :data:`PROTOCOL_MARKERS` is the vocabulary every
family shares (the classic prompts' closing lines); the ten-seat family extends it with
``NOMINATE:``, ``SUSPECTS:`` and ``ORDER:``. Both languages' words are always accepted, so
a Russian seat that answers ``VOTE: Logan`` is still read.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType


@dataclass(frozen=True)
class ActionMarker:
    """One protocol line: ``<head>: [<verb>] <name>``, e.g. ``VOTE: X`` or ``ДЕЙСТВИЕ: Убить X``."""

    heads: tuple[str, ...]  # the keyword, whole word, any case (VOTE, ГОЛОС)
    verbs: tuple[str, ...] = ()  # a required word after the separator (Kill, Убить), or none
    lead_ins: tuple[str, ...] = ()  # words allowed right before the head ("my", "final": "My vote: X")

    def __post_init__(self) -> None:
        if not self.heads or not all(h.strip() for h in self.heads):
            raise ValueError("an action marker needs at least one non-empty head word")


@dataclass(frozen=True)
class Markers:
    """The protocol lines a rule family's seats are asked to write, by action."""

    actions: Mapping[str, ActionMarker] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "actions", MappingProxyType(dict(self.actions)))

    def __hash__(self) -> int:
        return hash(tuple(sorted(self.actions.items())))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Markers) and dict(self.actions) == dict(other.actions)

    def marker(self, action: str) -> ActionMarker:
        try:
            return self.actions[action]
        except KeyError:
            raise ValueError(f"no protocol marker for action {action!r}; known: {sorted(self.actions)}") from None

    def with_actions(self, **more: ActionMarker) -> Markers:
        """A copy with more (or replaced) actions; the original is unchanged."""
        return Markers({**self.actions, **more})


VOTE = ActionMarker(
    heads=("VOTE", "ГОЛОС"),
    lead_ins=("my final", "my", "final", "мой итоговый", "мой окончательный", "мой", "итоговый", "окончательный"),
)
KILL = ActionMarker(heads=("ACTION", "ДЕЙСТВИЕ"), verbs=("Kill", "Убить"))
PROTECT = ActionMarker(heads=("ACTION", "ДЕЙСТВИЕ"), verbs=("Protect", "Защитить"))
CHECK = ActionMarker(heads=("ACTION", "ДЕЙСТВИЕ"), verbs=("Check", "Проверить"))

PROTOCOL_MARKERS = Markers({"vote": VOTE, "kill": KILL, "protect": PROTECT, "check": CHECK})
