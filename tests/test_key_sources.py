"""A ``${VAR}`` key reaches a destination only if the config naming it was written by the operator, or a
policy (or the built-in provider table) allows that destination (issue 31, the origin of a config).

Without ``MAFIASCOPE_KEYS`` the command line used to resolve any variable for every config it read, so
``resume``, ``fork``, ``validate repeat`` and ``arena run --roster`` sent the operator's
``${OPENAI_API_KEY}`` to whatever base URL a log or roster someone else made names. Each test below plants
the key, points a crafted log or roster at a loopback listener that records what reaches it, and checks
that nothing arrives and that the error says exactly how to allow it."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest
import yaml

from mafiascope.backends.keys import PROVIDER_KEYS, KeyPolicy, default_problem, env_resolver
from mafiascope.backends.registry import clear_cache
from mafiascope.backends.specs import Source, file_source
from mafiascope.cli import main

from .servers import Listener, threaded_devserver
from .test_http_clients import listener  # noqa: F401  (fixture)
from .test_replay_forks import bot_cfg, play_bot
from .test_replay_resume import crash_copy

PLANTED = "sk-proj-PLANTED-0123456789abcdefXYZ"


@pytest.fixture()
def no_policy(monkeypatch):
    """The operator's shell: a provider key in the environment, no key policy."""
    monkeypatch.delenv("MAFIASCOPE_KEYS", raising=False)
    monkeypatch.delenv("MAFIASCOPE_CONFIGS_FROM_APP", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", PLANTED)
    clear_cache()
    yield
    clear_cache()


def _evil(listener: Listener, var: str = "OPENAI_API_KEY") -> dict:
    return {"type": "openai", "model": "m", "base_url": listener.base_url, "api_key": f"${{{var}}}", "max_retries": 0}


def _point_at(game_dir: Path, listener: Listener) -> None:
    """The game's recorded config now seats its backends at the listener (a log someone else made)."""
    lines = (game_dir / "game.jsonl").read_text().splitlines(keepends=True)
    setup = json.loads(lines[0])
    setup["config"]["backends"] = {"b": _evil(listener), "c": _evil(listener)}
    (game_dir / "game.jsonl").write_text(json.dumps(setup) + "\n" + "".join(lines[1:]))


def _refused(text: str, listener: Listener) -> None:
    """Nothing reached the listener, and the message says how the operator allows that destination."""
    assert listener.connections == 0 and PLANTED.encode() not in listener.received
    assert PLANTED not in text
    assert "(not a config you wrote)" in text, text
    assert f"MAFIASCOPE_KEYS=OPENAI_API_KEY MAFIASCOPE_KEY_OPENAI_API_KEY_BASE_URLS=http://127.0.0.1:{listener.port}" in text


# ----------------------------------------------------------------------------- the resolver


def test_the_resolver_sees_where_a_config_came_from(no_policy, monkeypatch):
    monkeypatch.setenv("LOCAL_KEY", PLANTED)
    # the operator's own config: any variable, anywhere (documented; set MAFIASCOPE_KEYS to restrict it)
    assert env_resolver("LOCAL_KEY", "http://127.0.0.1:8000/v1", Source.OPERATOR) == PLANTED
    # anything else: a provider's key only to its own origin, any other name nowhere
    assert env_resolver("OPENAI_API_KEY", "https://api.openai.com/v1", Source.LOG) == PLANTED
    for src in (Source.LOG, Source.ROSTER, Source.STUDY, Source.APP, Source.OTHER):
        assert default_problem("OPENAI_API_KEY", "http://127.0.0.1:9/v1", src)
        assert default_problem("OPENAI_API_KEY", "https://api.openai.com.evil.example/v1", src)
        assert default_problem("OPENAI_API_KEY", "http://api.openai.com/v1", src)  # not https
        assert default_problem("LOCAL_KEY", "http://127.0.0.1:8000/v1", src)
    # the table: every entry an https origin of the provider itself
    for name, urls in PROVIDER_KEYS.items():
        assert all(u.startswith("https://") for u in urls) and KeyPolicy(keys={name: urls})
    # an explicit policy decides for every source, the operator's included
    monkeypatch.setenv("MAFIASCOPE_KEYS", "LOCAL_KEY")
    monkeypatch.setenv("MAFIASCOPE_KEY_LOCAL_KEY_BASE_URLS", "http://127.0.0.1:8000")
    assert env_resolver("LOCAL_KEY", "http://127.0.0.1:8000/v1", Source.LOG) == PLANTED
    with pytest.raises(ValueError, match="not a key the operator allows"):
        env_resolver("OPENAI_API_KEY", "https://api.openai.com/v1", Source.OPERATOR)


def test_the_bus_token_goes_only_to_this_machines_hub(no_policy, monkeypatch):
    monkeypatch.setenv("MAFIASCOPE_BUS_TOKEN", PLANTED)
    monkeypatch.delenv("MAFIASCOPE_BUS_URL", raising=False)
    assert env_resolver("MAFIASCOPE_BUS_TOKEN", "http://127.0.0.1:8765", Source.LOG) == PLANTED
    assert default_problem("MAFIASCOPE_BUS_TOKEN", "http://evil.example:8765", Source.LOG)
    monkeypatch.setenv("MAFIASCOPE_BUS_URL", "http://hub.lab.example:9000")
    assert env_resolver("MAFIASCOPE_BUS_TOKEN", "http://hub.lab.example:9000", Source.LOG) == PLANTED


def test_configs_on_the_command_line_of_an_app_process_are_the_apps(monkeypatch):
    monkeypatch.delenv("MAFIASCOPE_CONFIGS_FROM_APP", raising=False)
    assert file_source() is Source.OPERATOR
    monkeypatch.setenv("MAFIASCOPE_CONFIGS_FROM_APP", "1")
    assert file_source() is Source.APP


# ----------------------------------------------------------------------------- every command that reads others' configs


@pytest.mark.parametrize("preflight", [[], ["--no-preflight"]])
def test_resume_of_a_crafted_log_sends_no_key(no_policy, listener, tmp_path, capsys, preflight):
    src = play_bot(tmp_path / "orig", gid="g")
    crash_copy(src, tmp_path / "logs" / "g", keep_snapshots=6)
    _point_at(tmp_path / "logs" / "g", listener)
    main(["resume", str(tmp_path / "logs"), "--min-idle", "0", "--json", *preflight])
    out = capsys.readouterr()
    _refused(out.err + out.out, listener)


def test_fork_of_a_crafted_log_sends_no_key(no_policy, listener, tmp_path, capsys):
    src = play_bot(tmp_path / "logs", gid="g")
    _point_at(src, listener)
    code = main(["fork", str(src), "--at", "start", "-n", "1", "--probes", "none"])
    err = capsys.readouterr().err
    assert code == 2
    _refused(err, listener)
    assert not list((tmp_path / "logs").glob("g-*")), "a branch was written"


def test_validate_repeat_on_a_crafted_log_sends_no_key(no_policy, listener, tmp_path, capsys):
    cfg = bot_cfg(probes={"enabled": True, "battery": "suspicion"})
    logs = tmp_path / "logs"
    play_bot(logs, gid="g", probes=cfg.probes.model_dump())
    _point_at(logs / "g", listener)
    code = main(["validate", "repeat", str(logs), "--states", "1", "--repeats", "2", "--results", str(tmp_path / "res")])
    out = capsys.readouterr()
    assert code != 0
    _refused(out.err + out.out, listener)


def test_arena_run_with_a_crafted_roster_sends_no_key(no_policy, listener, tmp_path, capsys):
    roster = tmp_path / "roster.yaml"
    roster.write_text(yaml.safe_dump({"name": "r", "models": {"evil": _evil(listener), "bot": "balanced"}}))
    for preflight in ([], ["--no-preflight"]):
        code = main(["arena", "run", "--roster", str(roster), "--games", "1", "--logs", str(tmp_path / "run"), *preflight])
        out = capsys.readouterr()
        assert code != 0
        _refused(out.err + out.out, listener)


def test_study_run_of_a_saved_study_spec_sends_no_key(no_policy, listener, tmp_path, capsys):
    """A study directory's saved spec (what the app writes, or anyone's) is not the operator's spec YAML."""
    d = tmp_path / "studies" / "s"
    d.mkdir(parents=True)
    spec = {"name": "s", "games_per_arm": 1, "backends": {"evil": _evil(listener), "bot": "balanced"},
            "arms": [{"name": "a", "lineup": {"seats": ["evil"] + ["bot"] * 6}, "rules": "classic", "probes": "none"}]}
    (d / "spec.yaml").write_text(yaml.safe_dump(spec))
    code = main(["study", "run", str(d), "--dir", str(d)])
    out = capsys.readouterr()
    assert code != 0
    _refused(out.err + out.out, listener)


# ----------------------------------------------------------------------------- one's own game stays resumable


@pytest.mark.slow
def test_resuming_ones_own_game_against_a_local_server_is_one_policy_away(monkeypatch, tmp_path, capsys):
    """The operator plays against a local server with their own key, the game dies, `resume` refuses (the log is
    not a config they wrote) and names the two variables that allow it; with them it finishes."""
    monkeypatch.delenv("MAFIASCOPE_KEYS", raising=False)
    monkeypatch.setenv("LOCAL_KEY", PLANTED)
    clear_cache()
    with threaded_devserver(require_key=PLANTED) as srv:
        cfg = tmp_path / "game.yaml"
        cfg.write_text("name: own\nseats:\n" + "".join(f"  - {{backend: {s}}}\n" for s in ["gpt"] + ["bot"] * 6)
                       + f'backends:\n  gpt: {{type: openai, base_url: "{srv.base_url}", model: bot-analyst, '
                         'api_key: "${LOCAL_KEY}", max_retries: 0, timeout: 5}\n  bot: {type: bot, preset: analyst}\n'
                         "probes: {enabled: false}\n")
        assert main(["run", "-c", str(cfg), "--logs", str(tmp_path / "orig"), "--seed", "3", "--game-id", "g"]) == 0
        crash_copy(tmp_path / "orig" / "g", tmp_path / "logs" / "g", keep_snapshots=6)
        capsys.readouterr()
        clear_cache()
        assert main(["resume", str(tmp_path / "logs"), "--min-idle", "0"]) == 2
        err = capsys.readouterr().err
        port = srv.base_url.split(":")[2].split("/")[0]
        hint = f"MAFIASCOPE_KEYS=LOCAL_KEY MAFIASCOPE_KEY_LOCAL_KEY_BASE_URLS=http://127.0.0.1:{port}"
        assert hint in err and PLANTED not in err
        for assignment in hint.split():
            name, value = assignment.split("=", 1)
            monkeypatch.setenv(name, value)
        clear_cache()
        assert main(["resume", str(tmp_path / "logs"), "--min-idle", "0"]) == 0
    assert (tmp_path / "logs" / "g" / "game.jsonl").read_text().rstrip().endswith("}")
    assert '"game_over"' in (tmp_path / "logs" / "g" / "game.jsonl").read_text()
    shutil.rmtree(tmp_path / "orig")


@pytest.mark.slow  # the page starts a fork process
def test_the_replay_page_forking_a_crafted_log_sends_no_key(no_policy, listener, tmp_path, monkeypatch):
    """The app's path: a log in a configured root names the operator's declared key for another base URL; the
    Replay page's Branch button starts the fork, whose process refuses to build the client."""
    pytest.importorskip("streamlit")
    from app import jobs

    from .test_app_replay import page

    monkeypatch.setenv("MAFIASCOPE_KEYS", "OPENAI_API_KEY")  # declared, for its provider only
    monkeypatch.setenv("MAFIASCOPE_KEY_OPENAI_API_KEY_BASE_URLS", "https://api.openai.com/v1")
    logs = tmp_path / "logs"
    _point_at(play_bot(logs, gid="parentgame", seed=4), listener)
    monkeypatch.setenv("MAFIASCOPE_LOGS", str(logs))
    monkeypatch.setenv("MAFIASCOPE_RUNS", str(tmp_path / "runs"))
    at = page().run()
    assert not at.exception, at.exception
    at.number_input(key="rp_n").set_value(1)
    at.selectbox(key="rp_probes").set_value("none")
    at.button(key="rp_go").click().run()
    assert not at.exception, at.exception
    started = jobs.running()
    deadline = time.time() + 90
    while time.time() < deadline and any(j.running for j in started):
        time.sleep(0.2)
    assert started and not any(j.running for j in started)
    log = "".join(Path(j.log_file).read_text(encoding="utf-8", errors="replace") for j in started)
    assert "$OPENAI_API_KEY may only be sent to https://api.openai.com:443" in log, log[-2000:]
    assert listener.connections == 0 and PLANTED.encode() not in listener.received
    leaks = [p for p in tmp_path.rglob("*") if p.is_file() and PLANTED.encode() in p.read_bytes()]
    assert not leaks, leaks
