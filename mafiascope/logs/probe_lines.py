"""The pieces a compact probe record is made of (:mod:`.probe_codec`): the table-line models, the
full record's field order and short keys, answer values as text and as patches on a previous
answer, and the chain placeholders of a question template."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from .answers import chain_text
from .templates import placeholders

CODEC_VERSION = 1
SCHEMA_VERSION_COMPACT = 3
MARK = "@"
STANDARD_SHAPES = ("role_assessment", "suspicion_ranking", "social_map", "personality_profile", "planned_action", "role_beliefs")
CHAIN_PREFIXES = ("prev_", "last_")

# the full record's fields in the order the probe engine writes them
FULL_FIELDS = (
    "timestamp", "game_id", "round", "public_msg_seq", "player_idx", "player_name", "probe_seq", "probe_id", "question",
    "answer_raw", "answer_parsed", "answer_parse_ok", "answer_repaired", "answer_valid", "model", "role", "phase",
    "latency_ms", "chain_used_raw_fallback", "error", "speaker", "tokens_prompt", "tokens_completion", "tokens_estimated",
    "step_index", "when", "answer_norm", "think_stripped", "finished_ts", "attempts",
)  # fmt: skip
STEP_FIELDS = ("round", "public_msg_seq", "phase", "when", "timestamp")
SEAT_FIELDS = ("player_name", "model", "role")
SHORT_KEYS = {"a": "answer_raw", "v": "answer_valid", "l": "latency_ms", "tp": "tokens_prompt", "tc": "tokens_completion",
          "f": "finished_ts", "e": "error"}  # fmt: skip
RESERVED_KEYS = {MARK, "k", "i", "s", "c", "te", "sp", "n", "x", "-", "A", "D", *SHORT_KEYS}
ABSENT = object()
EAGER_FIELDS = ("answer_parsed", "answer_parse_ok", "answer_raw", "e", "error")  # explicit fields that change a chain value


class ProbeDecodeError(ValueError):
    """A compact record refers to a table entry or an earlier record the file does not hold."""


def malformed(exc: LookupError | TypeError | ValueError) -> ProbeDecodeError:
    """A compact line's failure as the decode error the readers report (a ProbeDecodeError as it is);
    LookupError covers a patch that does not fit its base."""
    if isinstance(exc, ProbeDecodeError):
        return exc
    return ProbeDecodeError(f"malformed compact line ({type(exc).__name__}: {str(exc)[:120]})")


class _Line(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, strict=True)

    mark: str = Field(alias=MARK)


class Header(_Line):
    """``"@": "h"`` -- one per writer: whose records follow, read with which codec and parser."""

    schema_version: int
    codec: int
    parser: int
    norm: int
    game_id: Any = None
    seats: list[str] | None = None  # the names answers are normalised against


class SeatLine(_Line):
    """``"@": "seat"`` -- seat ``i``'s fields in the records that follow."""

    i: int
    player_name: Any = None
    model: Any = None
    role: Any = None


class ProbeLine(_Line):
    """``"@": "probe"`` -- probe ``s`` (its position in the battery): id and question template."""

    s: int
    probe_id: Any = None
    template: str | None = None


class StepLine(_Line):
    """``"@": "step"`` -- step ``k``'s fields and its ``{players}``/``{roles}`` values."""

    k: int
    round: Any = None
    public_msg_seq: Any = None
    phase: Any = None
    when: Any = None
    timestamp: Any = None
    players: str | None = None
    roles: str | None = None


TABLE_LINES: dict[str, type[_Line]] = {"h": Header, "seat": SeatLine, "probe": ProbeLine, "step": StepLine}


def chain_value(rec: Mapping[str, Any]) -> tuple[str | None, bool]:
    """What a later ``{prev_*}``/``{last_*}`` placeholder received from this record: (text, raw).

    The probe engine's rule: a failed call gives nothing; a parsed answer its compact JSON;
    an unparsed one its (think-stripped) text, flagged raw."""
    if rec.get("error") is not None:
        return None, False
    if rec.get("answer_parse_ok"):
        return chain_text(rec.get("answer_parsed")), False
    raw = rec.get("answer_raw")
    return (raw.strip() or None) if isinstance(raw, str) else None, True


def _default_encoder() -> Any:
    """``json.dumps(value, ensure_ascii=False)``'s C encoder, built once instead of per call (the
    same call JSONEncoder.iterencode makes, without the circular-reference markers: parsed JSON
    holds no cycles); None where the C accelerator is missing."""
    from json import encoder

    make = getattr(encoder, "c_make_encoder", None)  # private to the json module: not in its type stubs
    if make is None:  # pragma: no cover - CPython always has it
        return None
    e = json.JSONEncoder(ensure_ascii=False)
    return make(None, e.default, encoder.encode_basestring, e.indent, e.key_separator,
                                  e.item_separator, e.sort_keys, e.skipkeys, e.allow_nan)  # fmt: skip


