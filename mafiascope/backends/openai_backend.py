"""Any OpenAI-compatible chat endpoint through the official ``openai`` SDK.

One type covers OpenAI, DeepSeek, OpenRouter, vLLM, Ollama, LM Studio and llama.cpp:
only ``base_url``, ``model`` and the key differ.

Fault policy (never raises, never turns an error into speech):

* timeouts, connection errors (dropped or truncated responses), unparseable bodies,
  408/409/429 and 5xx are retried ``max_retries`` times. A ``Retry-After`` /
  ``retry-after-ms`` header is honoured exactly (plus up to 10% jitter, never less);
  otherwise the wait is exponential (``backoff_base * 2**n`` capped at ``backoff_max``)
  with up to 25% jitter -- the same schedule and retryable set as the SDK's own retry
  loop. We run the loop ourselves (SDK ``max_retries=0``) because the SDK's retries are
  invisible to the caller: we need the attempt count and every absorbed fault in the
  game records. A Retry-After above ``max_retry_after`` is not waited for (as in the SDK).
* 401/403/404 fail fast: ``ok=False``, ``attempts=1``, ``meta={'fatal': True, ...}``
  and an error naming the backend, so a game or batch may stop early.
* other 4xx (e.g. 400 context too long) are not retried: ``ok=False``.

Every failed attempt is listed in ``Completion.meta['faults']`` even when a later attempt
succeeds. ``<think>...</think>`` blocks are stripped from every reply (acting and probe).
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from typing import TYPE_CHECKING, Any

import openai

from .. import __version__ as _mafiascope_version
from .base import Completion, CompletionRequest, estimate_tokens
from .clients import OpenAIEndpoint
from .common import PerLoop, backoff_delay, host_of, parse_retry_after, redact, strip_think
from .limits import Limits, QueueTimeout, lagged_completion, priority_of

if TYPE_CHECKING:
    from .registry import OpenAISpec

_RETRY_STATUS = {408, 409, 429}
_FATAL_STATUS = {401, 403, 404}


def _loads(body: bytes) -> Any:
    """Decode a response body; raises ValueError (a bad body) when it is not JSON.

    The SDK would build a pydantic ChatCompletion per call; we read four fields, so the raw
    JSON (orjson when present) saves most of the per-call CPU of a probe.
    """
    try:
        import orjson

        return orjson.loads(body)
    except ImportError:
        return json.loads(body)


class ApiReported:
    """What an OpenAI-compatible API reported about the model that answered: the responses' ``model`` ids,
    ``system_fingerprint`` values and the range of their ``created`` times (Unix seconds), over this backend
    instance's successful calls (recorded in each game's ``game_over.backends``; the report's provenance)."""

    MAX_VALUES = 20  # distinct ids kept (a misbehaving server cannot grow the record without bound)

    def __init__(self) -> None:
        self.models: dict[str, int] = {}
        self.fingerprints: dict[str, int] = {}
        self.created: list[int] = []  # [first, last]

    def add(self, model: str | None, fingerprint: Any, created: Any) -> None:
        for seen, value in ((self.models, model), (self.fingerprints, fingerprint)):
            if isinstance(value, str) and value and (value in seen or len(seen) < self.MAX_VALUES):
                seen[value[:200]] = seen.get(value[:200], 0) + 1
        if isinstance(created, (int, float)) and not isinstance(created, bool) and created > 0:
            t = int(created)
            self.created = [min(self.created[0], t), max(self.created[1], t)] if self.created else [t, t]

    def describe(self) -> dict[str, Any]:
        return {
            "models": dict(self.models),
            "system_fingerprints": dict(self.fingerprints),
            "created_first": self.created[0] if self.created else None,
            "created_last": self.created[1] if self.created else None,
        }


