"""Preflight: one cheap call per distinct backend before any game starts.

A dead port, a wrong key or a misspelt model would otherwise give a "finished" game whose
every move is a logged fallback. :func:`preflight` asks each distinct backend once (deduped
by ``(type, base_url, model, key reference)``, so two names for the same endpoint cost one
call) and returns one :class:`PreflightResult` per distinct backend; it never raises.
:func:`run_preflight` is the synchronous gate the CLI calls before anything is written: it
raises :class:`PreflightError` (a ``ValueError``) with one line naming every failing backend
(name, type, URL without credentials, model) and the cause.

* ``openai``: ``GET {base_url}/models/{model}`` (OpenAI, Ollama, LM Studio answer it). A 404
  there may only mean the server has no such route (vLLM, llama.cpp list models but do not
  serve single entries), so a 404 falls back to a one-token chat completion. Refused
  connections, timeouts, 401/403, a 404 from the completion, a 400 that names the model,
  and 429/5xx that persist over three attempts fail; anything else the server answers passes.
* ``bus``: ``GET {hub}/v1/status`` with the token (the hub answers and accepts the token;
  workers may connect later, within the backend's ``wait_for_worker``).
* ``bot``, ``human`` and any in-process backend pass without a call.

Keys are resolved as the backends resolve them and never appear in a result or an error. For a config the
operator did not write (a visitor's line-up, a log, a roster) a failure names the HTTP status only, never
what the server said: that text would carry whatever the named host answers back to whoever named it.
"""

from __future__ import annotations

import asyncio
import re
import threading
import time
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from pydantic import BaseModel

from .base import BackendError
from .clients import BusEndpoint, OpenAIEndpoint
from .common import redact
from .specs import Source, spec_source

PREFLIGHT_TIMEOUT_S = 10.0  # per attempt, or the backend's own timeout when that is shorter
TRANSIENT_ATTEMPTS = 3  # 429 / 5xx / dropped connections are asked again, then fail
_MODEL_PROBLEM = re.compile(
    r"model.*(not[ _]?found|not[ _]exist|does not exist|unknown|invalid|no such)|"
    r"(unknown|invalid|no such).*model",
    re.IGNORECASE,
)


class PreflightError(ValueError):
    """A backend failed its preflight; the message is one line naming it and the cause."""


class PreflightResult(BaseModel):
    names: list[str]  # backend names sharing this endpoint (one call for all of them)
    type: str
    target: str  # "openai, http://127.0.0.1:8766/v1, model m" -- no credentials
    ok: bool
    cause: str | None = None  # why it failed (or a note when it passed without a clean answer)
    method: str = "none"  # "models.retrieve", "chat (1 token)", "hub status", "none"
    calls: int = 0
    latency_ms: int = 0

    @property
    def message(self) -> str:
        who = ", ".join(repr(n) for n in self.names)
        return f"backend {who} ({self.target}): " + (self.cause or "ok")