_DUMPS = _default_encoder()


def dumps_answer(value: Any) -> str:
    """The text ``json.dumps`` gives by default (how JSON answers are usually written)."""
    if _DUMPS is None:  # pragma: no cover
        return json.dumps(value, ensure_ascii=False)
    return "".join(_DUMPS(value, 0))


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")  # NaN/Infinity: such an answer is stored as its text


def loads_answer(raw: str) -> Any:
    """The JSON value of a raw answer that is exactly JSON (no NaN/Infinity), else ABSENT."""
    try:
        return json.loads(raw, parse_constant=_no_constant)
    except (ValueError, RecursionError):
        return ABSENT


def make_patch(base: Any, new: Any) -> Any:
    """A patch turning ``base`` into ``new`` (lists item by item, objects key by key, one level into
    list-valued keys), or None when the two do not share a shape worth patching.

    A list patch is ``{"n": length, "set": {"<index>": item}}``; an object patch is ``{"set": {key:
    value}, "sub": {key: list patch}}`` plus ``"keys"`` (the new key order) when it differs."""
    if isinstance(base, list) and isinstance(new, list):
        # plain == here (fast; 1 == 1.0): the caller checks the patched value with same()
        return {"n": len(new), "set": {str(i): x for i, x in enumerate(new) if i >= len(base) or base[i] != x}}
    if isinstance(base, dict) and isinstance(new, dict):
        patch: dict[str, Any] = {"set": {}, "sub": {}}
        if list(base) != list(new):
            patch["keys"] = list(new)
        for key, x in new.items():
            if key in base and base[key] == x:
                continue
            if key in base and isinstance(base[key], list) and isinstance(x, list):
                patch["sub"][key] = make_patch(base[key], x)
            else:
                patch["set"][key] = x
        return patch
    return None


_INDEX = {str(i): i for i in range(256)}  # canonical list-patch keys -> index (a patch's usual keys)


def apply_patch(base: Any, patch: Any) -> Any:
    if isinstance(base, list):
        got = patch["set"]
        n = int(patch["n"])
        if 0 <= n <= len(base) and got.__class__ is dict:  # usual case: copy, then set the patched items
            out = base[:n]
            for key, x in got.items():
                i = _INDEX.get(key) if key.__class__ is str else None
                if i is None:  # a key written otherwise (or past 255): the general rule below decides
                    break
                if i < n:
                    out[i] = x
            else:
                return out
        return [got[str(i)] if str(i) in got else base[i] for i in range(n)]
    if isinstance(base, dict):
        keys = patch.get("keys") or list(base)
        out_d: dict[str, Any] = {}
        for key in keys:
            if key in patch["set"]:
                out_d[key] = patch["set"][key]
            elif key in patch["sub"]:
                out_d[key] = apply_patch(base[key], patch["sub"][key])
            else:
                out_d[key] = base[key]
        return out_d
    raise ProbeDecodeError("an answer patch applies only to a list or an object")


_JSON = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), check_circular=False).encode
_SCALARS = (str, int, float, bool, type(None))


def same(a: Any, b: Any) -> bool:
    """Equal as JSON values, types and key order included (``1`` is not ``1.0`` or ``True``)."""
    if a is b:
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, _SCALARS):
        return bool(a == b) or (a != a and b != b)  # NaN is NaN here
    try:
        return bool(_JSON(a) == _JSON(b))
    except (TypeError, ValueError):
        return bool(a == b)


@lru_cache(maxsize=64)
def chain_names(template: str) -> tuple[str, ...]:
    return tuple(n for n in placeholders(template) if n.startswith(CHAIN_PREFIXES))


@lru_cache(maxsize=64)
def template_re(template: str) -> re.Pattern[str]:
    """A pattern matching every rendering of ``template`` (a repeated placeholder must repeat its value)."""
    parts, seen, pos = [], set(), 0
    for m in re.finditer(r"\{([A-Za-z_][A-Za-z0-9_]*)\}", template):
        parts.append(re.escape(template[pos : m.start()]))
        name = m.group(1)
        parts.append(f"(?P={name})" if name in seen else f"(?P<{name}>.*?)")
        seen.add(name)
        pos = m.end()
    parts.append(re.escape(template[pos:]))
    return re.compile("".join(parts), re.S)


def unchanged(base: Any, patch: Any) -> bool:
    """True when :func:`apply_patch` of ``patch`` gives a copy of ``base`` (equal, same
    key order): a list patch setting nothing at the base's length, or an object patch setting and
    replacing nothing without a new key order. False says nothing (apply it)."""
    if patch.__class__ is not dict:
        return False
    got = patch.get("set")
    if got.__class__ is not dict or got:
        return False
    if base.__class__ is list:
        n = patch.get("n")
        return n.__class__ is int and n == len(base)
    if base.__class__ is dict:
        sub = patch.get("sub")
        return sub.__class__ is dict and not sub and not patch.get("keys")
    return False
