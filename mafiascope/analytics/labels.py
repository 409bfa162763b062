"""Role-label codes for analytics, as ``L``: they are :mod:`mafiascope.lexicon.labels`, which the
probe engine shares and so lives below both (analytics imports the probes, never the reverse)."""

from __future__ import annotations

from ..lexicon.labels import (
    ATT_CODES,
    ATTITUDES,
    CODE_NAMES,
    DOCTOR,
    DON,
    EXACT_CODES,
    EXACT_EMPTY,
    EXACT_NONSTRING,
    EXACT_OTHER,
    MAFIA,
    NEUTRAL,
    ROLE_CODES,
    SHERIFF,
    SUSPECTS,
    TRUSTS,
    UNKNOWN,
    UNUSABLE,
    VILLAGER,
    exact_role,
    is_mafia_code,
    normalise_role,
    true_role_code,
)

__all__ = ["ATT_CODES", "ATTITUDES", "CODE_NAMES", "DOCTOR", "DON", "EXACT_CODES", "EXACT_EMPTY", "EXACT_NONSTRING", "EXACT_OTHER", "MAFIA", "NEUTRAL", "ROLE_CODES", "SHERIFF", "SUSPECTS", "TRUSTS", "UNKNOWN", "UNUSABLE", "VILLAGER", "exact_role", "is_mafia_code", "normalise_role", "true_role_code"]
