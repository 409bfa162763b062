"""Reading protocol lines (``VOTE: X``, ``ACTION: Kill X`` ...) out of seat replies.

A target is read from a protocol marker in marker position and, for votes, from a
first-person statement of the decision (``I'm voting for Dana.``, ``Голосую за Логана.``:
:mod:`.stated_votes`); never from other prose. The rule, with examples, is in
docs/parsing.md. In short:

* the marker (a :class:`~.markers.ActionMarker` head such as ``VOTE``/``ГОЛОС``, whole
  word) starts a line (after optional Markdown: ``**``, ``#``, ``>``, a bullet or number,
  an opening quote) or follows a sentence end (``... Gray. VOTE: Gray``), and is followed
  by ``:``; a dash separator counts only when the line is just ``VOTE — Name``;
* the name is the first word(s) after the separator (Markdown, quotes, brackets and
  ``for``/``за``/``against``/``против`` allowed around it; possessives, Cyrillic
  transliterations and Russian case forms accepted: names.py);
* the *last* decision decides, marker line or statement; if it names nobody, or hedges
  (``VOTE: not Ellis``, ``VOTE: Logan?``, ``VOTE: Gray or Logan``, ``VOTE: Ellis was my call
  yesterday``, ``I'm voting for Gray, unless Logan claims``), the reply is unreadable and the
  caller re-asks -- never an earlier mention;
* a marker line that quotes someone (a ``>`` quote or quotation marks followed by more
  prose, a line introduced by ``Logan wrote:``) or that later prose retracts, negates
  (``I'm not voting for Gray after all``) or replaces with another name (``... Or Logan.``)
  is no vote.

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
from .names import match_name, name_at
from .stated_votes import Stated, stated_votes
from .target_text import DASHES as _DASHES
from .target_text import alternative_next, bare, read_name, strip_lead

__all__ = ["ParsedTarget", "match_name", "parse_list", "parse_target", "parse_vote", "strip_think", "Markers", "PROTOCOL_MARKERS"]

# --------------------------------------------------------------------------- text pieces
_D = r"[*_`~]*"  # Markdown emphasis around a marker or name
_SP = r"[ \t]*"
_OPEN_QUOTES = "\"“„«'‘"
_CLOSE_QUOTES = '"”»“'  # not apostrophes: "Logan's" is no quotation
# labels a line may carry before the marker ("Final answer: VOTE: Gray")
_LABEL = r"(?:(?:my\s+)?(?:final\s+)?(?:answer|decision|choice)|итог|решение|ответ|мой\s+выбор)"
_POSITION = (
    rf"(?:^{_SP}(?P<pre>(?:[>#]+{_SP})*(?:(?:[-*+•]|\d{{1,2}}[.)]){_SP}(?=\S))?(?:[^\w\s{_OPEN_QUOTES}(\[*_`~]{{1,3}}[ \t]+)?)"
    rf"(?:{_D}{_SP}{_LABEL}{_SP}{_D}{_SP}:{_SP})?"
    rf"|(?<=[.!?…])(?<!e\.g\.)(?<!i\.e\.)(?<!etc\.)(?<!vs\.){_SP})"  # after a sentence, not after an abbreviation
)


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
    pos: int  # where the marker starts (orders the line among the reply's stated votes)

    @property
    def rest(self) -> str:
        return self.text[self.start : self.eol]

    @property
    def before(self) -> str:
        """Up to ``_NEAR`` characters of the reply before the marker's line."""
        return self.text[max(0, self.bol - _NEAR) : self.bol]

    @property
    def after(self) -> str:
        """Up to ``_NEAR`` characters of the reply after the marker's line."""
        return self.text[self.eol + 1 : self.eol + 1 + _NEAR]


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
        out.append(_Line(text, m.end(), bol, eol, m.group("sep") != ":", blockquote, opened, m.start()))
    return out


def _is_quotation(line: _Line, head: re.Pattern[str]) -> bool:
    """A marker line that reports someone else's (or an earlier) line rather than casting one."""
    before, after = line.before, line.after
    if _introduced(before.splitlines(), head):
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


def _introduced(prev: list[str], head: re.Pattern[str]) -> bool:
    """The lines above a marker line introduce it as someone's (or a past, or a hypothetical) line:
    ``Logan wrote:`` right above it (blank lines allowed), or above a list of marker lines it ends
    (``Past votes:`` / ``1. VOTE: Ellis`` / ``2. VOTE: Gray``: the items adjacent, no blank line
    between them or before this one: a paragraph break after a list ends it)."""
    i = len(prev) - 1
    while i >= 0 and _starts_with_marker(prev[i], head):
        i -= 1  # climb the adjacent list items
    while i >= 0 and not prev[i].strip():
        i -= 1
    return i >= 0 and prev[i].rstrip(" *_`").endswith(":") and bool(cues.QUOTE_INTRO.search(prev[i]))


