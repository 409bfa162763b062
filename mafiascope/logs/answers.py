"""Reading probe answers: ``<think>`` stripping, JSON extraction and repair (pure: json and re only).

It lives in the logs layer because the compact probe records (:mod:`.probe_codec`) store an
answer once, as the raw reply, and rebuild ``answer_parsed`` by re-parsing it; the probe engine
(:mod:`mafiascope.probes.parsing` re-exports this module) and analytics use the same code.

Two layers:

* :func:`extract_json` -- the extractor of docs/metrics.md §3.2 (fences, whole text,
  truncation repair keeping the complete prefix, first-open-to-last-close slice). Analytics
  uses it in *repaired* mode, so its behaviour is fixed by the spec.
* :func:`parse_answer` -- what the probe engine runs at recording time: strips
  ``<think>`` blocks, runs :func:`extract_json`, and only when that finds nothing tries a
  lenient pass (trailing commas, single-quoted strings, prose with stray brackets before
  the JSON). Anything beyond a clean parse of the fence-stripped text is flagged
  ``repaired``.

``PARSER_VERSION`` changes whenever the result of :func:`parse_answer` may change for some text:
the compact records name the version they were written with.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any

PARSER_VERSION = 1
_THINK = re.compile(r"<think>.*?(?:</think>|$)", re.S | re.I)


def strip_think(text: str) -> str:
    """Remove ``<think>`` blocks some models emit before their answer."""
    return _THINK.sub("", text or "").strip()


def finite(v: Any) -> Any:
    """``v`` with non-finite floats (NaN, inf: not JSON) replaced by None, recursively."""
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if isinstance(v, list):
        return [finite(x) for x in v]
    if isinstance(v, dict):
        return {k: finite(x) for k, x in v.items()}
    return v


_FENCE = re.compile(r"```(?:json)?\s*")
_CLOSE = {"}": "{", "]": "["}
_OPEN = {"{": "}", "[": "]"}
_FAIL = object()


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return _FAIL


def is_transport_error(raw: Any) -> bool:
    """True for the original corpus's transport-failure answers (``ERROR...`` strings)."""
    return isinstance(raw, str) and raw.startswith("ERROR")


def _repair_truncated(cleaned: str) -> Any:
    starts = [i for i in (cleaned.find("{"), cleaned.find("[")) if i >= 0]
    if not starts:
        return _FAIL
    return _repair_from(cleaned[min(starts) :])


# a string (to its closing quote, or to the end of a truncated text) or a bracket outside strings:
# the tokens _repair_from reads, found by the regex engine rather than a Python loop per character
_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"?|([\[\]{}])', re.S)


def _repair_from(s: str) -> Any:
    """Scan ``s`` (starting at a bracket): the first complete value, else the complete prefix.
    Brackets inside strings do not count; a backslash escapes the next character
    (tests/test_cold_fastpaths.py holds it to the per-character scan it replaced)."""
    stack: list[str] = []
    cut: tuple[int, list[str]] | None = None
    for m in _TOKEN.finditer(s):
        ch = m.group(1)
        if ch is None:  # a string
            continue
        if ch in _OPEN:
            stack.append(ch)
        else:
            if not stack or stack[-1] != _CLOSE[ch]:
                return _FAIL  # malformed, not truncated
            stack.pop()
            i = m.end()
            if not stack:
                return _loads(s[:i])
            cut = (i, list(stack))
    if cut is None:
        return _FAIL
    end, still_open = cut
    closers = "".join(_OPEN[b] for b in reversed(still_open))
    return _loads(s[:end] + closers)


