"""The one async interface every seat and every probe talks through.

A backend turns a chat context into text. The engine never sees transport details:
it gets a :class:`Completion` whose ``ok`` flag says whether ``text`` is a real reply.
A failed call is never spoken as a player's words -- the engine applies a logged
fallback instead (see :mod:`mafiascope.play.game`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

CallKind = Literal["act", "probe"]


@dataclass
class CompletionRequest:
    messages: list[dict[str, str]]  # [{"role": "system"|"user"|"assistant", "content": ...}]
    max_tokens: int = 400
    kind: CallKind = "act"  # probe calls must never alter the seat's acting state
    seat: str = ""  # seat name (for logs and errors)
    purpose: str = ""  # e.g. "day_vote", "night_mafia", or the probe id
    seed: int | None = None  # deterministic per call; offline bots derive their RNG from it
    temperature: float | None = None  # per-call override (e.g. bifurcation sampling)
    game_id: str = ""
    max_wait: float | None = None  # longest the call may queue behind the backend's limits (probes); None = as long as it takes
    targets: list[str] | None = (
        None  # the names the engine accepts as this move's target (a vote, kill, check ...); None = free speech
    )


@dataclass
class Completion:
    text: str = ""
    ok: bool = True
    error: str | None = None  # transport / backend error (never contains secrets)
    attempts: int = 1
    latency_ms: int = 0
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    tokens_estimated: bool = False
    served_model: str | None = None
    finish_reason: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)


class BackendError(RuntimeError):
    """Raised for configuration errors (bad key, unknown model): fail fast, never retried."""


@runtime_checkable
class Backend(Protocol):
    name: str  # registry name
    type: str  # "bot" | "openai" | "bus" | "human"
    model_label: str  # label recorded in setup.players[].model

    async def complete(self, request: CompletionRequest) -> Completion: ...

    def describe(self) -> dict[str, Any]:
        """Provenance for setup/game_over records: type, model, host, sampling, versions; never secrets."""
        ...

    async def aclose(self) -> None: ...


def estimate_tokens(text: str) -> int:
    """Rough token estimate (4 characters per token) used when an API reports no usage."""
    return max(1, len(text) // 4)
