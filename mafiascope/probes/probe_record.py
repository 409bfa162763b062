"""One probe call as a record: its answer parsed, checked and normalised, its tokens (API usage
or an estimate), the fields of ``introspection.jsonl`` (before compaction) validated against
``logs.schema.ProbeRecord``, and the running cost."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from collections.abc import Iterable
from typing import Any

from ..backends.base import Completion, estimate_tokens
from ..engine.records import check
from ..logs.probe_steps import is_skipped
from ..logs.schema import ProbeRecord
from .answer_schema import check as check_answer
from .dsl import Probe
from .parsing import chain_text, finite, parse_answer
from .shapes import normalise, validate
from .step_jobs import ChainValue, SeatJob


@dataclass
class ProbeCost:
    """Running totals of probe records. A call *skipped* (it lagged behind ``max_lag_s``, an explicit
    option) was never sent: it counts in ``scheduled`` and ``skipped`` only -- never as a call, an
    error, a parse failure or spend. ``delay``: how long after its step an answer arrived."""

    scheduled: int = 0  # every call the battery asked for at the steps so far (sent or skipped)
    calls: int = 0  # sent to the backend
    answered: int = 0  # a reply came back (parsed or not)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    estimated_calls: int = 0  # calls whose tokens are an estimate (no API usage)
    latency_ms: int = 0
    errors: int = 0  # sent, and no reply (transport failure after the retries, or an internal error)
    parsed: int = 0
    valid: int = 0
    repaired: int = 0
    skipped: int = 0  # not sent: it would have queued longer than probes.max_lag_s
    delays_ms: list[float] = field(default_factory=list, repr=False)  # per answered call: step capture -> answer

    def as_dict(self) -> dict[str, Any]:
        d = {k: v for k, v in vars(self).items() if k != "delays_ms"}
        d["tokens_estimated"] = self.estimated_calls > 0
        d["delay_ms"] = delay_summary(self.delays_ms)
        return d

    def count(self, rec: dict[str, Any]) -> None:
        """Add one written probe record (:func:`probe_record`, or a full record read back) to the totals."""
        self.scheduled += 1
        if is_skipped(rec):
            self.skipped += 1
            return
        self.calls += 1
        self.prompt_tokens += rec.get("tokens_prompt") or 0
        self.completion_tokens += rec.get("tokens_completion") or 0
        self.estimated_calls += int(bool(rec.get("tokens_estimated")))
        self.latency_ms += rec.get("latency_ms") or 0
        failed = rec.get("error") is not None
        self.errors += int(failed)
        self.answered += int(not failed)
        self.parsed += int(bool(rec.get("answer_parse_ok")))
        self.valid += int(rec.get("answer_valid") is True)
        self.repaired += int(bool(rec.get("answer_repaired")))
        t0, t1 = rec.get("timestamp"), rec.get("finished_ts")
        if not failed and isinstance(t0, (int, float)) and isinstance(t1, (int, float)) and t0 > 0:
            self.delays_ms.append(max(0.0, (t1 - t0) * 1000))


def delay_summary(delays_ms: list[float]) -> dict[str, int | None]:
    """Mean, median, 95th percentile and maximum answer delay in ms (None without answers)."""
    if not delays_ms:
        return {"n": 0, "mean": None, "p50": None, "p95": None, "max": None}
    xs = sorted(delays_ms)

    def q(p: float) -> int:
        return int(round(xs[min(len(xs) - 1, int(p * (len(xs) - 1) + 0.5))]))

    return {"n": len(xs), "mean": int(round(sum(xs) / len(xs))), "p50": q(0.5), "p95": q(0.95), "max": int(round(xs[-1]))}


def seat_figures(c: ProbeCost) -> dict[str, Any]:
    """One seat's probe coverage for ``game_over.cost.probes.by_seat`` (sums, so they add up over seats and games)."""
    return {"scheduled": c.scheduled, "answered": c.answered, "errors": c.errors, "skipped": c.skipped,
            "delay_ms_sum": int(round(sum(c.delays_ms))), "delay_ms_max": int(round(max(c.delays_ms))) if c.delays_ms else None}


def cost_of_records(records: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """``game_over.cost.probes`` counted from full probe records (a game whose probes were finished by a resume)."""
    total, by_probe, by_seat = ProbeCost(), {}, {}
    for rec in records:
        for acc in (total, by_probe.setdefault(str(rec.get("probe_id")), ProbeCost()), by_seat.setdefault(str(rec.get("player_name")), ProbeCost())):
            acc.count(rec)
    return {**total.as_dict(), "by_probe": {k: c.as_dict() for k, c in by_probe.items()},
            "by_seat": {k: seat_figures(c) for k, c in by_seat.items()}}


def probe_record(game_id: str, job: SeatJob, probe: Probe, seq: int, question: str, c: Completion, raw_fallback: bool,
                 started: float | None, finished: float | None, messages: list[dict[str, str]]) -> tuple[dict[str, Any], ChainValue]:  # fmt: skip
    """The record of one call and what it gives a later chained question."""
    shape = probe.answer_shape
    if c.ok:
        pa = parse_answer(c.text)
        parsed = finite(pa.value)
        if probe.answer is not None:  # a declared schema (custom probe)
            valid, norm = check_answer(probe.answer, parsed, job.seats) if pa.ok else (False, None)
        else:
            valid = validate(shape, parsed) if pa.ok else (False if shape else None)
            norm = normalise(shape, parsed, job.seats) if pa.ok and shape else None
        if pa.ok:
            cv = ChainValue(chain_text(parsed))
        else:
            cv = ChainValue(pa.text.strip() or None, raw=True)
    else:
        pa, parsed, valid, norm, cv = None, None, None, None, ChainValue(None)
    measured = int(round((finished - started) * 1000)) if started is not None and finished is not None else 0
    latency = c.latency_ms or measured
    if c.prompt_tokens is None and messages:
        tp, est = estimate_tokens("".join(m["content"] for m in messages)), True
    else:
        tp, est = c.prompt_tokens, c.tokens_estimated
    if c.completion_tokens is None and c.ok:
        tc, est = estimate_tokens(c.text or " "), True
    else:
        tc = c.completion_tokens
    rec: dict[str, Any] = {
        "timestamp": job.t_step,  # when the seat's information state was captured (see docs/probes.md)
        "game_id": game_id,
        "round": job.step.round,
        "public_msg_seq": job.step.public_msg_seq,
        "player_idx": job.seat_idx,
        "player_name": job.seat,
        "probe_seq": seq,
        "probe_id": probe.id,
        "question": question,
        "answer_raw": pa.text if pa is not None else None,
        "answer_parsed": parsed,
        "answer_parse_ok": bool(pa and pa.ok),
        "answer_repaired": bool(pa and pa.repaired),
        "answer_valid": valid,
        "model": job.model,
        "role": job.role,
        "phase": job.step.phase,
        "latency_ms": latency,
        "chain_used_raw_fallback": raw_fallback,
        "error": None if c.ok else (c.error or "backend failure"),
        "speaker": job.seat == job.step.speaker,
        "tokens_prompt": tp,
        "tokens_completion": tc,
        "tokens_estimated": est,
        # extensions
        "step_index": job.step.step_index,
        "when": job.kind,
        "answer_norm": norm,
        "think_stripped": bool(pa and pa.think_stripped),
        "finished_ts": time.time(),
        "attempts": c.attempts,
    }
    lagged = not c.ok and bool(c.meta.get("lagged"))
    if lagged:
        rec["lagged"] = True
    return check(ProbeRecord, rec), cv  # validated against the schema before it is written
