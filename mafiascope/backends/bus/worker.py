"""Reference bus worker: serves a routing key by forwarding jobs to a backend.

Adapters: any OpenAI-compatible endpoint (through :class:`OpenAIBackend`, i.e. the openai
SDK with its retries and think-stripping), the offline bots (``--bot PRESET``) or ``echo``
(smoke tests). The loop registers, long-polls ``/v1/work``, runs the job and posts
``/v1/result``; it re-registers on 409 and reconnects with backoff when the hub is down.
A 401 from the hub stops the worker (wrong token). Adapter failures are reported as
``ok=false`` results with an error -- never as text.
"""

from __future__ import annotations

import asyncio
import logging
import random
import uuid
from typing import Any

import aiohttp

from ... import __version__ as _mafiascope_version
from ...redaction import scrub, scrub_text
from ..base import Backend, Completion, CompletionRequest
from ..clients import BusEndpoint
from .protocol import DEFAULT_POLL_WAIT_S

log = logging.getLogger("mafiascope.bus.worker")


class EchoAdapter:
    name = "echo"
    type = "echo"
    model_label = "echo"

    async def complete(self, request: CompletionRequest) -> Completion:
        last = next((m["content"] for m in reversed(request.messages) if m.get("role") == "user"), "")
        line = last.strip().splitlines()[-1] if last.strip() else ""
        return Completion(text=f"OK: {line}", ok=True, served_model="echo")

    def describe(self) -> dict[str, Any]:
        return {"type": "echo"}

    async def aclose(self) -> None:
        return None


class HubAuthError(RuntimeError):
    pass


