"""What a step asks of the probed seats: the ``when`` a step satisfies, which probes apply, the
``{roles}`` options, and one seat's captured job (its context copied at the step)."""

from __future__ import annotations

from dataclasses import dataclass

from ..engine.observation import Context
from ..engine.phases.base import ProbeStep
from ..engine.state import GameState
from .dsl import Probe


@dataclass(frozen=True)
class ChainValue:
    """What a later ``{prev_*}``/``{last_*}`` placeholder receives (text None renders N/A)."""

    text: str | None
    raw: bool = False  # the answer did not parse; text is the raw answer


def step_kind(step: ProbeStep) -> str:
    """The ``when`` value a step satisfies."""
    if step.public_msg_seq == -1 or step.phase == "round_end":
        return "after_round"
    if step.speaker is not None and step.phase.startswith("night") and step.phase != "night_analysis":
        return "after_night_action"
    return "after_each_message"


def applies(probe: Probe, kind: str, is_speaker: bool) -> bool:
    if probe.own_turn:
        return is_speaker and kind != "after_round"
    return kind in probe.when


def role_options(state: GameState) -> str:
    """The probes' ``{roles}`` (English labels): the rule set's own roles, then ``Unknown``.

    Ten-seat rules: ``Mafia|Don|Sheriff|Villager|Unknown`` (``RuleSet.role_options``); classic rules
    keep the original battery's ``Mafia|Villager|Doctor[|Sheriff][|Don]|Unknown``.
    """
    if state.rules.family != "classic":
        return "|".join([*state.rules.role_options(), "Unknown"])
    roles = state.rules.roles
    opts = ["Mafia", "Villager", "Doctor"]
    opts += [r for r in ("Sheriff", "Don") if roles.get(r, 0) > 0]
    return "|".join([*opts, "Unknown"])


@dataclass
class SeatJob:
    """One probed seat at one step: what it may know now (``ctx`` is a copy) and where its calls go."""

    step: ProbeStep
    kind: str
    seat: str
    seat_idx: int
    role: str
    model: str
    backend: str
    ctx: Context | None  # None: no call of this seat is asked at the step (only its earlier answers are known)
    players: list[str]
    seats: list[str]
    t_step: float
