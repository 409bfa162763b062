"""Backend registry: YAML ``backends:`` entries -> Backend instances.

Each entry is validated by a pydantic model chosen by its ``type``. Instances are
shared per process by (name, spec) so all games of a process share concurrency and
rate limits of one backend.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field

from .base import Backend


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid")


class BotSpec(_Spec):
    type: Literal["bot"] = "bot"
    preset: str = "balanced"
    model: str | None = None  # label shown in logs; defaults to "bot-<preset>"


BackendSpec = Annotated[Union[BotSpec], Field(discriminator="type")]


def build_backend(name: str, spec: Any) -> Backend:
    if isinstance(spec, BotSpec):
        from .bot import BotBackend

        return BotBackend(name, preset=spec.preset, model_label=spec.model)
    raise ValueError(f"backend {name!r}: unsupported type {getattr(spec, 'type', spec)!r}")
