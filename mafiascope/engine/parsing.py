"""Reading protocol lines (``VOTE: X``, ``ACTION: Kill X`` ...) out of seat replies.

A target is read only from a protocol marker in marker position, never from prose; the
rule, with examples, is in docs/parsing.md. In short:

* the marker (a :class:`~.markers.ActionMarker` head such as ``VOTE``/``ГОЛОС``, whole
  word) starts a line (after optional Markdown: ``**``, ``#``, ``>``, a bullet or number,
  an opening quote) or follows a sentence end (``... Gray. VOTE: Gray``), and is followed
  by ``:``; a dash separator counts only when the line is just ``VOTE — Name``;
* the name is the first word(s) after the separator (Markdown, quotes, brackets and
  ``for``/``за``/``against``/``против`` allowed around it; possessives, Cyrillic
  transliterations and Russian case forms accepted: names.py);
* the *last* marker line decides; if it names nobody, or hedges (``VOTE: not Ellis``,
  ``VOTE: Logan?``, ``VOTE: Gray or Logan``, ``VOTE: Ellis was my call yesterday``), the
  reply is unreadable and the caller re-asks -- never an earlier mention;
* a marker line that quotes someone (a ``>`` quote or quotation marks followed by more
  prose, a line introduced by ``Logan wrote:``) or that later prose retracts is no vote.

An unresolvable reply yields ``valid=False`` with a note; callers log it, never drop it.
Which markers exist is data (:class:`~.markers.Markers`) that the rule family passes in.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

from ..logs.answers import strip_think
from . import reply_cues as cues
from .markers import PROTOCOL_MARKERS, ActionMarker, Markers
from .names import END as _END
from .names import NONE_WORDS, fold, match_name, name_at, name_forms

__all__ = ["ParsedTarget", "match_name", "parse_list", "parse_target", "parse_vote", "strip_think", "Markers", "PROTOCOL_MARKERS"]

# --------------------------------------------------------------------------- text pieces
_D = r"[*_`~]*"  # Markdown emphasis around a marker or name
_SP = r"[ \t]*"
_DASHES = r"\-–—‒―"  # for use inside a character class
_OPEN_QUOTES = "\"“„«'‘"
_CLOSE_QUOTES = "\"”»“"  # not apostrophes: "Logan's" is no quotation
# labels a line may carry before the marker ("Final answer: VOTE: Gray")
_LABEL = r"(?:(?:my\s+)?(?:final\s+)?(?:answer|decision|choice)|итог|решение|ответ|мой\s+выбор)"
_POSITION = (
    rf"(?:^{_SP}(?P<pre>(?:[>#]+{_SP})*(?:(?:[-*+•]|\d{{1,2}}[.)]){_SP}(?=\S))?(?:[^\w\s{_OPEN_QUOTES}(\[*_`~]{{1,3}}[ \t]+)?)"
    rf"(?:{_D}{_SP}{_LABEL}{_SP}{_D}{_SP}:{_SP})?"
    rf"|(?<=[.!?…])(?<!e\.g\.)(?<!i\.e\.)(?<!etc\.)(?<!vs\.){_SP})"  # after a sentence, not after an abbreviation
)
_LEAD_STRIP = re.compile(r"^[\s*_`~\"“”„«»'‘’(\[{<>@:]+")
# words a target may carry before the name: "for Dana", "за игрока Логана", "eliminate Gray"
_FOR = re.compile(r"(?:(?:for|against|eliminate|player|за|против|исключить|игрок\w{0,2})\s+[*_`~\"“«(\[]*){1,2}", re.I)
_AFTER_NAME_DECOR = re.compile(r"^[*_`~\]\)}>\"”»’']*")

@dataclass(frozen=True)
class ParsedTarget:
    target: str | None
    valid: bool
    note: str  # how the target was read, or why it could not be
    raw: str = ""  # the text after the marker


def _norm(text: str) -> str:
    """NFKC (fullwidth colon and letters), one newline kind, ё read as е; case is kept."""
    text = unicodedata.normalize("NFKC", text or "").replace("\r\n", "\n").replace("\r", "\n")
    return text.replace("ё", "е").replace("Ё", "Е")


def _alts(words: tuple[str, ...]) -> str:
    ordered = sorted({w.strip() for w in words if w.strip()}, key=len, reverse=True)
    return "|".join(re.escape(_norm(w)).replace(r"\ ", r"\s+") for w in ordered)


@lru_cache(maxsize=64)
def _marker_re(marker: ActionMarker) -> re.Pattern[str]:
    lead = rf"(?:(?:{_alts(marker.lead_ins)})\s+{_D}{_SP})?" if marker.lead_ins else ""
    verb = rf"(?:{_alts(marker.verbs)}){_END}{_SP}{_D}{_SP}" if marker.verbs else ""
    return re.compile(
        rf"{_POSITION}{_D}{_SP}(?P<q>[{_OPEN_QUOTES}(\[]?){_SP}{_D}{_SP}{lead}(?:{_alts(marker.heads)}){_END}"
        rf"{_SP}{_D}{_SP}(?P<sep>:|[{_DASHES}]+>?|→|=>?){_SP}[*_`]*{_SP}{verb}",  # no '~' here: ~~Name~~ is struck out
        re.I | re.M,
    )


def _strip_lead(text: str) -> str:
    text = _LEAD_STRIP.sub("", text)
    m = _FOR.match(text)
    return text[m.end():] if m else text


def _bare(text: str) -> str:
    """Text without Markdown, quotes, brackets and sentence punctuation."""
    return re.sub(r"[\s*_`~\"“”„«»'‘’()\[\]{}<>.,;:!…]+", " ", text).strip()


def _abstains(rest: str) -> bool:
    words = fold(_bare(rest)).split()
    return bool(words) and (words[0] in NONE_WORDS or " ".join(words[:2]) in NONE_WORDS)


def _read_name(rest: str, names: list[str], whole_line: bool) -> tuple[str | None, str, str]:
    """(name, note, tail) for the text after a marker; ``name`` None with the reason when unusable.

    ``whole_line``: nothing but punctuation may follow the name (dash separators).
    """
    if re.match(r"^[\s*_`]*~~", rest):
        return None, "struck out", ""
    frag = _strip_lead(rest)
    if not _bare(frag):
        return None, "empty target", ""
    if _abstains(frag):
        return None, "explicit abstention", ""
    hit = name_at(frag, names)
    if hit is None:
        prefix = _unique_prefix(frag, names)
        if prefix is None:
            return None, f"no living player matches {rest.strip()[:40]!r}", ""
        return prefix, "unique prefix", ""
    name, note, end = hit
    tail = frag[end:end + 500]  # a protocol line is short; what runs on past this is prose either way
    if whole_line:
        return (name, note, tail) if not re.sub(r"[\s*_`~\"”»’'.!)\]}>]+", "", tail) else (None, "prose after a dash", tail)
    why = _hedged(tail, names, name, possessive=note == "possessive")
    return (None, why, tail) if why else (name, note, tail)


def _unique_prefix(frag: str, names: list[str]) -> str | None:
    """An abbreviation that is the whole target (``VOTE: Fin``) and fits exactly one candidate."""
    words = fold(_bare(frag)).split()
    if len(words) != 1 or len(words[0]) < 3:
        return None
    cands = [n for n in names if fold(n).startswith(words[0])]
    return cands[0] if len(cands) == 1 else None


def _hedged(tail: str, names: list[str], name: str, possessive: bool) -> str:
    """Why the words after the name undo the vote ("" when they do not)."""
    tail = cues.IDLE_IF.sub(" ", tail)  # "if I'm wrong, blame me" conditions nothing
    after = _AFTER_NAME_DECOR.sub("", tail)
    stripped = after.lstrip()
    if stripped.startswith("?"):
        return "a question, not a vote"
    # another player right after the name: "Gray or Logan", "Gray/Logan", "Gray, Logan"
    m = re.match(rf"^[\s*_`~]*(?:[,/&+;{_DASHES}]|(?<!\w)(?:or|and|vs\.?|versus|или|либо|и)(?!\w))[\s*_`~\"“«(\[]*", after, re.I)
    if m:
        other = name_at(after[m.end():], names)
        if other and other[0] != name:
            return "names more than one player"
        if _abstains(after[m.end():]):
            return "a player or an abstention"
    if cues.PAST_VOTE.match(tail):
        return "refers to a past vote"
    if cues.UNSURE.search(tail):
        return "unsure on the marker line"
    if cues.CONDITION.search(tail):
        return "conditional on the marker line"
    if cues.HEDGE_FIRST.match(re.sub(rf"^[\s,.;:!()\[\]{_DASHES}*_`~]+", "", stripped)):
        return "hedged after the name"
    if cues.NOT_REAL.search(tail):
        return "an example or hypothetical, not a vote"
    if cues.EARLIER.match(after):
        return "dated to an earlier round"
    if _alternative_named(tail, names, name):
        return "offers another player instead"
    # words running on from the name without a delimiter belong to the same clause
    if stripped and (stripped[0].isalpha() or stripped[0] in "'’"):
        clause = cues.REASON.split(re.split(rf"[,.;:!?()\[\]{_DASHES}]", stripped, maxsplit=1)[0], maxsplit=1)[0]
        if possessive:
            first = fold(clause).split()[:1]
            contraction = first and (first[0] in cues.CONTRACTION_OK or (first[0].endswith("ing") and first[0] not in cues.ING_NOUNS))
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


def _alternative_named(tail: str, names: list[str], name: str) -> bool:
    """Another candidate named right after an "or"/"maybe"/"no" on the marker line."""
    rx, table = name_forms(tuple(names))
    for start in (m.start() for m in re.finditer(r"(?<!\w)\w", tail)):
        hit = rx.match(tail, start)
        if hit and hit.lastgroup and table[int(hit.lastgroup[1:])][0] != name and cues.ALT_BEFORE.search(tail[:start]):
            return True
    return False


# --------------------------------------------------------------------------- marker lines
_MAX_LINES = 50  # marker lines looked at, from the last one back (bounds the work on a hostile reply)
_NEAR = 4000  # characters around a marker line that its context checks read


@dataclass(frozen=True)
class _Line:
    text: str  # the whole (normalised) reply
    start: int  # where the text after the separator (and verb) begins
    bol: int  # start of the marker's line
    eol: int  # end of the marker's line
    dash: bool  # separated by a dash, not a colon
    blockquote: bool  # inside a '>' quote
    opened: str  # the quotation mark right before the marker, or ""

    @property
    def rest(self) -> str:
        return self.text[self.start:self.eol]

    @property
    def before(self) -> str:
        """Up to ``_NEAR`` characters of the reply before the marker's line."""
        return self.text[max(0, self.bol - _NEAR):self.bol]

    @property
    def after(self) -> str:
        """Up to ``_NEAR`` characters of the reply after the marker's line."""
        return self.text[self.eol + 1:self.eol + 1 + _NEAR]