class OpenAIBackend:
    type = "openai"

    def __init__(self, name: str, spec: OpenAISpec) -> None:
        self.name = name
        self.spec = spec
        self.model_label = spec.label or spec.model
        self.endpoint = OpenAIEndpoint(name, spec)  # the key and headers, resolved for spec.base_url only
        self._api_key = self.endpoint.api_key
        self.limits = Limits(spec.max_concurrency, spec.rpm, spec.burst)
        self._clients: PerLoop[openai.AsyncOpenAI] = PerLoop(self._new_client)
        self._rng = random.Random()  # jitter only; never touches game RNG streams
        self.served_model: str | None = None
        self.reported = ApiReported()  # what the API said it served: model ids, system fingerprints, creation times
        self.stats = {"calls": 0, "ok": 0, "failed": 0, "retries": 0, "faults": 0}
        self.fault_types: dict[str, int] = {}

    # ------------------------------------------------------------------ plumbing

    def _new_client(self) -> openai.AsyncOpenAI:
        return self.endpoint.client()  # SDK retries off: our own loop, see module docstring

    def _err(self, msg: str) -> str:
        return redact(
            f"backend {self.name!r} ({host_of(self.spec.base_url)}, model {self.spec.model}): {msg}", *self.endpoint.secrets
        )

    def _params(self, req: CompletionRequest) -> dict[str, Any]:
        s = self.spec
        max_tokens = s.max_tokens if s.max_tokens is not None else req.max_tokens
        # The messages travel in extra_body (which the SDK merges into the JSON body as is):
        # they are already plain {role, content} strings, and the SDK's typed transform of the
        # `messages` argument walks every message of every call -- 5-10 ms of CPU per probe
        # call on a long context, in the event loop the seats' moves also wait on.
        params: dict[str, Any] = {"model": s.model, "messages": [], s.max_tokens_field: max_tokens}
        temperature = req.temperature if req.temperature is not None else s.temperature
        if temperature is not None:
            params["temperature"] = temperature
        if s.top_p is not None:
            params["top_p"] = s.top_p
        if s.reasoning_effort is not None:
            params["reasoning_effort"] = s.reasoning_effort
        if s.send_seed and req.seed is not None:
            params["seed"] = int(req.seed) % s.seed_modulo if s.seed_modulo else int(req.seed)
        params["extra_body"] = {**(s.extra_body or {}), "messages": req.messages}
        return params

    # ------------------------------------------------------------------ the call

    async def complete(self, request: CompletionRequest) -> Completion:
        t0 = time.monotonic()
        self.stats["calls"] += 1
        faults: list[dict[str, Any]] = []
        params = self._params(request)
        attempts = 0
        last_error = "no attempt made"
        while True:
            attempts += 1
            wait: float | None = None
            try:
                async with self.limits.slot(priority_of(request.kind), request.max_wait):
                    raw = await self._clients.get().chat.completions.with_raw_response.create(**params)
                    body = raw.content
                return self._success(_loads(body), request, attempts, faults, t0)
            except QueueTimeout as exc:  # a probe lagged too far behind the game: skipped, not retried
                return lagged_completion(self.name, exc, attempts, t0)
            except openai.APIStatusError as exc:
                status = exc.status_code
                detail = _status_detail(exc)
                if status in _FATAL_STATUS:
                    what = {
                        401: "authentication failed (check the API key)",
                        403: "permission denied",
                        404: "not found (check base_url and model)",
                    }[status]
                    faults.append({"attempt": attempts, "fault": f"http_{status}"})
                    return self._failure(f"HTTP {status} {what}: {detail}", attempts, faults, t0, fatal=True, status=status)
                if status in _RETRY_STATUS or status >= 500:
                    retry_after = parse_retry_after(exc.response.headers if exc.response is not None else None)
                    fault = {"attempt": attempts, "fault": f"http_{status}"}
                    if retry_after is not None:
                        fault["retry_after_s"] = retry_after
                        if retry_after > self.spec.max_retry_after:
                            faults.append(fault)
                            return self._failure(
                                f"HTTP {status}, Retry-After {retry_after:.0f}s exceeds max_retry_after "
                                f"{self.spec.max_retry_after:.0f}s: {detail}",
                                attempts,
                                faults,
                                t0,
                                status=status,
                            )
                        wait = retry_after * (1.0 + 0.1 * self._rng.random())
                    faults.append(fault)
                    last_error = f"HTTP {status}: {detail}"
                else:
                    faults.append({"attempt": attempts, "fault": f"http_{status}"})
                    return self._failure(f"HTTP {status} (not retried): {detail}", attempts, faults, t0, status=status)
            except openai.APITimeoutError as exc:
                if _dropped(exc):
                    faults.append({"attempt": attempts, "fault": "connection"})
                    last_error = f"connection error: {_root(exc)}"
                else:
                    faults.append({"attempt": attempts, "fault": "timeout"})
                    last_error = f"timed out after {self.spec.timeout:g}s"
            except openai.APIConnectionError as exc:
                faults.append({"attempt": attempts, "fault": "connection"})
                last_error = f"connection error: {_cause(exc)}"
            except (openai.APIResponseValidationError, ValueError, TypeError, AttributeError, KeyError) as exc:
                # a 200 whose body is not a chat completion (garbage, HTML error page ...)
                faults.append({"attempt": attempts, "fault": "bad_body"})
                last_error = f"unreadable response body: {type(exc).__name__}: {str(exc)[:160]}"
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # anything else from the transport: still a fault, never a crash
                faults.append({"attempt": attempts, "fault": "error"})
                last_error = f"{type(exc).__name__}: {str(exc)[:200]}"
            if attempts > self.spec.max_retries:
                return self._failure(f"{last_error} (gave up after {attempts} attempts)", attempts, faults, t0)
            if wait is None:
                wait = backoff_delay(attempts - 1, self.spec.backoff_base, self.spec.backoff_max, self._rng)
            faults[-1]["wait_s"] = round(wait, 3)
            self.stats["retries"] += 1
            await asyncio.sleep(wait)

    def _success(self, resp: Any, request: CompletionRequest, attempts: int, faults: list, t0: float) -> Completion:
        c = completion_from_body(resp, request, backend_name=self.name, latency_ms=int((time.monotonic() - t0) * 1000),
                                 attempts=attempts, faults=faults)  # fmt: skip
        if c.served_model and self.served_model is None:
            self.served_model = c.served_model
        self.reported.add(c.served_model, resp.get("system_fingerprint"), resp.get("created"))
        self.stats["ok"] += 1
        self._count(faults)
        return c

    def request_body(self, req: CompletionRequest) -> dict[str, Any]:
        """The JSON body of this request as the chat completions endpoint receives it (a Batch API line's ``body``)."""
        params = self._params(req)
        extra = params.pop("extra_body")
        return {**params, **extra}

    def _failure(
        self, msg: str, attempts: int, faults: list, t0: float, *, fatal: bool = False, status: int | None = None
    ) -> Completion:
        self.stats["failed"] += 1
        self._count(faults)
        meta: dict[str, Any] = {"backend": self.name, "faults": faults}
        if fatal:
            meta["fatal"] = True
        if status is not None:
            meta["status"] = status
        return Completion(
            text="", ok=False, error=self._err(msg), attempts=attempts, latency_ms=int((time.monotonic() - t0) * 1000), meta=meta
        )

    def _count(self, faults: list[dict[str, Any]]) -> None:
        self.stats["faults"] += len(faults)
        for f in faults:
            self.fault_types[f["fault"]] = self.fault_types.get(f["fault"], 0) + 1

    # ------------------------------------------------------------------ provenance

    def describe(self) -> dict[str, Any]:
        s = self.spec
        return {
            "type": self.type,
            "name": self.name,
            "model": s.model,
            "model_label": self.model_label,
            "served_model": self.served_model,
            "api_reported": self.reported.describe(),
            "base_url_host": host_of(s.base_url),
            "sampling": {
                "temperature": s.temperature,
                "top_p": s.top_p,
                "max_tokens": s.max_tokens,
                "reasoning_effort": s.reasoning_effort,
                "seed_sent": s.send_seed,
            },
            "extra_body_keys": sorted(s.extra_body) if s.extra_body else [],
            "timeout_s": s.timeout,
            "max_retries": s.max_retries,
            "limits": self.limits.describe(),
            "api_key_set": bool(self._api_key),
            "stats": {**self.stats, "fault_types": dict(self.fault_types)},  # process-wide, this (shared) instance
            "versions": {"openai": openai.__version__, "mafiascope": _mafiascope_version},
        }

    async def aclose(self) -> None:
        client = self._clients.pop_current()
        if client is not None:
            await client.close()


