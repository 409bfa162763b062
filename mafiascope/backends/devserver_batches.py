"""The dev server's OpenAI-compatible Files and Batch API, so the batch path is tested against real HTTP.

    POST /v1/files                   multipart: file (JSONL), purpose=batch  -> a file object
    GET  /v1/files/{id}              the file object
    GET  /v1/files/{id}/content      the file's bytes
    POST /v1/batches                 {input_file_id, endpoint: /v1/chat/completions, completion_window}
    GET  /v1/batches/{id}            the batch object: validating -> in_progress -> completed | failed | expired
    POST /v1/batches/{id}/cancel     cancelling -> cancelled

Each input line ``{custom_id, method: POST, url: /v1/chat/completions, body}`` is answered by the server's
own chat completion (the offline bots, seeded by the body's ``seed``); the output file holds one line per
answered request ``{id, custom_id, response: {status_code, request_id, body}, error: null}`` and the error
file one per failed request ``{id, custom_id, response: null, error: {code, message}}``, as the providers
write them. Injectable, for tests: ``delay_s`` before a batch completes, ``p_fail`` (the whole batch
fails: no output), ``p_expire`` (it expires with no output), ``p_line_error`` (a request fails in the
error file), each drawn from ``seed``; ``script`` forces the outcome of the n-th batch.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

OUTCOMES = ("completed", "failed", "expired")
Reply = Callable[[str, list[dict[str, Any]], Any, Any], Awaitable[str]]
Payload = Callable[[str, str, list[dict[str, Any]]], dict[str, Any]]


def _error_line(i: int, custom_id: str | None, code: str, message: str) -> dict[str, Any]:
    """One line of a batch's error file, as the providers write it."""
    return {"id": f"batch_req_{i}", "custom_id": custom_id, "response": None, "error": {"code": code, "message": message}}


