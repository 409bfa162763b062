"""The probe battery DSL (``configs/probes/*.yaml``), validated with pydantic at load time.

A battery file::

    name: chained_en
    language: en
    probes:
      - id: role_assessment            # [A-Za-z_][A-Za-z0-9_]*, unique; also the chaining name
        when: [after_each_message, after_night_action, after_round]   # default; or one string
        max_tokens: 900                # default 300
        enabled: true                  # default
        shape: role_assessment         # optional; defaults to the id when it is a standard probe
        answer: {target: player, p: probability, mood: {enum: [calm, worried]}}   # custom probes (answer_schema.py)
        question: |
          ... {player} {players} {roles} {prev_<id>} {last_<id>} ...

``when``: ``after_each_message`` (after every public utterance and the night analysis,
all probed seats), ``after_night_action`` (after a private night action, the actor only),
``after_round`` (once per round, all living seats, ``public_msg_seq = -1``) and
``own_turn`` (only the seat that just spoke or acted; cannot be combined); ``always`` (the
original DSL's word) means the first three. Errors name the
file, the probe and the offending field or placeholder. See docs/probes.md.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import (BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, field_serializer, field_validator,
                      model_validator)

from ..config import CONFIG_DIR, loc_text, read_yaml, validation_problems
from .answer_schema import AnswerSchema, schema_suffix
from .render import check_template, placeholders
from .shapes import SHAPES

WHEN_VALUES = ("after_each_message", "after_night_action", "after_round", "own_turn")
When = Literal["after_each_message", "after_night_action", "after_round", "own_turn"]
DEFAULT_WHEN: list[str] = ["after_each_message", "after_night_action", "after_round"]
ID_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_BOOL: TypeAdapter[bool] = TypeAdapter(bool)
BATTERY_DIR = CONFIG_DIR / "probes"


class BatteryError(ValueError):
    """A battery problem phrased for the user (file, probe id, field or placeholder)."""


class Probe(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str
    question: str
    when: list[When] = Field(default_factory=lambda: list(DEFAULT_WHEN))
    max_tokens: int = Field(300, ge=16, le=32768)
    enabled: bool = True
    shape: str | None = None  # standard answer shape to validate against
    answer: AnswerSchema | None = None  # declared answer schema of a custom probe (probes/answer_schema.py)

    @field_validator("answer", mode="before")
    @classmethod
    def _answer(cls, v: Any) -> Any:
        return v if v is None or isinstance(v, AnswerSchema) else AnswerSchema.parse(v)

    @field_serializer("answer")
    def _dump_answer(self, v: AnswerSchema | None) -> dict[str, Any] | None:
        return None if v is None else v.spec()  # the YAML form: a snapshot reloads as written

    @model_validator(mode="after")
    def _answer_or_shape(self) -> "Probe":
        if self.answer is not None and self.shape is not None:
            raise ValueError("give either shape (a standard probe's) or answer (a declared schema), not both")
        return self

    def question_text(self) -> str:
        """The question template with the declared answer schema appended (custom probes)."""
        return self.question + (schema_suffix(self.answer) if self.answer is not None else "")

    @field_validator("id")
    @classmethod
    def _id(cls, v: str) -> str:
        if not ID_RE.match(v):
            raise ValueError(f"probe id {v!r} must be an identifier ([A-Za-z_][A-Za-z0-9_]*)")
        return v

    @field_validator("question")
    @classmethod
    def _question(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("the question is empty")
        return v

    @field_validator("when", mode="before")
    @classmethod
    def _when(cls, v: Any) -> Any:
        vals = [v] if isinstance(v, str) else v
        if vals == ["always"]:  # the original DSL's default
            return list(DEFAULT_WHEN)
        if not isinstance(vals, list) or not vals:
            raise ValueError(f"when must be one of {list(WHEN_VALUES)} or a non-empty list of them")
        bad = [x for x in vals if x not in WHEN_VALUES]
        if bad:
            raise ValueError(f"unknown when value(s) {bad}; allowed: {list(WHEN_VALUES)}")
        if "own_turn" in vals and len(set(vals)) > 1:
            raise ValueError("own_turn cannot be combined with other when values")
        return list(dict.fromkeys(vals))

    @field_validator("shape")
    @classmethod
    def _shape(cls, v: str | None) -> str | None:
        if v is not None and v not in SHAPES:
            raise ValueError(f"unknown shape {v!r}; allowed: {sorted(SHAPES)}")
        return v

    @property
    def answer_shape(self) -> str | None:
        return self.shape or (self.id if self.id in SHAPES else None)

    @property
    def own_turn(self) -> bool:
        return "own_turn" in self.when

    def chain_refs(self) -> list[tuple[str, str]]:
        """[(kind, probe_id)] for every {prev_*} / {last_*} placeholder, kind in ('prev', 'last')."""
        out = []
        for name in placeholders(self.question):
            for kind in ("prev", "last"):
                if name.startswith(kind + "_"):
                    out.append((kind, name[len(kind) + 1 :]))
        return out


class Battery(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = "battery"
    language: str | None = None
    description: str | None = None
    probes: list[Probe]

    @model_validator(mode="after")
    def _check(self) -> "Battery":
        problems = cross_check([(i, p.id, p.question, p.enabled) for i, p in enumerate(self.probes)])
        if problems:
            raise ValueError("\n".join(msg for _, msg in problems))
        return self

    @property
    def active(self) -> list[Probe]:
        return [p for p in self.probes if p.enabled]

    def snapshot(self, source: str | None = None) -> dict[str, Any]:
        data = self.model_dump(mode="json")
        digest = hashlib.sha256(json.dumps(data, sort_keys=True, ensure_ascii=False).encode()).hexdigest()[:16]
        return {**data, "source": source, "sha256_16": digest, "probe_ids": [p.id for p in self.active]}


def _label(i: int, pid: Any) -> str:
    return f"probe {pid!r}" if isinstance(pid, str) and pid else f"probes[{i}]"


def cross_check(probes: list[tuple[int, Any, Any, bool]]) -> list[tuple[int, str]]:
    """The checks across probes, on ``[(index, id, question, enabled)]`` (raw values allowed: a
    non-string id or question is skipped, its field error is reported elsewhere).

    ``[(probe index or -1 for the battery, "probe 'id': question: ...")]``: duplicate ids, no
    enabled probe, template errors (unknown placeholders, bad braces, unknown chain targets) and
    chain references to disabled probes.
    """
    ids = [pid for _, pid, _, _ in probes if isinstance(pid, str)]
    out: list[tuple[int, str]] = []
    dup = sorted({i for i in ids if ids.count(i) > 1})
    if dup:
        out.append((-1, f"probes: duplicate probe id(s) {dup}"))
    if not any(enabled for *_, enabled in probes):
        out.append((-1, "probes: no probe is enabled"))
    enabled_by_id = {pid: enabled for _, pid, _, enabled in probes if isinstance(pid, str)}
    for i, pid, question, enabled in probes:
        if not isinstance(question, str):
            continue
        for e in check_template(question, ids):
            out.append((i, f"{_label(i, pid)}: question: {e}"))
        if not enabled:
            continue
        for name in placeholders(question):
            for kind in ("prev", "last"):
                ref = name[len(kind) + 1 :] if name.startswith(kind + "_") else None
                if ref is not None and enabled_by_id.get(ref) is False:
                    out.append((i, f"{_label(i, pid)}: question: {{{kind}_{ref}}} refers to disabled probe {ref!r}"))
    return out


def _enabled(value: Any) -> bool:
    try:
        return bool(_BOOL.validate_python(value))
    except ValidationError:
        return True  # reported as a field error; do not add "no probe is enabled" on top of it


def battery_problems(exc: ValidationError, data: dict[str, Any]) -> list[str]:
    """Every problem of a battery, one line each, in probe order: the field errors pydantic found
    *and* the cross-probe/template checks (which pydantic skips once a field fails), computed on the
    raw data so that e.g. a bad ``max_tokens`` does not hide an unknown placeholder in the same probe."""
    raw = data.get("probes")
    found: list[tuple[int, str]] = []
    for loc, msg in validation_problems(exc, data):
        if not loc:
            continue  # Battery._check's own errors: recomputed below from the raw data
        if len(loc) >= 2 and loc[0] == "probes" and isinstance(loc[1], int) and isinstance(raw, list):
            i = loc[1]
            pid = raw[i].get("id") if i < len(raw) and isinstance(raw[i], dict) else None
            found.append((i, f"{_label(i, pid)}: " + (f"{loc_text(loc[2:])}: {msg}" if loc[2:] else msg)))
        else:
            found.append((-1, f"{loc_text(loc)}: {msg}"))
    if isinstance(raw, list):
        items = [(i, p.get("id"), p.get("question"), _enabled(p.get("enabled", True))) for i, p in enumerate(raw) if isinstance(p, dict)]
        if len(items) == len(raw):
            found += cross_check(items)
        else:  # entries that are not mappings are field errors already; no "no probe is enabled" on top
            found += [x for x in cross_check(items) if x[1] != "probes: no probe is enabled"]
    found.sort(key=lambda x: x[0])  # stable: the battery's problems first, then probe by probe
    return list(dict.fromkeys(msg for _, msg in found))


def _format(exc: ValidationError, source: str, data: dict[str, Any]) -> str:
    return "\n".join([f"{source}: invalid probe battery", *(f"  {line}" for line in battery_problems(exc, data))])


def parse_battery(data: Any, source: str = "<battery>") -> Battery:
    """A validated battery; otherwise ``BatteryError("<source>: invalid probe battery")`` followed by
    one indented line per problem (``  probe 'id': field: message``), all problems at once."""
    if isinstance(data, list):
        data = {"probes": data}
    if not isinstance(data, dict):
        raise BatteryError(f"{source}: a battery is a mapping with a 'probes' list (or a bare list of probes)")
    try:
        b = Battery.model_validate(data)
    except ValidationError as exc:
        raise BatteryError(_format(exc, source, data)) from None
    return b


def load_battery(path: str | Path) -> Battery:
    data = read_yaml(path, BatteryError, "battery")
    if data is None:
        raise BatteryError(f"{Path(path)}: the battery file is empty (a battery is a mapping with a 'probes' list)")
    return parse_battery(data, str(Path(path)))


def shipped_battery_path(name: str, language: str = "en") -> Path | None:
    """``chained`` / ``suspicion_ru`` / ``default`` -> configs/probes/<name>[_<lang>].yaml, if it exists."""
    for cand in (f"{name}_{language}.yaml", f"{name}.yaml", name):
        p = BATTERY_DIR / cand
        if p.is_file():
            return p
    return None


def battery_for_config(cfg: Any) -> tuple[Battery, str]:
    """The battery a game config asks for, and where it came from.

    Inline ``probes.probes`` wins, then ``probes.battery`` (a path resolved like other
    config paths, or a shipped name such as ``suspicion``), else the chained battery in the
    game's language.
    """
    from ..config import resolve_path

    pc = cfg.probes
    if pc.probes is not None:
        return parse_battery({"name": "inline", "probes": pc.probes}, f"{cfg.source_path or '<config>'}: probes.probes"), "inline"
    if pc.battery:
        p = resolve_path(pc.battery, cfg)
        if not p.is_file():
            shipped = shipped_battery_path(pc.battery, cfg.language)
            if shipped is None:
                raise BatteryError(f"{cfg.source_path or '<config>'}: probes.battery: {pc.battery!r} not found "
                                   f"(a path, or one of {sorted(x.stem for x in BATTERY_DIR.glob('*.yaml'))})")  # fmt: skip
            p = shipped
        return load_battery(p), str(p)
    p = shipped_battery_path("chained", cfg.language)
    if p is None:
        raise BatteryError(f"default battery chained_{cfg.language}.yaml is missing from {BATTERY_DIR}")
    return load_battery(p), str(p)
