"""Declared answer schemas of custom probes.

A probe may declare ``answer:`` (one JSON object) as ``field: type``; types are ``player``
(a seat name), ``players`` (a list of seat names), ``probability`` (0-1), ``score`` (0-10),
``text`` and ``{enum: [a, b, ...]}``::

    - id: threat
      question: You are {player}. Who threatens your side most, and how sure are you?
      answer:
        target: player
        accomplices: players
        p_right: probability
        danger: score
        mood: {enum: [calm, worried, angry]}
        why: text

The question the seat sees gets the schema appended (:func:`schema_suffix`): a readable
format line and a machine-readable ``Answer schema:`` line, which offline bots read to answer
any declared schema from their belief state. :func:`check` validates an answer against the
schema and returns its normalised form (names matched to seats, numbers as floats, enum
values as declared); records keep ``answer_parsed`` verbatim.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

SCALARS = ("player", "players", "probability", "score", "text")
SCHEMA_MARK = "Answer schema:"
BOT_FLAG = "_answered_by"  # key an offline bot adds to its answer ("offline-bot")
FORMAT_LEAD = "Reply with JSON only, one object: "  # opens the format line a declared schema appends to the question
NUMERIC = ("probability", "score")
RANGES = {"probability": (0.0, 1.0), "score": (0.0, 10.0)}


class AnswerField(BaseModel):
    """One declared field: a scalar type, or ``enum`` with its options."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    type: Literal["player", "players", "probability", "score", "text", "enum"]
    options: tuple[str, ...] = Field(default_factory=tuple)

    @classmethod
    def from_spec(cls, spec: Any) -> "AnswerField":
        if isinstance(spec, str):
            if spec not in SCALARS:
                raise ValueError(f"unknown type {spec!r}; allowed: {[*SCALARS, '{enum: [...]}']}")
            return cls(type=spec)
        if isinstance(spec, dict) and set(spec) == {"enum"}:
            opts = spec["enum"]
            if not isinstance(opts, list) or len(opts) < 2 or not all(isinstance(o, str) and o.strip() for o in opts):
                raise ValueError("enum needs a list of at least two non-empty strings")
            if len({o.strip().casefold() for o in opts}) != len(opts):
                raise ValueError("enum options must differ (case-insensitively)")
            return cls(type="enum", options=tuple(o.strip() for o in opts))
        raise ValueError(f"a field type is one of {list(SCALARS)} or {{enum: [a, b, ...]}}, got {spec!r}")

    def spec(self) -> Any:
        return {"enum": list(self.options)} if self.type == "enum" else self.type

    def template(self) -> str:
        return {"player": '"<a player\'s name>"', "players": '["<a player\'s name>", ...]',
                "probability": "<probability 0-1>", "score": "<score 0-10>", "text": '"<free text>"',
                "enum": '"' + "|".join(self.options) + '"'}[self.type]


class AnswerSchema(BaseModel):
    """The declared fields in order."""

    model_config = ConfigDict(frozen=True)

    fields: dict[str, AnswerField]

    @field_validator("fields")
    @classmethod
    def _names(cls, v: dict[str, AnswerField]) -> dict[str, AnswerField]:
        if not v:
            raise ValueError("answer: declare at least one field")
        bad = [k for k in v if not k.isidentifier() or k.startswith("_")]
        if bad:
            raise ValueError(f"answer field names must be identifiers not starting with '_': {bad}")
        return v

    @classmethod
    def parse(cls, spec: Any) -> "AnswerSchema":
        if not isinstance(spec, dict):
            raise ValueError("answer: a mapping of field name -> type")
        fields = {}
        for name, fs in spec.items():
            try:
                fields[str(name)] = AnswerField.from_spec(fs)
            except ValueError as exc:
                raise ValueError(f"answer field {name!r}: {exc}") from None
        return cls(fields=fields)

    def spec(self) -> dict[str, Any]:
        return {k: f.spec() for k, f in self.fields.items()}


def schema_suffix(schema: AnswerSchema) -> str:
    """The lines appended to a custom probe's question: the JSON format and the machine-readable schema."""
    body = ", ".join(f'"{k}": {f.template()}' for k, f in schema.fields.items())
    return ("\n\n" + FORMAT_LEAD + "{" + body + "}\n"
            + SCHEMA_MARK + " " + json.dumps(schema.spec(), ensure_ascii=False, separators=(",", ":")))


def read_schema(question: str) -> AnswerSchema | None:
    """The schema of the last ``Answer schema:`` line of a question (None when there is none or it is broken)."""
    at = question.rfind(SCHEMA_MARK)
    if at < 0:
        return None
    line = question[at + len(SCHEMA_MARK):].split("\n", 1)[0].strip()
    try:
        return AnswerSchema.parse(json.loads(line))
    except (ValueError, TypeError):
        return None


def _num(v: Any) -> float | None:
    if isinstance(v, bool) or v is None:
        return None
    try:
        f = float(v.strip().rstrip("%")) if isinstance(v, str) else float(v)
    except (TypeError, ValueError):
        return None
    return f if f == f and abs(f) != float("inf") else None


def check(schema: AnswerSchema, value: Any, seats: list[str]) -> tuple[bool, dict[str, Any] | None]:
    """(valid, normalised answer). Valid = an object with every declared field of the right type
    (players must be seats, numbers in range, enum values among the options, case-insensitive).
    The normalised answer keeps each usable field (None for a missing or unusable one)."""
    from .shapes import seat_name

    if not isinstance(value, dict):
        return False, None
    ok = True
    norm: dict[str, Any] = {}
    for name, f in schema.fields.items():
        v = value.get(name)
        got: Any = None
        if f.type == "player":
            got = seat_name(v, seats)
        elif f.type == "players":
            if isinstance(v, list):
                names = [seat_name(x, seats) for x in v]
                got = None if any(n is None for n in names) else list(dict.fromkeys(names))
        elif f.type in NUMERIC:
            x = _num(v)
            lo, hi = RANGES[f.type]
            if f.type == "probability" and x is not None and 1 < x <= 100 and isinstance(v, str) and v.strip().endswith("%"):
                x = x / 100.0
            got = x if x is not None and lo <= x <= hi else None
        elif f.type == "enum":
            if isinstance(v, str):
                got = next((o for o in f.options if o.casefold() == v.strip().casefold()), None)
        else:  # text
            got = v.strip() if isinstance(v, str) and v.strip() else None
        norm[name] = got
        ok &= got is not None
    if value.get(BOT_FLAG):
        norm[BOT_FLAG] = str(value[BOT_FLAG])
    return ok, norm