class BatchAPI:
    def __init__(self, reply: Reply, payload: Payload, *, delay_s: float = 0.0, p_fail: float = 0.0, p_expire: float = 0.0,
                 p_line_error: float = 0.0, seed: int = 0, script: list[str | None] | None = None) -> None:  # fmt: skip
        if p_fail + p_expire > 1.0 + 1e-9:
            raise ValueError("batch failure probabilities add up to more than 1")
        for s in script or []:
            if s is not None and s not in OUTCOMES:
                raise ValueError(f"unknown batch outcome {s!r}; allowed: {OUTCOMES}")
        self.reply, self.payload = reply, payload
        self.delay_s, self.p_fail, self.p_expire, self.p_line_error = max(0.0, delay_s), p_fail, p_expire, p_line_error
        self.seed, self.script = seed, list(script or [])
        self.files: dict[str, dict[str, Any]] = {}
        self.batches: dict[str, dict[str, Any]] = {}
        self.created = 0  # batches created (the n of the script)
        self._tasks: set[asyncio.Task[None]] = set()

    def routes(self, app: web.Application) -> None:
        app.router.add_post("/v1/files", self._upload)
        app.router.add_get("/v1/files/{id}", self._file)
        app.router.add_get("/v1/files/{id}/content", self._content)
        app.router.add_post("/v1/batches", self._create)
        app.router.add_get("/v1/batches/{id}", self._batch)
        app.router.add_post("/v1/batches/{id}/cancel", self._cancel)

    async def close(self) -> None:
        for t in list(self._tasks):
            t.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)

    # ------------------------------------------------------------------ files
    def _store(self, data: bytes, purpose: str, filename: str) -> dict[str, Any]:
        fid = f"file-{uuid.uuid4().hex[:20]}"
        obj = {"id": fid, "object": "file", "bytes": len(data), "created_at": int(time.time()), "filename": filename,
               "purpose": purpose}  # fmt: skip
        self.files[fid] = {**obj, "_data": data}
        return obj

    async def _upload(self, request: web.Request) -> web.Response:
        try:
            form = await request.post()
        except Exception:
            return _error(400, "expected a multipart form with 'file' and 'purpose'")
        f, purpose = form.get("file"), str(form.get("purpose") or "")
        if f is None or not hasattr(f, "file") or purpose != "batch":
            return _error(400, "expected a multipart form with 'file' and purpose 'batch'")
        return web.json_response(self._store(f.file.read(), purpose, str(getattr(f, "filename", "input.jsonl"))))

    async def _file(self, request: web.Request) -> web.Response:
        f = self.files.get(request.match_info["id"])
        if f is None:
            return _error(404, "no such file")
        return web.json_response({k: v for k, v in f.items() if k != "_data"})

    async def _content(self, request: web.Request) -> web.Response:
        f = self.files.get(request.match_info["id"])
        if f is None:
            return _error(404, "no such file")
        return web.Response(body=f["_data"], content_type="application/octet-stream")

    # ------------------------------------------------------------------ batches
    async def _create(self, request: web.Request) -> web.Response:
        try:
            body = await request.json()
        except Exception:
            return _error(400, "body must be JSON")
        fid = body.get("input_file_id")
        if fid not in self.files:
            return _error(400, f"input_file_id {fid!r}: no such file")
        if body.get("endpoint") != "/v1/chat/completions":
            return _error(400, "endpoint: only /v1/chat/completions is served")
        bid = f"batch_{uuid.uuid4().hex[:20]}"
        n = self.created
        self.created += 1
        batch = {"id": bid, "object": "batch", "endpoint": body["endpoint"], "input_file_id": fid,
                 "completion_window": body.get("completion_window", "24h"), "status": "validating", "created_at": int(time.time()),
                 "output_file_id": None, "error_file_id": None, "errors": None, "metadata": body.get("metadata"),
                 "request_counts": {"total": 0, "completed": 0, "failed": 0}}  # fmt: skip
        self.batches[bid] = batch
        task = asyncio.ensure_future(self._run(batch, n))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return web.json_response(batch)

    async def _batch(self, request: web.Request) -> web.Response:
        b = self.batches.get(request.match_info["id"])
        return web.json_response(b) if b is not None else _error(404, "no such batch")

    async def _cancel(self, request: web.Request) -> web.Response:
        b = self.batches.get(request.match_info["id"])
        if b is None:
            return _error(404, "no such batch")
        if b["status"] in ("validating", "in_progress"):
            b["status"] = "cancelled"
        return web.json_response(b)

    def _outcome(self, n: int) -> str:
        if n < len(self.script) and self.script[n] is not None:
            return str(self.script[n])
        u = random.Random(f"{self.seed}:batch:{n}").random()
        return "failed" if u < self.p_fail else "expired" if u < self.p_fail + self.p_expire else "completed"

    async def _run(self, batch: dict[str, Any], n: int) -> None:
        lines = [ln for ln in self.files[batch["input_file_id"]]["_data"].decode("utf-8").splitlines() if ln.strip()]
        batch["request_counts"]["total"] = len(lines)
        batch["status"] = "in_progress"
        batch["in_progress_at"] = int(time.time())
        await asyncio.sleep(self.delay_s)
        if batch["status"] == "cancelled":
            return
        outcome = self._outcome(n)
        if outcome == "failed":
            batch.update(
                status="failed",
                failed_at=int(time.time()),
                errors={"object": "list", "data": [{"code": "injected_failure", "message": "batch failed (injected)"}]},
            )
            return
        if outcome == "expired":
            batch.update(status="expired", expired_at=int(time.time()))
            return
        out, err = [], []
        rng = random.Random(f"{self.seed}:lines:{n}")
        for i, ln in enumerate(lines):
            try:
                req = json.loads(ln)
                cid, body = str(req["custom_id"]), req["body"]
                model, messages = str(body["model"]), body["messages"]
            except (ValueError, KeyError, TypeError):
                err.append(_error_line(i, None, "invalid_request", f"line {i + 1}: not a request"))
                continue
            if rng.random() < self.p_line_error:
                err.append(_error_line(i, cid, "server_error", "request failed (injected)"))
                continue
            try:
                text = await self.reply(
                    model, messages, body.get("seed"), body.get("max_tokens") or body.get("max_completion_tokens")
                )
            except KeyError:
                err.append(_error_line(i, cid, "model_not_found", f"model {model!r} not found"))
                continue
            out.append(
                {
                    "id": f"batch_req_{i}",
                    "custom_id": cid,
                    "error": None,
                    "response": {"status_code": 200, "request_id": f"req_{i}", "body": self.payload(model, text, messages)},
                }
            )
        dump = "".join(json.dumps(x) + "\n" for x in out).encode()
        batch["output_file_id"] = self._store(dump, "batch_output", f"{batch['id']}_output.jsonl")["id"] if out else None
        if err:
            batch["error_file_id"] = self._store("".join(json.dumps(x) + "\n" for x in err).encode(), "batch_output",
                                                 f"{batch['id']}_error.jsonl")["id"]  # fmt: skip
        batch["request_counts"].update(completed=len(out), failed=len(err))
        batch.update(status="completed", completed_at=int(time.time()))


def _error(status: int, message: str) -> web.Response:
    return web.json_response({"error": {"message": message, "type": "invalid_request_error", "code": None}}, status=status)