def safe_url(url: str) -> str:
    """``scheme://host[:port]/path`` without user, password, query or fragment."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    return f"{parts.scheme}://{host}{f':{parts.port}' if parts.port else ''}{parts.path.rstrip('/')}"


def _spec_of(name: str, item: Any) -> Any:
    """A validated spec from a spec, a raw ``backends:`` entry or a backend instance."""
    from .registry import parse_backend_spec

    if isinstance(item, (BaseModel, dict)):
        return parse_backend_spec(name, item)
    spec = getattr(item, "spec", None)
    return spec if isinstance(spec, BaseModel) else None


def _dedupe_key(name: str, spec: Any, item: Any) -> tuple[str, ...]:
    kind = getattr(spec, "type", None) or str(getattr(item, "type", "other"))
    if kind == "openai":  # the source too: one config may be refused a key another may use
        return ("openai", spec.base_url.rstrip("/"), spec.model, str(spec.api_key or ""), spec_source(spec).name)
    if kind == "bus":
        return ("bus", str(spec.hub or ""), spec.model, str(spec.token or ""), spec_source(spec).name)
    return (kind, name)


async def preflight(backends: Mapping[str, Any], *, timeout: float = PREFLIGHT_TIMEOUT_S) -> list[PreflightResult]:
    """One result per distinct backend (in first-seen order); every check runs concurrently."""
    groups: dict[tuple[str, ...], tuple[list[str], Any, Any]] = {}
    for name, item in backends.items():
        spec = _spec_of(str(name), item)
        key = _dedupe_key(str(name), spec, item)
        if key in groups:
            groups[key][0].append(str(name))
        else:
            groups[key] = ([str(name)], spec, item)
    checks = [_check(names, spec, item, timeout) for names, spec, item in groups.values()]
    return list(await asyncio.gather(*checks))


async def _check(names: list[str], spec: Any, item: Any, timeout: float) -> PreflightResult:
    kind = getattr(spec, "type", None) or str(getattr(item, "type", "other"))
    t0 = time.monotonic()
    if kind == "openai":
        res = await _check_openai(names, spec, min(timeout, spec.timeout))
    elif kind == "bus":
        res = await _check_bus(names, spec, min(timeout, spec.timeout))
    else:
        res = PreflightResult(names=names, type=kind, target=kind, ok=True, cause="no call needed")
    res.latency_ms = int((time.monotonic() - t0) * 1000)
    return res


async def _check_openai(names: list[str], spec: Any, timeout: float) -> PreflightResult:
    res = PreflightResult(names=names, type="openai", target=f"openai, {safe_url(spec.base_url)}, model {spec.model}", ok=False)
    try:  # the key and headers are resolved for spec.base_url: the key policy checks the destination
        endpoint = OpenAIEndpoint(names[0], spec)
    except BackendError as exc:
        res.cause = str(exc)
        return res
    secrets = endpoint.secrets
    quote = spec_source(spec) == Source.OPERATOR  # only the operator's own config shows what the server said
    client = endpoint.client(timeout=timeout, fast_transport=False)

    def fail(cause: str) -> PreflightResult:
        res.ok, res.cause = False, redact(cause, *secrets)
        return res

    try:
        res.method = "models.retrieve"
        status, detail, said = await _attempts(res, lambda: client.models.retrieve(spec.model), timeout, quote)
        if status == 200:
            res.ok = True
            return res
        if status != 404:
            return fail(detail)
        res.method = "chat (1 token)"
        params: dict[str, Any] = {
            "model": spec.model,
            "messages": [{"role": "user", "content": "Reply OK."}],
            spec.max_tokens_field: 1,
        }
        if spec.extra_body:
            params["extra_body"] = dict(spec.extra_body)
        status, detail, said = await _attempts(res, lambda: client.chat.completions.create(**params), timeout, quote)
        if status == 200:
            res.ok = True
            return res
        if status in (400, 422) and not _MODEL_PROBLEM.search(said):
            res.ok, res.cause = True, redact(f"the server answered the 1-token completion with {detail}; passed", *secrets)
            return res
        return fail(detail)
    finally:
        await client.close()


async def _attempts(res: PreflightResult, call: Any, timeout: float, quote: bool = True) -> tuple[int, str, str]:
    """``(200, "", "")`` on success, else ``(status or 0, one-line cause, what the server said)``; transient
    failures are retried. The cause quotes the server's text only when ``quote``."""
    import openai

    status, detail, said = 0, "no attempt made", ""
    for attempt in range(TRANSIENT_ATTEMPTS):
        res.calls += 1
        try:
            await call()
            return 200, "", ""
        except openai.APIStatusError as exc:
            status, said = exc.status_code, _status_text(exc)
            what = {
                401: "authentication failed (check the API key)",
                403: "permission denied",
                404: "not found (check base_url and model)",
            }.get(status, "")
            detail = f"HTTP {status}" + (f" {what}" if what else "") + (f": {said}" if quote else "")
            if status != 429 and status < 500:
                return status, detail, said
        except openai.APITimeoutError:
            return 0, f"no answer within {timeout:g}s", ""
        except openai.APIConnectionError as exc:
            status, detail = 0, f"connection failed: {_cause(exc)}"
            if "refused" in detail.lower() or "all connection attempts failed" in detail.lower():
                return 0, detail, ""  # nothing listens: asking again cannot help
        except Exception as exc:  # a body that is not JSON, an SDK surprise: the server is not usable
            text = str(exc)[:160]
            return 0, f"unusable answer: {type(exc).__name__}" + (f": {text}" if quote else ""), text
        if attempt + 1 < TRANSIENT_ATTEMPTS:
            await asyncio.sleep(0.25 * 2**attempt)
    return status, f"{detail} (after {TRANSIENT_ATTEMPTS} attempts)", said


