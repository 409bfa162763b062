"""Reading targets out of seat replies without losing votes.

Tolerates Markdown (``**VOTE: Logan**``), case, punctuation, trailing text, Russian
markers (``ГОЛОС:``, ``ДЕЙСТВИЕ: Убить``) and name variants (possessives, Cyrillic
transliterations, unique prefixes). The *last* protocol line wins, so reasoning that
quotes another line first does not hijack the vote. An unresolvable reply yields
``valid=False`` with a note; callers log it, they never drop it.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

# Each marker includes its separator. English markers need ':' or a dash after the keyword
# ("I vote for Logan" is prose, not a vote); Russian verbs read naturally without one.
_SEP = r"\s*[*_`]*\s*[:\-–—]"
_MARKERS = {
    "vote": [rf"VOTE{_SEP}", r"ГОЛОС(?:УЮ)?(?:\s*[*_`]*\s*[:\-–—])?(?:\s+ЗА)?"],
    "kill": [rf"ACTION\s*[*_`]*\s*:\s*[*_`]*\s*Kill\b", r"ДЕЙСТВИЕ\s*[*_`]*\s*:?\s*[*_`]*\s*Убить"],
    "protect": [rf"ACTION\s*[*_`]*\s*:\s*[*_`]*\s*Protect\b", r"ДЕЙСТВИЕ\s*[*_`]*\s*:?\s*[*_`]*\s*Защитить"],
    "check": [rf"ACTION\s*[*_`]*\s*:\s*[*_`]*\s*Check\b", r"ДЕЙСТВИЕ\s*[*_`]*\s*:?\s*[*_`]*\s*Проверить"],
    "nominate": [rf"NOMINATE{_SEP}", r"ВЫСТАВЛЯЮ(?:\s*[:\-–—])?"],
    "suspects": [rf"SUSPECTS{_SEP}", r"ПОДОЗРЕВАЮ(?:\s*[:\-–—])?"],
}

# Latin names of the name pool as Russian speakers write them.
_CYRILLIC = {
    "алекс": "alex", "бейли": "bailey", "кейси": "casey", "дана": "dana", "эллис": "ellis",
    "финли": "finley", "грей": "gray", "харпер": "harper", "индиго": "indigo",
    "джордан": "jordan", "кеннеди": "kennedy", "логан": "logan", "морган": "morgan",
    "паркер": "parker", "куинн": "quinn", "райли": "riley",
}  # fmt: skip

_NONE_WORDS = {"none", "nobody", "no one", "noone", "abstain", "skip", "никого", "никто", "воздерживаюсь", "пропуск"}


@dataclass(frozen=True)
class ParsedTarget:
    target: str | None
    valid: bool
    note: str  # how the target was read, or why it could not be
    raw: str = ""  # the text after the marker


def _fold(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).casefold()
    return text.replace("ё", "е")


def _marker_re(action: str) -> re.Pattern[str]:
    alts = "|".join(_MARKERS[action])
    # optional Markdown/quote decoration around and inside the marker, then ':' (optional for Russian verbs)
    return re.compile(rf"(?:^|[\s*_`>#\[(\"'])(?:{alts})\s*[*_`:]*\s*(?P<rest>[^\n]*)", re.IGNORECASE)


def match_name(fragment: str, names: list[str]) -> tuple[str | None, str]:
    """Resolve a free-text fragment to exactly one of ``names``; returns (name, note)."""
    frag = _fold(fragment)
    frag = re.sub(r"[*_`~\"'“”«»()\[\]{}<>.,;!?]", " ", frag)
    tokens = [t for t in re.split(r"\s+", frag) if t]
    if not tokens:
        return None, "empty target"
    if " ".join(tokens[:2]) in _NONE_WORDS or tokens[0] in _NONE_WORDS:
        return None, "explicit abstention"
    folded = {_fold(n): n for n in names}
    # 1. exact token match, first token first (handles "Logan - he lied")
    for i, tok in enumerate(tokens[:6]):
        tok = re.sub(r"(?:'s|’s)$", "", tok)
        tok = _CYRILLIC.get(tok, tok)
        if tok in folded:
            return folded[tok], "exact" if i == 0 else f"name at word {i + 1}"
        # Russian case endings: Логана, Логану, Логаном -> логан
        for name_ru, latin in _CYRILLIC.items():
            stem = name_ru[:-1] if name_ru[-1] in "йаяиь" else name_ru
            if tok.startswith(stem) and len(tok) - len(stem) <= 3 and latin in folded:
                return folded[latin], "russian inflection"
    # 2. unique prefix of the first token (at least 3 letters), e.g. "Fin" -> Finley
    first = tokens[0]
    if len(first) >= 3:
        cands = [n for f, n in folded.items() if f.startswith(first)]
        if len(cands) == 1:
            return cands[0], "unique prefix"
    return None, f"no living player matches {fragment.strip()[:40]!r}"


def parse_target(text: str, action: str, names: list[str]) -> ParsedTarget:
    """Find the last ``action`` marker in ``text`` and resolve its target among ``names``."""
    if not text or not text.strip():
        return ParsedTarget(None, False, "empty reply")
    matches = list(_marker_re(action).finditer(text))
    if not matches:
        return ParsedTarget(None, False, f"no {action.upper()} line")
    last_note = ""
    for m in reversed(matches):
        rest = m.group("rest").strip()
        name, note = match_name(rest, names)
        if name is not None:
            return ParsedTarget(name, True, note, rest)
        last_note = note
        if note == "explicit abstention":
            return ParsedTarget(None, False, note, rest)
    return ParsedTarget(None, False, last_note, matches[-1].group("rest").strip())


def parse_vote(text: str, names: list[str]) -> ParsedTarget:
    return parse_target(text, "vote", names)


def parse_list(text: str, action: str, names: list[str], limit: int = 3) -> list[str]:
    """Targets of a list line such as ``SUSPECTS: A, B, C`` (last such line; order kept, unique)."""
    matches = list(_marker_re(action).finditer(text or ""))
    if not matches:
        return []
    out: list[str] = []
    for part in re.split(r"[,;/]|\band\b|\bи\b", matches[-1].group("rest")):
        name, _ = match_name(part, names)
        if name and name not in out:
            out.append(name)
    return out[:limit]


_THINK = re.compile(r"<think>.*?(?:</think>|$)", re.S | re.I)


def strip_think(text: str) -> str:
    """Remove ``<think>`` blocks some models emit before their answer."""
    return _THINK.sub("", text or "").strip()
