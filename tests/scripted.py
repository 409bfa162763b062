"""A scripted seat backend for rule tests: replies come from a plan the test writes.

This is not a stand-in for a model: rule tests need exact control over who votes for
whom, which is what a script gives. Games with real offline players use the bot backend.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from mafiascope.backends.base import Completion, CompletionRequest

Plan = Callable[[str, str, int, list[str]], str]  # (seat, purpose, round, alive) -> reply text


def alive_from(messages: list[dict[str, str]]) -> list[str]:
    m = re.findall(r"Alive: ([^\n.]+)\.", messages[-1]["content"])
    return [s.strip() for s in m[-1].split(",")] if m else []


def round_from(messages: list[dict[str, str]]) -> int:
    m = re.findall(r"(?:NIGHT|DAY) (\d+)", messages[-1]["content"])
    return int(m[-1]) if m else 0


class ScriptedBackend:
    type = "scripted"

    def __init__(self, name: str, plan: Plan, model_label: str = "scripted"):
        self.name = name
        self.model_label = model_label
        self.plan = plan
        self.requests: list[CompletionRequest] = []

    async def complete(self, request: CompletionRequest) -> Completion:
        self.requests.append(request)
        text = self.plan(request.seat, request.purpose, round_from(request.messages), alive_from(request.messages))
        if text is None:
            return Completion(text="", ok=False, error="scripted transport failure", attempts=3)
        return Completion(text=text, prompt_tokens=10, completion_tokens=5)

    def describe(self) -> dict[str, Any]:
        return {"type": "scripted", "model": self.model_label}

    async def aclose(self) -> None:
        pass


def table_plan(kills: dict[int, str], votes: dict[int, dict[str, str]], protect: dict[int, str] | None = None,
               checks: dict[int, str] | None = None) -> Plan:  # fmt: skip
    """Mafia kill ``kills[round]``, seats vote ``votes[round][seat]`` (default: abstain text)."""

    def plan(seat: str, purpose: str, rnd: int, alive: list[str]) -> str:
        if purpose == "night_mafia":
            return f"Quiet night.\nACTION: Kill {kills.get(rnd, 'nobody')}"
        if purpose == "night_doctor":
            return f"ACTION: Protect {(protect or {}).get(rnd, seat)}"
        if purpose == "night_sheriff":
            return f"ACTION: Check {(checks or {}).get(rnd, alive[0])}"
        if purpose == "day_vote":
            target = votes.get(rnd, {}).get(seat)
            return f"My vote.\nVOTE: {target}" if target else "I will not vote.\nVOTE: nobody"
        return f"I am {seat} and I have thoughts."

    return plan
