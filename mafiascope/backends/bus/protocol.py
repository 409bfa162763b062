"""JSON bodies of the model bus (see docs/bus.md). Every endpoint lives under ``/v1``."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

PROTOCOL_VERSION = 1
MAX_BODY_BYTES = 1024 * 1024  # request bodies above this get 413
MAX_POLL_WAIT_S = 55.0
DEFAULT_POLL_WAIT_S = 25.0
WORKER_LIVE_S = 60.0  # a worker is live this long after its last call (and while polling or busy)
IDLE_TIMEOUT_S = 15.0  # a connection that sends no complete request (headers) for this long is closed
BODY_TIMEOUT_S = 20.0  # a request body not fully received within this many seconds gets 408
MAX_SEED = 2**63 - 1  # engine seeds are 63-bit
MAX_TOKENS_COUNT = 10**9


class _Body(BaseModel):
    # NaN/Infinity are refused everywhere: a non-finite number must never reach a timer
    model_config = ConfigDict(extra="ignore", allow_inf_nan=False)


class Message(_Body):
    role: Literal["system", "user", "assistant"]
    content: str


class RegisterRequest(_Body):
    worker: str | None = Field(None, max_length=128, description="stable id; the hub makes one if omitted")
    models: list[str] = Field(min_length=1, max_length=64, description='routing keys served; "*" = any')
    meta: dict[str, Any] = Field(default_factory=dict, description="provenance shown in status and setup records")


class RegisterReply(_Body):
    worker: str
    poll_wait_max_s: float = MAX_POLL_WAIT_S
    live_s: float = WORKER_LIVE_S
    protocol: int = PROTOCOL_VERSION


class GenerateRequest(_Body):
    model: str = Field(min_length=1, max_length=256)
    messages: list[Message] = Field(min_length=1)
    max_tokens: int = Field(400, ge=1, le=100_000)
    kind: Literal["act", "probe"] = "act"
    seed: int | None = Field(None, ge=0, le=MAX_SEED)
    temperature: float | None = Field(None, ge=0, le=2)
    seat: str = Field("", max_length=256)
    purpose: str = Field("", max_length=256)
    game_id: str = Field("", max_length=256)
    timeout_s: float = Field(300.0, gt=0, le=3600, description="per dispatch, before re-queue")
    requeue: int = Field(1, ge=0, le=5)
    wait_for_worker_s: float = Field(30.0, ge=0, le=3600)


class Job(_Body):
    """What a polling worker receives."""

    job_id: str  # unique per dispatch; a re-queued request gets a new job_id
    request_id: str
    model: str
    messages: list[Message]
    max_tokens: int
    kind: Literal["act", "probe"]
    seed: int | None = None
    temperature: float | None = None
    seat: str = ""
    purpose: str = ""
    game_id: str = ""
    deadline_s: float  # seconds the worker has before the job is re-queued


class ResultRequest(_Body):
    worker: str = Field(max_length=128)
    job_id: str = Field(max_length=128)
    ok: bool = True
    text: str = ""
    error: str | None = Field(None, max_length=2000)
    prompt_tokens: int | None = Field(None, ge=0, le=MAX_TOKENS_COUNT)
    completion_tokens: int | None = Field(None, ge=0, le=MAX_TOKENS_COUNT)
    served_model: str | None = Field(None, max_length=256)
    meta: dict[str, Any] = Field(default_factory=dict)


class GenerateReply(_Body):
    ok: bool
    text: str = ""
    error: str | None = None
    request_id: str
    worker: str | None = None
    worker_meta: dict[str, Any] = Field(default_factory=dict)
    dispatches: int = 0
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    served_model: str | None = None
    meta: dict[str, Any] = Field(default_factory=dict)


class ErrorReply(_Body):
    error: str
    code: str