@lru_cache(maxsize=64)
def _head_re(marker: ActionMarker) -> re.Pattern[str]:
    return re.compile(_alts(marker.heads), re.I)


def _marker_lines(text: str, marker: ActionMarker) -> list[_Line]:
    """The last ``_MAX_LINES`` marker lines of ``text``, in order."""
    if not _head_re(marker).search(text):  # cheap pre-check: most replies have no such line
        return []
    out: list[_Line] = []
    for m in list(_marker_re(marker).finditer(text))[-_MAX_LINES:]:
        eol = text.find("\n", m.end())
        eol = len(text) if eol < 0 else eol
        bol = text.rfind("\n", 0, m.start()) + 1
        opened = m.group("q") if m.group("q") and m.group("q") in _OPEN_QUOTES else ""
        blockquote = ">" in (m.group("pre") or "")
        out.append(_Line(text, m.end(), bol, eol, m.group("sep") != ":", blockquote, opened))
    return out


def _is_quotation(line: _Line, head: re.Pattern[str]) -> bool:
    """A marker line that reports someone else's (or an earlier) line rather than casting one."""
    before, after = line.before, line.after
    prev = [ln for ln in before.splitlines() if ln.strip()]
    while prev and head.search(prev[-1]):  # "Past votes:" / "1. VOTE: Ellis" / "2. VOTE: Gray"
        prev.pop()
    if prev and prev[-1].rstrip(" *_`").endswith(":") and cues.QUOTE_INTRO.search(prev[-1]):
        return True
    # a sentence running through the marker line: "Logan's reply ended with" / VOTE: Finley / "which surprised me."
    above = before[:-1].rsplit("\n", 1)[-1].rstrip(" *_`") if before else ""
    below = after.split("\n", 1)[0].lstrip(" *_`>")
    if below[:1].islower() or cues.LEADS_INTO.search(above):
        return True
    if (line.blockquote or line.opened) and re.search(r"\w", after):
        return True  # a quoted line with the reply going on after it
    if line.opened:  # '"VOTE: Gray," Dana said': the quotation closes and prose follows
        close = _CLOSE_QUOTES + ("'’" if line.opened in "'‘" else "")
        return bool(re.search(rf"\w[.,!?]*[{close}]\W*\w", line.rest))
    # a quotation closed right after the name that it never opened on this line
    return bool(re.match(rf"^[^\w{_OPEN_QUOTES}]*\w+[.,!]?[{_CLOSE_QUOTES}]\s+\w", line.rest))


