"""Role-label normalisation (docs/metrics.md §3.4) and the integer codes of the hot tables.

``normalise_role`` tests lower-cased substrings in a fixed order, so compound labels
resolve deterministically (``Villager or Doctor`` -> Villager, ``Possible Mafia`` and
``Mafia|Villager`` -> Mafia). Russian synonyms are an extension (the original has none):
they cannot change a number on corpora whose answers use English labels.
"""

from __future__ import annotations

from typing import Any

# Codes of normalised labels (hot tables store int8).
UNUSABLE, MAFIA, VILLAGER, DOCTOR, SHERIFF, UNKNOWN, DON = -1, 0, 1, 2, 3, 4, 5
CODE_NAMES = {MAFIA: "Mafia", VILLAGER: "Villager", DOCTOR: "Doctor", SHERIFF: "Sheriff", UNKNOWN: "Unknown", DON: "Don"}
ROLE_CODES = {"Mafia": MAFIA, "Villager": VILLAGER, "Doctor": DOCTOR, "Sheriff": SHERIFF, "Don": DON}

# Codes of the *exact* label string (viewer and F4 compare strings without normalising).
EXACT_OTHER, EXACT_EMPTY, EXACT_NONSTRING = -1, -2, -3
EXACT_CODES = {"Mafia": MAFIA, "Villager": VILLAGER, "Doctor": DOCTOR, "Sheriff": SHERIFF, "Unknown": UNKNOWN, "Don": DON}

_EN = (("mafia", MAFIA), ("villager", VILLAGER), ("doctor", DOCTOR), ("sheriff", SHERIFF))
_RU = (
    ("мафи", MAFIA),
    ("дон", MAFIA),
    ("мирн", VILLAGER),
    ("житель", VILLAGER),
    ("горожан", VILLAGER),
    ("доктор", DOCTOR),
    ("врач", DOCTOR),
    ("шериф", SHERIFF),
    ("комиссар", SHERIFF),
)
_RU_UNKNOWN = ("неизвест", "не знаю", "неясно")


def normalise_role(label: Any, *, russian: bool = True) -> int:
    """Normalised code of a guessed-role label; UNUSABLE for non-strings and unmatched text.

    ``Don`` is folded into Mafia (a guess of the Mafia side). With ``russian=False`` only
    the original's English substrings are tested (compat mode).
    """
    if not isinstance(label, str):
        return UNUSABLE
    s = label.strip().lower()
    for sub, code in _EN:
        if sub in s:
            return code
    if russian:
        for sub, code in _RU:
            if sub in s:
                return code
    if "unknown" in s:
        return UNKNOWN
    if russian and any(sub in s for sub in _RU_UNKNOWN):
        return UNKNOWN
    if russian and s == "don":
        return MAFIA
    return UNUSABLE


def exact_role(label: Any) -> int:
    if label is None or label == "":
        return EXACT_EMPTY
    if not isinstance(label, str):
        return EXACT_NONSTRING
    return EXACT_CODES.get(label, EXACT_OTHER)


def true_role_code(role: str) -> int:
    """Code of a seat's true role; Don keeps its own code, compare sides with :func:`is_mafia`."""
    return ROLE_CODES.get(role, UNUSABLE)


def is_mafia_code(code: int) -> bool:
    return code in (MAFIA, DON)


# Attitudes (social_map)
ATTITUDES = ("trusts", "neutral", "suspects")
ATT_CODES = {a: i for i, a in enumerate(ATTITUDES)}
TRUSTS, NEUTRAL, SUSPECTS = 0, 1, 2
