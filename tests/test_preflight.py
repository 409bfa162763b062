"""Preflight: one cheap call per distinct backend before anything is written; a dead port, a bad
key or a wrong model name stops the command with exit 2 and one line naming the backend."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from mafiascope.backends.preflight import PreflightError, preflight, run_preflight
from mafiascope.backends.registry import clear_cache
from mafiascope.cli import main
from mafiascope.config import parse_game_config

from .servers import dead_port, threaded_devserver

SECRET = "sk-preflight-SECRET-0123456789"


@pytest.fixture(autouse=True)
def _fresh_backends():
    clear_cache()
    yield
    clear_cache()


def config_text(base_url: str, model: str = "bot-analyst", api_key: str | None = None, extra_backends: str = "",
                seats: list[str] | None = None) -> str:  # fmt: skip
    key = f', api_key: "{api_key}"' if api_key else ""
    seats = seats or ["gpt"] + ["bot"] * 6
    return (
        "name: preflight\nseats:\n" + "".join(f"  - {{backend: {s}}}\n" for s in seats)
        + "backends:\n"
        + f'  gpt: {{type: openai, base_url: "{base_url}", model: {model}{key}, max_retries: 0, timeout: 2}}\n'
        + "  bot: {type: bot, preset: analyst}\n" + extra_backends
        + "probes: {enabled: false}\n"
    )


def write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "game.yaml"
    p.write_text(text)
    return p


def run_cli(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def one_error_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


# ----------------------------------------------------------------------------- the regression: a dead port


@pytest.mark.parametrize("command", [["run"], ["batch", "-n", "2"], ["validate", "ab", "--games", "1"]])
def test_dead_port_stops_before_any_file_is_written(tmp_path, capsys, command):
    port = dead_port()
    cfg = write(tmp_path, config_text(f"http://127.0.0.1:{port}/v1"))
    logs = tmp_path / "logs"
    code, out, err = run_cli(capsys, *command, "-c", str(cfg), "--logs", str(logs))
    line = one_error_line(err)
    assert code == 2 and out == ""
    assert "preflight" in line and "'gpt'" in line and f"127.0.0.1:{port}" in line and "bot-analyst" in line
    assert "connection" in line.lower()
    assert not logs.exists()


def test_no_preflight_flag_lets_a_dead_backend_through_and_the_game_is_then_invalid(tmp_path, capsys):
    cfg = write(tmp_path, config_text(f"http://127.0.0.1:{dead_port()}/v1", seats=["gpt"] * 3 + ["bot"] * 4))
    logs = tmp_path / "logs"
    code, out, err = run_cli(capsys, "run", "-c", str(cfg), "--logs", str(logs), "--seed", "3", "--no-preflight",
                             "--json", "--fault-budget", "0.2")  # fmt: skip
    res = json.loads(out)
    assert res["invalid"] is True and "moves fell back (> 20%)" in res["invalid_reason"]
    assert code == 1


# ----------------------------------------------------------------------------- real server answers


def test_bad_key_is_401_naming_the_backend_without_the_key(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("PF_KEY", "sk-wrong-key-000000000000")
    with threaded_devserver(require_key=SECRET) as srv:
        cfg = write(tmp_path, config_text(srv.base_url, api_key="${PF_KEY}"))
        code, out, err = run_cli(capsys, "run", "-c", str(cfg), "--logs", str(tmp_path / "logs"))
    line = one_error_line(err)
    assert code == 2 and "'gpt'" in line and "401" in line
    assert "sk-wrong-key" not in err and SECRET not in err
    assert not (tmp_path / "logs").exists()


def test_wrong_model_is_404_naming_the_model(tmp_path, capsys):
    with threaded_devserver() as srv:
        cfg = write(tmp_path, config_text(srv.base_url, model="no-such-model"))
        code, out, err = run_cli(capsys, "batch", "-n", "2", "-c", str(cfg), "--logs", str(tmp_path / "logs"))
    line = one_error_line(err)
    assert code == 2 and "'gpt'" in line and "no-such-model" in line and "404" in line
    assert not (tmp_path / "logs").exists()


def test_good_server_passes_and_the_game_runs(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("PF_KEY", SECRET)
    with threaded_devserver(require_key=SECRET) as srv:
        cfg = write(tmp_path, config_text(srv.base_url, api_key="${PF_KEY}"))
        code, out, err = run_cli(capsys, "run", "-c", str(cfg), "--logs", str(tmp_path / "logs"), "--seed", "1", "--json")
        assert srv.stats.model_lookups == 1
    res = json.loads(out)
    assert code == 0 and res["invalid"] is False and res["winner"] in ("Mafia", "Villagers", "Draw")


def test_one_call_per_distinct_backend_counted_on_the_server(tmp_path):
    with threaded_devserver() as srv:
        extra = (f'  gpt2: {{type: openai, base_url: "{srv.base_url}", model: bot-analyst, max_retries: 0, temperature: 0.3}}\n'
                 f'  other: {{type: openai, base_url: "{srv.base_url}", model: bot-cautious, max_retries: 0}}\n'
                 "  bot2: {type: bot, preset: cautious}\n")  # fmt: skip
        cfg = parse_game_config(yaml.safe_load(config_text(
            srv.base_url, extra_backends=extra, seats=["gpt", "gpt2", "other", "bot", "bot2", "gpt", "other"])))
        results = run_preflight(cfg)
        assert srv.stats.model_lookups == 2  # gpt and gpt2 share (base_url, model, key): one call
        assert srv.stats.requests == 0  # no chat completion was needed
    by = {tuple(r.names): r for r in results}
    assert set(by) == {("gpt", "gpt2"), ("other",), ("bot",), ("bot2",)}
    assert all(r.ok for r in results)


def test_servers_without_a_model_route_fall_back_to_a_one_token_completion(tmp_path):
    specs = {}
    with threaded_devserver(model_route=False) as srv:
        specs = {"good": {"type": "openai", "base_url": srv.base_url, "model": "echo"},
                 "bad": {"type": "openai", "base_url": srv.base_url, "model": "nope"}}
        with pytest.raises(PreflightError) as exc:
            run_preflight(specs)
        assert srv.stats.model_lookups == 2 and srv.stats.requests == 2
    msg = str(exc.value)
    assert "\n" not in msg and "'bad'" in msg and "nope" in msg and "'good'" not in msg


async def test_async_preflight_reports_every_backend_and_never_raises():
    port = dead_port()
    res = await preflight({"dead": {"type": "openai", "base_url": f"http://user:pw@127.0.0.1:{port}/v1", "model": "m"},
                           "me": {"type": "human"}, "b": {"type": "bot"}})  # fmt: skip
    by = {r.names[0]: r for r in res}
    assert by["me"].ok and by["b"].ok and not by["dead"].ok
    assert "pw" not in by["dead"].message and f"127.0.0.1:{port}" in by["dead"].message


def test_bus_preflight_checks_the_hub_answers(tmp_path):
    port = dead_port()
    with pytest.raises(PreflightError) as exc:
        run_preflight({"remote": {"type": "bus", "model": "qwen", "hub": f"http://127.0.0.1:{port}", "token": "t0k3n-abcdef"}})
    assert "'remote'" in str(exc.value) and "t0k3n" not in str(exc.value)


def test_arena_run_preflights_the_roster(tmp_path, capsys):
    port = dead_port()
    roster = tmp_path / "roster.yaml"
    lines = ["name: pf", "models:", f'  dead: {{type: openai, base_url: "http://127.0.0.1:{port}/v1", model: m1}}']
    lines += [f"  b{i}: {{type: bot, preset: analyst}}" for i in range(9)]
    roster.write_text("\n".join(lines) + "\n")
    run_dir = tmp_path / "arena"
    code, out, err = run_cli(capsys, "arena", "run", "--roster", str(roster), "--rules", "sport", "--games", "1",
                             "--logs", str(run_dir))  # fmt: skip
    line = one_error_line(err)
    assert code == 2 and "'dead'" in line and not run_dir.exists()


@pytest.mark.slow
def test_fork_replay_and_resume_preflight_the_recorded_backends(tmp_path, capsys):
    # the dead seat's probes all fail: a probe-loss budget of 1 (like --fault-budget 1) keeps the game valid
    probes = "probes: {enabled: true, loss_budget: 1}"
    cfg = write(tmp_path, config_text(f"http://127.0.0.1:{dead_port()}/v1").replace("probes: {enabled: false}", probes))
    logs = tmp_path / "logs"
    code, _, err = run_cli(capsys, "run", "-c", str(cfg), "--logs", str(logs), "--game-id", "g", "--seed", "1", "-q",
                           "--no-preflight", "--fault-budget", "1")  # fmt: skip
    assert code == 0, err
    for args in (["fork", "g", "--at", "1.1"], ["replay", "attribution", "g", "--utterances", "0.3", "-n", "1"],
                 ["replay", "bifurcate", "g", "--at", "0.3", "--samples", "2", "--select", "1"],
                 ["validate", "repeat", str(logs), "--states", "1", "--repeats", "2"]):
        code, out, err = run_cli(capsys, *args, *(["--logs", str(logs)] if args[0] != "validate" else []))
        line = one_error_line(err)
        assert code == 2 and "preflight failed" in line and "'gpt'" in line, args
    assert sorted(p.name for p in logs.iterdir()) == ["g"]  # no branch, experiment or validation record
    game = logs / "g" / "game.jsonl"
    game.write_text("".join(game.read_text().splitlines(keepends=True)[:-1]))  # drop game_over: unfinished
    before = game.read_text()
    code, out, err = run_cli(capsys, "resume", str(logs), "--min-idle", "0")
    assert code == 2 and "'gpt'" in one_error_line(err) and game.read_text() == before
