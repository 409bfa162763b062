"""Votes stated in a first-person sentence rather than a protocol line (docs/parsing.md).

"I'm voting for Dana.", "I vote Logan, he lied.", "My vote goes to Gray.", "Dana gets my vote.",
"Я голосую за Кеннеди.", "Голосую за Эллиса.", "Мой голос — за Логана.", "Отдаю голос Дане."

A statement is read as a vote only when it is the speaker's own (first person), about this vote
(present or immediate future, no other round named), settled (no condition, question, doubt or
alternative) and meant (not negated, quoted, reported, hypothetical or given as an example).
:func:`stated_votes` finds every such sentence and classifies it; :mod:`.parsing` orders them
with the reply's protocol lines, and the last decision decides.

Kinds of :class:`Stated`:

* ``vote``: a settled decision (``target`` the candidate; None for a stated abstention);
* ``unsettled``: the speaker's own statement about this vote, made tentative, conditional, a
  question or one of several (``I'm voting for Dana, unless Logan claims``): like an unreadable
  protocol line, it leaves the reply without a vote when nothing decides after it;
* ``negated``: ``I'm not voting for Dana``: undoes an earlier decision for the same player;
* ``other``: about another round, someone else's words, a hypothetical: no bearing on the vote.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from . import reply_cues as cues
from .names import fold, name_at, name_forms
from .target_text import DASHES, read_name, strip_lead

_MAX_STATEMENTS = 50  # statements looked at, from the last one back (bounds the work on a hostile reply)
_BEFORE = 300  # characters of the sentence before a statement that its context checks read
_AFTER = 300  # characters of the sentence after the verb that the target reading sees


@dataclass(frozen=True)
class Stated:
    pos: int  # where the statement starts in the (normalised) reply
    end: int  # where its sentence ends
    kind: str  # "vote" | "unsettled" | "negated" | "other"
    target: str | None
    note: str


# ----------------------------------------------------------------------------- the statements
_W = r"[\w'’-]+"
_MID = rf"(?P<mid>(?:\s+(?!I\b){_W}){{0,3}}?)"  # words between subject and verb (renamed per form), classified by _mid_kind
_EN_SUBJECT = r"(?<![^\W_])(?<!['’])(?:I|i)(?:\s*,[\w \t'’-]{1,30},)?"  # "I, for one, am voting"
# (regex, form) pairs; the match ends where the target text begins
_EN_FORMS: tuple[tuple[str, str], ...] = (
    # "I'm sticking with my vote for Lee" first: the "I'll ... vote" form would take "keep my" for words between
    (
        rf"{_EN_SUBJECT}(?:['’]?m|\s+am){_MID}\s+(?:sticking\s+with|staying\s+with|keeping)\s+my\s+(?:final\s+)?vote(?!\w)",
        "present",
    ),
    (rf"{_EN_SUBJECT}(?:['’]ll|\s+will)?{_MID}\s+(?:stick\s+with|stay\s+with|keep)\s+my\s+(?:final\s+)?vote(?!\w)", "present"),
    (rf"{_EN_SUBJECT}(?:['’]?m|\s+am){_MID}\s+(?:going\s+to|gonna)\s+vote(?!\w)", "future"),
    (
        rf"{_EN_SUBJECT}(?:['’]ll|\s+will|\s+shall){_MID}\s+(?:be\s+voting|vote|be\s+(?:casting|putting|placing|throwing)"
        r"\s+my\s+(?:final\s+)?vote)(?!\w)",
        "future",
    ),
    (rf"{_EN_SUBJECT}(?:['’]?m|\s+am){_MID}\s+voting(?!\w)", "present"),
    (
        rf"{_EN_SUBJECT}(?:['’]?m|\s+am){_MID}\s+(?:casting|putting|placing|giving|throwing|locking\s+in)"
        r"\s+my\s+(?:final\s+|whole\s+)?vote(?!\w)",
        "present",
    ),
    (rf"{_EN_SUBJECT}{_MID}\s+(?:cast|place|give|throw|lock\s+in)\s+my\s+(?:final\s+|whole\s+)?vote(?!\w)", "present"),
    (rf"{_EN_SUBJECT}(?:['’]ve|\s+have)?{_MID}\s+(?:want|choose|decided|intend|plan)\s+to\s+vote(?!\w)", "present"),
    (rf"{_EN_SUBJECT}(?:['’]d|\s+would){_MID}\s+like\s+to\s+vote(?!\w)", "present"),
    (rf"{_EN_SUBJECT}{_MID}\s+vote(?!\w)", "present"),
    # "I'm going with Dana.": no vote word, so the name must close the sentence (see _bare_tail)
    (rf"{_EN_SUBJECT}(?:['’]?m|\s+am){_MID}\s+going\s+with(?!\w)", "go with"),
    (rf"{_EN_SUBJECT}(?:['’]ll|\s+will){_MID}\s+go\s+with(?!\w)", "go with"),
    (
        r"(?<![^\W_])(?<!['’])my\s+(?:(?:final|official|real|actual)\s+)?(?:vote|choice)(?:\s+(?:today|now|this\s+round|this\s+time))?,?"
        r"(?:\s*(?:is\s+going\s+to|is\s+going|will\s+go|['’]ll\s+go|will\s+be|['’]ll\s+be|is\s+locked\s+in|is\s+locked"
        r"|is\s+still|is\s+firmly|goes|stays|remains|lands|is|['’]s)(?!\w)"
        rf"|\s*[{DASHES}]+(?=\s))",
        "my vote",
    ),
    (r"(?:^|(?<=[.!?…:\n]))[ \t*_>#-]*(?:voting|casting\s+my\s+vote)(?!\w)", "gerund"),
)
_RU_FORMS: tuple[tuple[str, str], ...] = (
    (r"(?<!\w)голосую(?!\w)", "present"),
    (r"(?<!\w)отда(?:ю|м)\s+(?:свой\s+|мой\s+)?голос(?!\w)", "present"),
    (r"(?<!\w)проголосую(?!\w)", "future"),
    (r"(?<!\w)буду\s+голосовать(?!\w)", "future"),
    (
        rf"(?<!\w)мой\s+(?:(?:итоговый|окончательный|сегодняшний|финальный)\s+)?голос(?:\s+(?:сегодня|теперь))?"
        rf"(?:\s*[{DASHES}]+(?=\s)|\s+(?=(?:за|против)(?!\w))|\s+(?:уходит|идёт|идет|достаётся|достается|отдан\w*|получает)(?!\w))",
        "my vote",
    ),
    (
        rf"(?<!\w)мо[йё]\s+(?:(?:итоговый|окончательный|сегодняшний|финальный)\s+)?выбор(?:\s+(?:сегодня|теперь))?"
        rf"(?:\s*[{DASHES}]+(?=\s)|\s*:)",
        "my vote",
    ),
    (
        r"(?<!\w)я\s+(?:(?:всё-таки|все-таки|тоже|однозначно|определённо|определенно|точно|полностью)\s+)?за\s+то\s*,?\s*чтобы(?:\s+(?:сегодня|именно|всё-таки|все-таки))?\s+(?:выгнать|исключить|убрать|изгнать"
        r"|выгнали|исключили|убрали|изгнали|ушл[аи]|ушёл|ушел|покинул[аи]?\s+игру)(?!\w)",
        "present",
    ),
    (r"(?<!\w)выбираю(?!\w)", "choose"),  # "Я выбираю Марину." (not "... Марину в союзники")
    (
        rf"(?<!\w)(?:мо[её]\s+решение\s*[{DASHES}:]+|я\s+(?:(?:уже|всё-таки|все-таки|твёрдо|твердо|окончательно)\s+)?реши(?:л|ла))"
        r"\s*(?:про)?голос(?:овать|ую)(?!\w)",
        "present",
    ),
    (r"(?<!\w)(?:свой\s+|мой\s+)?голос\s+отда(?:ю|м)(?!\w)", "present"),
    (r"(?<!\w)(?:ставлю|кладу)\s+(?:свой\s+|мой\s+)?голос(?:\s+на)?(?!\w)", "present"),
)


def _one_line(rx: str, i: int) -> str:
    """Form ``i``'s pattern with its groups named apart and ``\\s`` a space or a tab: a statement never spans
    lines (the forms hold no ``\\s`` inside a character class)."""
    return rx.replace("(?P<mid>", f"(?P<mid{i}>").replace("\\s", "[^\\S\\n]")


# the lookahead is the first character any form can start with: most positions fail on it at once
_FORMS = re.compile(
    "(?=[IiMmVvCcгГоОпПбБмМяЯзЗвВрРсСкК \t*_>#-])(?:"
    + "|".join(f"(?P<f{i}>{_one_line(rx, i)})" for i, (rx, _) in enumerate(_EN_FORMS + _RU_FORMS))
    + ")",
    re.I | re.M,
)
_FORM_KIND = tuple(kind for _, kind in _EN_FORMS + _RU_FORMS)
# the name before the words: "Dana gets my vote", "Dana's my vote", "Логан получает мой голос"
_GETS_MY_VOTE = re.compile(
    r"(?:['’]s(?:\s+getting)?|\s+(?:gets|has|earns|receives|is\s+getting|will\s+get|['’]ll\s+get|is|получает|заслуживает))"
    r"\s+my\s+(?:final\s+)?vote(?!\w)|\s+(?:получает|заслуживает)\s+мой\s+голос(?!\w)",
    re.I,
)
# the confirmation after a sentence that is only a name: "Alex. That's my vote.", "Логан. Это мой голос."
_THATS_MY_VOTE = re.compile(
    r"(?<![\w'’])(?:that['’]s|that\s+is|this\s+is|it['’]s|so\s+that['’]s)\s+(?:my\s+(?:final\s+)?vote|who\s+I['’]m\s+voting\s+for|who\s+gets\s+my\s+vote)(?!\w)"
    r"|(?<!\w)это\s+(?:мой\s+(?:итоговый\s+|окончательный\s+)?голос|мой\s+выбор\s+на\s+голосовании)(?!\w)",
    re.I,
)
# statements that negate: "I'm not voting for Dana", "I won't vote Dana", "Я не голосую за Дану", "Мой голос — не за Кейси"
_NEGATED = re.compile(
    r"(?=[IiMmNnнНмМ\s*_])(?:"
    rf"{_EN_SUBJECT}(?:['’]?m|\s+am)\s+(?:not|no\s+longer)\s+(?:voting|going\s+to\s+vote)(?!\w)"
    rf"|{_EN_SUBJECT}(?:\s+(?:do|will|shall)\s+not|\s+(?:don['’]t|won['’]t|shan['’]t|never))\s+vote(?!\w)"
    rf"|(?<![\w'’])my\s+vote\s+(?:is\s+not|isn['’]t|won['’]t\s+go|will\s+not\s+go|does\s+not\s+go|doesn['’]t\s+go)(?!\w)"
    rf"|(?:^|(?<=[.!?…\n]))[\s*_]*not\s+voting(?!\w)"
    rf"|(?<!\w)не\s+(?:голосую|проголосую|буду\s+голосовать|отда(?:ю|м)\s+(?:свой\s+|мой\s+)?голос)(?!\w)"
    rf"|(?<!\w)мой\s+голос\s*[{DASHES}]*\s*не(?=\s+(?:за|против)(?!\w)))",
    re.I | re.M,
)
# what may stand between the words and the name: "for", "to eliminate", "on", "out"
_LEAD = re.compile(
    rf"^[\s*_`\"“«(\[,]*(?:[:{DASHES}]+\s*)?(?:(?:to\s+(?:eliminate|remove|lynch|execute|exile|banish|kick\s+out|vote\s+out"
    r"|boot(?:\s+out)?|get\s+rid\s+of)|in\s+favou?r\s+of(?:\s+(?:removing|eliminating|voting\s+out|exiling))?"
    r"|(?:behind|for|on)\s+(?:eliminating|removing|lynching|executing|exiling|banishing|voting\s+out|getting\s+rid\s+of)"
    r"|чтобы\s+(?:выгнать|исключить|убрать|изгнать)"
    r"|for|against|on|to|with|behind|toward|towards|out)\s+)?",
    re.I,
)
_SENTENCE_END = re.compile(r"[.!?…]+(?=[\s\"”»'’)\]*_]|$)|\n")
_CLAUSE_SPLIT = re.compile(
    rf"[,;:()\[\]{DASHES}]|(?<!\w)(?:so|but|and|then|therefore|hence|which is why|that's why|а|но|и|поэтому|так что|значит)(?!\w)",
    re.I,
)


def _sentence_start(text: str, pos: int) -> int:
    lo = max(text.rfind("\n", 0, pos) + 1, pos - _BEFORE)
    ends = list(re.finditer(r"[.!?…]+(?=\s|$)", text[lo:pos]))
    return lo + ends[-1].end() if ends else lo


def _sentence_end(text: str, pos: int) -> int:
    m = _SENTENCE_END.search(text, pos, min(len(text), pos + _AFTER))
    return m.end() if m else min(len(text), pos + _AFTER)


def _mid_kind(mid: str) -> str:
    """Words between the subject and the verb: "" (none or plain adverbs), "negated", "hedged", or "other"."""
    words = [w for w in re.split(r"\s+", fold(mid).replace("’", "'")) if w]
    kind = ""
    for w in words:
        if w in cues.STATED_NEGATIONS or w.endswith("n't"):
            return "negated"
        if w in cues.STATED_HEDGES:
            kind = "hedged"
        elif w not in cues.STATED_ADVERBS:
            return "other"
    return kind


def _ru_mid(text: str, pos: int) -> str:
    """The words right before a Russian verb in its clause (back to punctuation, at most three)."""
    seg = re.split(rf"[,.;:!?…()\[\]\n]|\s[{DASHES}]+\s", text[max(0, pos - 80) : pos])[-1]  # "всё-таки" is one word
    words = [w for w in seg.split() if w.casefold() not in ("я", "и")]
    return " ".join(words[-3:])


def _quoted(text: str, pos: int, names: list[str]) -> bool:
    """The statement sits inside a quotation, a '>' quote, a transcript line or after "X wrote:"."""
    line0 = text.rfind("\n", 0, pos) + 1
    head = text[line0:pos]
    if re.match(r"^\s*>", head):
        return True
    if head.count('"') % 2 or head.count("“") > head.count("”") or head.count("«") > head.count("»"):
        return True
    if re.search(r"(?:^|[\s(\[])[‘'](?=[^'’]*$)", head) and not re.search(r"\w[‘'’]\w", head[-3:]):
        return True
    colon = head.rfind(":")
    if colon >= 0 and not _closed_quote(head[colon + 1 :]):
        label = head[:colon]
        # reported speech anywhere in the label's sentence ("Here's what Dana wrote, word for word:"); the
        # other intros only in its last clause ("Yesterday:", not "Yesterday I voted Kai, and that was a mistake:")
        sentence = re.split(r"[.!?…]\s", label)[-1]
        if (
            cues.SPEECH_INTRO.search(sentence)
            or cues.QUOTE_INTRO.search(re.split(r"[,;]", sentence)[-1])
            or _is_name(label, names)
        ):
            return True
    prev = [ln for ln in text[max(0, line0 - 400) : line0].splitlines() if ln.strip()]
    return bool(prev) and prev[-1].rstrip(" *_`").endswith(":") and bool(cues.QUOTE_INTRO.search(prev[-1]))


def _closed_quote(after: str) -> bool:
    """The words after an intro's colon open with a quotation that closes before the statement
    (``Dana said: «I vote Lee». I'm voting for Dana.``): the intro covered the quotation only."""
    m = re.match(r"\s*([\"“«„'‘])", after)
    if not m:
        return False
    close = re.escape({'"': '"', "“": "”", "«": "»", "„": "“", "'": "'", "‘": "’"}[m.group(1)])
    return re.search(rf"(?<!\w){close}|{close}(?!\w)", after[m.end() :]) is not None  # not the ' of "I'm"


def _is_name(label: str, names: list[str]) -> bool:
    words = re.sub(r"[*_`>#\s]+", " ", label).strip()
    if not words or len(words) > 40:
        return False
    rx, _ = name_forms(tuple(names))
    m = rx.match(words)
    return m is not None and m.end() == len(words)


def _name_before(text: str, pos: int, names: list[str]) -> tuple[str, int] | None:
    """The candidate written right before ``pos`` (``Dana`` of "Dana gets my vote") and where it starts."""
    seg = text[max(0, pos - 60) : pos]
    rx, table = name_forms(tuple(names))
    trimmed = seg.rstrip(" *_`\"”»'’")
    for m in re.finditer(r"(?<!\w)\w", trimmed):
        hit = rx.match(trimmed, m.start())
        if hit and hit.end() == len(trimmed) and hit.lastgroup:
            start = m.start()
            while start and seg[start - 1] in "*_`\"“«'‘":  # the name's own quotes or emphasis: '"Alex" gets my vote'
                start -= 1
            return table[int(hit.lastgroup[1:])][0], pos - len(seg) + start
    return None


def _hedge_scope(clauses: list[str]) -> str:
    """The statement's own clause, with the clause before it when that is only a short lead-in
    ("Maybe, I'm voting ...", "Думаю, голосую ...")."""
    own = clauses[-1]
    if not own.strip() and len(clauses) > 1 and len(clauses[-2].split()) <= 3:
        return clauses[-2] + " " + own
    return own


def _context(text: str, pos: int, names: list[str]) -> tuple[str, str] | None:
    """(kind, note) when the sentence before the statement makes it no decision; None when it is one."""
    before = cues.IDLE_IF.sub(" ", text[_sentence_start(text, pos) : pos])
    clauses = _CLAUSE_SPLIT.split(before)
    clause = clauses[-1]
    if _quoted(text, pos, names):
        return "other", "quoted or reported"
    if cues.STATED_NOT_REAL.search(before):
        return "other", "an example or hypothetical"
    if cues.STATED_ANTECEDENT.search(before):
        return "other", "the condition of another statement"
    if cues.STATED_AUX_BEFORE.search(clause):
        return "other", "a question or hypothetical"
    if cues.STATED_OTHER_ROUND.search(clause):
        return "other", "about another round"
    embedded = cues.STATED_EMBEDDING.search(before)
    own = cues.STATED_OWN_EMBEDDING.search(before)  # "I think", "думаю, что": the speaker's own hedge
    if embedded and not own:
        return "other", "reported, not stated"
    if cues.STATED_NEGATED_CLAUSE.search(clause):
        return "other", "negated"
    if cues.STATED_CONDITION.search(before):
        return "unsettled", "conditional"
    if cues.STATED_OWN_HEDGE.search(_hedge_scope(clauses)) or embedded:
        return "unsettled", "hedged before the statement"
    return None


def _bare_tail(tail: str) -> bool:
    """Nothing after the name but punctuation, a plain adverb or a reason: "I'm going with Dana." (not
    "... with Dana on this", "... with Dana, she is right")."""
    words = re.sub(r"^[\s*_`\"”»'’)\]]+", "", tail)
    m = cues.STATED_TAIL_OK.match(words)
    if m:
        words = words[m.end() :]
    if not re.search(r"[^\W_]", words):
        return True
    return bool(cues.REASON.match(re.sub(rf"^[\s,;:{DASHES}*_]+", "", words)))


def _plain_tail(tail: str) -> bool:
    """Nothing after the name but punctuation, a reason, or a plain adverb ("today", "again")."""
    words = re.sub(r"^[\s*_`\"”»'’)\]]+", "", tail)
    if not words or not words[0].isalnum():
        return True
    m = cues.STATED_TAIL_OK.match(words)
    if m:
        words = re.sub(r"^[\s*_`\"”»'’)\]]+", "", words[m.end() :])
    return not words or not words[0].isalnum() or bool(cues.REASON.match(words))


def _read_after(text: str, at: int, end: int, names: list[str], strict: str) -> tuple[str, str | None, str]:
    """(kind, target, note) for the words after the statement's verb, up to its sentence end.

    ``strict`` "clause" (a sentence opening with "Voting ..."): the name must end the clause, else the
    gerund is the subject of a longer sentence ("Voting for Gray would be a mistake"); "bare" ("I'm going
    with ..."): the name must end the sentence."""
    rest = text[at:end]
    lead = _LEAD.match(rest)
    frag = rest[lead.end() :] if lead else rest
    you = _YOU.match(strip_lead(frag))
    if you:  # "Dana, I'm sorry, but I'm voting for you": the player addressed at the sentence's start
        after_you = strip_lead(frag)[you.end() :]
        named = re.match(r"^\s*,\s*", after_you)
        hit = name_at(after_you[named.end() :], names) if named else None  # "I'm voting for you, Dana."
        addressed = hit[0] if hit else _addressed(text, at, names)
        if addressed is None:
            return "other", None, "names no candidate"
        return _after_name(strip_lead(frag)[you.end() :], addressed, "the player addressed", strict)
    name, note, tail = read_name(frag, names, whole_line=False)
    if name is None:
        if note == "explicit abstention":
            return "vote", None, "stated abstention"
        if strict or note.startswith("no living player") or note in ("empty target", "struck out"):
            return "other", None, "names no candidate"
        if note == "a possessive, not a vote" and re.match(
            r"^\W*(?:elimination|removal|exile|lynching|execution|ouster)(?!\w)", tail, re.I
        ):
            return "vote", name_at(frag, names)[0], "stated vote (possessive: the player's removal)"  # type: ignore[index]
        return "unsettled", None, note
    return _after_name(tail, name, note, strict)


def _after_name(tail: str, name: str, note: str, strict: str) -> tuple[str, str | None, str]:
    if tail.rstrip().endswith("?") or re.match(r"^[\s*_`\"”»')\]]*\?", tail):
        return "unsettled", name, "a question"
    if strict == "bare" and not _bare_tail(tail):
        return "other", name, "more than a name after the words"
    if strict and not _plain_tail(tail):
        return "other", name, "the subject of a longer sentence"
    return "vote", name, f"stated vote ({note})"


_YOU = re.compile(r"(?:you|тебя|вас)(?!\w)", re.I)


def _addressed(text: str, pos: int, names: list[str]) -> str | None:
    """The candidate the sentence around ``pos`` (or the reply's previous sentence) opens by addressing: "Dana, ..."."""
    start = _sentence_start(text, pos)
    for s0 in (start, _sentence_start(text, max(0, start - 1)) if start else start):
        hit = name_at(text[s0:pos].lstrip(' *_>"“«'), names)
        if hit:
            after = text[s0:pos].lstrip(' *_>"“«')[hit[2] :]
            if re.match(r"^\s*[,!—–-]", after):
                return hit[0]
    return None


def _first_clause(rest: str) -> str:
    """The words after the verb up to the first delimiter, reason or relative clause ("who voted ... yesterday")."""
    return re.split(
        rf"[,;:()\[\]{DASHES}]|(?<!\w)(?:because|since|as|who|which|that|whose|потому|так как|ведь|кто|котор\w+)(?!\w)",
        rest,
        maxsplit=1,
        flags=re.I,
    )[0]


def _form_of(m: re.Match[str]) -> tuple[int, str]:
    """(form index, the words between subject and verb) of a :data:`_FORMS` match."""
    for key, val in m.groupdict().items():
        if val is not None and key[0] == "f":
            i = int(key[1:])
            return i, m.groupdict().get(f"mid{i}") or ""
    raise AssertionError("a match of no form")  # pragma: no cover


def _classify(text: str, m: re.Match[str], names: list[str]) -> Stated:
    i, mid = _form_of(m)
    form, russian = _FORM_KIND[i], i >= len(_EN_FORMS)
    if russian and form != "my vote":
        mid = _ru_mid(text, m.start())
    pos, end = m.start(), _sentence_end(text, m.end())
    first = _first_clause(text[m.end() : end])
    if cues.STATED_OTHER_ROUND.search(first):
        return Stated(pos, end, "other", None, "about another round")  # "I'll vote Casey next round"
    if cues.STATED_HABIT.search(first) or cues.STATED_HABIT.search(mid):
        return Stated(pos, end, "other", None, "a habit, not this vote")
    if cues.STATED_NOT_MEANT.search(text[_sentence_start(text, pos) : end]):
        return Stated(pos, end, "other", None, "sarcastic or in another's words")
    mk = _mid_kind(mid)
    if russian and mk == "other":
        mk = ""  # "голосую" is first person by itself: "В итоге голосую", "Сегодня я голосую"
    if mk == "negated":
        return Stated(pos, end, "other", None, "negated")  # _NEGATED reads its target
    if mk == "other":
        return Stated(pos, end, "other", None, "not a first-person statement")
    ctx = _context(text, pos, names)
    if ctx:
        return Stated(pos, end, ctx[0], None, ctx[1])
    kind, target, note = _read_after(
        text, m.end(), end, names, strict={"gerund": "clause", "choose": "clause", "go with": "bare"}.get(form, "")
    )
    if kind == "vote" and target is not None and mk == "hedged":
        return Stated(pos, end, "unsettled", target, "hedged before the verb")
    return Stated(pos, end, kind, target, note)


def _name_first(text: str, m: re.Match[str], names: list[str]) -> Stated | None:
    """ "Dana gets my vote": the candidate right before the words, read like any statement."""
    hit = _name_before(text, m.start(), names)
    if hit is None:
        return None
    name, start = hit
    end = _sentence_end(text, m.end())
    ctx = _context(text, start, names)
    if ctx:
        return Stated(start, end, ctx[0], None, ctx[1])
    tail = text[m.end() : end]
    if tail.rstrip().endswith("?"):
        return Stated(start, end, "unsettled", name, "a question")
    if cues.STATED_OTHER_ROUND.search(_first_clause(tail)) or not _plain_tail(tail):
        return Stated(start, end, "other", name, "not a plain statement")
    return Stated(start, end, "vote", name, "stated vote (name first)")


def _name_then_thats(text: str, m: re.Match[str], names: list[str]) -> Stated | None:
    """ "Alex. That's my vote.": a sentence that is only a candidate's name, confirmed by the next one."""
    head = text[max(0, m.start() - 80) : m.start()].rstrip()
    sentence = re.split(r"[.!?…:\n]\s*(?=\S)", head.rstrip(".!…"))[-1]
    words = re.sub(r"[*_`\"“”«»()\[\]\s]+", " ", sentence).strip()
    hit = name_at(words, names) if words else None
    if hit is None or hit[2] != len(words):
        return None
    pos = m.start() - len(head) + head.rfind(sentence)
    end = _sentence_end(text, m.end())
    if _context(text, pos, names) or not _plain_tail(text[m.end() : end]) or text[m.end() : end].rstrip().endswith("?"):
        return None
    return Stated(pos, end, "vote", hit[0], 'stated vote (name, then "that\'s my vote")')


def _negated(text: str, m: re.Match[str], names: list[str]) -> Stated | None:
    end = _sentence_end(text, m.end())
    rest = text[m.end() : end]
    lead = _LEAD.match(rest)
    hit = name_at(strip_lead(rest[lead.end() if lead else 0 :]), names)
    if hit is None or _quoted(text, m.start(), names):
        return None
    return Stated(m.start(), end, "negated", hit[0], "negated")


def stated_votes(text: str, names: list[str]) -> list[Stated]:
    """Every first-person vote statement of ``text`` (normalised as :func:`.parsing.parse_target` does), in order."""
    low = text.lower()  # a case-blind scan without re.I (several times faster); same offsets when lengths agree
    words = _VOTE_WORD.finditer(low) if len(low) == len(text) else _VOTE_WORD_ANY_CASE.finditer(text)
    hits = [m.span() for m in words if not _MARKER_WORD.match(text, m.start())]
    if not names or not hits:
        return []
    hits = hits[-_MAX_STATEMENTS:]
    found = [_classify(text, m, names) for m in _near(_FORMS, text, hits, 80, 30)]
    found += [s for m in _near(_GETS_MY_VOTE, text, hits, 30, 8) if (s := _name_first(text, m, names))]
    found += [s for m in _near(_NEGATED, text, hits, 50, 12) if (s := _negated(text, m, names))]
    found += [s for m in _near(_THATS_MY_VOTE, text, hits, 30, 8) if (s := _name_then_thats(text, m, names))]
    return sorted(found, key=lambda s: s.pos)


# every statement holds one of these words and reaches a few dozen characters around it: the patterns are
# run on those windows only (a reply is mostly prose without them); "VOTE:" itself is a protocol marker
_VOTE_WORD = re.compile(r"vot(?:e|ing)|go(?:ing)? with|choice|голос|выбор|выбира|чтобы")
_VOTE_WORD_ANY_CASE = re.compile(_VOTE_WORD.pattern, re.I)
_MARKER_WORD = re.compile(r"(?:VOTE|ГОЛОС)[*_`]*\s*[:：]")


def _near(rx: re.Pattern[str], text: str, hits: list[tuple[int, int]], reach: int, tail: int) -> list[re.Match[str]]:
    """The matches of ``rx`` that start at most ``reach`` characters before a vote word and end at most
    ``tail`` after it, as ``rx.finditer`` gives them (leftmost, not overlapping)."""
    longest: dict[int, re.Match[str]] = {}
    for h0, h1 in hits:
        for m in rx.finditer(text, max(0, h0 - reach), min(len(text), h1 + tail)):
            if m.start() not in longest or m.end() > longest[m.start()].end():
                longest[m.start()] = m
    out: list[re.Match[str]] = []
    for start in sorted(longest):
        if not out or start >= out[-1].end():
            out.append(longest[start])
    return out
