"""The words after a protocol marker (``VOTE:``) or a stated vote (``I'm voting for``): which
candidate they name, or why they name none (an abstention, a struck-out name, a second player, a
condition, doubt, a past round ...). The cue words are data in :mod:`.reply_cues`; which text is
a marker line or a stated vote is decided by :mod:`.parsing` and :mod:`.stated_votes`.
"""

from __future__ import annotations

import re

from . import reply_cues as cues
from .names import NONE_WORDS, fold, name_at, name_forms

DASHES = r"\-–—‒―"  # for use inside a character class
_DASHES = DASHES
_LEAD_STRIP = re.compile(r"^[\s*_`~\"“”„«»'‘’(\[{<>@:]+")
# words a target may carry before the name: "for Dana", "за игрока Логана", "eliminate Gray", "за исключение Сергея"
_FOR = re.compile(
    r"(?:(?:for|against|eliminate|player|за|против|исключить|выгнать|изгнать|исключение|изгнание|игрок\w{0,2})"
    r"\s+[*_`~\"“«(\[]*){1,2}",
    re.I,
)
_AFTER_NAME_DECOR = re.compile(r"^[*_`~\]\)}>\"”»’']*")


def strip_lead(text: str) -> str:
    text = _LEAD_STRIP.sub("", text)
    m = _FOR.match(text)
    return text[m.end() :] if m else text


def bare(text: str) -> str:
    """Text without Markdown, quotes, brackets and sentence punctuation."""
    return re.sub(r"[\s*_`~\"“”„«»'‘’()\[\]{}<>.,;:!…]+", " ", text).strip()


def abstains(rest: str) -> bool:
    words = fold(bare(rest)).split()
    return bool(words) and (words[0] in NONE_WORDS or " ".join(words[:2]) in NONE_WORDS)


def read_name(rest: str, names: list[str], whole_line: bool) -> tuple[str | None, str, str]:
    """(name, note, tail) for the text after a marker; ``name`` None with the reason when unusable.

    ``whole_line``: nothing but punctuation may follow the name (dash separators).
    """
    if re.match(r"^[\s*_`]*~~", rest):
        return None, "struck out", ""
    frag = strip_lead(rest)
    if not bare(frag):
        return None, "empty target", ""
    if abstains(frag):
        return None, "explicit abstention", ""
    hit = name_at(frag, names)
    if hit is None:
        prefix = unique_prefix(frag, names)
        if prefix is None:
            return None, f"no living player matches {rest.strip()[:40]!r}", ""
        return prefix, "unique prefix", ""
    name, note, end = hit
    tail = frag[end : end + 500]  # a protocol line is short; what runs on past this is prose either way
    if whole_line:
        return (name, note, tail) if not re.sub(r"[\s*_`~\"”»’'.!)\]}>]+", "", tail) else (None, "prose after a dash", tail)
    why = hedged(tail, names, name, possessive=note == "possessive")
    return (None, why, tail) if why else (name, note, tail)


def alternative_next(after: str, names: list[str], name: str) -> bool:
    """The text right after a vote offers another candidate ("... Or Logan.", "Ну или за Дану.")."""
    m = cues.ALT_NEXT.match(after)
    if not m:
        return False
    for start in [m.start() + len(m.group(0))] + [x.start() for x in re.finditer(r"(?<!\w)\w", after[m.end() : m.end() + 40])]:
        at = start if start >= m.end() else m.end() + start
        hit = name_at(strip_lead(after[at:]), names)
        if hit and hit[0] != name:
            return True
    return False


def unique_prefix(frag: str, names: list[str]) -> str | None:
    """An abbreviation that is the whole target (``VOTE: Fin``) and fits exactly one candidate."""
    words = fold(bare(frag)).split()
    if len(words) != 1 or len(words[0]) < 3:
        return None
    cands = [n for n in names if fold(n).startswith(words[0])]
    return cands[0] if len(cands) == 1 else None


def hedged(tail: str, names: list[str], name: str, possessive: bool) -> str:
    """Why the words after the name undo the vote ("" when they do not)."""
    tail = cues.IDLE_IF.sub(" ", tail)  # "if I'm wrong, blame me" conditions nothing
    after = _AFTER_NAME_DECOR.sub("", tail)
    stripped = after.lstrip()
    if stripped.startswith("?"):
        return "a question, not a vote"
    # another player right after the name: "Gray or Logan", "Gray/Logan", "Gray, Logan"
    m = re.match(rf"^[\s*_`~]*(?:[,/&+;{_DASHES}]|(?<!\w)(?:or|and|vs\.?|versus|или|либо|и)(?!\w))[\s*_`~\"“«(\[]*", after, re.I)
    if m:
        other = name_at(after[m.end() :], names)
        if other and other[0] != name:
            return "names more than one player"
        if abstains(after[m.end() :]):
            return "a player or an abstention"
    if cues.PAST_VOTE.match(tail):
        return "refers to a past vote"
    if cues.UNSURE.search(tail):
        return "unsure on the marker line"
    if cues.CONDITION.search(tail):
        return "conditional on the marker line"
    if cues.NEGATED_AFTER.match(re.sub(rf"^[\s,.;:!…()\[\]{_DASHES}*_`~]+", "", stripped)):
        return "negated after the name"
    if cues.HEDGE_FIRST.match(re.sub(rf"^[\s,.;:!()\[\]{_DASHES}*_`~]+", "", stripped)):
        return "hedged after the name"
    if cues.NOT_REAL.search(tail):
        return "an example or hypothetical, not a vote"
    if cues.EARLIER.match(after):
        return "dated to an earlier round"
    if alternative_named(tail, names, name):
        return "offers another player instead"
    # words running on from the name without a delimiter belong to the same clause
    if stripped and (stripped[0].isalpha() or stripped[0] in "'’"):
        clause = cues.REASON.split(re.split(rf"[,.;:!?()\[\]{_DASHES}]", stripped, maxsplit=1)[0], maxsplit=1)[0]
        if possessive:
            first = fold(clause).split()[:1]
            contraction = first and (
                first[0] in cues.CONTRACTION_OK or (first[0].endswith("ing") and first[0] not in cues.ING_NOUNS)
            )
            if first and not contraction:
                return "a possessive, not a vote"
        if cues.HEDGE.search(clause):
            return "hedged (negation, condition or past) after the name"
        return ""
    # a delimited clause that opens with a condition or an alternative
    nxt = re.sub(rf"^[\s,.;:!()\[\]{_DASHES}*_`~]+", "", stripped)
    if nxt and cues.ALTERNATIVE.match(nxt):
        return "conditional or alternative after the name"
    return ""


def alternative_named(tail: str, names: list[str], name: str) -> bool:
    """Another candidate named right after an "or"/"maybe"/"no" on the marker line."""
    rx, table = name_forms(tuple(names))
    for start in (m.start() for m in re.finditer(r"(?<!\w)\w", tail)):
        hit = rx.match(tail, start)
        if hit and hit.lastgroup and table[int(hit.lastgroup[1:])][0] != name and cues.ALT_BEFORE.search(tail[:start]):
            return True
    return False
