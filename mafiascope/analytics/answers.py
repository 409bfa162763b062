"""JSON extraction and truncation repair of probe answers (metrics.md section 3.2).

Written here because ``mafiascope/probes/parsing.py`` did not exist when analytics needed
it. TODO: switch to the probe engine's extractor once it lands (same contract:
``extract_json(text) -> (value | None, repaired: bool)``).
"""

from __future__ import annotations

import json
import re
from typing import Any

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
    return isinstance(raw, str) and raw.startswith("ERROR")


def _repair_truncated(cleaned: str) -> Any:
    starts = [i for i in (cleaned.find("{"), cleaned.find("[")) if i >= 0]
    if not starts:
        return _FAIL
    s = cleaned[min(starts):]
    stack: list[str] = []
    in_str = esc = False
    cut: tuple[int, list[str]] | None = None
    for i, ch in enumerate(s):
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
            continue
        if ch == '"':
            in_str = True
        elif ch in _OPEN:
            stack.append(ch)
        elif ch in _CLOSE:
            if not stack or stack[-1] != _CLOSE[ch]:
                return _FAIL  # malformed, not truncated
            stack.pop()
            if not stack:
                return _loads(s[: i + 1])
            cut = (i + 1, list(stack))
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