def extract_json(text: Any) -> tuple[Any, bool]:
    """Return ``(value, repaired)``; value is None when nothing could be extracted.

    ``repaired`` is True when the value needed truncation repair or bracket-span
    extraction (steps 3-4), False when the (fence-stripped) text parsed as is.
    """
    if not isinstance(text, str) or is_transport_error(text):
        return None, False
    cleaned = _FENCE.sub("", text).strip()
    for candidate in (cleaned, text.strip()):
        v = _loads(candidate)
        if v is not _FAIL:
            return v, False
    v = _repair_truncated(cleaned)
    if v is not _FAIL:
        return v, True
    for o, c in (("{", "}"), ("[", "]")):
        a, b = cleaned.find(o), cleaned.rfind(c)
        if a >= 0 and b > a:
            v = _loads(cleaned[a : b + 1])
            if v is not _FAIL:
                return v, True
    return None, False


# ----------------------------------------------------------------------------- lenient pass

_TRAILING_COMMA = re.compile(r",(\s*[}\]])")


def jsonish_to_json(s: str) -> str:
    """Rewrite JSON-like text as JSON: single-quoted strings -> double-quoted, trailing commas dropped.

    Works outside and inside strings correctly: a double-quoted string is copied as is
    (apostrophes inside it stay), a single-quoted one is re-quoted with its inner double
    quotes escaped. Python literals True/False/None outside strings become JSON's.
    """
    out: list[str] = []
    i, n = 0, len(s)
    while i < n:
        ch = s[i]
        if ch == '"':
            j = i + 1
            while j < n and s[j] != '"':
                j += 2 if s[j] == "\\" else 1
            out.append(s[i : j + 1])
            i = j + 1
        elif ch == "'":
            j = i + 1
            buf: list[str] = []
            while j < n and s[j] != "'":
                if s[j] == "\\" and j + 1 < n:
                    nxt = s[j + 1]
                    buf.append("'" if nxt == "'" else "\\" + nxt)
                    j += 2
                    continue
                buf.append('\\"' if s[j] == '"' else s[j])
                j += 1
            out.append('"' + "".join(buf) + ('"' if j < n else ""))
            i = j + 1
        else:
            m = (
                re.match(r"(True|False|None)\b", s[i:])
                if ch in "TFN" and (i == 0 or not (s[i - 1].isalnum() or s[i - 1] == "_"))
                else None
            )
            if m:
                out.append({"True": "true", "False": "false", "None": "null"}[m.group(1)])
                i += len(m.group(1))
            else:
                out.append(ch)
                i += 1
    return _TRAILING_COMMA.sub(r"\1", "".join(out))


def _lenient(cleaned: str) -> Any:
    starts = [m.start() for m in re.finditer(r"[\[{]", cleaned)][:64]
    for a in starts:  # the first bracket that opens a parsable value (prose may contain "[sic]")
        seg = cleaned[a:]
        for cand in (seg, jsonish_to_json(seg)):
            v = _loads(cand.strip())
            if v is _FAIL:
                v = _repair_from(cand)
            if v is not _FAIL and isinstance(v, (dict, list)):
                return v
    return _FAIL


@dataclass
class ParsedAnswer:
    text: str  # the answer with <think> blocks removed
    value: Any = None
    ok: bool = False
    repaired: bool = False  # needed more than fence stripping (truncation, slicing, lenient rewrite)
    think_stripped: bool = False


def parse_answer(raw: str | None) -> ParsedAnswer:
    """Strip ``<think>``, extract JSON (spec extractor first, then the lenient pass)."""
    if raw is None:
        return ParsedAnswer(text="")
    text = strip_think(raw)
    think = text != raw.strip()
    v, rep = extract_json(text)
    if v is not None:
        return ParsedAnswer(text, v, True, rep, think)
    cleaned = _FENCE.sub("", text).strip()
    if is_transport_error(cleaned):
        return ParsedAnswer(text, None, False, False, think)
    v = _lenient(cleaned)
    if v is not _FAIL:
        return ParsedAnswer(text, v, True, True, think)
    return ParsedAnswer(text, None, False, False, think)


def chain_text(value: Any) -> str:
    """The compact re-serialisation of a parsed answer used in chained questions."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
