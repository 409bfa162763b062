"""Library errors (what the app and library callers see, not only the CLI) are concise: one line per
problem naming the source, the field path or YAML line/column and the allowed values; a battery
reports every problem at once."""

from __future__ import annotations

import pytest

from mafiascope.config import ConfigError, load_game_config, parse_game_config
from mafiascope.probes.dsl import BatteryError, load_battery, parse_battery

PLACEHOLDERS = "['player', 'players', 'roles', 'prev_<id>', 'last_<id>']"


def _msg(exc_info: pytest.ExceptionInfo[Exception]) -> str:
    msg = str(exc_info.value)
    assert "<unicode string>" not in msg and "^" not in msg and "errors.pydantic.dev" not in msg
    return msg


@pytest.mark.parametrize("text, loader, error, expected", [
    ("name: x\nrules: [\n", load_game_config, ConfigError,
     "not valid YAML at line 3, column 1: expected the node content, but found '<stream end>' (while parsing a flow node)"),
    ("rules: [unclosed\n", load_game_config, ConfigError,  # where the unclosed construct started
     "not valid YAML at line 2, column 1: expected ',' or ']', but got '<stream end>' (while parsing a flow sequence at line 1, column 8)"),
    ("probes:\n  - id: a\n    question: x: y\n", load_battery, BatteryError,  # the battery keeps its error type
     "not valid YAML at line 3, column 16: mapping values are not allowed here"),
])  # fmt: skip
def test_bad_yaml_file_is_one_line_with_line_and_column(tmp_path, text, loader, error, expected):
    bad = tmp_path / "bad.yaml"
    bad.write_text(text)
    with pytest.raises(error) as ei:
        loader(bad)
    assert _msg(ei) == f"{bad}: {expected}"


def test_bad_fields_one_line_each_with_path_value_and_allowed_values():
    with pytest.raises(ConfigError) as ei:
        parse_game_config({"rules": {"tie_rule": "coin"}, "max_tokens": "lots", "backends": {"x": {"type": "bott"}, "y": {"type": "openai"}}},
                          "my.yaml")  # fmt: skip
    assert _msg(ei).splitlines() == [
        "my.yaml: invalid configuration",
        "  rules.tie_rule: Input should be 'no_elimination' or 'random' (got 'coin')",
        "  backends.x.type: unknown type 'bott'; allowed: ['bot', 'openai', 'bus', 'human']",
        "  backends.y.model: Field required",
        "  max_tokens: Input should be a valid integer, unable to parse string as an integer (got 'lots')",
    ]


def test_model_check_has_no_top_level_marker_and_union_alternatives_are_one_problem():
    seats = [{"backend": "bot", "personality": {"O": 500}}, {"backend": "bot", "personality": 5}] + [{}] * 5
    with pytest.raises(ConfigError) as ei:
        parse_game_config({"seats": seats}, "my.yaml")
    assert _msg(ei).splitlines() == [
        "my.yaml: invalid configuration",
        "  seats.0.personality.O: Big Five traits are 0-100",
        "  seats.1.personality: Input should be a valid dictionary or instance of Personality or a valid string (got 5)",
    ]
    with pytest.raises(ConfigError) as ei:
        parse_game_config({"seats": [{}] * 3}, "my.yaml")
    assert _msg(ei).splitlines()[1] == "  seats: 3 seats given but the rules need 7 ({'Mafia': 2, 'Doctor': 1, 'Villager': 4})"


def test_secret_values_are_never_echoed():
    with pytest.raises(ConfigError) as ei:
        parse_game_config({"backends": {"g": {"type": "openai", "model": "m", "api_key": 987654321}}, "seats": [{"backend": "g"}] * 7}, "k.yaml")
    assert "987654321" not in str(ei.value) and "api_key: Input should be a valid string" in str(ei.value)


def test_a_misplaced_reference_names_the_source_and_field():
    with pytest.raises(ConfigError) as ei:
        parse_game_config({"name": "${MS_NOT_SET_ERRTEST}"}, "env.yaml")
    assert str(ei.value) == ("env.yaml: name: ${...} is resolved only in credential fields (api_key, token, header values), "
                             "under the key policy (docs/security.md); write the value itself")


def test_bad_max_tokens_does_not_hide_an_unknown_placeholder():
    probes = [{"id": "a", "question": "hi {player}"}, {"id": "b", "question": "x {mood}", "max_tokens": 2},
              {"question": "{prev_zeta}"}, {"id": "c", "question": "{prev_a}", "max_tokens": 99999, "when": "sometimes"}]  # fmt: skip
    with pytest.raises(BatteryError) as ei:
        parse_battery({"name": "t", "probes": probes}, "t.yaml")
    assert _msg(ei).splitlines() == [
        "t.yaml: invalid probe battery",
        "  probe 'b': max_tokens: Input should be greater than or equal to 16 (got 2)",
        f"  probe 'b': question: unknown placeholder {{mood}}; allowed: {PLACEHOLDERS}",
        "  probes[2]: id: Field required",
        "  probes[2]: question: {prev_zeta} refers to unknown probe id 'zeta'; battery ids: ['a', 'b', 'c']",
        "  probe 'c': when: unknown when value(s) ['sometimes']; allowed: ['after_each_message', 'after_night_action', 'after_round', 'own_turn']",
        "  probe 'c': max_tokens: Input should be less than or equal to 32768 (got 99999)",
    ]


def test_field_error_and_disabled_reference_and_duplicate_reported_together():
    probes = [{"id": "a", "question": "x", "enabled": False}, {"id": "b", "question": "{last_a}", "shape": "nope"},
              {"id": "b", "question": "y"}]  # fmt: skip
    with pytest.raises(BatteryError) as ei:
        parse_battery(probes, "inline")
    lines = _msg(ei).splitlines()
    assert lines[0] == "inline: invalid probe battery"
    assert lines[1] == "  probes: duplicate probe id(s) ['b']"
    assert lines[2].startswith("  probe 'b': shape: unknown shape 'nope'; allowed: [")
    assert lines[3] == "  probe 'b': question: {last_a} refers to disabled probe 'a'"
    assert len(lines) == 4


def test_valid_batteries_still_load():
    b = parse_battery([{"id": "a", "question": "x", "enabled": False}, {"id": "b", "question": "{prev_b} {player}"}])
    assert [p.id for p in b.active] == ["b"]
