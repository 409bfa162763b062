"""Value rules shared by the loader's row builders (load.py, probe_rows.py): answer kind codes,
stable answer hashes, counters read the original's way, and the item tables' block shape."""

from __future__ import annotations

import hashlib
import json
from typing import Any

try:  # optional speed-up (requirements.txt); the standard library gives the same values
    import orjson as _orjson
except ImportError:  # pragma: no cover - exercised by monkeypatching in the tests
    _orjson = None

from .answer_rows import num as _num

NO_SEQ = -99  # msg_seq absent

ITEM_TABLES = ("ra", "sr", "sm", "pp", "pa")
ItemBlock = tuple[int, tuple[Any, ...]]  # (rec, the rows one answer adds to an item table, as columns after rec)

# answer kind codes
K_NONE, K_LIST, K_DICT, K_OTHER = 0, 1, 2, 3


def kind_code(v: Any) -> int:
    if v is None:
        return K_NONE
    if isinstance(v, list):
        return K_LIST
    if isinstance(v, dict):
        return K_DICT
    return K_OTHER


def digest(b: bytes) -> int:
    return int.from_bytes(hashlib.blake2b(b, digest_size=8).digest(), "little", signed=True)


def stable_hash(v: Any, exact_json: bool = False) -> int:
    """64-bit hash of a parsed answer's JSON text (stable across processes, unlike ``hash``).

    Only equality matters (the viewer skips an answer equal to the agent's previous one), so
    the text is orjson's when it represents ``v`` exactly (always so for a line orjson
    parsed: ``exact_json``), else the standard library's (NaN, Infinity, big integers) behind
    a NUL byte no JSON text starts with: equal values get equal hashes either way.
    """
    if _orjson is None:
        return digest(json.dumps(v, ensure_ascii=False).encode("utf-8", "surrogatepass"))
    try:
        b = _orjson.dumps(v)
        if exact_json or _orjson.loads(b) == v:
            return digest(b)
    except (TypeError, ValueError):  # JSONEncodeError (a TypeError): big integer, lone surrogate
        pass
    return digest(b"\0" + json.dumps(v, ensure_ascii=False).encode("utf-8", "surrogatepass"))


INT_LIMIT = 2**31 - 1  # counters are int32 in memory: a larger |value| (or inf) is not a counter


def to_int(v: Any, default: int) -> int:
    """int(float(v)) like the original's ``int(float(...))``; ``default`` when not a number, not
    finite or beyond :data:`INT_LIMIT` (found by tests/test_fuzz_inputs.py: ``"round": 1e30``)."""
    if v.__class__ is int and -INT_LIMIT <= v <= INT_LIMIT:  # int(float(v)) is v
        return v
    f = _num(v)
    return default if f != f or abs(f) > INT_LIMIT else int(f)


def to_count(v: Any, default: int) -> int:
    """A counter field given as a JSON number (not a bool, not a string), else ``default``."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return default
    return to_int(v, default)
