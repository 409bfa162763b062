"""The model bus hub: a small HTTP broker between the engine and external workers.

* every endpoint requires ``Authorization: Bearer <token>`` (constant-time compare);
* binds 127.0.0.1 unless told otherwise; sends no CORS headers; cannot spawn anything;
* request bodies above 1 MiB get 413, a body not received within ``body_timeout_s`` gets 408,
  and a connection that sends no complete request for ``idle_timeout_s`` is closed
  (authenticated or not: headers are read before the token is checked);
* every numeric parameter must be finite and within its documented bounds (else 400):
  a NaN must never reach a timer;
* a job a worker does not answer within its ``timeout_s`` is re-queued (once by
  default, ``requeue``) and then fails with 504, which the engine side turns into
  ``ok=False`` -- a backend fault, never speech.

See docs/bus.md for the wire protocol.
"""

from __future__ import annotations

import asyncio
import collections
import hmac
import secrets
import time
import uuid
from typing import Any

from aiohttp import web
from pydantic import ValidationError

from ...redaction import scrub_text
from .hub_http import clean_meta, error_response, poll_wait
from .hub_records import HubFailure, PendingRequest, Worker, request_budget
from .protocol import (
    BODY_TIMEOUT_S,
    IDLE_TIMEOUT_S,
    MAX_BODY_BYTES,
    MAX_POLL_WAIT_S,
    PROTOCOL_VERSION,
    WORKER_LIVE_S,
    GenerateReply,
    GenerateRequest,
    Job,
    RegisterReply,
    RegisterRequest,
    ResultRequest,
)


