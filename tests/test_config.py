"""Config errors name the file, the field path and the allowed values."""

from __future__ import annotations

from pathlib import Path

import pytest

from mafiascope.config import ConfigError, load_game_config, parse_game_config

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("name", ["classic", "classic_sheriff", "classic_ru"])
def test_shipped_configs_load(name):
    cfg = load_game_config(REPO / "configs" / f"{name}.yaml")
    assert cfg.rules.n_seats == len(cfg.seats) == 7


@pytest.mark.parametrize(
    "data,expected",
    [
        ({"language": "fr"}, ["language", "'fr'", "allowed: ['en', 'ru']"]),
        ({"rules": {"roles": {"Mafia": 2, "Wolf": 1}}}, ["rules", "Wolf", "allowed"]),
        ({"rules": {"max_rounds": 0}}, ["rules.max_rounds", "greater than or equal to 1"]),
        ({"seats": [{"backend": "bot"}] * 3}, ["seats", "3 seats given", "need 7"]),
        ({"seats": [{"backend": "nope"}] * 7}, ["seats.0.backend", "'nope'", "allowed: ['bot']"]),
        ({"backends": {"x": {"type": "bott"}}}, ["backends.x", "bot"]),
        ({"rules": {"tie_rule": "coin"}}, ["rules.tie_rule", "no_elimination", "random"]),
        ({"seats": [{"backend": "bot", "personality": "grumpy"}] * 7}, ["seats.0", "grumpy", "anxious"]),
        ({"probes": {"enabled": "maybe"}}, ["probes.enabled"]),
        ({"unknown_key": 1}, ["unknown_key", "Extra inputs are not permitted"]),
    ],
)
def test_config_errors_name_field_and_allowed_values(data, expected):
    with pytest.raises(ConfigError) as exc:
        parse_game_config(data, "my.yaml")
    msg = str(exc.value)
    assert msg.startswith("my.yaml")
    for part in expected:
        assert part in msg, msg


def test_yaml_syntax_error_names_file(tmp_path):
    p = tmp_path / "bad.yaml"
    p.write_text("rules: [unclosed\n")
    with pytest.raises(ConfigError, match="bad.yaml: not valid YAML"):
        load_game_config(p)


def test_env_references_outside_credential_fields_are_refused(monkeypatch):
    monkeypatch.setenv("MS_TEST_NAME", "from-env")
    with pytest.raises(ConfigError, match=r"name: \$\{\.\.\.\} is resolved only in credential fields") as ei:
        parse_game_config({"name": "${MS_TEST_NAME}"})
    assert "from-env" not in str(ei.value)


def test_secrets_are_not_expanded_or_snapshotted(monkeypatch):
    monkeypatch.setenv("MS_KEY", "sk-very-secret")
    cfg = parse_game_config({"backends": {"gpt": {"type": "openai", "model": "m", "api_key": "${MS_KEY}"}}, "seats": [{"backend": "gpt"}] * 7})
    assert "sk-very-secret" not in str(cfg.snapshot())


def test_literal_keys_are_redacted_and_env_references_kept():
    cfg = parse_game_config(
        {
            "backends": {
                "lit": {"type": "openai", "model": "m", "api_key": "sk-literal-123"},
                "ref": {"type": "openai", "model": "m", "api_key": "${SOME_KEY}"},
            },
            "seats": [{"backend": "lit"}] * 4 + [{"backend": "ref"}] * 3,
        }
    )
    snap = cfg.snapshot()
    assert snap["backends"]["lit"]["api_key"] == "***"
    assert snap["backends"]["ref"]["api_key"] == "${SOME_KEY}"  # a reference, so forks can resolve it again