def _next_line_name(after: str, names: list[str]) -> tuple[str | None, str]:
    """``VOTE:`` alone on its line, the name alone on the next non-blank one."""
    nxt = _strip_lead(re.sub(r"^\s*(?:[-*+•]|\d{1,2}[.)])\s+", "", next((ln for ln in after.splitlines() if _bare(ln)), "")))
    hit = name_at(nxt, names) if nxt else None
    if hit and not _bare(nxt[hit[2]:]):
        return hit[0], "name on the next line"
    return None, "empty target"


def parse_target(text: str, action: str, names: list[str], markers: Markers = PROTOCOL_MARKERS) -> ParsedTarget:
    """Read the last ``action`` protocol line of ``text`` and resolve its target among ``names``."""
    if not text or not text.strip():
        return ParsedTarget(None, False, "empty reply")
    marker = markers.marker(action)
    text = _norm(text)
    for line in reversed(_marker_lines(text, marker)):
        if _is_quotation(line, _marker_re(marker)):
            continue
        rest = line.rest.strip()
        name, note, _ = _read_name(rest, names, whole_line=line.dash)
        if line.dash and name is None and note not in ("explicit abstention", "prose after a dash"):
            continue  # "Vote — and I mean this ...": a dash in prose, not a marker
        if name is None and note == "empty target":
            name, note = _next_line_name(line.after, names)
        if name is not None and cues.RETRACT.search(line.rest + "\n" + line.after):
            return ParsedTarget(None, False, "retracted after the marker line", rest)
        return ParsedTarget(name, name is not None, note, rest)
    return ParsedTarget(None, False, f"no {action.upper()} line")


def parse_vote(text: str, names: list[str]) -> ParsedTarget:
    return parse_target(text, "vote", names)


def parse_list(text: str, action: str, names: list[str], limit: int = 3, markers: Markers = PROTOCOL_MARKERS) -> list[str]:
    """Targets of a list line such as ``SUSPECTS: A, B, C`` (last such line; order kept, unique).

    Each item must start with the name (``Gray (most)`` is read, ``I think Gray`` is not).
    """
    marker = markers.marker(action)
    lines = [ln for ln in _marker_lines(_norm(text or ""), marker) if not _is_quotation(ln, _marker_re(marker))]
    if not lines:
        return []
    out: list[str] = []
    for part in re.split(r"[,;/]|\band\b|\bи\b", lines[-1].rest):
        name, _, _ = _read_name(part, names, whole_line=False)
        if name and name not in out:
            out.append(name)
    return out[:limit]