def completion_from_body(resp: Any, request: CompletionRequest, *, backend_name: str, latency_ms: int, attempts: int = 1,
                         faults: list[dict[str, Any]] | None = None) -> Completion:  # fmt: skip
    """A chat completion's JSON body as a Completion (think blocks stripped, usage or an estimate); a body that is
    not a chat completion raises ValueError. Shared by live calls and Batch API results."""
    choices = resp.get("choices") if isinstance(resp, dict) else None
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise ValueError("response is not a chat completion (no choices)")
    message = choices[0].get("message")
    raw = message.get("content") if isinstance(message, dict) else None
    if raw is not None and not isinstance(raw, str):
        raise ValueError("response message content is not text")
    finish = choices[0].get("finish_reason")
    text, stripped = strip_think(raw or "")
    usage = resp.get("usage")
    pt = usage.get("prompt_tokens") if isinstance(usage, dict) else None
    ct = usage.get("completion_tokens") if isinstance(usage, dict) else None
    pt = pt if isinstance(pt, int) else None
    ct = ct if isinstance(ct, int) else None
    estimated = False
    if pt is None or ct is None:
        estimated = True
        pt = pt if pt is not None else estimate_tokens("".join(m.get("content", "") or "" for m in request.messages))
        ct = ct if ct is not None else estimate_tokens(raw or "")
    served = resp.get("model") if isinstance(resp.get("model"), str) else None
    meta: dict[str, Any] = {"backend": backend_name}
    if faults:
        meta["faults"] = faults
    if stripped:
        meta["think_stripped"] = True
    return Completion(
        text=text,
        ok=True,
        attempts=attempts,
        latency_ms=latency_ms,
        prompt_tokens=pt,
        completion_tokens=ct,
        tokens_estimated=estimated,
        served_model=served or None,
        finish_reason=finish,
        meta=meta,
    )


