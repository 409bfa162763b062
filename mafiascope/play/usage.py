"""What one game cost, per backend, read from its logs (the usage records), and its price.

Acting calls: ``game_over.cost.act.by_backend`` (the runner's accounting: API usage where the
backend reported it, else the backend's own estimate). Logs without it (older games) split
``cost.act`` over the backends by their share of utterances. Probe calls: every
``introspection.jsonl`` record of a call that was sent, charged to the backend of the seat
that was asked, with its ``tokens_prompt``/``tokens_completion`` (characters / 3 where a record
has none). A call skipped for lagging (``probes.max_lag_s``) was never sent: it is no call and
no spend, only ``probes_skipped``. Per backend the probe coverage is counted too: calls
scheduled, answered, failed (no answer after the retries), skipped, and the summed delay from
each answered call's step to its answer.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..logs import LogFormatError, iter_probe_records, kinds, read_game
from ..logs.probe_steps import is_skipped


class Price(BaseModel):
    """US dollars (or any currency, consistently) per million tokens."""

    model_config = ConfigDict(extra="forbid")

    prompt_per_mtok: float = Field(ge=0)
    completion_per_mtok: float = Field(ge=0)


FIELDS = ("act_calls", "probe_calls", "prompt_tokens", "completion_tokens")
PROBE_FIELDS = ("probes_scheduled", "probes_answered", "probes_failed", "probes_skipped", "probe_delay_ms_sum")


def _row() -> dict[str, int]:
    return {k: 0 for k in (*FIELDS, *PROBE_FIELDS)}


def game_usage(gdir: str | Path) -> dict[str, Any]:
    """``{"by_backend": {name: {act_calls, probe_calls, prompt_tokens, completion_tokens}}, "game_over": rec | None}``."""
    gdir = Path(gdir)
    by: dict[str, dict[str, int]] = {}
    seat_backend: dict[str, str] = {}
    utterances: dict[str, int] = {}
    over: dict[str, Any] | None = None
    try:
        log = read_game(gdir, skip_corrupt=True)
        records = [log.raw_setup, *log.records]
    except LogFormatError:  # no setup record: only the probe log counts
        records = []
    for rec in records:
        kind = kinds.of(rec)
        if kind == kinds.SETUP:
            seat_backend = {p["name"]: str(p.get("backend")) for p in rec.get("players") or [] if "name" in p}
        elif kind == kinds.GAME_OVER:
            over = rec
        elif kind in kinds.UTTERANCE_KINDS and rec.get("player") in seat_backend:
            b = seat_backend[rec["player"]]
            utterances[b] = utterances.get(b, 0) + 1
    act = ((over or {}).get("cost") or {}).get("act") or {}
    if isinstance(act.get("by_backend"), dict):
        for b, c in act["by_backend"].items():
            row = by.setdefault(str(b), _row())
            row["act_calls"] += int(c.get("calls") or 0)
            row["prompt_tokens"] += int(c.get("prompt_tokens") or 0)
            row["completion_tokens"] += int(c.get("completion_tokens") or 0)
    elif act:
        total = sum(utterances.values()) or 1
        for b, n in utterances.items():
            row = by.setdefault(b, _row())
            row["act_calls"] += round(int(act.get("calls") or 0) * n / total)
            row["prompt_tokens"] += round(int(act.get("prompt_tokens") or 0) * n / total)
            row["completion_tokens"] += round(int(act.get("completion_tokens") or 0) * n / total)
    for rec in iter_probe_records(gdir):
        backend = seat_backend.get(str(rec.get("player_name")))
        if backend is None:
            continue
        row = by.setdefault(backend, _row())
        row["probes_scheduled"] += 1
        if is_skipped(rec):
            row["probes_skipped"] += 1
            continue
        row["probe_calls"] += 1
        if rec.get("error") is not None:
            row["probes_failed"] += 1
        else:
            row["probes_answered"] += 1
            t0, t1 = rec.get("timestamp"), rec.get("finished_ts")
            if isinstance(t0, (int, float)) and isinstance(t1, (int, float)) and t0 > 0:
                row["probe_delay_ms_sum"] += max(0, round((t1 - t0) * 1000))
        tp, tc = rec.get("tokens_prompt"), rec.get("tokens_completion")
        row["prompt_tokens"] += int(tp) if tp is not None else len(rec.get("question") or "") // 3
        row["completion_tokens"] += int(tc) if tc is not None else len(str(rec.get("answer_raw") or "")) // 3
    return {"by_backend": by, "game_over": over}


def money(by_backend: dict[str, dict[str, int]], prices: dict[str, Price | None]) -> float:
    """Spend of a usage table at the study's prices (backends without a price cost nothing)."""
    total = 0.0
    for b, row in by_backend.items():
        p = prices.get(b)
        if p is not None:
            total += row["prompt_tokens"] / 1e6 * p.prompt_per_mtok + row["completion_tokens"] / 1e6 * p.completion_per_mtok
    return total


def totals(by_backend: dict[str, dict[str, int]]) -> dict[str, int]:
    out = _row()
    for row in by_backend.values():
        for k in out:
            out[k] += int(row.get(k) or 0)
    out["calls"] = out["act_calls"] + out["probe_calls"]
    return out


def probe_coverage(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Probe calls scheduled, answered, failed and skipped over usage rows (a study's games, an arm's, a
    backend's), the share answered and the mean delay from a step to its answer (seconds)."""
    tot = {k: sum(int(r.get(k) or 0) for r in rows) for k in PROBE_FIELDS}
    n, ans = tot["probes_scheduled"], tot["probes_answered"]
    return {"scheduled": n, "answered": ans, "failed": tot["probes_failed"], "skipped": tot["probes_skipped"],
            "answered_share": round(ans / n, 4) if n else None,
            "mean_delay_s": round(tot["probe_delay_ms_sum"] / ans / 1000, 3) if ans else None}  # fmt: skip
