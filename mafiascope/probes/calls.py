"""One probe call built from (the seat's context, the probe, the chained answers it quotes).

Every probe call goes through :func:`build_call`: the in-game engine (mafiascope.probes.scheduler),
the completion of deferred calls after a crash (mafiascope.probes.pending) and the questions asked
of finished games (``mafiascope probes ask``). So a question asked later from the same context,
battery and chained answers is the same request, byte for byte, as the one asked in the game.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..backends.base import CompletionRequest
from .dsl import Probe
from .render import render
from .step_jobs import ChainValue, SeatJob


@dataclass
class ProbeCall:
    question: str
    values: dict[str, str | None]  # placeholder -> the text it was rendered with
    raw_fallback: bool  # a quoted answer is the raw text of an answer that did not parse
    request: CompletionRequest

    @property
    def messages(self) -> list[dict[str, str]]:
        return self.request.messages


def build_call(job: SeatJob, probe: Probe, seed: int, chained: dict[str, ChainValue | None], roles: str, game_id: str,
               max_wait: float | None = None) -> ProbeCall:  # fmt: skip
    """The request for ``probe`` asked of ``job``'s seat. ``chained``: ``prev_<id>``/``last_<id>`` ->
    the answer it quotes (None: no such answer, rendered N/A)."""
    values: dict[str, str | None] = {"player": job.seat, "players": ", ".join(job.players), "roles": roles}
    raw_fallback = False
    for key, cv in chained.items():
        values[key] = cv.text if cv is not None else None
        raw_fallback = raw_fallback or bool(cv is not None and cv.raw and cv.text)
    question = render(probe.question_text(), values)
    messages = job.ctx.with_probe(question)
    req = CompletionRequest(messages, probe.max_tokens, "probe", job.seat, probe.id, seed, game_id=game_id, max_wait=max_wait)
    return ProbeCall(question, values, raw_fallback, req)


def probe_seed(state_seed_of: object, rnd: int, seq: int, seat_idx: int, probe_seq: int) -> int:
    """A probe call's seed: ``state.derive_seed("probe", round, public_msg_seq, seat_idx, probe_seq)`` (a
    pure function of the game seed; the acting seed counter is never touched)."""
    return state_seed_of.derive_seed("probe", rnd, seq, seat_idx, probe_seq)  # type: ignore[attr-defined]