def _status_detail(exc: openai.APIStatusError) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        err = body.get("error", body)
        msg = err.get("message") if isinstance(err, dict) else err
        if msg:
            return str(msg)[:200]
    return (getattr(exc, "message", "") or str(exc))[:200]


def _chain(exc: BaseException) -> list[BaseException]:
    out: list[BaseException] = []
    e: BaseException | None = exc
    while e is not None and len(out) < 10:
        out.append(e)
        e = e.__cause__ or e.__context__
    return out


def _dropped(exc: BaseException) -> bool:
    """A 'timeout' that is really a dropped connection (the SDK's aiohttp transport maps
    every aiohttp connection error, e.g. ServerDisconnectedError, to a connect timeout)."""
    try:
        import aiohttp
    except ImportError:
        return False
    return any(
        isinstance(e, aiohttp.ClientConnectionError) and not isinstance(e, (aiohttp.ServerTimeoutError, asyncio.TimeoutError))
        for e in _chain(exc)
    )


def _root(exc: BaseException) -> str:
    last = _chain(exc)[-1]
    return f"{type(last).__name__}: {str(last)[:160]}" if str(last) else type(last).__name__


def _cause(exc: BaseException) -> str:
    cause = exc.__cause__ or exc.__context__
    if cause is not None and str(cause):
        return f"{type(cause).__name__}: {str(cause)[:160]}"
    return str(exc)[:160] or type(exc).__name__
