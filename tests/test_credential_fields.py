"""Issue 31 item 1: ``${VAR}`` becomes a value only in credential fields (api_key, token, header values),
only through the one resolver that checks the destination, and never in any other string: a model name,
a base_url, a game or study name typed by anyone. Processes the app starts get an allow-listed
environment, not the server's."""

from __future__ import annotations

import json

import pytest
import yaml

from mafiascope.cli import main
from mafiascope.config import ConfigError, parse_game_config
from mafiascope.study.spec import parse_study_spec

from .servers import Listener

PLANTED = "planted-Zq9vX2-server-value-7f3e"
SEVEN = [{"backend": "g"}] * 7


@pytest.fixture()
def planted(monkeypatch):
    monkeypatch.setenv("PLANTED_VAR", PLANTED)
    monkeypatch.setenv("OPENAI_API_KEY", PLANTED)
    return PLANTED


@pytest.fixture()
def listener():
    lst = Listener()
    yield lst
    lst.close()


@pytest.mark.parametrize("field, entry", [
    ("backends.g.model", {"type": "openai", "model": "x-${PLANTED_VAR}"}),
    ("backends.g.base_url", {"type": "openai", "model": "m", "base_url": "http://127.0.0.1:9/k/${OPENAI_API_KEY}/v1"}),
    ("backends.g.label", {"type": "openai", "model": "m", "label": "${PLANTED_VAR}"}),
    ("backends.g.extra_body.user", {"type": "openai", "model": "m", "extra_body": {"user": "${PLANTED_VAR}"}}),
    ("backends.g.hub", {"type": "bus", "model": "m", "hub": "http://${PLANTED_VAR}.example"}),
])  # fmt: skip
def test_a_reference_outside_a_credential_field_is_refused_never_expanded(planted, field, entry):
    """Seen: every config string was expanded, so a Model typed as ${OPENAI_API_KEY} came back in the preflight's
    error and a base_url carried the key in its path."""
    with pytest.raises(ConfigError) as ei:
        parse_game_config({"backends": {"g": entry}, "seats": SEVEN}, "lineup.yaml")
    msg = str(ei.value)
    assert msg.startswith(f"lineup.yaml: {field}: ${{...}} is resolved only in credential fields") and planted not in msg


def test_top_level_strings_and_study_specs_are_not_expanded(planted):
    with pytest.raises(ConfigError) as ei:
        parse_game_config({"name": "${PLANTED_VAR}"}, "g.yaml")
    assert str(ei.value).startswith("g.yaml: name: ${...}") and planted not in str(ei.value)
    spec = {"name": "s", "backends": {"a": {"type": "openai", "model": "${OPENAI_API_KEY}", "api_key": "${OPENAI_API_KEY}"}},
            "arms": [{"name": "x", "lineup": "a", "rules": "classic", "probes": "none"}]}  # fmt: skip
    with pytest.raises(ConfigError) as ei:
        parse_study_spec(spec, "study.yaml")
    assert "backends.a.model: ${...}" in str(ei.value) and planted not in str(ei.value)
    # the credential field itself stays a reference: it is resolved only when a client is built for its URL
    ok = parse_game_config({"backends": {"g": {"type": "openai", "model": "m", "api_key": "${OPENAI_API_KEY}",
                                                "headers": {"X-Api-Key": "${PLANTED_VAR}"}}}, "seats": SEVEN})  # fmt: skip
    assert planted not in json.dumps(ok.model_dump(mode="json"))


def test_a_key_inside_base_url_is_refused_before_anything_is_sent(planted, listener, tmp_path, monkeypatch, capsys):
    """Seen: on the command line, under a key policy, base_url: http://host/k/${OPENAI_API_KEY}/v1 passed the
    policy and the preflight sent the key in the URL path to that host."""
    monkeypatch.setenv("MAFIASCOPE_KEYS", "OPENAI_API_KEY")
    monkeypatch.setenv("MAFIASCOPE_KEY_OPENAI_API_KEY_BASE_URLS", "https://api.openai.com/v1")
    cfg = tmp_path / "c.yaml"
    cfg.write_text(yaml.safe_dump({"backends": {"g": {"type": "openai", "model": "m",
                                                      "base_url": f"http://127.0.0.1:{listener.port}/k/${{OPENAI_API_KEY}}/v1"}},
                                   "seats": SEVEN}))  # fmt: skip
    assert main(["run", "-c", str(cfg), "--logs", str(tmp_path / "logs"), "--no-probes"]) == 2
    err = capsys.readouterr().err
    assert "backends.g.base_url: ${...} is resolved only in credential fields" in err and planted not in err
    assert listener.connections == 0 and planted.encode() not in listener.received
    assert not (tmp_path / "logs").exists() or not any((tmp_path / "logs").rglob("*.jsonl"))


def test_a_tab_in_base_url_is_one_clear_line(tmp_path, capsys):
    """Seen: a TAB pasted into base_url gave a traceback."""
    cfg = tmp_path / "c.yaml"
    cfg.write_text(yaml.safe_dump({"backends": {"g": {"type": "openai", "model": "m", "base_url": "http://127.0.0.1:9/\tv1"}},
                                   "seats": SEVEN}))  # fmt: skip
    assert main(["run", "-c", str(cfg), "--logs", str(tmp_path / "logs"), "--no-probes"]) == 2
    err = capsys.readouterr().err.strip()
    assert "Traceback" not in err and "backends.g.base_url: contains a TAB at character 20; remove it" in err


def test_processes_the_app_starts_get_an_allow_listed_environment(monkeypatch):
    """Seen: every game, batch, study and fork process the app started inherited the server's whole environment."""
    pytest.importorskip("streamlit")
    from app import keys

    monkeypatch.setenv("DEPLOY_SECRET", PLANTED)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", PLANTED)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-allowed-value-123456")
    monkeypatch.setenv("MAFIASCOPE_KEYS", "OPENAI_API_KEY")
    monkeypatch.setenv("MAFIASCOPE_KEY_OPENAI_API_KEY_BASE_URLS", "https://api.openai.com/v1")
    monkeypatch.setenv("LC_ALL", "C.UTF-8")
    env = keys.child_env({"MAFIASCOPE_LOGS_DIR": "/x"})
    assert PLANTED not in json.dumps(env)
    assert env["OPENAI_API_KEY"] == "sk-allowed-value-123456" and env["MAFIASCOPE_KEYS"] == "OPENAI_API_KEY"
    assert env["PATH"] and env["LC_ALL"] == "C.UTF-8" and env["MAFIASCOPE_LOGS_DIR"] == "/x"
    assert env["MAFIASCOPE_CONFIGS_FROM_APP"] == "1"  # the configs on its command line are the app's, not the operator's
    assert env["MAFIASCOPE_PUBLIC"] in ("0", "1")  # the app's own decision: games refuse server-only hosts in public mode
    assert set(env) <= set(keys.CHILD_ENV_NAMES) | {"OPENAI_API_KEY", "MAFIASCOPE_KEYS", "MAFIASCOPE_KEY_OPENAI_API_KEY_BASE_URLS",
                                                    "MAFIASCOPE_CONFIGS_FROM_APP", "MAFIASCOPE_PUBLIC"} | {
        k for k in env if k.startswith("LC_")}
