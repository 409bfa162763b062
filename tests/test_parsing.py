"""Target parsing: Markdown, case, punctuation, trailing text, Russian markers, name variants."""

from __future__ import annotations

import pytest

from mafiascope.engine.markers import PROTOCOL_MARKERS, ActionMarker
from mafiascope.engine.parsing import parse_list, parse_target, parse_vote, strip_think
from mafiascope.engine.phases.tournament import MARKERS as TEN

NAMES = ["Alex", "Gray", "Logan", "Finley", "Casey"]


@pytest.mark.parametrize(
    "text,target",
    [
        ("**VOTE: Logan**", "Logan"),
        ("VOTE: Logan**", "Logan"),
        ("__VOTE__: Gray", "Gray"),
        ("vote: gray.", "Gray"),
        ("VOTE:Casey!", "Casey"),
        ("Reasoning first.\n\nVOTE: Finley - they dodged every question", "Finley"),
        ("I said VOTE: Alex yesterday but now\nVOTE: Gray", "Gray"),  # the last line wins
        ("VOTE: `Logan`", "Logan"),
        ("VOTE: [Casey]", "Casey"),
        ("VOTE: Logan's the one", "Logan"),
        ("> **VOTE:** Alex", "Alex"),
        ("VOTE: Fin", "Finley"),  # unique prefix
        ("ГОЛОС: Логан", "Logan"),
        ("ГОЛОС: за Кейси", "Casey"),
        ("**ГОЛОС:** Грей", "Gray"),
        ("<think>VOTE: Alex</think>\nVOTE: Casey", "Casey"),
    ],
)
def test_votes_are_read(text, target):
    res = parse_vote(strip_think(text), NAMES)
    assert res.valid and res.target == target, res


@pytest.mark.parametrize(
    "text,note",
    [
        ("I voted for Logan", "no VOTE line or stated vote"),
        ("VOTE: Zed", "no living player matches"),
        ("VOTE: nobody", "explicit abstention"),
        ("", "empty reply"),
        ("VOTE: ", "empty target"),
    ],
)
def test_unresolvable_votes_say_why(text, note):
    res = parse_vote(text, NAMES)
    assert not res.valid and res.target is None and note in res.note


@pytest.mark.parametrize(
    "text,target",
    [
        ("I'm voting for Logan.", "Logan"),
        ("Gray dodged every question. I vote Gray.", "Gray"),
        ("My vote goes to Casey, she lied about the night.", "Casey"),
        ("Finley gets my vote.", "Finley"),
        ("Я голосую за Алекса.", "Alex"),
        ("Мой голос — за Логана, он путался в показаниях.", "Logan"),
        ("Голосую за Грея.", "Gray"),
        ("Final vote: VOTE: Casey", "Casey"),  # the marker written twice
        ("**Final vote:** **VOTE: Alex**", "Alex"),
        ("VOTE: Gray\n\nOn reflection, I'm voting for Logan instead.", "Logan"),  # the last decision
        ("I'm voting for Gray.\n\nVOTE: Casey", "Casey"),
    ],
)
def test_stated_votes_are_read(text, target):
    res = parse_vote(text, NAMES)
    assert res.valid and res.target == target, res


@pytest.mark.parametrize(
    "text",
    [
        "I'm not voting for Logan.",
        "If I vote for Logan and he's town, we lose.",
        "Gray thinks I'm voting for Logan.",
        "Should I vote for Casey?",
        "I voted for Alex yesterday.",
        "I'll vote for Finley tomorrow.",
        "I think I'm voting for Gray, not sure yet.",
        "I'm voting for Gray or Logan.",
        "Casey said: \"I'm voting for Alex.\"",
        "I'm voting for Alex. Just kidding.",
        "VOTE: Gray\n\nI'm not voting for Gray after all.",
        "Я не голосую за Логана.",
        "Если я проголосую за Грея, а он мирный...",
        "Голосую за Алекса, если он промолчит.",
    ],
)
def test_statements_that_cast_no_vote_are_not_read(text):
    res = parse_vote(text, NAMES)
    assert not res.valid and res.target is None, res


RU_NAMES = ["Марина", "Игорь", "Павел", "Лев", "Юлия"]