class Hub:
    def __init__(
        self,
        token: str,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        live_s: float = WORKER_LIVE_S,
        tick_s: float = 0.05,
        max_body: int = MAX_BODY_BYTES,
        idle_timeout_s: float = IDLE_TIMEOUT_S,
        body_timeout_s: float = BODY_TIMEOUT_S,
    ) -> None:
        if not token:
            raise ValueError("the bus hub needs a token")
        if not host:
            raise ValueError(
                "the bus hub needs a host to bind (an empty host would bind every interface; say 0.0.0.0 to mean that)"
            )
        self.token = token
        self.idle_timeout_s, self.body_timeout_s = idle_timeout_s, body_timeout_s
        self.host, self.port = host, port
        self.live_s = live_s
        self.tick_s = tick_s
        self.max_body = max_body
        self.workers: dict[str, Worker] = {}
        self.requests: dict[str, PendingRequest] = {}
        self.jobs: dict[str, str] = {}  # job_id -> request id (current dispatch only)
        self.queue: collections.deque[str] = collections.deque()
        self.counters = {"generated": 0, "ok": 0, "failed": 0, "requeued": 0, "timed_out": 0, "no_worker": 0, "late_results": 0}
        self._wake = asyncio.Event()
        self._runner: web.AppRunner | None = None
        self._reaper: asyncio.Task | None = None
        self.started = time.time()

    # ------------------------------------------------------------------ lifecycle

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def app(self) -> web.Application:
        app = web.Application(client_max_size=self.max_body, middlewares=[self._auth_mw])
        app.router.add_post("/v1/register", self._register)
        app.router.add_get("/v1/work", self._work)
        app.router.add_post("/v1/result", self._result)
        app.router.add_post("/v1/generate", self._generate)
        app.router.add_get("/v1/status", self._status)
        return app

    async def start(self) -> Hub:
        self._wake = asyncio.Event()
        # keepalive_timeout also closes a connection that never completes its first request
        # (aiohttp arms it at connection_made), which covers slow or silent header senders
        self._runner = web.AppRunner(self.app(), access_log=None, shutdown_timeout=1.0, keepalive_timeout=self.idle_timeout_s)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self._reaper = asyncio.create_task(self._reap_loop())
        return self

    async def stop(self) -> None:
        if self._reaper is not None:
            self._reaper.cancel()
            try:
                await self._reaper
            except asyncio.CancelledError:
                pass
            self._reaper = None
        for req in list(self.requests.values()):
            if not req.future.done():
                req.future.set_exception(HubFailure(503, "hub_stopping", "the hub is shutting down"))
        self._notify()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> Hub:
        return await self.start()

    async def __aexit__(self, *exc: Any) -> None:
        await self.stop()

    # ------------------------------------------------------------------ middleware

    @web.middleware
    async def _auth_mw(self, request: web.Request, handler: Any) -> web.StreamResponse:
        got = request.headers.get("Authorization", "")
        expected = f"Bearer {self.token}"
        if not hmac.compare_digest(got.encode(), expected.encode()):
            return error_response(401, "unauthorized", "missing or wrong bearer token", {"WWW-Authenticate": "Bearer"})
        if request.content_length is not None and request.content_length > self.max_body:
            return error_response(413, "body_too_large", f"request body exceeds {self.max_body} bytes")
        try:
            return await handler(request)
        except web.HTTPRequestEntityTooLarge:
            return error_response(413, "body_too_large", f"request body exceeds {self.max_body} bytes")

    async def _body(self, request: web.Request, model: Any) -> Any:
        try:
            raw = await asyncio.wait_for(request.read(), timeout=self.body_timeout_s)
        except web.HTTPRequestEntityTooLarge:
            raise
        except TimeoutError:
            raise HubFailure(408, "body_timeout", f"request body not received within {self.body_timeout_s:g}s") from None
        if len(raw) > self.max_body:
            raise web.HTTPRequestEntityTooLarge(max_size=self.max_body, actual_size=len(raw))
        try:
            return model.model_validate_json(raw)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "body"
            raise HubFailure(400, "bad_request", f"{where}: {first['msg']}") from None

    # ------------------------------------------------------------------ helpers

    def _notify(self) -> None:
        self._wake.set()
        self._wake = asyncio.Event()

    def _live(self, w: Worker, now: float) -> bool:
        return w.polling > 0 or bool(w.busy) or now - w.last_seen <= self.live_s

    def _has_live_worker(self, key: str, now: float) -> bool:
        return any(w.serves(key) and self._live(w, now) for w in self.workers.values())

    def _take(self, w: Worker) -> Job | None:
        for rid in self.queue:
            req = self.requests.get(rid)
            if req is None or req.future.done():
                continue
            if not w.serves(req.body.model):
                continue
            self.queue.remove(rid)
            req.dispatches += 1
            req.job_id = f"{req.id}.{req.dispatches}"
            req.worker = w.id
            req.deadline = time.monotonic() + req.body.timeout_s
            self.jobs[req.job_id] = req.id
            w.busy.add(req.job_id)
            b = req.body
            return Job(
                job_id=req.job_id,
                request_id=req.id,
                model=b.model,
                messages=b.messages,
                max_tokens=b.max_tokens,
                kind=b.kind,
                seed=b.seed,
                temperature=b.temperature,
                seat=b.seat,
                purpose=b.purpose,
                game_id=b.game_id,
                deadline_s=b.timeout_s,
            )
        return None

    def _release_job(self, req: PendingRequest) -> None:
        if req.job_id is not None:
            self.jobs.pop(req.job_id, None)
            w = self.workers.get(req.worker or "")
            if w is not None:
                w.busy.discard(req.job_id)
        req.job_id = None
        req.worker = None

    def _reap(self) -> None:
        now = time.monotonic()
        for req in list(self.requests.values()):
            if req.future.done():
                continue
            if req.job_id is not None and now >= req.deadline:
                req.faults.append({"dispatch": req.dispatches, "worker": req.worker, "fault": "worker_timeout"})
                self._release_job(req)
                if req.dispatches <= req.body.requeue:
                    self.counters["requeued"] += 1
                    req.queued_since = now
                    self.queue.appendleft(req.id)
                    self._notify()
                else:
                    self.counters["timed_out"] += 1
                    req.future.set_exception(
                        HubFailure(
                            504,
                            "timeout",
                            f"no worker answered within {req.body.timeout_s:g}s ({req.dispatches} dispatches)",
                            req.faults,
                        )
                    )
            elif req.job_id is None and now - req.created > request_budget(req.body):
                # live workers exist but never got to it: bounded like the dispatches themselves
                self._fail_queued(
                    req,
                    "timed_out",
                    HubFailure(
                        504,
                        "queue_timeout",
                        f"waited {now - req.created:.0f}s in the queue for a free worker serving {req.body.model!r}",
                        req.faults,
                    ),
                )
            elif (
                req.job_id is None
                and now - req.queued_since > req.body.wait_for_worker_s
                and not self._has_live_worker(req.body.model, now)
            ):
                self._fail_queued(
                    req, "no_worker", HubFailure(503, "no_worker", f"no live worker serves model {req.body.model!r}", req.faults)
                )
        for wid, w in list(self.workers.items()):
            if not self._live(w, now) and now - w.last_seen > 10 * self.live_s:
                del self.workers[wid]

    def _fail_queued(self, req: PendingRequest, counter: str, failure: HubFailure) -> None:
        self.counters[counter] += 1
        try:
            self.queue.remove(req.id)
        except ValueError:
            pass
        req.future.set_exception(failure)

    async def _reap_loop(self) -> None:
        while True:
            await asyncio.sleep(self.tick_s)
            try:
                self._reap()
            except Exception:  # the reaper must never die
                pass

    # ------------------------------------------------------------------ endpoints

    async def _register(self, request: web.Request) -> web.Response:
        try:
            body: RegisterRequest = await self._body(request, RegisterRequest)
        except HubFailure as f:
            return error_response(f.status, f.code, f.message)
        wid = body.worker or f"w-{uuid.uuid4().hex[:10]}"
        w = self.workers.get(wid)
        if w is None:
            self.workers[wid] = Worker(id=wid, models=set(body.models), meta=clean_meta(body.meta), last_seen=time.monotonic())
        else:  # re-registration updates in place (long-polls in flight keep their handle)
            w.models, w.meta, w.last_seen = set(body.models), clean_meta(body.meta), time.monotonic()
        self._notify()
        return web.json_response(RegisterReply(worker=wid, poll_wait_max_s=MAX_POLL_WAIT_S, live_s=self.live_s).model_dump())

    async def _work(self, request: web.Request) -> web.Response:
        wid = request.query.get("worker", "")
        w = self.workers.get(wid)
        if w is None:
            return error_response(409, "unknown_worker", "unknown worker: register again")
        wait = poll_wait(request.query.get("wait"))
        if wait is None:
            return error_response(
                400, "bad_request", f"wait must be a finite number of seconds >= 0 (capped at {MAX_POLL_WAIT_S:g})"
            )
        end = time.monotonic() + wait
        w.polling += 1
        try:
            while True:
                w.last_seen = time.monotonic()
                job = self._take(w)
                if job is not None:
                    return web.json_response(job.model_dump())
                remaining = end - time.monotonic()
                if remaining <= 0:
                    return web.Response(status=204)
                wake = self._wake
                try:
                    await asyncio.wait_for(wake.wait(), timeout=remaining)
                except TimeoutError:
                    pass
                if wid not in self.workers:
                    return error_response(409, "unknown_worker", "unknown worker: register again")
        finally:
            w.polling -= 1
            w.last_seen = time.monotonic()

    async def _result(self, request: web.Request) -> web.Response:
        try:
            body: ResultRequest = await self._body(request, ResultRequest)
        except HubFailure as f:
            return error_response(f.status, f.code, f.message)
        w = self.workers.get(body.worker)
        if w is not None:
            w.last_seen = time.monotonic()
        rid = self.jobs.get(body.job_id)
        req = self.requests.get(rid or "")
        if req is None or req.future.done() or req.job_id != body.job_id or req.worker != body.worker:
            self.counters["late_results"] += 1
            return error_response(410, "gone", "this job is no longer awaited (timed out, re-queued or cancelled)")
        worker_meta = w.meta if w is not None else {}
        if w is not None:
            w.served += 1
        self._release_job(req)
        req.future.set_result(
            GenerateReply(
                ok=body.ok,
                text=body.text if body.ok else "",
                error=None if body.ok else scrub_text(body.error or "worker reported a failure"),
                request_id=req.id,
                worker=body.worker,
                worker_meta=worker_meta,
                dispatches=req.dispatches,
                prompt_tokens=body.prompt_tokens,
                completion_tokens=body.completion_tokens,
                served_model=body.served_model,
                meta={**clean_meta(body.meta), "faults": req.faults} if req.faults else clean_meta(body.meta),
            )
        )
        return web.json_response({"accepted": True})

    async def _generate(self, request: web.Request) -> web.Response:
        try:
            body: GenerateRequest = await self._body(request, GenerateRequest)
        except HubFailure as f:
            return error_response(f.status, f.code, f.message)
        now = time.monotonic()
        rid = uuid.uuid4().hex[:16]
        req = PendingRequest(id=rid, body=body, future=asyncio.get_running_loop().create_future(), created=now, queued_since=now)
        self.requests[rid] = req
        self.queue.append(rid)
        self.counters["generated"] += 1
        self._notify()
        try:
            reply: GenerateReply = await asyncio.shield(req.future)
            self.counters["ok" if reply.ok else "failed"] += 1
            return web.json_response(reply.model_dump())
        except HubFailure as f:
            self.counters["failed"] += 1
            return error_response(
                f.status, f.code, f.message, extra={"request_id": rid, "dispatches": req.dispatches, "faults": f.faults}
            )
        finally:
            if not req.future.done():  # the engine went away: forget the job
                req.future.cancel()
            self._release_job(req)
            try:
                self.queue.remove(rid)
            except ValueError:
                pass
            self.requests.pop(rid, None)

    async def _status(self, request: web.Request) -> web.Response:
        now = time.monotonic()
        depth: dict[str, int] = {}
        for rid in self.queue:
            req = self.requests.get(rid)
            if req is not None:
                depth[req.body.model] = depth.get(req.body.model, 0) + 1
        return web.json_response(
            {
                "protocol": PROTOCOL_VERSION,
                "uptime_s": round(time.time() - self.started, 1),
                "workers": [
                    {
                        "worker": w.id,
                        "models": sorted(w.models),
                        "meta": w.meta,
                        "live": self._live(w, now),
                        "last_seen_s": round(now - w.last_seen, 2),
                        "busy": len(w.busy),
                        "served": w.served,
                    }
                    for w in self.workers.values()
                ],
                "queue": depth,
                "queued": sum(depth.values()),
                "in_flight": sum(1 for r in self.requests.values() if r.job_id is not None),
                "counters": dict(self.counters),
            }
        )


def new_token() -> str:
    return secrets.token_urlsafe(24)
