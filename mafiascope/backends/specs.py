"""Backend specs: the validated form of a YAML ``backends:`` entry, one pydantic model per
``type`` (a discriminated union), so an error names the backend, the type and the field, e.g.
``backends.gpt.openai.temperature: Input should be less than or equal to 2``.

Pure data: a game config holds these (config.py) and the registry builds instances from them
(registry.py), so the config layer needs no backend code.

Every spec also knows where it came from (:func:`spec_source`, not a field: it is never read from or
written to a file): :attr:`~.keys.Source.OTHER` unless the loader of an operator's config file marks it
(:func:`mark_source`), which decides what its ``${VAR}`` credentials may reach (backends/keys.py).
:class:`Source` lives here, below the backends, so the config loaders can say where a config came from.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from enum import StrEnum
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, TypeAdapter, ValidationError, field_validator, model_validator


class Source(StrEnum):
    """Where a config naming a ``${VAR}`` came from. Only :attr:`OPERATOR` is a config the operator wrote;
    a spec whose source nobody set is :attr:`OTHER` (below), so a new path that reads
    configs from somewhere else cannot widen what a key may reach."""

    OPERATOR = "a config file named on the command line"
    APP = "a config the app wrote (from a visitor's form or a log)"
    LOG = "a game log"
    ROSTER = "an arena roster"
    STUDY = "a saved study spec"
    OTHER = "a config of unknown origin"


ENV_FROM_APP = "MAFIASCOPE_CONFIGS_FROM_APP"  # set by the app in the processes it starts (app/keys.child_env)


def file_source(environ: Mapping[str, str] | None = None) -> Source:
    """The source of a config file this process was told to read (``-c``, a study spec YAML): the operator's,
    unless the app started the process (then it wrote the file, from a visitor's form or a log)."""
    env = os.environ if environ is None else environ
    return Source.APP if env.get(ENV_FROM_APP) == "1" else Source.OPERATOR


_BAD_URL_CHAR = re.compile(r"[\x00-\x20\x7f]")
ENV_REF_ANYWHERE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
CREDENTIAL_FIELDS = frozenset({"api_key", "token", "bearer_token"})  # and every value under ``headers``
REFERENCE_RULE = (
    "${...} is resolved only in credential fields (api_key, token, header values), under the key "
    "policy (docs/security.md); write the value itself"
)


def credential_items(entry: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """``(field, value)`` of every credential of one ``backends:`` entry: :data:`CREDENTIAL_FIELDS` and each header."""
    out = [(k, entry[k]) for k in sorted(CREDENTIAL_FIELDS) if k in entry]
    headers = entry.get("headers")
    if isinstance(headers, Mapping):
        out += [(f"headers.{k}", v) for k, v in headers.items()]
    return out


def misplaced_reference(obj: Any, path: str = "") -> str | None:
    """The field path of the first ``${VAR}`` outside a credential field, or None.

    A ``${VAR}`` is never expanded in any other string (a model name, a base_url, a game name, a
    visitor's line-up): there it would copy a server variable into a URL, a request or a log."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            if k in CREDENTIAL_FIELDS or (k == "headers" and isinstance(v, dict)):
                continue
            found = misplaced_reference(v, f"{path}.{k}" if path else str(k))
            if found is not None:
                return found
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            found = misplaced_reference(v, f"{path}.{i}" if path else str(i))
            if found is not None:
                return found
    elif isinstance(obj, str) and "${" in obj and ENV_REF_ANYWHERE.search(obj):
        return path
    return None


_HEADER_NAME = re.compile(r"^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,100}$")


def url_problem(url: Any) -> str | None:
    """Why ``url`` cannot be where a backend sends requests (None: it can): not http(s), no host, or
    whitespace / control characters anywhere (urllib silently drops a TAB; an HTTP library may not)."""
    if not isinstance(url, str) or not url:
        return "give an http:// or https:// URL"
    bad = _BAD_URL_CHAR.search(url)
    if bad:
        what = {"\t": "a TAB", "\n": "a line break", "\r": "a line break", " ": "a space"}.get(bad.group(), "a control character")
        return f"contains {what} at character {bad.start() + 1}; remove it"
    if not url.startswith(("http://", "https://")):
        return "must start with http:// or https://"
    try:
        if not urlsplit(url).hostname:
            return "has no host"
    except ValueError as exc:
        return f"is not a valid URL ({exc})"
    return None


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)  # .nan / .inf in YAML are errors
    _source: Source = PrivateAttr(default=Source.OTHER)  # kept by model_copy, deepcopy and pickle; lost by a dump

    @model_validator(mode="before")
    @classmethod
    def _no_references(cls, data: Any) -> Any:
        where = misplaced_reference(data) if isinstance(data, dict) else None
        if where is not None:
            raise ValueError(f"{where}: {REFERENCE_RULE}")
        return data


class BotSpec(_Spec):
    type: Literal["bot"] = "bot"
    preset: str = "balanced"
    model: str | None = None  # label shown in logs; defaults to "bot-<preset>"


class _Limited(_Spec):
    max_concurrency: int | None = Field(
        None,
        ge=1,
        le=1024,
        description="calls in flight at once, across all games of the process; default: sized from the running games' seats and probe batteries",
    )
    rpm: float | None = Field(None, gt=0, description="at most this many call starts per minute (process-wide)")
    burst: int = Field(1, ge=1, description="calls allowed back-to-back before rpm spacing applies")
    label: str | None = Field(None, description="label recorded in setup.players[].model (default: model)")


class OpenAISpec(_Limited):
    type: Literal["openai"] = "openai"
    model: str = Field(min_length=1)
    base_url: str = "https://api.openai.com/v1"
    api_key: str | None = Field(
        None,
        description='"${ENV_VAR}" (resolved by the installed key resolver: the environment, under the key policy, docs/security.md); omit for keyless local servers',
    )
    headers: dict[str, str] | None = Field(
        None, description='extra HTTP headers; a value may be "${ENV_VAR}", resolved like api_key (for this base_url only)'
    )
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
        why = url_problem(v)
        if why:
            raise ValueError(why)
        return v

    @field_validator("headers")
    @classmethod
    def _headers(cls, v: dict[str, str] | None) -> dict[str, str] | None:
        for name, value in (v or {}).items():
            if not _HEADER_NAME.match(name):
                raise ValueError(f"headers: {name[:40]!r} is not a header name")
            if any(c in value for c in "\r\n\x00"):
                raise ValueError(f"headers.{name}: a line break or NUL in a header value")
        return v


class BusSpec(_Limited):
    type: Literal["bus"] = "bus"
    model: str = Field(min_length=1, description="routing key a worker serves (worker --serve-as)")
    hub: str | None = Field(None, description="hub URL; default $MAFIASCOPE_BUS_URL or http://127.0.0.1:8765")
    token: str | None = Field("${MAFIASCOPE_BUS_TOKEN}", description='bearer token, usually "${ENV_VAR}"')
    timeout: float = Field(300.0, gt=0, le=3600, description="seconds one worker may hold a job before it is re-queued")
    requeue: int = Field(1, ge=0, le=5, description="re-dispatches after a worker timeout before the call fails")
    wait_for_worker: float = Field(30.0, ge=0, le=3600, description="seconds a job may wait for a live worker")

    @field_validator("hub")
    @classmethod
    def _hub(cls, v: str | None) -> str | None:
        why = url_problem(v) if v is not None else None
        if why:
            raise ValueError(why)
        return v


class HumanSpec(_Spec):
    type: Literal["human"] = "human"
    mode: Literal["file", "stdin"] = "file"
    timeout_s: float | None = Field(None, gt=0, description="seconds to wait for a move; None = forever")
    logs_dir: str | None = Field(None, description="where the pending/reply files live; default: the game's logs dir")
    label: str | None = "human"


BackendSpec = Annotated[BotSpec | OpenAISpec | BusSpec | HumanSpec, Field(discriminator="type")]
_SPEC_ADAPTER: TypeAdapter[Any] = TypeAdapter(BackendSpec)


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
            if not loc and err["type"] == "value_error":  # a check of the whole entry: its message names the field
                lines.append(f"backend {name!r} ({raw.get('type', '?')}): {str(err['msg']).removeprefix('Value error, ')}")
                continue
            where = ".".join(loc) or "type"
            lines.append(f"backend {name!r} ({raw.get('type', '?')}): field {where!r}: {err['msg']}")
        raise ValueError("\n".join(lines)) from None


def spec_source(spec: Any) -> Source:
    """Where ``spec`` came from (:attr:`Source.OTHER` for anything not marked, or not a spec)."""
    got = getattr(spec, "_source", None) if isinstance(spec, _Spec) else None
    return got if isinstance(got, Source) else Source.OTHER


def mark_source(specs: Iterable[Any], source: Source) -> None:
    """Record ``source`` on each spec (the loaders of configs call it: backends/keys.py says what it changes)."""
    for spec in specs:
        if isinstance(spec, _Spec):
            spec._source = source


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
