"""Property tests of the protocol-line parser (Hypothesis).

* prose built from sentences that talk about votes (past, conditional, negated, questions,
  reported, quotes of others' votes, dashes, Russian verb forms, markers as words
  mid-sentence, hedged marker lines) is never read as a vote;
* a protocol line ``VOTE: <name>`` / ``ГОЛОС: <name>`` with random Markdown, case,
  punctuation, name spelling (Cyrillic, Russian cases) and trailing text, after random
  prose (quotes of other players' vote lines included), is always read as that name;
* a first-person statement (``I'm voting for <name>.``, ``Голосую за <name>.``) ending a
  reply, after the same prose, is always read as that name;
* random text and random bytes never crash the parser, and whatever it reads is a candidate.

Each test prints how many inputs Hypothesis tried (run with ``-s`` to see the counts). The
search is derandomised (``derandomize=True``): every run tries the same inputs, so a failure is
found on every run or on none, and is reproduced by rerunning.
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from hypothesis.configuration import set_hypothesis_home_dir

from mafiascope.engine.parsing import parse_list, parse_target, parse_vote
from mafiascope.engine.phases.tournament import MARKERS as TEN

pytestmark = pytest.mark.slow  # about 5-30 s per test depending on the machine's load

NAMES = ["Alex", "Bailey", "Casey", "Dana", "Ellis", "Finley", "Gray", "Harper", "Jordan", "Logan"]
# how Russian speakers write the names, nominative first (an oracle written by hand, not by the parser)
RU_FORMS = {
    "Alex": ["Алекс", "Алекса", "Алексу", "Алексом"],
    "Bailey": ["Бейли"],
    "Casey": ["Кейси"],
    "Dana": ["Дана", "Дану", "Даны", "Дане"],
    "Ellis": ["Эллис", "Эллиса", "Эллису"],
    "Finley": ["Финли"],
    "Gray": ["Грей", "Грея", "Грею"],
    "Harper": ["Харпер", "Харпера", "Харперу"],
    "Jordan": ["Джордан", "Джордана", "Джордану"],
    "Logan": ["Логан", "Логана", "Логану", "Логаном"],
}
# Hypothesis keeps caches (charmaps, constants) in ./.hypothesis by default: not in the checkout
if not os.environ.get("HYPOTHESIS_STORAGE_DIRECTORY"):
    set_hypothesis_home_dir(Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "mafiascope" / "hypothesis")
SETTINGS = settings(max_examples=400, deadline=None, database=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow])

names = st.sampled_from(NAMES)


@st.composite
def written_name(draw: st.DrawFn, name: str | None = None) -> str:
    n = name or draw(names)
    form = draw(st.sampled_from(["exact", "lower", "upper", "ru", "ru-case"]))
    if form == "lower":
        return n.lower()
    if form == "upper":
        return n.upper()
    if form == "ru":
        return RU_FORMS[n][0]
    if form == "ru-case":
        return draw(st.sampled_from(RU_FORMS[n]))
    return n


# ------------------------------------------------------------------ prose that casts no vote
SUBJECTS = ["I", "We", "Honestly, I", "Yesterday I", "Maybe I", "Nobody", "Everyone here", "{other}", "The town", "If I"]
EN_PATTERNS = [
    "{s} voted for {n} last round, and I regret it.",
    "{s} would vote {n} if the Doctor claimed.",
    "{s} won't vote for {n} on such thin evidence.",
    "Voting against {n} right now feels too risky.",
    "If I vote for {n} and I'm wrong, the town loses.",
    "{s} need to vote—and {n}'s silence is what bothers me.",
    "{s} keep thinking about the vote - {n} or {m} - and can't decide.",
    "Dana's VOTE: {n} yesterday looked like a panic move.",
    "Remember when {other} wrote \"VOTE: {n}\" on day one?",
    "{s} said my vote: {n} earlier, but that was before the kill.",
    "Votes so far — {n}: 2, {m}: 1.",
    "{s} almost voted {n}, then {m} changed my mind.",
    "Had {s} voted for {n}, we would have lost {m} too.",
    "{other} is voting {n}; {s} am not sure yet.",
    "Vote-wise, {s} lean {n}, but it's early.",
    "One vote — {n}'s — decided yesterday.",
    "Should we vote {n}? {s} don't know.",
    "{s} refuse to vote for {n} just because {n} is quiet.",
    "The ACTION: Kill {n} line from last night is still on my mind.",
    "I'm not voting for {n} on a hunch.",
    "If I vote for {n} and {n} flips town, blame me.",
    "{other} thinks I'm voting for {n}, which is wrong.",
    "Would I vote {n}? Not today.",
    "I'll vote for {n} next round if nothing changes.",
    "I'm voting for {n} or {m}, I can't tell which yet.",
    "Maybe I'm voting for {n}, maybe not.",
    "Should I vote for {n}?",
    "We should all vote for {n}.",
    "\"I'm voting for {n},\" {other} said, but I doubt it.",
]
RU_PATTERNS = [
    "Я голосовал за {n} вчера и не жалею.",
    "{other} голосует против {n} уже второй раз.",
    "Голосуя за {n}, мы рискуем потерять мирного.",
    "Я не голосую за {n}, пока он не ответит.",
    "{other} думает, что я голосую за {n}.",
    "Завтра проголосую за {n}, если он промолчит.",
    "Голосую за {n} или за {m}? Не знаю.",
    "Если я голосую за {n}, а он мирный, это конец.",
    "Если я проголосую за {n} и ошибусь, мафия выиграет.",
    "Голосовать против {n} сейчас слишком рискованно.",
    "Голос разума подсказывает: {n} врёт.",
    "Голоса разделились: {n} и {m}.",
    "Давайте не будем торопиться с голосованием, но {n} должен объяснить.",
    "Я бы проголосовал за {n}, но улик мало.",
    "Кто-то голосует — {n}, кажется, больше всех.",
    "Мой голос вчера ушёл {n}, и это была ошибка.",
    "В прошлом раунде мой ГОЛОС: {n}, сегодня думаю.",
    "Не голосуйте за {n}, он мирный.",
]
# marker lines that hedge, negate, ask, refer to the past or name two players: never a vote
HEDGED_LINES = [
    "VOTE: not {n}",
    "VOTE: if forced, {n}",
    "VOTE: I think {n}",
    "VOTE: undecided, leaning {n}",
    "VOTE: {n}?",
    "VOTE: {n} or {m}",
    "VOTE: {n}/{m}",
    "VOTE: {n} was my call yesterday",
    "VOTE: {n} would be a mistake",
    "VOTE: {n} is not the Mafia",
    "VOTE: {n} (that was my vote last round)",
    "VOTE - {n} is my prime suspect but I'm not committing",
    "Vote — and I mean this — {n} has to talk first",
    "ГОЛОС: не {n}",
    "ГОЛОС: если придётся, {n}",
    "ГОЛОС: {n} или {m}",
    "ГОЛОС: {n}? Не уверен",
    "ГОЛОС: {n} был бы ошибкой",
    "VOTE:\nI honestly can't decide; {n} made fair points.",
]
QUOTES = [
    "{other} wrote:\n> VOTE: {n}\nThat was the weakest vote of the day.",
    "\"VOTE: {n},\" {other} said earlier, and I don't buy it.",
    "For example:\nVOTE: {n}\nwould get {n} eliminated, but that's not my vote.",
    "VOTE: {n}\n\nActually, scratch that, I've changed my mind.",
]


@st.composite
def sentence(draw: st.DrawFn, hedged: bool = True) -> str:
    pools = [EN_PATTERNS, RU_PATTERNS] + ([HEDGED_LINES, QUOTES] if hedged else [])
    pattern = draw(st.sampled_from(draw(st.sampled_from(pools))))
    first, second = draw(st.lists(names, min_size=2, max_size=2, unique=True))
    n, m, other = draw(written_name(first)), draw(written_name(second)), draw(names)
    s = draw(st.sampled_from(SUBJECTS)).replace("{other}", other)
    return pattern.format(s=s, n=n, m=m, other=other)


@st.composite
def prose(draw: st.DrawFn, hedged: bool = True, max_size: int = 5) -> str:
    parts = draw(st.lists(sentence(hedged=hedged), min_size=1, max_size=max_size))
    text = ""
    for p in parts:
        text += (draw(st.sampled_from([" ", "\n", "\n\n"])) if text else "") + p
    return text


def test_prose_never_parses_as_a_vote():
    tried: Counter[str] = Counter()

    @SETTINGS
    @given(prose())
    def check(text: str) -> None:
        tried["inputs"] += 1
        got = parse_vote(text, NAMES)
        assert not got.valid and got.target is None, (text, got)

    check()
    print(f"\nprose: {tried['inputs']} inputs tried, none read as a vote")
    assert tried["inputs"] >= 100


# ------------------------------------------------------------------ protocol lines are always read
REASONS = [
    "they dodged every question", "he never answered Dana's point", "she voted Logan yesterday to save herself",
    "too quiet all game", "the kill pattern fits", "nothing personal", "он врал вчера", "слишком много совпадений",
]


@st.composite
def protocol_reply(draw: st.DrawFn) -> tuple[str, str]:
    target = draw(names)
    russian = draw(st.booleans())
    head = draw(st.sampled_from(["ГОЛОС", "Голос", "голос"] if russian else ["VOTE", "Vote", "vote", "VoTe"]))
    lead = draw(st.sampled_from(["", "", "My ", "Final "] if not russian else ["", "", "Мой "]))
    if lead:
        head = head.lower()
    bold = draw(st.sampled_from(["", "**", "__"]))
    sep = draw(st.sampled_from([":", ": ", " : ", "：", ":  "]))
    if bold and draw(st.booleans()):
        marker = f"{bold}{lead}{head}{sep.strip()}{bold} "  # **VOTE:** Name
    else:
        marker = f"{bold}{lead}{head}{bold}{sep}"  # **VOTE**: Name
    line_start = draw(st.sampled_from(["", "", "> ", "- ", "* ", "1. ", "### ", "  "]))
    word = draw(st.sampled_from(["", "", "за " if russian else "for "]))
    name = draw(written_name(target))
    wrap = draw(st.sampled_from([("", ""), ("**", "**"), ("*", "*"), ('"', '"'), ("«", "»"), ("[", "]"), ("(", ")"), ("`", "`")]))
    punct = draw(st.sampled_from(["", ".", "!", "!!", " ."]))
    trail = draw(st.sampled_from(["", "", " - {r}", " — {r}", ", because {r}", " ({r})", ". {r}."])).format(r=draw(st.sampled_from(REASONS)))
    line = f"{line_start}{marker}{word}{wrap[0]}{name}{wrap[1]}{punct}{trail}"
    if draw(st.booleans()) and not trail and line_start.strip() in ("", "-", "*"):
        line = f"{line_start}{bold}{head}{bold} {draw(st.sampled_from(['—', '-', '–']))} {name}"  # VOTE — Name
    before = draw(prose(hedged=True, max_size=3)) if draw(st.booleans()) else ""
    glue = "\n\n" if before else ""
    # only blank-free prose may follow a blockquote line (a quote followed by prose is a quotation); what
    # follows says nothing about votes (talk of votes after a vote may take it back: a property of its own)
    after = draw(st.lists(st.sampled_from(CLOSING), max_size=2)) if line_start != "> " else []
    return f"{before}{glue}{line}" + ("\n\n" + " ".join(after) if after else ""), target


CLOSING = ["Nothing personal.", "Let's see how the night goes.", "Good luck, everyone.", "I stand by my reasoning.",
           "Ничего личного.", "Посмотрим, что будет ночью.", "Всем удачи."]


QUOTED_THEN_OWN = ("I voted for Alex last round, and I regret it. Alex wrote:\n> VOTE: Alex\n"
                   "That was the weakest vote of the day. VOTE: not Alex\n\nVOTE:Alex\n\n", "Alex")


def test_protocol_lines_always_parse_to_the_name():
    tried: Counter[str] = Counter()

    @SETTINGS
    @given(protocol_reply())
    @example(QUOTED_THEN_OWN)  # another player's vote line quoted above the reply's own (found by this test)
    def check(case: tuple[str, str]) -> None:
        text, target = case
        tried["inputs"] += 1
        tried["russian" if any("\u0400" <= c <= "\u04ff" for c in text.splitlines()[-1]) else "other"] += 1
        got = parse_vote(text, NAMES)
        assert got.valid and got.target == target, (text, got)

    check()
    print(f"\nprotocol lines: {tried['inputs']} inputs tried, all read ({tried['russian']} ending in Cyrillic text)")
    assert tried["inputs"] >= 100


# ------------------------------------------------------------------ stated votes are always read
EN_STATED = ["I'm voting for {n}", "I vote for {n}", "I vote {n}", "My vote goes to {n}", "My vote is {n}",
             "I'm casting my vote for {n}", "{n} gets my vote", "I'm going to vote for {n}", "I'll vote for {n}",
             "So I'm voting {n}", "That's why I'm voting for {n}", "I'm definitely voting for {n}",
             "I am voting to eliminate {n}", "After all that, I vote for {n}"]
RU_STATED = ["Я голосую за {n}", "Голосую за {n}", "Голосую против {n}", "Мой голос — за {n}", "Мой голос за {n}",
             "Отдаю голос {n}", "Проголосую за {n}", "Итак, голосую за {n}", "Я сегодня голосую за {n}"]
STATED_TAILS = ["", " because {r}", ", {r}", " — {r}", ". {R}"]


@st.composite
def stated_reply(draw: st.DrawFn) -> tuple[str, str]:
    target = draw(names)
    russian = draw(st.booleans())
    n = draw(written_name(target)) if russian else draw(st.sampled_from([target, target.lower(), target.upper()]))
    if draw(st.booleans()):
        n = draw(st.sampled_from(["**{}**", "*{}*", "\"{}\""])).format(n)
    sentence = draw(st.sampled_from(RU_STATED if russian else EN_STATED)).format(n=n)
    r = draw(st.sampled_from(REASONS))
    sentence += draw(st.sampled_from(STATED_TAILS)).format(r=r, R=r[:1].upper() + r[1:]) + "."
    if draw(st.booleans()):
        sentence = f"**{sentence}**"
    before = draw(prose(hedged=True, max_size=3)) if draw(st.booleans()) else ""
    after = draw(st.lists(st.sampled_from(CLOSING), max_size=2))
    return (before + ("\n\n" if before else "") + sentence + (" " + " ".join(after) if after else "")), target


def test_stated_votes_always_parse_to_the_name():
    tried: Counter[str] = Counter()

    @SETTINGS
    @given(stated_reply())
    def check(case: tuple[str, str]) -> None:
        text, target = case
        tried["inputs"] += 1
        got = parse_vote(text, NAMES)
        assert got.valid and got.target == target, (text, got)

    check()
    print(f"\nstated votes: {tried['inputs']} inputs tried, all read")
    assert tried["inputs"] >= 100


# ------------------------------------------------------------------ garbage never crashes
ACTIONS = sorted(TEN.actions)
HEADS = {"vote": "VOTE:", "kill": "ACTION: Kill", "protect": "ACTION: Protect", "check": "ACTION: Check",
         "nominate": "NOMINATE:", "suspects": "SUSPECTS:", "order": "ORDER:"}  # fmt: skip
CANDIDATES = NAMES + ["Yes", "No", "Да", "Нет", "Mo", "Al"]
_TOKENS = ["VOTE:", "ГОЛОС:", "ACTION: Kill", "ORDER:", "**", "\n", "—", "> ", '"', "за ", "не", "not", "?", "Логана", "Kill"]


@st.composite
def garbage_case(draw: st.DrawFn) -> tuple[str, str, list[str]]:
    action = draw(st.sampled_from(ACTIONS))
    cands = draw(st.lists(st.sampled_from(CANDIDATES), max_size=6, unique=True))
    text = draw(st.one_of(
        st.text(),
        st.binary(max_size=2000).map(lambda b: b.decode("utf-8", errors="replace")),
        st.lists(st.sampled_from(_TOKENS + NAMES), max_size=40).map(" ".join),
        st.lists(st.sampled_from(_TOKENS + NAMES), max_size=12).map("".join),
    ))  # fmt: skip
    if cands and draw(st.booleans()):
        # garbage around a real protocol line for this action, so "only candidates are read" is exercised
        line = f"{HEADS[action]} {draw(st.sampled_from(cands))}"
        text = f"{text}\n\n{line}" + (draw(st.sampled_from(["", ".", " - " + draw(st.text(max_size=20))])))
    return text, action, cands


def test_random_text_and_bytes_never_crash():
    tried: Counter[str] = Counter()

    @SETTINGS
    @given(garbage_case())
    def check(case: tuple[str, str, list[str]]) -> None:
        text, action, cands = case
        tried["inputs"] += 1
        got = parse_target(text, action, cands, markers=TEN)
        assert (got.target in cands) if got.valid else got.target is None
        listed = parse_list(text, action, cands, limit=len(cands) or 1, markers=TEN)
        assert set(listed) <= set(cands)
        tried["read"] += got.valid

    check()
    print(f"\nrandom input: {tried['inputs']} inputs tried, no crash ({tried['read']} held a readable line)")
    assert tried["inputs"] >= 100
