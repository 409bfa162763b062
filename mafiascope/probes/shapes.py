"""Expected answer shapes of the standard probes, and the once-only normalisation.

``validate(shape, value)`` says whether a parsed answer has the shape its probe asks for
(pydantic models below; numbers may arrive as numeric strings). ``normalise`` turns a
valid-enough answer into canonical data for scorers: player names matched to seats
case-insensitively (plus the engine's transliteration rules), role labels normalised with
:func:`mafiascope.lexicon.labels.normalise_role` (English and Russian synonyms, compound
labels), attitudes lower-cased. ``answer_parsed`` itself is always logged verbatim.
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache
from typing import Any

from pydantic import BaseModel, ConfigDict, RootModel, ValidationError, field_validator

from ..lexicon.labels import CODE_NAMES, normalise_role
from ..engine.parsing import match_name


def _num(v: Any) -> float:
    if isinstance(v, bool):
        raise ValueError("a number is required")
    f = float(str(v).strip().rstrip("%")) if isinstance(v, str) else float(v)
    return f


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


def _fold(s: str) -> str:
    return unicodedata.normalize("NFKC", s).strip().casefold().replace("ё", "е")


@lru_cache(maxsize=256)
def _folded(seats: tuple[str, ...]) -> dict[str, str]:
    return {_fold(s): s for s in seats}


def seat_name(name: Any, seats: list[str] | tuple[str, ...]) -> str | None:
    """The seat a name refers to: case-insensitive exact match, else the engine's fuzzy rules."""
    if not isinstance(name, str) or not name.strip():
        return None
    hit = _folded(tuple(seats)).get(_fold(name))
    if hit is not None:
        return hit
    got, _ = match_name(name, list(seats))
    return got


def role_label(label: Any) -> str | None:
    """Canonical role label (Mafia, Villager, Doctor, Sheriff, Unknown) or None when unusable."""
    code = normalise_role(label)
    return CODE_NAMES.get(code)


def _f(v: Any) -> float | None:
    try:
        return _num(v)
    except (TypeError, ValueError):
        return None


def _items(value: Any) -> list[dict[str, Any]]:
    return [x for x in value if isinstance(x, dict)] if isinstance(value, list) else []


def normalise(shape: str | None, value: Any, seats: list[str]) -> Any:
    """Canonical view of an answer (None when the probe is free-form or nothing is usable)."""
    if shape == "role_assessment":
        return [{"player": seat_name(x.get("player"), seats), "role": role_label(x.get("guessed_role")), "confidence": _f(x.get("confidence"))}
                for x in _items(value)]  # fmt: skip
    if shape == "suspicion_ranking":
        return [{"player": seat_name(x.get("player"), seats), "score": _f(x.get("score"))} for x in _items(value)]
    if shape == "social_map":
        items = _items(value.get("toward_me")) if isinstance(value, dict) else []
        return [{"player": seat_name(x.get("player"), seats),
                 "attitude": x["attitude"].strip().lower() if isinstance(x.get("attitude"), str) else None,
                 "confidence": _f(x.get("confidence"))} for x in items]  # fmt: skip
    if shape == "personality_profile":
        return [{"player": seat_name(x.get("player"), seats), **{k: _f(x.get(k)) for k in "OCEAN"}} for x in _items(value)]
    if shape == "planned_action":
        if not isinstance(value, dict):
            return None
        return {"action": value.get("action"), "target": seat_name(value.get("target"), seats)}
    if shape == "role_beliefs":
        if not isinstance(value, dict):
            return None
        return [{"player": seat_name(k, seats), "role": role_label(v.get("role")), "confidence": _f(v.get("confidence"))}
                for k, v in value.items() if isinstance(v, dict)]  # fmt: skip
    return None
