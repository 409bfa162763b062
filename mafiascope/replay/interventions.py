"""Interventions: what a branch changes at its fork point.

* no intervention (``None``): a plain continuation; each replica draws with its own seed.
* :class:`ReplaceUtterance`: the seat's turn at step R.S says the given text instead.
* :class:`OverrideNight`: the seat's night action at (or after) the fork point targets the given player.

Both are applied the same way: the branch restarts from the snapshot just *before* the
seat's turn and the seat's backend is wrapped so that this one turn returns the forced
text. The engine then parses it, logs it, probes it and lets everyone downstream see it,
exactly as if the seat had said it (an unreadable vote stays an invalid vote).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from ..backends.base import Backend, Completion, CompletionRequest
from ..engine import prompts

NIGHT_STAGE_ACTION = {"night_mafia": "kill", "night_doctor": "protect", "night_sheriff": "check", "night_don": "check"}


@dataclass
class ReplaceUtterance:
    seat: str
    text: str
    type: str = "replace_utterance"
    step: list[int] | None = None  # the replaced turn [round, msg_seq]
    kind: str | None = None
    original_text: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)  # experiment provenance (variant_idx, source ...)

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        extra = d.pop("extra")
        return {**d, **extra}


@dataclass
class OverrideNight:
    seat: str
    target: str
    type: str = "override_night"
    step: list[int] | None = None
    kind: str | None = None
    action: str | None = None
    original_target: str | None = None
    text: str = ""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


Intervention = ReplaceUtterance | OverrideNight


def night_action_text(language: str, action: str, target: str) -> str:
    """The protocol line of a night action in the seat's language, e.g. ``ACTION: Kill Logan``."""
    p = prompts.pack(language)
    line = prompts.action_format(p, action)
    return line.replace("<name>", target).replace("<имя>", target)


class ForcedReply:
    """Wraps a backend: the seat's next acting turn of ``kind`` returns ``text``.

    A re-ask right after the forced turn (unreadable vote) gets the same text again, so the
    replacement stands as written. Every other call passes through unchanged. The re-ask is
    recognised by its messages (the forced request's, then the forced text, then the
    reminder): the seat's later turns also carry the forced text in their history, and
    must reach the real backend.
    """

    def __init__(self, inner: Backend, seat: str, kind: str, text: str):
        self.inner = inner
        self.seat, self.kind, self.text = seat, kind, text
        self.name = inner.name
        self.type = getattr(inner, "type", "unknown")
        self.model_label = getattr(inner, "model_label", inner.name)
        self.used = False
        self._forced_messages: list[dict[str, str]] | None = None  # the forced request's, until its re-ask

    async def complete(self, request: CompletionRequest) -> Completion:
        if request.kind == "act" and request.seat == self.seat:
            if not self.used and request.purpose == self.kind:
                self.used = True
                self._forced_messages = list(request.messages)
                return Completion(text=self.text, meta={"forced": True})
            forced = self._forced_messages
            if (forced is not None and len(request.messages) == len(forced) + 2
                    and request.messages[: len(forced)] == forced
                    and request.messages[-2].get("role") == "assistant" and request.messages[-2].get("content") == self.text):  # fmt: skip
                self._forced_messages = None  # the engine re-asks once
                return Completion(text=self.text, meta={"forced": True, "reask": True})
            self._forced_messages = None  # the seat moved on: no re-ask of the forced turn can follow
        return await self.inner.complete(request)

    def describe(self) -> dict[str, Any]:
        return self.inner.describe()

    async def aclose(self) -> None:  # the inner backend is shared; its owner closes it
        pass

    def __getattr__(self, item: str) -> Any:
        return getattr(self.inner, item)