@pytest.mark.parametrize(
    "text,names,target",
    [
        ("Gray's claim is the weaker one. I'm going with Gray.", NAMES, "Gray"),
        ("I'll go with Logan, because his timeline broke.", NAMES, "Logan"),
        ("I want to vote for Casey.", NAMES, "Casey"),
        ("I have decided to vote for Alex.", NAMES, "Alex"),
        ("I'd like to vote for Finley today.", NAMES, "Finley"),
        ("I'm sticking with my vote for Gray.", NAMES, "Gray"),
        ("I'll keep my vote on Logan.", NAMES, "Logan"),
        ("I'll be casting my vote for Casey.", NAMES, "Casey"),
        ("I'm throwing my vote behind eliminating Alex.", NAMES, "Alex"),
        ("_My vote goes to Finley._", NAMES, "Finley"),
        ("My choice is Gray.", NAMES, "Gray"),
        ("Weak claims all round. Voting Logan.", NAMES, "Logan"),  # a sentence end right before the gerund
        ("Yesterday I voted for Casey, and that was a mistake: she flipped town. Today I'm voting for Gray.", NAMES, "Gray"),
        ("Logan said: «Голосую за Грея». Странный выбор. Я голосую за Логана.", NAMES, "Logan"),
        ("Мой выбор — Марина.", RU_NAMES, "Марина"),
        ("Сегодня мой окончательный выбор — Юлия.", RU_NAMES, "Юлия"),
        ("Я за то, чтобы выгнать Игоря.", RU_NAMES, "Игорь"),
        ("Я за то, чтобы сегодня ушла Юлия.", RU_NAMES, "Юлия"),
        ("Голосую против Павла.", RU_NAMES, "Павел"),  # the vowel of -ел/-ев drops
        ("Голосую против Льва.", RU_NAMES, "Лев"),
        ("Я голосую за исключение Игоря.", RU_NAMES, "Игорь"),
        ("Я голосую, чтобы выгнать Марину.", RU_NAMES, "Марина"),
        ("Я выбираю Марину. Она путается.", RU_NAMES, "Марина"),
        ("Моё решение — голосовать против Игоря.", RU_NAMES, "Игорь"),
        ("Я решил голосовать против Павла.", RU_NAMES, "Павел"),
        ("Голос отдаю Игорю.", RU_NAMES, "Игорь"),
        ("Я ставлю свой голос на Юлию.", RU_NAMES, "Юлия"),
    ],
)
def test_more_stated_forms_are_read(text, names, target):
    res = parse_vote(text, names)
    assert res.valid and res.target == target, res


@pytest.mark.parametrize(
    "text,names",
    [
        ("I'm going with Gray on this one: Logan is mafia.", NAMES),
        ("I'm going with Gray's read.", NAMES),
        ("I'm going with Gray, she's right about Logan.", NAMES),
        ("Dana is going with Gray.", NAMES),
        ("If Alex claims, I'm going with Gray.", NAMES),
        ("I'm not going with Gray.", NAMES),
        ("I'll go with Gray tomorrow.", NAMES),
        ("I don't want to vote for Casey.", NAMES),
        ("I want to vote for Casey, but I'm not sure.", NAMES),
        ("I'd like to vote for Casey if she doesn't claim.", NAMES),
        ("My choice is between Gray and Logan.", NAMES),
        ("Here's what Casey wrote, word for word: I'm voting for Alex. Interesting.", NAMES),
        ("Casey said: 'I'm suspicious. I vote for Alex.' Odd.", NAMES),
        ("Игорь за то, чтобы выгнать Марину.", RU_NAMES),
        ("Я не за то, чтобы выгнать Марину.", RU_NAMES),
        ("Игорь решил голосовать за Марину.", RU_NAMES),
        ("Я выбираю Марину в качестве союзника.", RU_NAMES),
        ("Вчера мой выбор — Марина, сегодня не знаю.", RU_NAMES),
        ("Мой выбор — не Марина.", RU_NAMES),
        ("Голос отдаю Игорю, если он не объяснится.", RU_NAMES),
        ("Марина сказала: «Голосую за Игоря». Странно. Игорь, ответь.", RU_NAMES),
    ],
)
def test_more_forms_refuse_what_casts_no_vote(text, names):
    res = parse_vote(text, names)
    assert not res.valid and res.target is None, res


def test_a_quoted_vote_line_above_the_reply_s_own_does_not_hide_it():
    text = "Casey wrote:\n> VOTE: Gray\nThat vote came too fast. VOTE: not Gray\n\nVOTE: Alex"
    assert parse_vote(text, NAMES).target == "Alex"
    assert not parse_vote("Past votes:\n1. VOTE: Gray\n2. VOTE: Logan", NAMES).valid  # a list under an intro


def test_dead_players_are_not_targets():
    assert not parse_vote("VOTE: Alex", ["Gray", "Logan"]).valid


