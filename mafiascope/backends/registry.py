"""Backend registry: YAML ``backends:`` entries -> Backend instances.

Each entry is validated by a pydantic model chosen by its ``type`` (a discriminated
union), so an error names the backend, the type and the field, e.g.
``backends.gpt.openai.temperature: Input should be less than or equal to 2``.

Instances are shared per process: :func:`build_backends` keeps a cache keyed by
``(name, spec JSON)``, so every game of a process shares one backend's concurrency cap and
``rpm`` limit, while a second config that reuses a name with a *different* spec gets its
own instance (the original keyed by name only and silently reused the first one).

Types: ``bot`` (offline players), ``openai`` (any OpenAI-compatible endpoint),
``bus`` (an external worker through the model bus hub), ``human`` (moves from the app
or a terminal).
"""

from __future__ import annotations

import os
import threading
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, field_validator

from .base import Backend


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)  # .nan / .inf in YAML are errors


class BotSpec(_Spec):
    type: Literal["bot"] = "bot"
    preset: str = "balanced"
    model: str | None = None  # label shown in logs; defaults to "bot-<preset>"


class _Limited(_Spec):
    max_concurrency: int | None = Field(None, ge=1, le=1024, description="calls in flight at once, across all games of the process; default: sized from the running games' seats and probe batteries")
    rpm: float | None = Field(None, gt=0, description="at most this many call starts per minute (process-wide)")
    burst: int = Field(1, ge=1, description="calls allowed back-to-back before rpm spacing applies")
    label: str | None = Field(None, description="label recorded in setup.players[].model (default: model)")


class OpenAISpec(_Limited):
    type: Literal["openai"] = "openai"
    model: str = Field(min_length=1)
    base_url: str = "https://api.openai.com/v1"
    api_key: str | None = Field(None, description='"${ENV_VAR}" (resolved by the installed key resolver: the environment, under the key policy, docs/security.md); omit for keyless local servers')
    temperature: float | None = Field(None, ge=0, le=2)
    top_p: float | None = Field(None, gt=0, le=1)
    max_tokens: int | None = Field(None, ge=1, description="overrides the engine's per-call max_tokens when set")
    max_tokens_field: Literal["max_tokens", "max_completion_tokens"] = "max_tokens"
    reasoning_effort: str | None = None
    extra_body: dict[str, Any] | None = None
    send_seed: bool = True  # forward CompletionRequest.seed as the API's `seed`
    seed_modulo: int | None = Field(None, ge=2, description="reduce seeds for servers with narrow seed types, e.g. 4294967296")
    timeout: float = Field(60.0, gt=0, description="seconds per HTTP attempt")
    max_retries: int = Field(2, ge=0, le=10)
    backoff_base: float = Field(0.5, ge=0)
    backoff_max: float = Field(8.0, ge=0)
    max_retry_after: float = Field(120.0, ge=0)

    @field_validator("base_url")
    @classmethod
    def _url(cls, v: str) -> str:
        if not v.startswith(("http://", "https://")):
            raise ValueError("base_url must start with http:// or https://")
        return v


class BusSpec(_Limited):
    type: Literal["bus"] = "bus"
    model: str = Field(min_length=1, description="routing key a worker serves (worker --serve-as)")
    hub: str | None = Field(None, description="hub URL; default $MAFIASCOPE_BUS_URL or http://127.0.0.1:8765")
    token: str | None = Field("${MAFIASCOPE_BUS_TOKEN}", description='bearer token, usually "${ENV_VAR}"')
    timeout: float = Field(300.0, gt=0, le=3600, description="seconds one worker may hold a job before it is re-queued")
    requeue: int = Field(1, ge=0, le=5, description="re-dispatches after a worker timeout before the call fails")
    wait_for_worker: float = Field(30.0, ge=0, le=3600, description="seconds a job may wait for a live worker")


class HumanSpec(_Spec):
    type: Literal["human"] = "human"
    mode: Literal["file", "stdin"] = "file"
    timeout_s: float | None = Field(None, gt=0, description="seconds to wait for a move; None = forever")
    logs_dir: str | None = Field(None, description="where the pending/reply files live; default: the game's logs dir")
    label: str | None = "human"


BackendSpec = Annotated[Union[BotSpec, OpenAISpec, BusSpec, HumanSpec], Field(discriminator="type")]
_SPEC_ADAPTER: TypeAdapter[Any] = TypeAdapter(BackendSpec)


# --------------------------------------------------------------------------- validation


