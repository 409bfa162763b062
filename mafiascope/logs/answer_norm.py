"""The normalised view of a standard probe's answer (``answer_norm``), as a pure function.

:func:`normalise` maps a parsed answer of a standard shape to canonical rows (names matched
to seats, role labels canonical, numbers as floats, attitudes lower-cased). How a name or a
role label is resolved is passed in: the probe engine passes the full resolvers
(:mod:`mafiascope.probes.shapes`: the engine's fuzzy name rules, English and Russian role
synonyms); the compact probe records (:mod:`.probe_codec`) rebuild ``answer_norm`` with the
exact resolvers here, which raise :class:`Underivable` for anything but an exact seat name
or canonical label -- such an answer keeps its stored ``answer_norm``.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from functools import lru_cache
from typing import Any

NORM_VERSION = 1
CANONICAL_ROLES = ("Mafia", "Villager", "Doctor", "Sheriff", "Unknown")


class Underivable(Exception):
    """An exact resolver met a value only the full resolver (probes.shapes) can map."""


def number(v: Any) -> float:
    """A float from a number or a numeric string (``"70"``, ``"70%"``); booleans are refused."""
    if isinstance(v, bool):
        raise ValueError("a number is required")
    try:
        return float(str(v).strip().rstrip("%")) if isinstance(v, str) else float(v)
    except OverflowError:  # an integer too large for a float: a bad value, as any other (pydantic reports ValueErrors)
        raise ValueError("the number is too large") from None


def _f(v: Any) -> float | None:
    try:
        return number(v)
    except (TypeError, ValueError):
        return None


def fold(s: str) -> str:
    return unicodedata.normalize("NFKC", s).strip().casefold().replace("ё", "е")


@lru_cache(maxsize=256)
def folded_seats(seats: tuple[str, ...]) -> dict[str, str]:
    return {fold(s): s for s in seats}


@lru_cache(maxsize=256)
def _verbatim(seats: tuple[str, ...]) -> dict[str, str]:
    """What the folded lookup gives for each seat's own name (a shortcut for the usual answer)."""
    table = folded_seats(seats)
    return {s: table[fold(s)] for s in seats}


def exact_seat(name: Any, seats: list[str] | tuple[str, ...]) -> str | None:
    """A seat by case-insensitive exact name; None for a non-name; Underivable otherwise."""
    if not isinstance(name, str) or not name.strip():
        return None
    key = seats if isinstance(seats, tuple) else tuple(seats)
    hit = _verbatim(key).get(name)
    if hit is None:
        hit = folded_seats(key).get(fold(name))
    if hit is None:
        raise Underivable(name)
    return hit


def exact_role(label: Any) -> str | None:
    """A canonical role label as itself; Underivable for anything else."""
    if label in CANONICAL_ROLES:
        return str(label)
    raise Underivable(label)


SeatFn = Callable[[Any, "list[str] | tuple[str, ...]"], "str | None"]
RoleFn = Callable[[Any], "str | None"]


def _items(value: Any) -> list[dict[str, Any]]:
    return [x for x in value if isinstance(x, dict)] if isinstance(value, list) else []


def normalise(
    shape: str | None, value: Any, seats: list[str] | tuple[str, ...], seat: SeatFn = exact_seat, role: RoleFn = exact_role
) -> Any:
    """Canonical view of an answer (None when the probe is free-form or nothing is usable)."""
    if shape == "role_assessment":
        return [{"player": seat(x.get("player"), seats), "role": role(x.get("guessed_role")), "confidence": _f(x.get("confidence"))}
                for x in _items(value)]  # fmt: skip
    if shape == "suspicion_ranking":
        return [{"player": seat(x.get("player"), seats), "score": _f(x.get("score"))} for x in _items(value)]
    if shape == "social_map":
        items = _items(value.get("toward_me")) if isinstance(value, dict) else []
        return [{"player": seat(x.get("player"), seats),
                 "attitude": x["attitude"].strip().lower() if isinstance(x.get("attitude"), str) else None,
                 "confidence": _f(x.get("confidence"))} for x in items]  # fmt: skip
    if shape == "personality_profile":
        return [{"player": seat(x.get("player"), seats), **{k: _f(x.get(k)) for k in "OCEAN"}} for x in _items(value)]
    if shape == "planned_action":
        if not isinstance(value, dict):
            return None
        return {"action": value.get("action"), "target": seat(value.get("target"), seats)}
    if shape == "role_beliefs":
        if not isinstance(value, dict):
            return None
        return [{"player": seat(k, seats), "role": role(v.get("role")), "confidence": _f(v.get("confidence"))}
                for k, v in value.items() if isinstance(v, dict)]  # fmt: skip
    return None
