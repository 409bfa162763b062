"""The truncation repair's bracket scan (``answers._repair_from``) finds its tokens with one regex
(branch cold8): it must give exactly what the per-character scan it replaced gives, written out
below as the reference, on random texts of brackets, quotes, backslashes and prose and on every
prefix of real answers (the truncated replies it exists for)."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from mafiascope.logs import answers
from mafiascope.logs.answers import _CLOSE, _FAIL, _OPEN, _loads, extract_json, parse_answer


def _reference(s: str) -> Any:
    """The per-character scan, as it was written before the regex."""
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
                return _FAIL
            stack.pop()
            if not stack:
                return _loads(s[: i + 1])
            cut = (i + 1, list(stack))
    if cut is None:
        return _FAIL
    end, still_open = cut
    return _loads(s[:end] + "".join(_OPEN[b] for b in reversed(still_open)))


def _same(a: Any, b: Any) -> bool:
    return (a is _FAIL and b is _FAIL) or (a is not _FAIL and b is not _FAIL and json.dumps(a) == json.dumps(b))


ALPHABET = ['[', ']', '{', '}', '"', '\\', ',', ':', ' ', '\n', 'a', '1', 'é', '"x"', '\\"', '\\\\', '[1, 2]', '{"k": "v"}']
ANSWERS = [
    [{"player": "Bailey", "guessed_role": "Villager", "confidence": 100, "reason": "I know [my] own role: {sure}."}],
    {"toward_me": [{"player": "Riley", "attitude": "neutral", "confidence": 97, "reason": "a \"quoted\" \\ word"}]},
    [{"player": "Kennedy", "score": 3}, {"player": "Casey", "score": 10}],
]


def test_repair_scan_matches_the_per_character_scan_on_random_texts():
    rng = random.Random(8)
    for _ in range(20000):
        s = rng.choice("[{") + "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 30)))
        assert _same(answers._repair_from(s), _reference(s)), s


@pytest.mark.parametrize("value", ANSWERS)
def test_repair_scan_matches_on_every_prefix_of_an_answer(value):
    for text in (json.dumps(value), json.dumps(value, indent=2, ensure_ascii=False)):
        for end in range(1, len(text) + 1):
            s = text[:end]
            assert _same(answers._repair_from(s), _reference(s)), s
        prose = "Here is my honest answer:\n" + text + "\nThat is all [really]."
        assert extract_json(prose)[0] == value and parse_answer(prose).value == value