def parse_backend_spec(name: str, raw: Any) -> Any:
    """Validate one ``backends:`` entry; ValueError messages name the backend and field."""
    if isinstance(raw, BaseModel):
        return raw
    if not isinstance(raw, dict):
        raise ValueError(f"backend {name!r}: expected a mapping with a 'type' field, got {type(raw).__name__}")
    try:
        return _SPEC_ADAPTER.validate_python(raw)
    except ValidationError as exc:
        lines = []
        for err in exc.errors():
            loc = [str(p) for p in err["loc"]]
            if loc and loc[0] in ("bot", "openai", "bus", "human"):
                loc = loc[1:]
            where = ".".join(loc) or "type"
            lines.append(f"backend {name!r} ({raw.get('type', '?')}): field {where!r}: {err['msg']}")
        raise ValueError("\n".join(lines)) from None


def parse_backend_specs(raw: dict[str, Any]) -> dict[str, Any]:
    """Validate a whole ``backends:`` mapping, collecting every error."""
    out, errors = {}, []
    for name, entry in (raw or {}).items():
        try:
            out[name] = parse_backend_spec(str(name), entry)
        except ValueError as exc:
            errors.append(str(exc))
    if errors:
        raise ValueError("\n".join(errors))
    return out


# --------------------------------------------------------------------------- construction


def build_backend(name: str, spec: Any, *, logs_dir: str | os.PathLike[str] | None = None) -> Backend:
    """A new backend instance (no cache). ``logs_dir`` is where human seats exchange files."""
    spec = parse_backend_spec(name, spec)
    if isinstance(spec, BotSpec):
        from .bot import BotBackend

        return BotBackend(name, preset=spec.preset, model_label=spec.model)
    if isinstance(spec, OpenAISpec):
        from .openai_backend import OpenAIBackend

        return OpenAIBackend(name, spec)
    if isinstance(spec, BusSpec):
        from .bus.client import BusBackend

        return BusBackend(name, spec)
    if isinstance(spec, HumanSpec):
        from .human import HumanBackend, HumanStdinBackend

        label = spec.label or "human"
        if spec.mode == "stdin":
            return HumanStdinBackend(name, timeout_s=spec.timeout_s, model_label=label)
        where = spec.logs_dir or logs_dir or os.environ.get("MAFIASCOPE_LOGS_DIR") or "logs"
        return HumanBackend(name, where, timeout_s=spec.timeout_s, model_label=label)
    raise ValueError(f"backend {name!r}: unsupported type {getattr(spec, 'type', spec)!r}")


_CACHE: dict[tuple[str, str], Backend] = {}
_CACHE_LOCK = threading.Lock()


def _cache_key(name: str, spec: Any, logs_dir: Any) -> tuple[str, str]:
    key = spec.model_dump_json()
    if isinstance(spec, HumanSpec) and spec.logs_dir is None:
        key += f"|logs_dir={os.fspath(logs_dir) if logs_dir else ''}"
    return name, key


def get_backend(name: str, spec: Any, *, logs_dir: str | os.PathLike[str] | None = None) -> Backend:
    """The process-wide shared instance for ``(name, spec)``."""
    spec = parse_backend_spec(name, spec)
    key = _cache_key(name, spec, logs_dir)
    with _CACHE_LOCK:
        inst = _CACHE.get(key)
        if inst is None:
            inst = build_backend(name, spec, logs_dir=logs_dir)
            _CACHE[key] = inst
        return inst


def build_backends(specs: dict[str, Any], *, logs_dir: str | os.PathLike[str] | None = None) -> dict[str, Backend]:
    """Shared instances for a config's ``backends:`` mapping (validated first, all errors at once)."""
    parsed = parse_backend_specs(dict(specs))
    return {name: get_backend(name, spec, logs_dir=logs_dir) for name, spec in parsed.items()}


def describe_backends(backends: dict[str, Backend]) -> dict[str, dict[str, Any]]:
    """Provenance per backend name for setup/game_over records (no secrets)."""
    return {name: b.describe() for name, b in backends.items()}


async def close_all() -> None:
    """Close the HTTP clients of cached backends that belong to the running loop (tests, shutdown)."""
    with _CACHE_LOCK:
        items = list(_CACHE.values())
    for b in items:
        try:
            await b.aclose()
        except Exception:
            pass


def clear_cache() -> None:
    """Forget every shared instance (tests)."""
    with _CACHE_LOCK:
        _CACHE.clear()
