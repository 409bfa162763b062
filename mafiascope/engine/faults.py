"""The budgets that make a game invalid: moves that fell back, and probe answers lost.

Fault budget: a *move* is one seat turn (an utterance record: speech, vote, night action,
last words ...); it *fell back* when the backend failed and the engine applied its logged
fallback (the record's ``fault``). Probe failures are not moves and do not count. The share
is judged at ``game_over`` over every move of the game, inherited ones included for a
resumed game.

Probe-loss budget (``probes.loss_budget``): a scheduled probe call is *lost* when it got no
answer: it failed after its retries, or it was skipped for lagging (``probes.max_lag_s``,
an explicit option). A game that lost more than the budget's share of its scheduled calls
is invalid too: its probe figures would rest on the steps that happened to be answered.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..logs.schema import UTTERANCE_KINDS

DEFAULT_FAULT_BUDGET = 0.2
DEFAULT_PROBE_LOSS_BUDGET = 0.05
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


def judge_probes(probes: dict[str, Any], budget: float) -> dict[str, Any]:
    """``probes_scheduled``, ``probes_lost``, ``probe_loss_budget``, and ``invalid_reason`` when the share
    of scheduled probe calls that got no answer (failed or skipped) is over the budget."""
    scheduled = int(probes.get("scheduled") or 0)
    failed, skipped = int(probes.get("errors") or 0), int(probes.get("skipped") or 0)
    lost = failed + skipped
    out: dict[str, Any] = {"probes_scheduled": scheduled, "probes_lost": lost, "probe_loss_budget": budget}
    if scheduled > 0 and lost / scheduled > budget:
        out["invalid_reason"] = (f"{lost} of {scheduled} probe calls got no answer (> {budget * 100:g}%): "
                                 f"{failed} failed, {skipped} skipped for lagging")  # fmt: skip
    return out


def game_over_record(final: dict[str, Any], backends: dict[str, Any], probes: dict[str, Any] | None,
                     loss_budget: float) -> dict[str, Any]:  # fmt: skip
    """The ``game_over`` record from the one written when the acts ended (``final``: the game_over event,
    ``cost.act``, ``faults`` and the fault verdict), the backends' provenance and the probe figures:
    with probes, the probe-loss verdict joins the fault budget's in ``invalid``/``invalid_reason``."""
    out = {
        k: v
        for k, v in final.items()
        if k not in ("cost", "faults", "invalid", "invalid_reason", "moves", "moves_fell_back", "fault_budget", "backends")
    }
    fault_reason = final.get("invalid_reason") if final.get("invalid") else None
    out["backends"] = backends
    out["cost"] = {**(final.get("cost") or {}), "probes": probes}
    out["faults"] = final.get("faults", 0)
    out.update({k: final[k] for k in ("moves", "moves_fell_back", "fault_budget") if k in final})
    reasons = [fault_reason] if fault_reason else []
    if probes is not None:
        verdict = judge_probes(probes, loss_budget)
        reason = verdict.pop("invalid_reason", None)
        out.update(verdict)
        if reason:
            reasons.append(reason)
    if reasons:
        out.update(invalid=True, invalid_reason="; ".join(reasons))
    return out
