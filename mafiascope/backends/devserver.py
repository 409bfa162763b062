"""A loopback OpenAI-compatible server with injectable faults, for tests and benchmarks.

Speaks ``POST /v1/chat/completions`` and ``GET /v1/models`` over real HTTP (aiohttp), so the
openai backend is exercised through the real ``openai`` client. Replies come from the
offline bots: model ``bot-<preset>`` selects the preset and the request's ``seed`` seeds
the bot, so a game against the server is as deterministic as the same game with bot seats
(apart from injected faults). Model ``echo`` answers ``"OK: <last user line>"`` without
the bots; ``parrot`` answers the last user message verbatim (tests).

Faults, drawn per request from a schedule fixed by ``seed`` (request number n always gets
the same draw; which call is the n-th depends on arrival order when calls overlap):

* ``p_429``      -- 429 with ``Retry-After: <retry_after>``
* ``p_500``      -- 500 with a JSON error body
* ``p_hang``     -- no answer for ``hang_s`` seconds (past any sane client timeout)
* ``p_drop``     -- the connection is closed without a response
* ``p_truncate`` -- a 200 whose body stops half-way (Content-Length promises more)
* ``p_garbage``  -- a 200 whose body is not a chat completion (HTML, broken JSON, wrong shape)

``latency_ms`` delays every answer. ``require_key`` makes every call without that bearer
key a 401 (the key is never echoed). Unknown models are 404, from the chat route and from
``GET /v1/models/<model>`` (what the preflight asks; ``model_route=False`` answers that route
404 for every model, like servers that only list models, so the preflight falls back to a
one-token completion). ``stats.model_lookups`` counts those lookups.

It also serves the Files and Batch API (``/v1/files``, ``/v1/batches``: :mod:`.devserver_batches`),
answering a batch's requests with the same bots, with an injectable delay (``batch_delay_s``) and
failures (``batch_p_fail``, ``batch_p_expire``, ``batch_p_line_error``, ``batch_script``).

Use it in-process (``async with DevServer(p_429=0.1) as srv: srv.base_url``) or as
``mafiascope dev-server``. It binds 127.0.0.1 only.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from .base import CompletionRequest, estimate_tokens
from .devserver_batches import BatchAPI

FAULTS = ("429", "500", "hang", "drop", "truncate", "garbage")
PROBE_MARK = "[PRIVATE PROBE"


@dataclass
class DevStats:
    requests: int = 0
    ok: int = 0
    faults: dict[str, int] = field(default_factory=lambda: {f: 0 for f in FAULTS})
    unauthorized: int = 0
    model_lookups: int = 0  # GET /v1/models/<model> (the preflight)
    in_flight: int = 0
    max_in_flight: int = 0
    arrivals: list[float] = field(default_factory=list)  # monotonic arrival times of chat calls
    seeds: list[int | None] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "requests": self.requests,
            "ok": self.ok,
            "faults": dict(self.faults),
            "unauthorized": self.unauthorized,
            "model_lookups": self.model_lookups,
            "max_in_flight": self.max_in_flight,
        }


class DevServer:
    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        latency_ms: float = 0.0,
        p_429: float = 0.0,
        p_500: float = 0.0,
        p_hang: float = 0.0,
        p_drop: float = 0.0,
        p_truncate: float = 0.0,
        p_garbage: float = 0.0,
        retry_after: float = 1.0,
        hang_s: float = 3600.0,
        seed: int = 0,
        require_key: str | None = None,
        fault_every_request: str | None = None,
        fault_script: list[str | None] | None = None,
        model_route: bool = True,
        batch_delay_s: float = 0.0,
        batch_p_fail: float = 0.0,
        batch_p_expire: float = 0.0,
        batch_p_line_error: float = 0.0,
        batch_script: list[str | None] | None = None,
    ) -> None:
        if host not in ("127.0.0.1", "localhost", "::1"):
            raise ValueError("the dev server binds loopback only")
        self.host, self.port = host, port
        self.latency_s = max(0.0, latency_ms) / 1000.0
        self.p = {"429": p_429, "500": p_500, "hang": p_hang, "drop": p_drop, "truncate": p_truncate, "garbage": p_garbage}
        if sum(self.p.values()) > 1.0 + 1e-9:
            raise ValueError("fault probabilities add up to more than 1")
        self.retry_after = retry_after
        self.hang_s = hang_s
        self.seed = seed
        self.require_key = require_key
        self.model_route = model_route
        self.forced = fault_every_request  # tests: every request gets this fault
        self.script = list(fault_script or [])  # tests: request n gets script[n] (None = no fault), then the draw
        for f in [self.forced, *self.script]:
            if f is not None and f not in FAULTS:
                raise ValueError(f"unknown fault {f!r}; allowed: {FAULTS}")
        self.stats = DevStats()
        self.batches = BatchAPI(
            self._reply,
            chat_payload,
            delay_s=batch_delay_s,
            p_fail=batch_p_fail,
            p_expire=batch_p_expire,
            p_line_error=batch_p_line_error,
            seed=seed,
            script=batch_script,
        )  # the Files and Batch API
        self._n = 0
        self._bots: dict[str, Any] = {}
        self._runner: web.AppRunner | None = None
        self._stopping = asyncio.Event()

    # ------------------------------------------------------------------ lifecycle

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    async def start(self) -> DevServer:
        app = web.Application(client_max_size=8 * 1024 * 1024)
        app.router.add_post("/v1/chat/completions", self._chat)
        app.router.add_get("/v1/models", self._models)
        app.router.add_get("/v1/models/{model:.+}", self._model)
        self.batches.routes(app)
        self._stopping = asyncio.Event()
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        return self

    async def stop(self) -> None:
        self._stopping.set()
        await self.batches.close()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        for bot in self._bots.values():
            close = getattr(bot, "aclose", None)
            if close is not None:
                await close()

    async def __aenter__(self) -> DevServer:
        return await self.start()

    async def __aexit__(self, *exc: Any) -> None:
        await self.stop()

    # ------------------------------------------------------------------ schedule

    def draw_fault(self, n: int) -> str | None:
        """The fault for the n-th chat request (deterministic in ``seed``)."""
        if self.forced:
            return self.forced
        if n < len(self.script):
            return self.script[n]
        u = random.Random(f"{self.seed}:{n}").random()
        acc = 0.0
        for name in FAULTS:
            acc += self.p[name]
            if u < acc:
                return name
        return None

    # ------------------------------------------------------------------ handlers

    def _authorized(self, request: web.Request) -> bool:
        if self.require_key is None:
            return True
        return request.headers.get("Authorization", "") == f"Bearer {self.require_key}"

    @staticmethod
    def model_names() -> list[str]:
        from .bot.presets import list_presets

        return [f"bot-{p}" for p in list_presets()] + ["echo", "parrot"]

    async def _models(self, request: web.Request) -> web.Response:
        if not self._authorized(request):
            return _error(401, "invalid api key", "invalid_api_key")
        data = [{"id": m, "object": "model", "owned_by": "mafiascope"} for m in self.model_names()]
        return web.json_response({"object": "list", "data": data})

    async def _model(self, request: web.Request) -> web.Response:
        self.stats.model_lookups += 1
        if not self.model_route:
            return web.Response(status=404, text="404: Not Found")
        if not self._authorized(request):
            self.stats.unauthorized += 1
            return _error(401, "invalid api key", "invalid_api_key")
        model = request.match_info["model"]
        if model not in self.model_names():
            return _error(404, f"model {model!r} not found", "model_not_found")
        return web.json_response({"id": model, "object": "model", "created": 0, "owned_by": "mafiascope"})

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        self.stats.requests += 1
        self.stats.in_flight += 1
        self.stats.max_in_flight = max(self.stats.max_in_flight, self.stats.in_flight)
        self.stats.arrivals.append(time.monotonic())
        try:
            return await self._chat_inner(request)
        finally:
            self.stats.in_flight -= 1

    async def _chat_inner(self, request: web.Request) -> web.StreamResponse:
        if not self._authorized(request):
            self.stats.unauthorized += 1
            return _error(401, "invalid api key", "invalid_api_key")
        try:
            body = await request.json()
            messages = body["messages"]
            model = str(body["model"])
        except Exception:
            return _error(400, "body must be JSON with 'model' and 'messages'", "invalid_request_error")
        seed = body.get("seed")
        self.stats.seeds.append(seed)
        if not (model in ("echo", "parrot") or model.startswith("bot-")):
            return _error(404, f"model {model!r} not found", "model_not_found")
        n = self._n
        self._n += 1
        fault = self.draw_fault(n)
        if self.latency_s:
            await asyncio.sleep(self.latency_s)
        if fault is not None:
            self.stats.faults[fault] += 1
        if fault == "429":
            return _error(429, "rate limited (injected)", "rate_limit_exceeded", headers={"Retry-After": f"{self.retry_after:g}"})
        if fault == "500":
            return _error(500, "internal error (injected)", "server_error")
        if fault == "hang":
            try:
                await asyncio.wait_for(self._stopping.wait(), timeout=self.hang_s)
            except TimeoutError:
                pass
            return _error(504, "hung (injected)", "server_error")
        if fault == "drop":
            if request.transport is not None:
                request.transport.abort()
            raise asyncio.CancelledError()

        try:
            text = await self._reply(model, messages, seed, body.get("max_tokens") or body.get("max_completion_tokens"))
        except KeyError as exc:
            return _error(404, f"model {model!r} not found ({exc})", "model_not_found")
        prompt_text = "".join(str(m.get("content") or "") for m in messages)
        payload = {
            "id": f"chatcmpl-{uuid.uuid4().hex[:12]}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": f"{model}-devserver",
            "system_fingerprint": f"fp_devserver_{model}",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {
                "prompt_tokens": estimate_tokens(prompt_text),
                "completion_tokens": estimate_tokens(text),
                "total_tokens": estimate_tokens(prompt_text) + estimate_tokens(text),
            },
        }
        raw = json.dumps(payload).encode()
        if fault == "garbage":
            variant = n % 3
            if variant == 0:
                return web.Response(status=200, text="<html><body>502 Bad Gateway</body></html>", content_type="text/html")
            if variant == 1:
                return web.Response(status=200, body=raw[: len(raw) // 3] + b"\x00\xff}}", content_type="application/json")
            return web.json_response({"result": "ok", "note": "not a chat completion"})
        if fault == "truncate":
            resp = web.StreamResponse(status=200, headers={"Content-Type": "application/json"})
            resp.content_length = len(raw)
            await resp.prepare(request)
            await resp.write(raw[: len(raw) // 2])
            if request.transport is not None:
                request.transport.abort()
            raise asyncio.CancelledError()
        self.stats.ok += 1
        return web.Response(status=200, body=raw, content_type="application/json")

    async def _reply(self, model: str, messages: list[dict[str, Any]], seed: Any, max_tokens: Any) -> str:
        last_user = next((str(m.get("content") or "") for m in reversed(messages) if m.get("role") == "user"), "")
        if model == "parrot":
            return last_user
        if model == "echo":
            line = last_user.strip().splitlines()[-1] if last_user.strip() else ""
            return f"OK: {line}"
        preset = model[len("bot-") :]
        bot = self._bots.get(preset)
        if bot is None:
            from .bot import BotBackend
            from .bot.presets import get_preset

            get_preset(preset)  # KeyError for unknown presets
            bot = BotBackend(f"devserver-{preset}", preset=preset, model_label=model)
            self._bots[preset] = bot
        req = CompletionRequest(
            messages=[{"role": str(m.get("role")), "content": str(m.get("content") or "")} for m in messages],
            max_tokens=int(max_tokens or 400),
            kind="probe" if PROBE_MARK in last_user else "act",
            seed=int(seed) if isinstance(seed, int) else None,
        )
        out = await bot.complete(req)
        return out.text


def chat_payload(model: str, text: str, messages: list[dict[str, Any]]) -> dict[str, Any]:
    """A chat completion's JSON body with this reply (usage estimated as characters / 3)."""
    prompt_text = "".join(str(m.get("content") or "") for m in messages)
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex[:12]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": f"{model}-devserver",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {
            "prompt_tokens": estimate_tokens(prompt_text),
            "completion_tokens": estimate_tokens(text),
            "total_tokens": estimate_tokens(prompt_text) + estimate_tokens(text),
        },
    }


def _error(status: int, message: str, code: str, headers: dict[str, str] | None = None) -> web.Response:
    body = {"error": {"message": message, "type": code, "code": code}}
    return web.json_response(body, status=status, headers=headers)


async def serve_forever(server: DevServer, ready: Any = None) -> None:
    """Run until cancelled (the CLI)."""
    await server.start()
    if ready is not None:
        ready(server)
    try:
        while True:
            await asyncio.sleep(3600)
    finally:
        await server.stop()
