"""``study status`` and ``study report``: the ledger's counts, spend, faults, estimate vs actual, outcomes.

Estimate vs actual compares, for the games settled so far, what the plan (``plan.json``,
written before anything ran) expected per game of their arm with what their usage records
say; ``error`` is ``actual / planned - 1``. Duration: the busy wall time of the ledger (the
union of every game's [claimed, settled] interval) against the plan's duration for that share
of each arm.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

from ..logs.io import loads_line
from ..play.ledger import DONE, SETTLED, StudyLedger, runner_alive
from ..play.usage import probe_coverage
from ..provenance import provenance
from .estimate import busy_seconds, estimate_study
from .schedule import study_schedule
from .spec import StudySpec

PLAN_FILE = "plan.json"
METRICS = ("calls", "prompt_tokens", "completion_tokens", "money")


def _actual(r: dict[str, Any], k: str) -> float:
    return float(r.get("money") or 0.0) if k == "money" else float((r.get("usage") or {}).get(k) or 0)


def _open_stop(recs: list[dict[str, Any]], rows: dict[str, dict[str, Any]]) -> str | None:
    """The reason of the last ``stop`` while it still holds: None once every game is settled or a runner
    has claimed a game after it (a later run with a larger budget went on)."""
    last = max((i for i, r in enumerate(recs) if r.get("event") == "stop"), default=None)
    if last is None or all(r.get("state") in DONE for r in rows.values()):
        return None
    if any(r.get("event") == "state" and r.get("state") == "running" for r in recs[last + 1 :]):
        return None
    return recs[last].get("reason")


def study_status(spec: StudySpec, study_dir: str | Path) -> dict[str, Any]:
    study_dir = Path(study_dir)
    ledger = StudyLedger(study_dir)
    recs = ledger.records()
    rows = ledger.rows(recs)
    plan = loads_line((study_dir / PLAN_FILE).read_text(encoding="utf-8")) if (study_dir / PLAN_FILE).is_file() else None
    settled = [r for r in rows.values() if r.get("state") in DONE]
    arms: dict[str, dict[str, Any]] = defaultdict(lambda: {"pending": 0, "running": 0, "finished": 0, "failed": 0, "invalid": 0,
                                                           "cut": 0, "stale": 0, "money": 0.0, "calls": 0})  # fmt: skip
    for r in rows.values():
        arms[r["arm"]][r.get("state", "pending")] += 1
    # spend counts every attempt (a cut or failed game, a game replayed), as the budget does
    by_backend: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    attempts = [r for r in recs if r.get("event") == "state" and r.get("state") in SETTLED and r.get("game_id") in rows]
    for r in attempts:
        a = arms[rows[r["game_id"]]["arm"]]
        a["money"] = round(a["money"] + max(_actual(r, "money"), float((r.get("metered") or {}).get("money") or 0)), 6)
        a["calls"] += int(_actual(r, "calls"))
        for b, u in (r.get("by_backend") or {}).items():
            for k, v in u.items():
                by_backend[b][k] += int(v)
    spent_money, _ = ledger.spent()
    spend: dict[str, float] = {k: int(sum(_actual(r, k) for r in attempts)) for k in METRICS if k != "money"}
    spend["money"] = round(spent_money, 6)  # also what attempts abandoned by a dead runner held (not known spent)
    vs: dict[str, Any] | None = None
    if plan and settled:
        per_arm = plan["estimate"]["arms"]
        planned = {k: sum(per_arm[r["arm"]]["per_game"][k] for r in settled if r["arm"] in per_arm) for k in METRICS}
        n_arm: dict[str, int] = defaultdict(int)
        for r in settled:
            n_arm[r["arm"]] += 1
        planned["duration_s"] = sum(
            per_arm[a]["duration_s"] * n / max(1, per_arm[a]["games"]) for a, n in n_arm.items() if a in per_arm
        )
        actual: dict[str, float] = {k: round(sum(_actual(r, k) for r in settled), 6) for k in METRICS}
        actual["duration_s"] = round(busy_seconds(settled), 3)
        vs = {"games": len(settled), "planned": {k: round(v, 4) for k, v in planned.items()}, "actual": actual,
              "error": {k: (round(actual[k] / planned[k] - 1, 4) if planned[k] else None) for k in planned}}  # fmt: skip
    running = [r for r in rows.values() if r.get("state") == "running"]
    alive = sorted({str(r.get("runner")) for r in running if runner_alive(study_dir, str(r.get("runner")))})
    stale = [r["game_id"] for r in running if str(r.get("runner")) not in alive]
    for r in running:
        arms[r["arm"]]["stale"] += r["game_id"] in stale
    header = ledger.header() or {}
    current = estimate_study(spec, study_schedule(spec), rows)["total"] if rows else None
    return {
        "study": spec.name,
        "dir": str(study_dir),
        "spec_hash": header.get("spec_hash", spec.spec_hash()),
        "scheduled": len(rows),
        "counts": ledger.counts(rows),
        "arms": {k: dict(v) for k, v in arms.items()},
        "spend": {**spend, "by_backend": {b: dict(v) for b, v in by_backend.items()}},
        "faults": sum(int(r.get("faults") or 0) for r in settled),
        "probes": study_probes(settled),
        "invalid": [
            {"game_id": r["game_id"], "reason": r.get("invalid_reason")} for r in rows.values() if r.get("state") == "invalid"
        ],
        "failed": [{"game_id": r["game_id"], "error": r.get("error")} for r in rows.values() if r.get("state") == "failed"],
        "runners_alive": alive,
        "stale_running": stale,
        "last_stop": _open_stop(recs, rows),
        "ledger_problems": list(ledger.problems),  # "FILE:LINE: skipping a bad ledger record (...)"
        "plan_total": plan["estimate"]["total"] if plan else None,
        "estimate_now": current,
        "estimate_vs_actual": vs,
        "provenance": provenance(
            {
                "spec_hash": header.get("spec_hash", spec.spec_hash()),
                "seed": spec.seed,
                "run_provenance": header.get("provenance"),
            }
        ),  # fmt: skip
    }


def study_probes(settled: list[dict[str, Any]]) -> dict[str, Any]:
    """Probe coverage of the settled games (invalid ones included): in total, per arm, per backend (the
    study's models) and per arm and backend -- calls scheduled, answered, failed, skipped, mean delay."""
    by_arm: dict[str, list[dict[str, Any]]] = defaultdict(list)
    by_b: dict[str, list[dict[str, Any]]] = defaultdict(list)
    by_arm_b: dict[str, dict[str, list[dict[str, Any]]]] = defaultdict(lambda: defaultdict(list))
    for r in settled:
        by_arm[r["arm"]].append(r.get("usage") or {})
        for b, u in (r.get("by_backend") or {}).items():
            by_b[b].append(u)
            by_arm_b[r["arm"]][b].append(u)
    return {
        "total": probe_coverage([r.get("usage") or {} for r in settled]),
        "by_arm": {a: probe_coverage(us) for a, us in by_arm.items()},
        "by_backend": {b: probe_coverage(us) for b, us in sorted(by_b.items())},
        "by_arm_backend": {a: {b: probe_coverage(us) for b, us in sorted(per.items())} for a, per in by_arm_b.items()},
    }


# the per-model figures ``study report`` prints and the Studies tab shows (``--json``: every statistic the
# analytics registry shows per model); labels and formats are the registry's. Outcomes: the side-adjusted score
# (the seat win rate is confounded with the side a model drew; docs/metrics.md §16)
HEADLINE = ("outcome.side_adjusted", "f1.accuracy", "f2.ece", "f4.top1.innocent", "parse.parse_rate")


def headline() -> list[tuple[str, str, Any]]:
    """(key, label, format) of the registered statistics among :data:`HEADLINE`, in that order."""
    from ..analytics.metrics import statistics

    found = {st.key: st for _, st in statistics()}
    return [(k, found[k].label, found[k].format) for k in HEADLINE if k in found]


def figure(entry: dict[str, Any], fmt: Any) -> str:
    """A metric entry as text in its statistic's format: its point and 95 % interval, marked when fragile
    (:data:`mafiascope.analytics.metric.FRAGILE_MARK`)."""
    from ..analytics.metrics import marked

    ci = entry.get("ci95")
    return marked(
        fmt.text(entry["point"]) + (f" [{fmt.text(ci[0])}, {fmt.text(ci[1])}]" if ci and None not in ci else ""),
        entry.get("fragile"),
    )


def arm_models(games_dir: str | Path, game_ids: list[str]) -> dict[str, Any]:
    """Per model over one arm's finished games: its seats and games and every seat-level metric
    (``{key: {point, ci95, n, games, fragile}}``: outcomes, votes, parse rate, F1-F4, dynamics, personality,
    plans; intervals from the game-level cluster bootstrap), as ``mafiascope analyze`` attributes them to
    the model of each seat (:func:`mafiascope.analytics.seats.by_model`)."""
    from ..analytics.corpus import load_corpus
    from ..analytics.modes import DEFAULT
    from ..analytics.seats import by_model

    if not game_ids:
        return {}
    corpus = load_corpus(Path(games_dir), manifest=list(game_ids), probed_only=False)
    return {m: {"seats": e["seats"], "games": e["games"], "metrics": e["metrics"]} for m, e in by_model(corpus, DEFAULT).items()}


def study_report(spec: StudySpec, study_dir: str | Path, *, models: bool = False) -> dict[str, Any]:
    """Outcomes per arm over finished games (invalid, cut and failed games counted, excluded); ``models``:
    also each arm's per-model figures (:func:`arm_models`)."""
    from ..arena.scoring import wilson

    rows = StudyLedger(study_dir).rows()
    arms = {}
    probes = study_probes([r for r in rows.values() if r.get("state") in DONE])
    for arm in spec.arms:
        rs = [r for r in rows.values() if r["arm"] == arm.name]
        ok = [r for r in rs if r.get("state") == "finished"]
        n = len(ok)
        mafia = sum(1 for r in ok if r.get("winner") == "Mafia")
        lo, hi = wilson(mafia, n)
        arms[arm.name] = {
            "rules": arm.rules, "language": arm.language, "probes": arm.probes, "lineup": arm.lineup.model_dump(exclude_none=True),
            "scheduled": len(rs), "finished": n, "invalid": sum(1 for r in rs if r.get("state") == "invalid"),
            "failed": sum(1 for r in rs if r.get("state") == "failed"), "cut": sum(1 for r in rs if r.get("state") == "cut"),
            "mafia_wins": mafia, "mafia_win_rate": round(mafia / n, 4) if n else None,
            "mafia_win_ci95": [round(lo, 4), round(hi, 4)] if lo is not None and hi is not None else None,
            "mean_rounds": round(sum(int(r.get("rounds") or 0) for r in ok) / n, 3) if n else None,
            "faults": sum(int(r.get("faults") or 0) for r in ok),
            "money": round(sum(float(r.get("money") or 0) for r in rs if r.get("state") in SETTLED), 6),
            "probe_coverage": probes["by_arm"].get(arm.name),
            "probe_coverage_by_backend": probes["by_arm_backend"].get(arm.name, {}),
            "game_ids": [r["game_id"] for r in ok],
        }  # fmt: skip
        if models:
            arms[arm.name]["models"] = arm_models(Path(study_dir) / "games", arms[arm.name]["game_ids"])
    header = StudyLedger(study_dir).header() or {}
    return {"study": spec.name, "dir": str(study_dir), "arms": arms, "games_dir": str(Path(study_dir) / "games"),
            "provenance": provenance({"spec_hash": header.get("spec_hash", spec.spec_hash()), "seed": spec.seed,
                                      "run_provenance": header.get("provenance")})}  # fmt: skip