class Worker:
    def __init__(
        self,
        hub: BusEndpoint,
        adapter: Backend | EchoAdapter,
        serve_as: list[str],
        *,
        worker_id: str | None = None,
        concurrency: int = 1,
        poll_wait: float = DEFAULT_POLL_WAIT_S,
        meta: dict[str, Any] | None = None,
    ) -> None:
        self.endpoint = hub  # the hub's URL and the token resolved for it (clients.py)
        self.hub = hub.url
        self.token = token = hub.token or ""
        self.adapter = adapter
        self.serve_as = serve_as
        self.worker_id = worker_id or f"w-{uuid.uuid4().hex[:10]}"
        self.concurrency = max(1, concurrency)
        self.poll_wait = poll_wait
        self.meta = scrub({"adapter": _safe_describe(adapter), "mafiascope": _mafiascope_version, **(meta or {})}, token)
        self.handled = 0
        self._session: aiohttp.ClientSession | None = None
        self._stop = asyncio.Event()

    def stop(self) -> None:
        self._stop.set()

    async def _register(self) -> None:
        assert self._session is not None
        body = {"worker": self.worker_id, "models": self.serve_as, "meta": self.meta}
        async with self._session.post(f"{self.hub}/v1/register", json=body) as resp:
            if resp.status == 401:
                raise HubAuthError("the hub refused the token (401)")
            resp.raise_for_status()
            data = await resp.json()
            self.worker_id = data["worker"]

    async def run(self) -> None:
        timeout = aiohttp.ClientTimeout(total=None, sock_connect=10)
        async with self.endpoint.session(timeout=timeout) as session:
            self._session = session
            await self._connect()
            loops = [asyncio.create_task(self._loop(i)) for i in range(self.concurrency)]
            stopper = asyncio.create_task(self._stop.wait())
            done, _ = await asyncio.wait([stopper, *loops], return_when=asyncio.FIRST_COMPLETED)
            for t in [stopper, *loops]:
                t.cancel()
            for t in done:
                if t is not stopper and not t.cancelled() and t.exception() is not None:
                    raise t.exception()  # type: ignore[misc]
        await self.adapter.aclose()

    async def _connect(self) -> None:
        delay = 0.5
        while not self._stop.is_set():
            try:
                await self._register()
                log.info("registered as %s serving %s", self.worker_id, self.serve_as)
                return
            except HubAuthError:
                raise
            except (TimeoutError, aiohttp.ClientError, OSError) as exc:
                log.warning("hub not reachable (%s); retrying in %.1fs", type(exc).__name__, delay)
                await asyncio.sleep(delay * (1 + 0.2 * random.random()))
                delay = min(delay * 2, 10.0)

    async def _loop(self, idx: int) -> None:
        assert self._session is not None
        delay = 0.5
        while not self._stop.is_set():
            try:
                url = f"{self.hub}/v1/work"
                params = {"worker": self.worker_id, "wait": str(self.poll_wait)}
                async with self._session.get(
                    url, params=params, timeout=aiohttp.ClientTimeout(total=self.poll_wait + 15)
                ) as resp:
                    if resp.status == 204:
                        delay = 0.5
                        continue
                    if resp.status == 409:
                        await self._register()
                        continue
                    if resp.status == 401:
                        raise HubAuthError("the hub refused the token (401)")
                    resp.raise_for_status()
                    job = await resp.json()
                delay = 0.5
                await self._handle(job)
            except HubAuthError:
                raise
            except asyncio.CancelledError:
                raise
            except (TimeoutError, aiohttp.ClientError, OSError, ValueError) as exc:
                log.warning("poll failed (%s); retrying in %.1fs", type(exc).__name__, delay)
                await asyncio.sleep(delay * (1 + 0.2 * random.random()))
                delay = min(delay * 2, 10.0)
                try:
                    await self._register()
                except HubAuthError:
                    raise
                except Exception:
                    pass

    async def _handle(self, job: dict[str, Any]) -> None:
        assert self._session is not None
        req = CompletionRequest(
            messages=[{"role": m["role"], "content": m["content"]} for m in job["messages"]],
            max_tokens=int(job.get("max_tokens") or 400),
            kind=job.get("kind", "act"),
            seat=job.get("seat", ""),
            purpose=job.get("purpose", ""),
            seed=job.get("seed"),
            temperature=job.get("temperature"),
            game_id=job.get("game_id", ""),
        )
        try:
            out = await asyncio.wait_for(self.adapter.complete(req), timeout=float(job.get("deadline_s") or 300))
        except TimeoutError:
            out = Completion(ok=False, error="adapter did not finish before the job deadline")
        except Exception as exc:  # an adapter bug is reported as a failure, never as text
            out = Completion(ok=False, error=f"adapter failed: {type(exc).__name__}: {str(exc)[:200]}")
        body = {
            "worker": self.worker_id,
            "job_id": job["job_id"],
            "ok": bool(out.ok),
            "text": out.text if out.ok else "",
            "error": None if out.ok else scrub_text(out.error or "adapter failed", self.token)[:1900],
            "prompt_tokens": out.prompt_tokens,
            "completion_tokens": out.completion_tokens,
            "served_model": out.served_model,
            "meta": {
                "attempts": out.attempts,
                "latency_ms": out.latency_ms,
                "tokens_estimated": out.tokens_estimated,
                **({"adapter_faults": out.meta.get("faults")} if out.meta.get("faults") else {}),
            },
        }
        for attempt in range(3):
            try:
                async with self._session.post(
                    f"{self.hub}/v1/result", json=body, timeout=aiohttp.ClientTimeout(total=30)
                ) as resp:
                    if resp.status in (200, 410):  # 410: the hub gave up on this dispatch already
                        self.handled += 1
                        return
                    if resp.status == 401:
                        raise HubAuthError("the hub refused the token (401)")
            except (TimeoutError, aiohttp.ClientError, OSError):
                await asyncio.sleep(0.5 * (attempt + 1))


def _safe_describe(adapter: Any) -> dict[str, Any]:
    try:
        d = dict(adapter.describe())
    except Exception:
        return {"type": getattr(adapter, "type", "?")}
    return {k: d[k] for k in ("type", "model", "base_url_host", "sampling", "versions", "preset", "api_key_set") if k in d}


def build_adapter(
    *,
    base_url: str | None,
    model: str | None,
    api_key: str | None,
    bot: str | None,
    echo: bool = False,
    timeout: float = 120.0,
    max_concurrency: int = 4,
    temperature: float | None = None,
) -> Backend | EchoAdapter:
    """The worker's backend: echo, an offline bot preset, or an OpenAI-compatible endpoint."""
    if echo:
        return EchoAdapter()
    if bot:
        from ..bot import BotBackend

        return BotBackend("bus-worker", preset=bot, model_label=f"bot-{bot}")
    if not base_url or not model:
        raise ValueError("give --base-url and --model (or --bot PRESET, or --echo)")
    from ..openai_backend import OpenAIBackend
    from ..registry import OpenAISpec, Source, mark_source

    spec = OpenAISpec(
        model=model, base_url=base_url, api_key=api_key, timeout=timeout, max_concurrency=max_concurrency, temperature=temperature
    )
    mark_source([spec], Source.OPERATOR)  # the worker's own command line
    return OpenAIBackend("bus-worker", spec)
