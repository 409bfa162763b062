"""A hard spending cap, call by call: each game holds an allowance of the budget, and every call reserves
its worst case from it before it is made.

A game the runner admits under a budget gets an *allowance* (money and calls), written into its
``running`` claim under the ledger's lock so that, over every runner of the study, what settled
attempts spent plus what running attempts hold never exceeds the budget. Inside the game, each
backend is wrapped (:class:`MeteredBackend`): before a call it reserves the call's *ceiling* -- the
most it can cost -- and, after it, is charged what the call cost; when the ceiling does not fit in
what the allowance has left, the game asks the runner for more (a ``reserve`` record, granted only
from budget nobody holds) and, refused, makes no more calls: the game is cut (``halt``), its
``game_over`` says so (``cut``, ``invalid``) and the ledger settles it ``cut``.

The ceiling of a call: prompt tokens at most the UTF-8 bytes of its messages plus
``TOKENS_PER_MESSAGE`` per message and ``TOKENS_PER_CALL`` (a token is at least one byte) and
completion tokens at most its ``max_tokens``, at the backend's price. A call is charged the tokens
its usage reports (an estimate where it reports none), as the ledger's money counts them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from ..backends.base import Completion, CompletionRequest, estimate_tokens
from .usage import Price

TOKENS_PER_MESSAGE = 8
TOKENS_PER_CALL = 16


def ceiling_tokens(req: CompletionRequest) -> tuple[int, int]:
    """The most (prompt, completion) tokens a call can be billed."""
    prompt = sum(len(str(m.get("content") or "").encode("utf-8")) + TOKENS_PER_MESSAGE for m in req.messages) + TOKENS_PER_CALL
    return prompt, int(req.max_tokens)


def charged_tokens(req: CompletionRequest, c: Completion) -> tuple[int, int]:
    """The (prompt, completion) tokens a call is charged: its reported usage, else the estimate the logs keep."""
    prompt = (
        c.prompt_tokens
        if c.prompt_tokens is not None
        else estimate_tokens("".join(str(m.get("content") or "") for m in req.messages))
    )
    completion = c.completion_tokens if c.completion_tokens is not None else (estimate_tokens(c.text or " ") if c.ok else 0)
    return int(prompt), int(completion)


def price_of(tokens: tuple[int, int], price: Price | None) -> float:
    return (tokens[0] * price.prompt_per_mtok + tokens[1] * price.completion_per_mtok) / 1e6 if price is not None else 0.0


class Allowance:
    """One game's share of the budget: ``money`` / ``calls`` (None: not capped), grown by ``top_up(want)``
    (``{"money": m, "calls": c}`` wanted on top; returns the new whole allowance, or None when refused)."""

    def __init__(self, money: float | None, calls: float | None, prices: dict[str, Price | None],
                 top_up: Callable[[dict[str, float]], dict[str, Any] | None] | None = None) -> None:  # fmt: skip
        self.money, self.calls = money, calls
        self.initial = {"money": money or 0.0, "calls": calls or 0.0}
        self.prices = prices
        self.top_up = top_up
        self.spent_money = 0.0
        self.spent_calls = 0
        self._held_money = 0.0
        self._held_calls = 0
        self.cut: str | None = None
        self.over_ceiling = 0
        self._lock = threading.Lock()  # probe calls of network backends run on another thread

    def reserve(self, backend: str, req: CompletionRequest) -> float | None:
        """Hold the call's ceiling (its money; one call); None: it does not fit, the game is cut."""
        worst = price_of(ceiling_tokens(req), self.prices.get(backend))
        with self._lock:
            if self.cut is not None:
                return None
            short = self._short(worst)
            if short is not None and self.top_up is not None:
                want = {"money": max(short[0], 0.5 * self.initial["money"]), "calls": max(short[1], 0.5 * self.initial["calls"]),
                        "need_money": short[0], "need_calls": short[1]}  # fmt: skip
                new = self.top_up(want)
                if new is not None:
                    self.money = float(new.get("money") or 0.0) if self.money is not None else None
                    self.calls = float(new.get("calls") or 0.0) if self.calls is not None else None
                    short = self._short(worst)
            if short is not None:
                what = (f"{max(0.0, (self.money or 0.0) - self.spent_money - self._held_money):.6f} of its money allowance"
                        if short[0] > 0 else f"{max(0, int((self.calls or 0) - self.spent_calls - self._held_calls))} of its calls")  # fmt: skip
                self.cut = (f"the budget's hard cap: the next call ({backend}, up to {worst:.6f}) does not fit in the "
                            f"{what} left, and no more of the budget is free")  # fmt: skip
                return None
            self._held_money += worst
            self._held_calls += 1
            return worst

    def _short(self, worst: float) -> tuple[float, float] | None:
        """How much money and how many calls the call lacks (None: it fits)."""
        m = self.spent_money + self._held_money + worst - self.money if self.money is not None else 0.0
        c = self.spent_calls + self._held_calls + 1 - self.calls if self.calls is not None else 0.0
        m = m if m > 1e-12 else 0.0
        c = c if c > 0 else 0.0
        return (m, c) if m or c else None

    def charge(self, held: float, backend: str, req: CompletionRequest, c: Completion | None) -> None:
        """Release a held ceiling and charge what the call cost (its ceiling when it never returned)."""
        cost = held if c is None else price_of(charged_tokens(req, c), self.prices.get(backend))
        with self._lock:
            self.over_ceiling += cost > held + 1e-12  # a backend billed more than the ceiling: the cap may not hold
            self._held_money -= held
            self._held_calls -= 1
            self.spent_money += cost
            self.spent_calls += 1

    def halt(self) -> str | None:
        return self.cut

    def totals(self) -> dict[str, Any]:
        out: dict[str, Any] = {"money": round(self.spent_money, 9), "calls": self.spent_calls}
        if self.over_ceiling:
            out["over_ceiling"] = self.over_ceiling
        return out

    def wrap(self, backends: dict[str, Any]) -> dict[str, Any]:
        """The game's backends, each making its calls through this allowance."""
        return {name: MeteredBackend(b, name, self) for name, b in backends.items()}


class MeteredBackend:
    """A backend whose calls reserve their ceiling from an :class:`Allowance` first (every other attribute
    is the wrapped backend's)."""

    def __init__(self, inner: Any, name: str, allowance: Allowance) -> None:
        self._inner, self._key, self._allowance = inner, name, allowance

    def __getattr__(self, attr: str) -> Any:
        return getattr(self._inner, attr)

    async def complete(self, request: CompletionRequest) -> Completion:
        held = self._allowance.reserve(self._key, request)
        if held is None:
            return Completion(ok=False, error=f"not called: {self._allowance.cut}", attempts=0, meta={"budget_cut": True})
        c: Completion | None = None
        try:
            c = await self._inner.complete(request)
            return c
        finally:
            self._allowance.charge(held, self._key, request, c)
