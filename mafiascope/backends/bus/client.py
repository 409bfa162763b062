"""BusBackend: the engine side of the model bus (POST /v1/generate on the hub).

Never raises for transport faults: an unreachable hub, no live worker (503), a job that
timed out after its re-queue (504) or a worker-reported failure all return
``ok=False`` with an error naming the backend. A 401 from the hub (wrong token) is
marked ``meta['fatal'] = True``.
"""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING, Any

import aiohttp

from ... import __version__ as _mafiascope_version
from ...redaction import scrub
from ..base import Completion, CompletionRequest, estimate_tokens
from ..clients import BusEndpoint
from ..common import PerLoop, host_of, redact, strip_think
from ..keys import DEFAULT_HUB
from ..limits import Limits, QueueTimeout, lagged_completion, priority_of
from ..specs import spec_source

if TYPE_CHECKING:
    from ..registry import BusSpec

__all__ = ["DEFAULT_HUB", "BusBackend", "hub_url"]


def hub_url(spec: BusSpec) -> str:
    """The hub a bus spec talks to: its ``hub``, else ``$MAFIASCOPE_BUS_URL``, else the local default."""
    return (spec.hub or os.environ.get("MAFIASCOPE_BUS_URL") or DEFAULT_HUB).rstrip("/")


class BusBackend:
    type = "bus"

    def __init__(self, name: str, spec: BusSpec) -> None:
        self.name = name
        self.spec = spec
        self.model_label = spec.label or f"bus:{spec.model}"
        self.endpoint = BusEndpoint(name, hub_url(spec), spec.token, source=spec_source(spec))  # resolved for this hub only
        self.hub = self.endpoint.url
        self._token = self.endpoint.token
        self.limits = Limits(spec.max_concurrency, spec.rpm, spec.burst)
        self._sessions: PerLoop[aiohttp.ClientSession] = PerLoop(self._new_session)
        self.served_model: str | None = None
        self.workers_seen: dict[str, dict[str, Any]] = {}

    def _new_session(self) -> aiohttp.ClientSession:
        return self.endpoint.session()

    def _err(self, msg: str) -> str:
        return redact(f"backend {self.name!r} (bus {host_of(self.hub)}, model {self.spec.model}): {msg}", self._token)

    async def complete(self, request: CompletionRequest) -> Completion:
        t0 = time.monotonic()
        s = self.spec
        body = {
            "model": s.model,
            "messages": request.messages,
            "max_tokens": request.max_tokens,
            "kind": request.kind,
            "seed": request.seed,
            "temperature": request.temperature,
            "seat": request.seat,
            "purpose": request.purpose,
            "game_id": request.game_id,
            "timeout_s": s.timeout,
            "requeue": s.requeue,
            "wait_for_worker_s": s.wait_for_worker,
        }
        # the hub answers by itself well before this: every dispatch plus the wait for a worker
        client_timeout = s.timeout * (s.requeue + 1) + s.wait_for_worker + 30.0

        def fail(msg: str, *, fatal: bool = False, status: int | None = None, extra: dict | None = None) -> Completion:
            meta: dict[str, Any] = {"backend": self.name, **(extra or {})}
            if fatal:
                meta["fatal"] = True
            if status is not None:
                meta["status"] = status
            return Completion(
                ok=False,
                error=self._err(msg),
                attempts=max(1, int(meta.get("dispatches", 1) or 1)),
                latency_ms=int((time.monotonic() - t0) * 1000),
                meta=meta,
            )

        try:
            async with self.limits.slot(priority_of(request.kind), request.max_wait):
                session = self._sessions.get()
                async with session.post(
                    f"{self.hub}/v1/generate", json=body, timeout=aiohttp.ClientTimeout(total=client_timeout)
                ) as resp:
                    status = resp.status
                    try:
                        data = await resp.json(content_type=None)
                    except (ValueError, aiohttp.ContentTypeError):
                        data = None
        except QueueTimeout as exc:
            return lagged_completion(self.name, exc, 1, t0)
        except TimeoutError:
            return fail(f"hub did not answer within {client_timeout:g}s", extra={"faults": [{"fault": "timeout"}]})
        except aiohttp.ClientError as exc:
            return fail(f"hub unreachable: {type(exc).__name__}: {str(exc)[:160]}", extra={"faults": [{"fault": "connection"}]})
        if not isinstance(data, dict):
            return fail(f"hub sent an unreadable reply (HTTP {status})", status=status, extra={"faults": [{"fault": "bad_body"}]})
        if status != 200:
            msg = str(data.get("error") or f"HTTP {status}")[:300]
            extra = {
                "dispatches": data.get("dispatches", 0),
                "faults": data.get("faults") or [{"fault": data.get("code", f"http_{status}")}],
                "code": data.get("code"),
            }
            if status == 401:
                return fail("HTTP 401 from the hub: wrong or missing bus token", fatal=True, status=status, extra=extra)
            return fail(f"HTTP {status} {data.get('code', '')}: {msg}", status=status, extra=extra)
        worker = data.get("worker")
        if worker:
            self.workers_seen.setdefault(str(worker), scrub(data.get("worker_meta") or {}, self._token))
        meta = {"backend": self.name, "worker": worker, "dispatches": data.get("dispatches", 1)}
        wmeta = data.get("meta") or {}
        if wmeta.get("faults"):
            meta["faults"] = wmeta["faults"]
        if not data.get("ok", False):
            return fail(
                f"worker {worker} failed: {str(data.get('error') or 'no reason given')[:300]}",
                extra={**meta, "faults": meta.get("faults", []) + [{"fault": "worker_error"}]},
            )
        text, stripped = strip_think(str(data.get("text") or ""))
        if stripped:
            meta["think_stripped"] = True
        pt, ct = data.get("prompt_tokens"), data.get("completion_tokens")
        estimated = pt is None or ct is None
        if pt is None:
            pt = estimate_tokens("".join(str(m.get("content") or "") for m in request.messages))
        if ct is None:
            ct = estimate_tokens(str(data.get("text") or ""))
        served = data.get("served_model")
        if served and self.served_model is None:
            self.served_model = served
        return Completion(
            text=text,
            ok=True,
            attempts=int(data.get("dispatches") or 1),
            latency_ms=int((time.monotonic() - t0) * 1000),
            prompt_tokens=pt,
            completion_tokens=ct,
            tokens_estimated=estimated,
            served_model=served,
            meta=meta,
        )

    def describe(self) -> dict[str, Any]:
        s = self.spec
        return {
            "type": self.type,
            "name": self.name,
            "model": s.model,
            "model_label": self.model_label,
            "served_model": self.served_model,
            "hub_host": host_of(self.hub),
            "timeout_s": s.timeout,
            "requeue": s.requeue,
            "limits": self.limits.describe(),
            "token_set": bool(self._token),
            "workers": self.workers_seen,
            "versions": {"aiohttp": aiohttp.__version__, "mafiascope": _mafiascope_version},
        }

    async def aclose(self) -> None:
        session = self._sessions.pop_current()
        if session is not None:
            await session.close()
