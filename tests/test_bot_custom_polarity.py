"""Offline bots answer a custom probe in the direction its question points (trust or suspicion), and
mark the fields of a question that points nowhere as not meaningful (docs/bots.md, "Custom probes")."""

from __future__ import annotations

import random

import pytest

from mafiascope.backends.bot.polarity import SUSPECT, TRUST, direction, field_direction
from mafiascope.backends.bot.presets import get_preset
from mafiascope.backends.bot.probes import DIRECTION_KEY, answer, custom
from mafiascope.backends.bot.reader import Identity
from mafiascope.backends.bot.state import BotState
from mafiascope.probes.answer_schema import AnswerSchema, check, schema_suffix

PLAYERS = ["Alex", "Bailey", "Casey", "Dana", "Ellis", "Finley", "Gray"]


def _state(role: str = "Villager", partners: tuple[str, ...] = (), **ev: float) -> BotState:
    st = BotState(Identity(name="Alex", role=role, partners=partners), get_preset("balanced"))
    st.add_players(PLAYERS, alive=True)
    st.ev.update(ev)
    return st


def _ask(st: BotState, question: str, schema: dict) -> dict:
    s = AnswerSchema.parse(schema)
    out = custom(st, question + schema_suffix(s), random.Random(1))
    ok, _ = check(s, out, PLAYERS)
    assert ok, out  # every answer stays valid against the schema
    return out


@pytest.mark.parametrize("question,want", [
    ("Which player do you trust most?", TRUST), ("Who is least suspicious?", TRUST), ("Who is definitely town?", TRUST),
    ("Who would you protect tonight?", TRUST), ("Кому ты больше всего доверяешь?", TRUST), ("Кто наименее подозрителен?", TRUST),
    ("Who do you trust least?", SUSPECT), ("Who is most likely Mafia?", SUSPECT), ("Who do you not trust?", SUSPECT),
    ("Who do you distrust most?", SUSPECT), ("Кто больше всего похож на мафию?", SUSPECT), ("Кому ты доверяешь меньше всего?", SUSPECT),
    ("Who threatens your side most, and who helps them?", SUSPECT),
    ("Whom do you trust, and whom do you suspect?", "both"), ("Describe your mood in a sentence.", None),
])
def test_a_question_s_direction(question, want):
    assert direction(question) == want


def test_field_names_decide_where_the_question_points_both_ways_or_nowhere():
    both = "Whom do you trust, and whom do you suspect?"
    assert field_direction(both, "most_trusted") == TRUST and field_direction(both, "topSuspect") == SUSPECT
    assert field_direction(both, "pick") is None and field_direction("Name a player.", "ally") == TRUST
    assert field_direction("Who is most likely Mafia?", "allies") == SUSPECT  # a one-way question wins over names


def test_trust_is_answered_with_the_least_suspected_player():
    st = _state(Dana=2.0, Ellis=-2.0)  # Dana looks like Mafia, Ellis like town
    sus = _ask(st, "You are Alex. Who is most likely Mafia?", {"who": "player", "p": "probability"})
    trust = _ask(st, "You are Alex. Which player do you trust most?", {"who": "player", "p": "probability"})
    assert sus["who"] == "Dana" and trust["who"] == "Ellis"
    assert sus[DIRECTION_KEY] == {"who": SUSPECT, "p": SUSPECT} and trust[DIRECTION_KEY] == {"who": TRUST, "p": TRUST}
    pm = st.p_mafia()
    assert trust["p"] > 0.5 and abs(trust["p"] - (1 - pm["Ellis"])) < 0.25  # sure Ellis is on its side
    many = _ask(st, "Which players do you trust?", {"them": "players"})
    assert "Dana" not in many["them"] and many["them"][0] == "Ellis" and len(many["them"]) == len(PLAYERS) - 1 - st.n_mafia()


def test_a_mafia_bot_trusts_its_partner():
    st = _state(role="Mafia", partners=("Gray",), Dana=1.0)
    out = _ask(st, "Who do you trust most?", {"who": "player", "why": "text"})
    assert out["who"] == "Gray" and "trustworthy" in out["why"]
    assert _ask(st, "Who is the biggest threat to you?", {"who": "player"})["who"] not in ("Gray", "Alex")


def test_a_question_with_no_direction_is_marked_not_meaningful():
    st = _state(Dana=2.0)
    out = _ask(st, "Pick a player and a mood.", {"who": "player", "mood": {"enum": ["calm", "angry"]}})
    assert out[DIRECTION_KEY] == {"who": None} and out["who"] == "Dana"  # the suspect reading, marked
    mixed = _ask(st, "Whom do you trust, and whom do you suspect?", {"trusted": "player", "suspect": "player", "pick": "player"})
    assert mixed[DIRECTION_KEY] == {"trusted": TRUST, "suspect": SUSPECT, "pick": None}
    assert mixed["trusted"] != mixed["suspect"] == "Dana"


def test_the_reply_keeps_the_markers_through_the_bot_s_answer():
    st = _state(Dana=2.0, Ellis=-2.0)
    s = AnswerSchema.parse({"who": "player"})
    text, pid = answer(st, "Кому ты больше всего доверяешь?" + schema_suffix(s), random.Random(3))
    assert pid == "custom" and '"who": "Ellis"' in text and '"_direction": {"who": "trust"}' in text
