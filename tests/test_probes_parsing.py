"""Answer parsing: fences, prose, trailing commas, single quotes, <think>, truncation, shapes, labels."""

from __future__ import annotations

import json

import pytest

from mafiascope.analytics import answers
from mafiascope.probes import parsing
from mafiascope.probes.parsing import extract_json, parse_answer
from mafiascope.probes.shapes import normalise, role_label, seat_name, validate

RA = [
    {"player": "Alex", "guessed_role": "Mafia", "confidence": 80, "reason": "He pushed [hard] on {Bailey}."},
    {"player": "Bailey", "guessed_role": "Villager", "confidence": 60, "reason": "Quiet, \"consistent\"."},
    {"player": "Casey", "guessed_role": "Unknown", "confidence": 10, "reason": "No info."},
]
SM = {"toward_me": [{"player": "Alex", "attitude": "suspects", "confidence": 70, "reason": "voted me"},
                    {"player": "Bailey", "attitude": "trusts", "confidence": 55, "reason": "defended me"}]}  # fmt: skip


def test_analytics_reexports_the_one_extractor():
    assert answers.extract_json is parsing.extract_json


@pytest.mark.parametrize(
    "text, repaired",
    [
        (json.dumps(RA), False),
        ("```json\n" + json.dumps(RA, indent=2) + "\n```", False),
        ("Here is my honest answer:\n" + json.dumps(RA), True),
        ("Sure [as asked]. " + json.dumps(RA) + " Hope that helps!", True),
        (json.dumps(RA)[:-1] + ",]", True),  # trailing comma
        (json.dumps(RA).replace('"', "'").replace("\\'", '"'), True),  # single quotes
        ("<think>Alex is [probably] mafia {maybe}</think>\n" + json.dumps(RA), False),
    ],
)
def test_tolerant_extraction(text, repaired):
    pa = parse_answer(text)
    assert pa.ok and pa.value == RA and pa.repaired == repaired
    assert validate("role_assessment", pa.value) is True


def test_single_quotes_keep_apostrophes_and_python_literals():
    pa = parse_answer("{'action': 'vote', 'target': 'Alex', 'reasoning': \"he's lying\", 'sure': True, 'x': None,}")
    assert pa.ok and pa.repaired
    assert pa.value == {"action": "vote", "target": "Alex", "reasoning": "he's lying", "sure": True, "x": None}


def test_think_is_stripped_and_flagged():
    pa = parse_answer("<think>long hidden reasoning</think>" + json.dumps(SM))
    assert pa.value == SM and pa.think_stripped and "think" not in pa.text
    assert parse_answer("<think>never closed, budget spent").ok is False


def test_unparsable_and_transport_errors():
    assert parse_answer("I cannot answer this question.").ok is False
    assert parse_answer("ERROR: connection reset [104]").ok is False
    assert parse_answer(None).ok is False
    assert extract_json("ERROR: {\"a\": 1}") == (None, False)


@pytest.mark.parametrize("value", [RA, SM, {"action": "kill", "target": "Casey", "reasoning": "threat"}])
def test_truncation_at_every_position_keeps_a_complete_prefix(value):
    full = json.dumps(value, ensure_ascii=False, indent=1)
    for i in range(len(full)):
        got = parse_answer(full[:i])
        if not got.ok:
            continue
        v = got.value
        if isinstance(value, list):
            assert isinstance(v, list) and v == value[: len(v)], (i, full[:i])
        else:  # objects: every kept key is complete and equal; lists inside keep complete elements
            assert isinstance(v, dict), (i, full[:i])
            for k, x in v.items():
                if isinstance(x, list):
                    assert x == value[k][: len(x)], (i, full[:i])
                else:
                    assert x == value[k], (i, full[:i])
    assert parse_answer(full).value == value


def test_truncated_russian_answer():
    ru = [{"player": "Алекс", "guessed_role": "Мафия", "confidence": 90, "reason": "Врёт."},
          {"player": "Бейли", "guessed_role": "Мирный житель", "confidence": 60, "reason": "Спокойна."}]  # fmt: skip
    text = json.dumps(ru, ensure_ascii=False)
    cut = text[: text.index("Бейли") + 3]
    pa = parse_answer(cut)
    assert pa.ok and pa.repaired and pa.value == ru[:1]


def test_shapes():
    assert validate("role_assessment", RA) is True
    assert validate("role_assessment", {"Alex": "Mafia"}) is False
    assert validate("role_assessment", [{"player": "A", "guessed_role": "Mafia", "confidence": "high"}]) is False
    assert validate("role_assessment", [{"player": "A", "guessed_role": "Mafia", "confidence": "85%"}]) is True
    assert validate("social_map", SM) is True and validate("social_map", SM["toward_me"]) is False
    assert validate("suspicion_ranking", [{"player": "A", "score": 7}]) is True
    assert validate("suspicion_ranking", {"ranking": [{"player": "A", "score": 7}]}) is False
    assert validate("personality_profile", [{"player": "A", "O": 1, "C": 2, "E": 3, "A": 4, "N": 5}]) is True
    assert validate("planned_action", {"action": "vote", "target": None, "reasoning": "x"}) is True
    assert validate("role_beliefs", {"Alex": {"role": "Mafia", "confidence": 70}}) is True
    assert validate("free_form", {"anything": 1}) is None
    assert validate("role_assessment", None) is False


@pytest.mark.parametrize(
    "label, expected",
    [("Mafia", "Mafia"), ("possible mafia", "Mafia"), ("Mafia|Villager", "Mafia"), ("Villager or Doctor", "Villager"),
     ("Мафия", "Mafia"), ("мирный житель", "Villager"), ("Доктор", "Doctor"), ("шериф", "Sheriff"), ("Дон", "Mafia"),
     ("Неизвестно", "Unknown"), ("unknown", "Unknown"), ("banana", None), (7, None)],
)  # fmt: skip
def test_role_labels_normalised_with_labels_module(label, expected):
    assert role_label(label) == expected


def test_names_matched_case_insensitively():
    seats = ["Alex", "Bailey", "Casey"]
    assert seat_name("alex", seats) == "Alex" and seat_name(" BAILEY ", seats) == "Bailey"
    assert seat_name("Кейси", seats) == "Casey" and seat_name("Zed", seats) is None and seat_name(None, seats) is None
    norm = normalise("role_assessment", [{"player": "alex", "guessed_role": "мафия", "confidence": "70"}], seats)
    assert norm == [{"player": "Alex", "role": "Mafia", "confidence": 70.0}]
    norm = normalise("social_map", {"toward_me": [{"player": "casey", "attitude": " Trusts", "confidence": 5}]}, seats)
    assert norm == [{"player": "Casey", "attitude": "trusts", "confidence": 5.0}]


def test_an_integer_too_large_for_a_float_is_an_invalid_answer_not_a_crash():
    from mafiascope.logs.answer_norm import normalise
    from mafiascope.probes.shapes import validate

    huge = [{"player": "Alex", "score": 10**400}]  # a model (or a crafted log) may write any integer
    assert validate("suspicion_ranking", huge) is False
    assert normalise("suspicion_ranking", huge, ["Alex", "Blake"]) == [{"player": "Alex", "score": None}]
