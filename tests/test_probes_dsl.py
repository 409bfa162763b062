"""Battery DSL: load-time validation errors name the probe and the placeholder; rendering."""

from __future__ import annotations

from pathlib import Path

import pytest

from mafiascope.probes.dsl import BatteryError, load_battery, parse_battery, shipped_battery_path
from mafiascope.probes.render import NA, check_template, render

REPO = Path(__file__).resolve().parents[1]
SHIPPED = sorted((REPO / "configs" / "probes").glob("*.yaml"))


def _err(probes) -> str:
    with pytest.raises(BatteryError) as ei:
        parse_battery({"name": "t", "probes": probes}, "t.yaml")
    return str(ei.value)


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
def test_shipped_batteries_load(path):
    b = load_battery(path)
    assert b.active
    for p in b.active:
        assert p.answer_shape == p.id  # every shipped probe is a standard one with a validated shape


def test_shipped_set_is_complete():
    names = {p.stem for p in SHIPPED}
    assert {"default_en", "default_ru", "chained_en", "chained_ru", "suspicion_en", "suspicion_ru"} <= names
    for lang in ("en", "ru"):
        ids = [p.id for p in load_battery(REPO / f"configs/probes/default_{lang}.yaml").active]
        assert sorted(ids) == sorted(["role_beliefs", "role_assessment", "suspicion_ranking", "planned_action", "social_map", "personality_profile"])
        assert len(load_battery(REPO / f"configs/probes/chained_{lang}.yaml").active) == 5
        assert [p.id for p in load_battery(REPO / f"configs/probes/suspicion_{lang}.yaml").active] == ["suspicion_ranking"]
    assert shipped_battery_path("suspicion", "ru").name == "suspicion_ru.yaml"


def test_unknown_placeholder_names_probe_and_placeholder():
    msg = _err([{"id": "alpha", "question": "Hello {player}, what about {mood}?"}])
    assert "t.yaml" in msg and "'alpha'" in msg and "{mood}" in msg


def test_unknown_chain_reference():
    msg = _err([{"id": "a", "question": "x"}, {"id": "b", "question": "{prev_zeta} and {last_a}"}])
    assert "'b'" in msg and "{prev_zeta}" in msg and "'zeta'" in msg
    msg = _err([{"id": "a", "question": "{last_nope}"}])
    assert "{last_nope}" in msg


@pytest.mark.parametrize(
    "question, needle",
    [
        ('{{"player": "..."}}', "doubled brace"),
        ("Name: {{player}}", "doubled braces around a placeholder"),
        ("Name: { player }", "spaces"),
        ("Name: {player!r}", "format spec"),
        ("Name: {player:>10}", "format spec"),
        ("Name: {player", "unclosed"),
        ('Answer: [{"player": "..."]', "unbalanced"),
    ],
)
def test_malformed_templates(question, needle):
    msg = _err([{"id": "p1", "question": question}])
    assert needle in msg and "'p1'" in msg


def test_literal_json_braces_need_no_doubling():
    b = parse_battery({"probes": [{"id": "q", "question": 'You are {player}. JSON: {"toward_me": [{"player": "<name>", "attitude": "trusts"}]}'}]})
    out = render(b.probes[0].question, {"player": "Alex"})
    assert out == 'You are Alex. JSON: {"toward_me": [{"player": "<name>", "attitude": "trusts"}]}'


@pytest.mark.parametrize("when", ["sometimes", ["after_round", "bogus"], [], ["own_turn", "after_round"], 3])
def test_bad_when(when):
    msg = _err([{"id": "w", "question": "hi", "when": when}])
    assert "'w'" in msg and "when" in msg


def test_when_forms_and_defaults():
    b = parse_battery({"probes": [{"id": "a", "question": "x"}, {"id": "b", "question": "y", "when": "own_turn"},
                                  {"id": "c", "question": "z", "when": "always"}, {"id": "d", "question": "z", "when": ["after_round"]}]})  # fmt: skip
    w = {p.id: p.when for p in b.probes}
    assert w["a"] == w["c"] == ["after_each_message", "after_night_action", "after_round"]
    assert w["b"] == ["own_turn"] and w["d"] == ["after_round"]


def test_other_field_errors():
    assert "duplicate" in _err([{"id": "a", "question": "x"}, {"id": "a", "question": "y"}])
    assert "max_tokens" in _err([{"id": "a", "question": "x", "max_tokens": 2}])
    assert "identifier" in _err([{"id": "a-b", "question": "x"}])
    assert "Extra inputs" in _err([{"id": "a", "question": "x", "qestion": "typo"}])
    assert "no probe is enabled" in _err([{"id": "a", "question": "x", "enabled": False}])
    assert "disabled probe" in _err([{"id": "a", "question": "x", "enabled": False}, {"id": "b", "question": "{prev_a}"}])
    assert "unknown shape" in _err([{"id": "a", "question": "x", "shape": "nope"}])


def test_render_na_and_chain_values():
    t = "{player} | {players} | {roles} | {prev_a} | {last_b}"
    assert check_template(t, ["a", "b"]) == []
    out = render(t, {"player": "A", "players": "A, B", "roles": "Mafia|Villager|Doctor|Unknown", "prev_a": None, "last_b": ""})
    assert out == f"A | A, B | Mafia|Villager|Doctor|Unknown | {NA} | {NA}"


def test_config_default_and_named_battery(tmp_path):
    from mafiascope.config import parse_game_config
    from mafiascope.probes.dsl import battery_for_config

    b, src = battery_for_config(parse_game_config({"language": "ru"}))
    assert b.name == "chained_ru" and src.endswith("chained_ru.yaml")
    b, _ = battery_for_config(parse_game_config({"probes": {"battery": "suspicion"}}))
    assert b.name == "suspicion_en"
    b, src = battery_for_config(parse_game_config({"probes": {"probes": [{"id": "x", "question": "hi {player}"}]}}))
    assert src == "inline" and b.probes[0].id == "x"
    with pytest.raises(BatteryError, match="nope.yaml"):
        battery_for_config(parse_game_config({"probes": {"battery": "nope.yaml"}}))