def test_ambiguous_prefix_is_refused():
    assert not parse_vote("VOTE: Al", ["Alex", "Alan"]).valid


@pytest.mark.parametrize(
    "text,action,target",
    [
        ("ACTION: Kill Gray", "kill", "Gray"),
        ("**ACTION: Kill Gray**", "kill", "Gray"),
        ("action: protect alex", "protect", "Alex"),
        ("ACTION: Check Logan.", "check", "Logan"),
        ("ДЕЙСТВИЕ: Убить Грея", "kill", "Gray"),
        ("ДЕЙСТВИЕ: Защитить Алекса", "protect", "Alex"),
        ("ДЕЙСТВИЕ: Проверить Логана", "check", "Logan"),
    ],
)
def test_night_actions(text, action, target):
    res = parse_target(text, action, NAMES)
    assert res.valid and res.target == target


def test_kill_marker_is_not_a_protect_marker():
    assert not parse_target("ACTION: Kill Gray", "protect", NAMES).valid


def test_list_actions():
    assert parse_list("SUSPECTS: Gray, logan and Casey", "suspects", NAMES, markers=TEN) == ["Gray", "Logan", "Casey"]
    assert parse_list("no list here", "suspects", NAMES, markers=TEN) == []


# ------------------------------------------------------------------ issue 12 item 6: votes read from prose
NAMES7 = ["Alex", "Bailey", "Casey", "Dana", "Ellis", "Finley", "Logan"]


@pytest.mark.parametrize(
    "text",
    [
        "Финли голосует за Логана.",  # third person: a report, not a marker
        "Я голосовал за Эллиса в прошлом раунде.",  # past tense
        "VOTE: honestly I think Logan, but who knows",  # a name several words after the marker
        "VOTE: Logan\n\nVOTE: not sure anymore",  # last marker line names nobody: no fall back to Logan
        "I need to vote—and Finley's answers were thin.",  # a dash in prose is no separator
        "My vote: voting against Ellis is too risky right now.",  # rejection
        "Final vote: if I vote for Logan and I'm wrong, we lose.",  # conditional
        "About my vote: I voted for Ellis last round.",  # past vote
        "VOTE: Ellis was my pick yesterday; today I can't decide.",  # past, on the marker line
        "Давайте не будем торопиться с голосованием, но Финли должна объяснить.",  # real corpus reply (ru)
    ],
)
def test_prose_is_never_a_vote(text):
    res = parse_vote(text, NAMES7)
    assert not res.valid and res.target is None, res


def test_last_marker_line_without_a_name_is_unreadable():
    res = parse_vote("VOTE: Dana\nOn reflection...\nVOTE: hmm", NAMES7)
    assert not res.valid and "no living player" in res.note


@pytest.mark.parametrize(
    "text,target",
    [
        ("I'm voting Gray. VOTE: Gray", "Gray"),  # a field after a sentence end (real corpus reply)
        ("VOTE — Finley", "Finley"),  # a dash only when the line is marker, dash, name
        ("ГОЛОС: Логана", "Logan"),
        ("**ГОЛОС**: за Дану", None),  # Dana is not in NAMES
        ("Final vote: Casey", "Casey"),
        ("**VOTE:**\nAlex", "Alex"),
    ],
)
def test_protocol_lines_are_still_read(text, target):
    res = parse_vote(text, NAMES)
    assert res.target == target and res.valid == (target is not None), res


# ------------------------------------------------------------------ issue 13 item 2: markers are data
def test_markers_are_passed_not_registered():
    import mafiascope.engine.phases.tournament as tournament
    from mafiascope.engine.phases.classic import ClassicPhases

    assert "order" not in PROTOCOL_MARKERS.actions  # importing the ten-seat family changed nothing
    assert tournament.TournamentPhases.markers is TEN and ClassicPhases.markers is PROTOCOL_MARKERS
    assert parse_list("ORDER: Gray, Alex", "order", NAMES, markers=TEN) == ["Gray", "Alex"]
    with pytest.raises(ValueError, match="no protocol marker for action 'order'"):
        parse_list("ORDER: Gray, Alex", "order", NAMES)


def test_a_family_can_bring_its_own_marker():
    markers = PROTOCOL_MARKERS.with_actions(vote=ActionMarker(heads=("BALLOT",)))
    assert parse_target("BALLOT: Gray", "vote", NAMES, markers=markers).target == "Gray"
    assert not parse_target("VOTE: Gray", "vote", NAMES, markers=markers).valid
    assert parse_vote("VOTE: Gray", NAMES).target == "Gray"  # the shared table is unchanged
