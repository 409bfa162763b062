"""What the bus hub keeps per worker and per pending request, the failure a request ends with,
and the time budget of a request."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from .protocol import GenerateRequest


@dataclass
class Worker:
    id: str
    models: set[str]
    meta: dict[str, Any]
    last_seen: float
    polling: int = 0
    busy: set[str] = field(default_factory=set)  # job ids held
    served: int = 0

    def serves(self, key: str) -> bool:
        return "*" in self.models or key in self.models


@dataclass
class PendingRequest:
    id: str
    body: GenerateRequest
    future: asyncio.Future
    created: float
    queued_since: float
    dispatches: int = 0
    job_id: str | None = None  # current dispatch
    worker: str | None = None
    deadline: float = 0.0
    faults: list[dict[str, Any]] = field(default_factory=list)


class HubFailure(Exception):
    def __init__(self, status: int, code: str, message: str, faults: list[dict[str, Any]] | None = None) -> None:
        super().__init__(message)
        self.status, self.code, self.message, self.faults = status, code, message, faults or []


def request_budget(body: GenerateRequest) -> float:
    """The longest a request may take in total: every dispatch plus the wait for a worker."""
    return body.timeout_s * (body.requeue + 1) + body.wait_for_worker_s
