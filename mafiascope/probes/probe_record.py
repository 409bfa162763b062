"""One probe call as a record: its answer parsed, checked and normalised, its tokens (API usage
or an estimate), the fields of ``introspection.jsonl`` (before compaction), and the running cost."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from ..backends.base import Completion, estimate_tokens
from .answer_schema import check as check_answer
from .dsl import Probe
from .parsing import chain_text, finite, parse_answer
from .shapes import normalise, validate
from .step_jobs import ChainValue, SeatJob


@dataclass
class ProbeCost:
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    estimated_calls: int = 0  # calls whose tokens are an estimate (no API usage)
    latency_ms: int = 0
    errors: int = 0
    parsed: int = 0
    valid: int = 0
    repaired: int = 0
    lagged: int = 0  # calls skipped because they queued longer than max_lag_s behind the backend's limits

    def as_dict(self) -> dict[str, Any]:
        d = dict(vars(self))
        d["tokens_estimated"] = self.estimated_calls > 0
        return d

    def count(self, rec: dict[str, Any]) -> None:
        """Add one written probe record (:func:`probe_record`) to the totals."""
        self.calls += 1
        self.prompt_tokens += rec["tokens_prompt"] or 0
        self.completion_tokens += rec["tokens_completion"] or 0
        self.estimated_calls += int(bool(rec["tokens_estimated"]))
        self.latency_ms += rec["latency_ms"]
        self.errors += int(rec["error"] is not None)
        self.parsed += int(rec["answer_parse_ok"])
        self.valid += int(rec["answer_valid"] is True)
        self.repaired += int(rec["answer_repaired"])
        self.lagged += int(bool(rec.get("lagged")))


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
    return rec, cv
