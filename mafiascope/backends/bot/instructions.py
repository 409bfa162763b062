"""Instruction detection: which turn is the seat being asked to play?

The engine ends every acting ``user`` message with an instruction rendered from a prompt
pack template (``pack.intro``, ``pack.night_mafia`` ...). Bots recognise it with a table of
:class:`InstructionSpec` rows built from the same templates, so a change of wording in
:mod:`mafiascope.engine.prompts` is picked up automatically. New rule families (ten-seat
nominations, best move, last words, Mafia night talk) add rows with :func:`register`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from mafiascope.engine import prompts

# placeholder -> regex group used when a template is turned into a pattern
_PLACEHOLDERS = {
    "round": r"(?P<round>\d+)",
    "players": r"(?P<players>[^\n]*?)",
    "checks": r"(?P<checks>[^\n]*?)",
    "allies_choices": r"(?P<allies>.*?)",
    "fmt": r"(?P<fmt>[^\n]+)",
    # ten-seat instructions
    "nominees": r"(?P<nominees>[^\n]*?)",
    "order": r"(?P<order>[^\n]*?)",
    "turn": r"(?P<turn>\d+)",
    "turns": r"(?P<turns>\d+)",
    "how": r"(?P<how>[^\n]*?)",
}


@dataclass(frozen=True)
class InstructionSpec:
    kind: str  # "intro" | "night_mafia" | "night_doctor" | "night_sheriff" | "discuss" | "vote" | "reask" | ...
    language: str
    pattern: re.Pattern[str]
    action: str | None = None  # protocol verb key: "kill" | "protect" | "check" | "vote" | None (speech)
    priority: int = 0  # breaks ties between rows matching at the same place (higher wins)


def template_regex(template: str) -> re.Pattern[str]:
    """A regex matching a rendered pack template (placeholders become lazy groups)."""
    out = re.escape(template)
    for key, group in _PLACEHOLDERS.items():
        out = out.replace(re.escape("{" + key + "}"), group)
    out = re.sub(r"\\\{[a-z_]+\\\}", r".*?", out)  # any other placeholder
    return re.compile(out, re.S)


def _pack_rows(p: prompts.Pack) -> list[InstructionSpec]:
    rows = [
        ("intro", p.intro, None),
        ("night_mafia", p.night_mafia, "kill"),
        ("night_doctor", p.night_doctor, "protect"),
        ("night_sheriff", p.night_sheriff, "check"),
        ("discuss", p.discuss, None),
        ("vote", p.vote, "vote"),
        ("reask", p.reask, None),
    ]
    rows += _ten_rows(p)
    return [InstructionSpec(kind, p.language, template_regex(t), action) for kind, t, action in rows]


def _ten_rows(p: prompts.Pack) -> list[tuple[str, str, str | None]]:
    """Ten-seat (tournament) instructions. A sport shot is a night_mafia turn; in the nominee votes
    the ``nominees`` group holds the only valid targets (``players`` stays the living seats). The
    kinds nominate, best_move, order, night_don, open_floor, mafia_talk, last_words, defence and
    remove_all are answered by the handlers in ``ten.py`` (``EXTRA_HANDLERS`` in backend.py)."""
    t = p.ten
    if not t:
        return []

    return [
        ("night_mafia", t["night_shot"], "kill"),
        ("night_don", t["night_don"], "check"),
        ("order", t["night_zero_don"], None),
        ("mafia_talk", t["night_zero"], None),
        ("mafia_talk", t["mafia_talk"], None),
        ("nominate", t["speech_nominate"], "nominate"),
        ("open_floor", t["open_floor"], None),
        ("defence", t["defence"], None),
        ("last_words", t["last_words"], None),
        ("best_move", t["best_move"], "suspects"),
        ("vote", t["vote_nominees"], "vote"),
        ("vote", t["revote"], "vote"),
        ("remove_all", t["remove_all"], "vote"),
    ]


_EXTRA: list[InstructionSpec] = []


def register(spec: InstructionSpec) -> None:
    """Add an instruction row (e.g. for ten-seat rules); later rows may share a language."""
    _EXTRA.append(spec)
    _table.cache_clear()


@lru_cache(maxsize=8)
def _table(language: str) -> tuple[InstructionSpec, ...]:
    rows: list[InstructionSpec] = []
    for lang, p in prompts.PACKS.items():
        if language in (lang, "*"):
            rows.extend(_pack_rows(p))
    rows.extend(s for s in _EXTRA if language in (s.language, "*"))
    return tuple(rows)


def table(language: str) -> tuple[InstructionSpec, ...]:
    return _table(language)


@dataclass(frozen=True)
class Instruction:
    spec: InstructionSpec
    start: int  # offset of the instruction in the message
    groups: dict[str, str]

    @property
    def kind(self) -> str:
        return self.spec.kind


def detect(text: str, language: str) -> Instruction | None:
    """The instruction that ends ``text`` (latest match wins; then priority; then length)."""
    best: tuple[int, int, int] | None = None
    found: Instruction | None = None
    for spec in table(language) or table("*"):
        m = None
        for m in spec.pattern.finditer(text):  # noqa: B007 - keeps the last match
            pass
        if m is None:
            continue
        key = (m.start(), spec.priority, m.end() - m.start())
        if best is None or key > best:
            best = key
            found = Instruction(spec, m.start(), {k: v for k, v in m.groupdict().items() if v is not None})
    return found


def reask_action(fmt: str, language: str) -> str | None:
    """Which protocol verb a re-ask format line (``VOTE: <name>`` ...) asks for."""
    p = prompts.PACKS.get(language) or prompts.EN
    if fmt.strip().startswith(p.vote_word):
        return "vote"
    for key, verb in p.verbs.items():
        if f"{p.action_word}: {verb}" in fmt:
            return key
    for spec in _EXTRA:  # extra rows may define their own verbs ("NOMINATE", "SUSPECTS")
        if spec.action and spec.action.upper() in fmt.upper():
            return spec.action
    return None
