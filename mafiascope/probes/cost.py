"""Probing cost per game (``mafiascope cost LOGS``).

Our games carry the probe engine's accounting in ``game_over.cost.probes`` (API token
usage where the backend reported it, else an estimate flagged ``tokens_estimated``).
Games without it (the original corpora) are measured from ``introspection.jsonl``: calls,
summed latency, and tokens estimated as characters / 3 of question and answer (docs/metrics.md
§10), always flagged as an estimate.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..logs import GameLog, LogFormatError, iter_probe_records, kinds, read_game
from ..logs.io import PROBE_FILE, list_game_dirs

_ACT_KINDS_ORIGINAL = (kinds.INTRO, kinds.NIGHT_MAFIA, kinds.NIGHT_DOCTOR, kinds.DAY_DISCUSS, kinds.DAY_VOTE)


def _from_probe_log(gdir: Path) -> dict[str, Any]:
    out: dict[str, Any] = {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0, "latency_ms": 0, "errors": 0,
                           "tokens_estimated": True, "source": PROBE_FILE, "by_probe": {}}  # fmt: skip
    for rec in iter_probe_records(gdir):
        pid = rec.get("probe_id") or "?"
        bp = out["by_probe"].setdefault(pid, {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0, "latency_ms": 0, "errors": 0})
        q, a = rec.get("question") or "", rec.get("answer_raw") or ""
        err = bool(rec.get("error")) or (isinstance(a, str) and a.startswith("ERROR"))
        for acc in (out, bp):
            acc["calls"] += 1
            acc["prompt_tokens"] += len(q) // 3
            acc["completion_tokens"] += len(a) // 3
            acc["latency_ms"] += int(rec.get("latency_ms") or 0)
            acc["errors"] += int(err)
    return out


def _read(gdir: Path) -> GameLog | None:
    try:
        return read_game(gdir, skip_corrupt=True)
    except LogFormatError:  # no setup record: count what the probe log says
        return None


def game_cost(gdir: Path) -> dict[str, Any]:
    probes: dict[str, Any] | None = None
    act: dict[str, Any] | None = None
    utterances = 0
    original = True
    log = _read(gdir)
    for rec in [log.raw_setup, *log.records] if log is not None else []:
        kind = kinds.of(rec)
        if kind == kinds.SETUP and rec.get("schema_version"):
            original = False
        if kind in kinds.UTTERANCE_KINDS and (not original or kind in _ACT_KINDS_ORIGINAL):
            utterances += 1
        if kind == kinds.GAME_OVER and isinstance(rec.get("cost"), dict):
            probes = rec["cost"].get("probes")
            act = rec["cost"].get("act")
    if probes:
        probes = {**probes, "source": "game_over.cost.probes"}
    else:
        probes = _from_probe_log(gdir)
    act_calls = int(act["calls"]) if act and act.get("calls") is not None else utterances
    calls = int(probes.get("calls") or 0)
    return {
        "game_id": gdir.name,
        "probe_calls": calls,
        "act_calls": act_calls,
        "multiplier": round((calls + act_calls) / act_calls, 2) if act_calls else None,
        "probe_prompt_tokens": int(probes.get("prompt_tokens") or 0),
        "probe_completion_tokens": int(probes.get("completion_tokens") or 0),
        "tokens_estimated": bool(probes.get("tokens_estimated", True)),
        "probe_latency_ms": int(probes.get("latency_ms") or 0),
        "mean_probe_latency_ms": round(int(probes.get("latency_ms") or 0) / calls, 1) if calls else None,
        "probe_wall_ms": probes.get("wall_ms"),
        "probe_errors": int(probes.get("errors") or 0),
        "act_prompt_tokens": int(act.get("prompt_tokens") or 0) if act else None,
        "act_completion_tokens": int(act.get("completion_tokens") or 0) if act else None,
        "source": probes.get("source"),
        "by_probe": probes.get("by_probe") or {},
    }


def cost_logs(root: str | Path) -> dict[str, Any]:
    games = [game_cost(d) for d in list_game_dirs(root)]
    tot: dict[str, Any] = {"probe_calls": 0, "act_calls": 0, "probe_prompt_tokens": 0, "probe_completion_tokens": 0, "probe_latency_ms": 0, "probe_errors": 0}
    for g in games:
        for k in tot:
            tot[k] += g[k] or 0
    tot["tokens_estimated"] = any(g["tokens_estimated"] for g in games)
    tot["multiplier"] = round((tot["probe_calls"] + tot["act_calls"]) / tot["act_calls"], 2) if tot["act_calls"] else None
    by_probe: dict[str, dict[str, int]] = {}
    for g in games:
        for pid, c in g["by_probe"].items():
            acc = by_probe.setdefault(pid, {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0, "latency_ms": 0, "errors": 0})
            for k in acc:
                acc[k] += int(c.get(k) or 0)
    tot["by_probe"] = by_probe
    return {"games": len(games), "totals": tot, "per_game": games}