def _starts_with_marker(ln: str, head: re.Pattern[str]) -> bool:
    m = head.search(ln)
    return m is not None and not ln[: m.start()].strip(" \t>#-*+•0123456789.)_`~\"“„«'‘")


def _next_line_name(after: str, names: list[str]) -> tuple[str | None, str]:
    """``VOTE:`` alone on its line, the name alone on the next non-blank one."""
    nxt = strip_lead(re.sub(r"^\s*(?:[-*+•]|\d{1,2}[.)])\s+", "", next((ln for ln in after.splitlines() if bare(ln)), "")))
    hit = name_at(nxt, names) if nxt else None
    if hit and not bare(nxt[hit[2] :]):
        return hit[0], "name on the next line"
    return None, "empty target"


def parse_target(text: str, action: str, names: list[str], markers: Markers = PROTOCOL_MARKERS) -> ParsedTarget:
    """Read the last ``action`` protocol line of ``text`` and resolve its target among ``names``.

    For votes, first-person statements (``I'm voting for Dana.``, ``Голосую за Логана.``:
    :mod:`.stated_votes`) count as well: the reply's last decision, line or statement, decides."""
    if not text or not text.strip():
        return ParsedTarget(None, False, "empty reply")
    marker = markers.marker(action)
    text = _norm(text)
    events: list[tuple[int, _Line | Stated]] = [(line.pos, line) for line in _marker_lines(text, marker)]
    if action == "vote":
        events += [(s.pos, s) for s in stated_votes(text, names)]
        events.sort(key=lambda e: e[0])
    negated_later: set[str] = set()  # "I'm not voting for Dana" after a decision for Dana undoes it
    for _, ev in reversed(events):
        if isinstance(ev, Stated):
            if ev.kind == "negated" and ev.target:
                negated_later.add(ev.target)
            if ev.kind in ("other", "negated"):
                continue
            raw = text[ev.pos : ev.end].strip()
            if ev.kind == "unsettled" or ev.target is None:
                return ParsedTarget(None, False, ev.note, raw)
            return _settled(
                ev.target, ev.note, raw, text[ev.pos : ev.end + _NEAR], negated_later, text[ev.end : ev.end + 200], names
            )
        line = ev
        if _is_quotation(line, _marker_re(marker)):
            continue
        rest = _REPEATED_HEAD.sub("", line.rest).strip() if _REPEATED_HEAD.match(line.rest) else line.rest.strip()
        name, note, _ = read_name(rest, names, whole_line=line.dash)
        if line.dash and name is None and note not in ("explicit abstention", "prose after a dash"):
            continue  # "Vote — and I mean this ...": a dash in prose, not a marker
        if name is None and note == "empty target":
            name, note = _next_line_name(line.after, names)
        if name is None:
            return ParsedTarget(None, False, note, rest)
        return _settled(name, note, rest, line.rest + "\n" + line.after, negated_later, line.after[:200], names)
    return ParsedTarget(None, False, f"no {action.upper()} line" + (" or stated vote" if action == "vote" else ""))


# "Final vote: VOTE: Jordan": the marker written twice
_REPEATED_HEAD = re.compile(r"^(?:[\s*_`]*(?:VOTE|ГОЛОС)[\s*_`]*[:：][\s*_`]*)+", re.I)


def _settled(
    name: str, note: str, raw: str, after: str, negated_later: set[str], next_text: str, names: list[str]
) -> ParsedTarget:
    """A decision for ``name``, unless the reply retracts it, later says it does not vote for them, or
    offers another player right after it (``next_text``: what follows the decision's line or sentence)."""
    if cues.RETRACT.search(after):
        return ParsedTarget(None, False, "retracted after the vote", raw)
    if name in negated_later:
        return ParsedTarget(None, False, "negated later in the reply", raw)
    if alternative_next(next_text, names, name):
        return ParsedTarget(None, False, "offers another player after the vote", raw)
    lead = re.sub(r"^[\s.…!,;:\-–—*_`)\]]+", "", next_text)
    if cues.NEGATED_AFTER.match(lead) or cues.STILL_UNDECIDED.match(lead):
        return ParsedTarget(None, False, "taken back right after the vote", raw)
    return ParsedTarget(name, True, note, raw)


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
        name, _, _ = read_name(part, names, whole_line=False)
        if name and name not in out:
            out.append(name)
    return out[:limit]
