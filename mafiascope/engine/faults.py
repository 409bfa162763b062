"""The fault budget: a game whose seats fell back on too many of their moves is not data.

A *move* is one seat turn (an utterance record: speech, vote, night action, last words ...);
it *fell back* when the backend failed and the engine applied its logged fallback (the
record's ``fault``). Probe failures are not moves and do not count. The share is judged at
``game_over`` over every move of the game, inherited ones included for a resumed game.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..logs.schema import UTTERANCE_KINDS

DEFAULT_FAULT_BUDGET = 0.2
MAX_CAUSES = 3


def is_move(rec: dict[str, Any]) -> bool:
    return rec.get("kind") in UTTERANCE_KINDS and "player" in rec


def move_faults(records: Iterable[dict[str, Any]]) -> tuple[int, int]:
    """``(moves, moves that fell back)`` over game records."""
    n = k = 0
    for r in records:
        if is_move(r):
            n += 1
            k += bool(r.get("fault"))
    return n, k


def first_causes(records: Iterable[dict[str, Any]], limit: int = MAX_CAUSES) -> list[str]:
    """The first distinct fallback errors, in game order."""
    out: list[str] = []
    for r in records:
        fault = r.get("fault") if is_move(r) else None
        err = str((fault or {}).get("error") or "").strip() if isinstance(fault, dict) else ""
        if err and err[:160] not in out:
            out.append(err[:160])
            if len(out) >= limit:
                break
    return out


def budget_verdict(moves: int, fell_back: int, budget: float, causes: list[str]) -> str | None:
    """``None`` when the game is within budget, else the ``invalid_reason`` text."""
    if moves <= 0 or fell_back / moves <= budget:
        return None
    why = "; ".join(causes) or "no cause recorded"
    return f"{fell_back} of {moves} moves fell back (> {budget * 100:g}%): {why}"


def judge(records: list[dict[str, Any]], budget: float) -> dict[str, Any]:
    """The game_over fields of the fault budget: ``moves``, ``moves_fell_back``, ``fault_budget``,
    and ``invalid`` / ``invalid_reason`` when the share is over the budget."""
    n, k = move_faults(records)
    out: dict[str, Any] = {"moves": n, "moves_fell_back": k, "fault_budget": budget}
    reason = budget_verdict(n, k, budget, first_causes(records) if k else [])
    if reason is not None:
        out.update(invalid=True, invalid_reason=reason)
    return out
