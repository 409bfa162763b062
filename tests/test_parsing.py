"""Target parsing: Markdown, case, punctuation, trailing text, Russian markers, name variants."""

from __future__ import annotations

import pytest

from mafiascope.engine.parsing import parse_list, parse_target, parse_vote, strip_think

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
        ("I vote for Logan", "no VOTE line"),
        ("VOTE: Zed", "no living player matches"),
        ("VOTE: nobody", "explicit abstention"),
        ("", "empty reply"),
        ("VOTE: ", "empty target"),
    ],
)
def test_unresolvable_votes_say_why(text, note):
    res = parse_vote(text, NAMES)
    assert not res.valid and res.target is None and note in res.note


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
    assert parse_list("SUSPECTS: Gray, logan and Casey", "suspects", NAMES) == ["Gray", "Logan", "Casey"]
    assert parse_list("no list here", "suspects", NAMES) == []
