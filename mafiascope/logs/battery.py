"""The probe battery as a game recorded it (``setup.probes``).

The engine stores the battery's own snapshot (``Battery.snapshot`` in mafiascope.probes.dsl:
name, language, description, probes, source, ``sha256_16``, ``probe_ids``) plus scheduler
settings (``max_concurrency``, ``max_lag_s``, ``roles``, ``engine_version``). Older or
hand-made logs hold a bare list of probe definitions, or the list under ``battery``;
games without probes (original corpora, arena runs) hold nothing. :class:`BatterySnapshot`
reads all of them into one shape; unknown fields are kept.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator


class _Kept(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True)


class ProbeSpec(_Kept):
    """One probe definition as recorded (the DSL's ``Probe`` fields: the answer schema is ``shape`` for a
    standard probe, ``answer`` for a custom one)."""

    id: str
    question: str = ""  # the template, placeholders unrendered
    when: list[str] = Field(default_factory=list)
    max_tokens: int | None = None
    enabled: bool = True
    shape: str | None = None  # the standard answer shape to validate against (None: inferred from the probe id)
    answer: dict[str, Any] | None = None  # a custom probe's declared answer schema (probes/answer_schema.py)


class BatterySnapshot(_Kept):
    """The recorded battery; ``sha256_16`` identifies its content (None on hand-made logs)."""

    name: str | None = None
    language: str | None = None
    description: str | None = None
    probes: list[ProbeSpec] = Field(default_factory=list)
    source: str | None = None  # the YAML it came from, when it came from one
    sha256_16: str | None = None
    probe_ids: list[str] | None = None  # the enabled probes, in battery order
    max_concurrency: int | None = None
    max_lag_s: float | None = None
    roles: str | None = None  # the role labels the questions offered ({roles}), "|"-separated
    engine_version: int | None = None

    @model_validator(mode="before")
    @classmethod
    def _shapes(cls, data: Any) -> Any:
        if isinstance(data, list):  # a bare list of probe definitions
            return {"probes": data}
        if isinstance(data, dict) and not isinstance(data.get("probes"), list) and isinstance(data.get("battery"), list):
            return {**{k: v for k, v in data.items() if k != "battery"}, "probes": data["battery"]}
        return data

    @property
    def active_ids(self) -> list[str]:
        """Ids of the enabled probes (the recorded ``probe_ids`` when present)."""
        return list(self.probe_ids) if self.probe_ids is not None else [p.id for p in self.probes if p.enabled]

    def definitions(self) -> list[dict[str, Any]]:
        """The probe definitions exactly as recorded (for rebuilding a game's configuration)."""
        return [p.model_dump(mode="json", exclude_unset=True) for p in self.probes]