def _status_text(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        err = body.get("error", body)
        msg = err.get("message") if isinstance(err, dict) else err
        if msg:
            return " ".join(str(msg).split())[:200]
    return " ".join((getattr(exc, "message", "") or str(exc)).split())[:200]


def _cause(exc: BaseException) -> str:
    cause = exc.__cause__ or exc.__context__
    text = f"{type(cause).__name__}: {cause}" if cause is not None and str(cause) else str(exc) or type(exc).__name__
    return " ".join(text.split())[:200]


async def _check_bus(names: list[str], spec: Any, timeout: float) -> PreflightResult:
    import aiohttp

    from .bus.client import hub_url

    hub = hub_url(spec)
    res = PreflightResult(
        names=names, type="bus", target=f"bus, {safe_url(hub)}, model {spec.model}", ok=False, method="hub status"
    )
    try:  # the token is resolved for this hub: the key policy checks the destination
        endpoint = BusEndpoint(names[0], hub, spec.token, source=spec_source(spec))
    except BackendError as exc:
        res.cause = str(exc)
        return res
    token = endpoint.token
    res.calls = 1
    try:
        async with endpoint.session(timeout=aiohttp.ClientTimeout(total=timeout)) as session:
            async with session.get(f"{hub}/v1/status") as resp:
                if resp.status == 200:
                    res.ok = True
                    return res
                res.cause = f"HTTP {resp.status}" + (" (wrong or missing bus token)" if resp.status == 401 else "")
    except TimeoutError:
        res.cause = f"the hub did not answer within {timeout:g}s"
    except aiohttp.ClientError as exc:
        res.cause = f"connection failed: {type(exc).__name__}: {' '.join(str(exc).split())[:160]}"
    res.cause = redact(res.cause or "", token)
    return res


# --------------------------------------------------------------------------- the synchronous gate


def backends_in_use(cfg: Any) -> dict[str, Any]:
    """The ``backends:`` entries a game config's seats (and a ten-seat host) actually use."""
    used = {s.backend for s in cfg.seats}
    host = cfg.rules.option("host_backend") if hasattr(cfg.rules, "option") else None
    if host:
        used.add(str(host))
    return {name: spec for name, spec in cfg.backends.items() if name in used}


def _run(coro: Any) -> Any:
    from .registry import run_closing

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return run_closing(coro)
    box: dict[str, Any] = {}  # called from inside an event loop (an app thread): run on a fresh one

    def target() -> None:
        try:
            box["v"] = run_closing(coro)
        except BaseException as exc:  # re-raised in the caller
            box["e"] = exc

    th = threading.Thread(target=target, daemon=True)
    th.start()
    th.join()
    if "e" in box:
        raise box["e"]
    return box["v"]


def _merged(config_or_specs: Any) -> dict[str, Any]:
    items = config_or_specs if isinstance(config_or_specs, list) else [config_or_specs]
    merged: dict[str, Any] = {}
    for it in items:
        specs = backends_in_use(it) if hasattr(it, "seats") and hasattr(it, "backends") else dict(it)
        for name, spec in specs.items():
            merged.setdefault(str(name), spec)
    return merged


async def require(config_or_specs: Any, *, timeout: float = PREFLIGHT_TIMEOUT_S) -> list[PreflightResult]:
    """:func:`run_preflight` for callers already inside an event loop."""
    results = await preflight(_merged(config_or_specs), timeout=timeout)
    failed = [r for r in results if not r.ok]
    if failed:
        raise PreflightError(
            "preflight failed: "
            + "; ".join(r.message for r in failed)
            + " (no game was started; --no-preflight skips this check)"
        )
    return results


def run_preflight(config_or_specs: Any, *, timeout: float = PREFLIGHT_TIMEOUT_S) -> list[PreflightResult]:
    """Check a game config's backends in use (or a ``{name: spec | entry | backend}`` mapping, or
    a list of either); raise :class:`PreflightError` naming every failing backend."""
    return _run(require(config_or_specs, timeout=timeout))
