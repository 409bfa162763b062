"""Expected answer shapes of the standard probes, and the once-only normalisation.

``validate(shape, value)`` says whether a parsed answer has the shape its probe asks for
(pydantic models below; numbers may arrive as numeric strings). ``normalise`` turns a
valid-enough answer into canonical data for scorers: player names matched to seats
case-insensitively (plus the engine's transliteration rules), role labels normalised with
:func:`mafiascope.lexicon.labels.normalise_role` (English and Russian synonyms, compound
labels), attitudes lower-cased. ``answer_parsed`` itself is always logged verbatim.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, RootModel, ValidationError, field_validator

from ..lexicon.labels import CODE_NAMES, normalise_role
from ..engine.parsing import match_name
from ..logs.answer_norm import fold, folded_seats, number
from ..logs.answer_norm import normalise as _normalise


_num = number


class _Item(BaseModel):
    model_config = ConfigDict(extra="allow")
    player: str


class RoleItem(_Item):
    guessed_role: str
    confidence: float
    reason: str | None = None

    _c = field_validator("confidence", mode="before")(lambda cls, v: _num(v))


class ScoreItem(_Item):
    score: float

    _s = field_validator("score", mode="before")(lambda cls, v: _num(v))


class AttitudeItem(_Item):
    attitude: str
    confidence: float | None = None
    reason: str | None = None

    _c = field_validator("confidence", mode="before")(lambda cls, v: None if v is None else _num(v))


class BigFiveItem(_Item):
    O: float
    C: float
    E: float
    A: float
    N: float
    summary: str | None = None

    _t = field_validator("O", "C", "E", "A", "N", mode="before")(lambda cls, v: _num(v))


class SocialMap(BaseModel):
    model_config = ConfigDict(extra="allow")
    toward_me: list[AttitudeItem]


class PlannedAction(BaseModel):
    model_config = ConfigDict(extra="allow")
    action: str
    target: str | None = None
    reasoning: str | None = None


class RoleBelief(BaseModel):
    model_config = ConfigDict(extra="allow")
    role: str
    confidence: float | None = None

    _c = field_validator("confidence", mode="before")(lambda cls, v: None if v is None else _num(v))


SHAPES: dict[str, Any] = {
    "role_assessment": RootModel[list[RoleItem]],
    "suspicion_ranking": RootModel[list[ScoreItem]],
    "social_map": SocialMap,
    "personality_profile": RootModel[list[BigFiveItem]],
    "planned_action": PlannedAction,
    "role_beliefs": RootModel[dict[str, RoleBelief]],
}
STANDARD_PROBES = tuple(SHAPES)


def validate(shape: str | None, value: Any) -> bool | None:
    """True/False when ``shape`` is a standard shape, None for free-form probes."""
    model = SHAPES.get(shape or "")
    if model is None:
        return None
    if value is None:
        return False
    try:
        model.model_validate(value)
    except ValidationError:
        return False
    return True


# ----------------------------------------------------------------------------- normalisation


def seat_name(name: Any, seats: list[str] | tuple[str, ...]) -> str | None:
    """The seat a name refers to: case-insensitive exact match, else the engine's fuzzy rules."""
    if not isinstance(name, str) or not name.strip():
        return None
    hit = folded_seats(tuple(seats)).get(fold(name))
    if hit is not None:
        return hit
    got, _ = match_name(name, list(seats))
    return got


def role_label(label: Any) -> str | None:
    """Canonical role label (Mafia, Villager, Doctor, Sheriff, Unknown) or None when unusable."""
    code = normalise_role(label)
    return CODE_NAMES.get(code)


def normalise(shape: str | None, value: Any, seats: list[str]) -> Any:
    """Canonical view of an answer (None when the probe is free-form or nothing is usable)."""
    return _normalise(shape, value, seats, seat_name, role_label)
