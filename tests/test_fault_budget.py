"""Fault budget: a game whose seats fell back on more than ``fault_budget`` of their moves is
recorded as invalid (game_over.invalid, invalid_reason); batch and arena exit 1 on invalid games;
analytics and the app leave invalid games out by default and say how many."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mafiascope.backends.base import Completion, CompletionRequest
from mafiascope.backends.bot import BotBackend
from mafiascope.backends.registry import clear_cache
from mafiascope.cli import main
from mafiascope.config import GameConfig, ConfigError, parse_game_config
from mafiascope.engine.faults import budget_verdict, move_faults
from mafiascope.play.game import play_game
from mafiascope.logs.io import read_jsonl

from .servers import threaded_devserver


@pytest.fixture(autouse=True)
def _fresh_backends():
    clear_cache()
    yield
    clear_cache()


def config_text(base_url: str, failing_seats: int, budget: float | None = None, probes: bool = False) -> str:
    seats = ["dev"] * failing_seats + ["bot"] * (7 - failing_seats)
    return (
        "name: budget\nseats:\n" + "".join(f"  - {{backend: {s}}}\n" for s in seats)
        + "backends:\n"
        + f'  dev: {{type: openai, base_url: "{base_url}", model: bot-analyst, max_retries: 0, timeout: 2}}\n'
        + "  bot: {type: bot, preset: analyst}\n"
        + f"probes: {{enabled: {str(probes).lower()}}}\n"
        + (f"fault_budget: {budget}\n" if budget is not None else "")
    )


def moves_of(game_dir: Path) -> tuple[int, int, dict[str, Any]]:
    rows = read_jsonl(game_dir / "game.jsonl")
    utts = [r for r in rows if "player" in r and "response" in r]
    return len(utts), sum(1 for r in utts if r.get("fault")), rows[-1]


# ----------------------------------------------------------------------------- config


def test_fault_budget_is_validated():
    assert GameConfig().fault_budget == 0.2
    with pytest.raises(ConfigError, match="fault_budget"):
        parse_game_config({"fault_budget": 1.5}, "x.yaml")


# ----------------------------------------------------------------------------- a real game against a failing server


@pytest.mark.parametrize("budget, invalid", [(0.05, True), (0.95, False)])
def test_a_game_with_failing_seats_is_invalid_iff_its_share_exceeds_the_budget(tmp_path, capsys, budget, invalid):
    with threaded_devserver(fault_every_request="500") as srv:
        cfg = tmp_path / "g.yaml"
        cfg.write_text(config_text(srv.base_url, failing_seats=2, budget=budget))
        code = main(["run", "-c", str(cfg), "--logs", str(tmp_path / "logs"), "--seed", "5", "--json"])
    out = json.loads(capsys.readouterr().out)
    n, k, over = moves_of(Path(out["path"]))
    assert over["kind"] == "game_over" and k > 0
    assert over["moves"] == n and over["moves_fell_back"] == k
    assert bool(over.get("invalid")) is invalid is out["invalid"]
    assert code == (1 if invalid else 0)
    if invalid:
        pct = f"{budget * 100:g}%"
        assert over["invalid_reason"].startswith(f"{k} of {n} moves fell back (> {pct}): ")
        assert "HTTP 500" in over["invalid_reason"]


def test_cli_override_beats_the_config(tmp_path, capsys):
    with threaded_devserver(fault_every_request="500") as srv:
        cfg = tmp_path / "g.yaml"
        cfg.write_text(config_text(srv.base_url, failing_seats=2, budget=0.95))
        code = main(["run", "-c", str(cfg), "--logs", str(tmp_path / "logs"), "--seed", "5", "--json", "--fault-budget", "0"])
    assert code == 1 and json.loads(capsys.readouterr().out)["invalid"] is True
    assert main(["run", "--fault-budget", "2", "--logs", str(tmp_path / "l2")]) == 2
    assert "--fault-budget" in capsys.readouterr().err


@pytest.mark.slow
def test_batch_reports_invalid_games_and_exits_1_and_analytics_leaves_them_out(tmp_path, capsys):
    logs = tmp_path / "logs"
    with threaded_devserver(fault_every_request="500") as srv:
        bad = tmp_path / "bad.yaml"
        bad.write_text(config_text(srv.base_url, failing_seats=3))  # unprobed: left out as invalid before the probe filter
        code = main(["batch", "-n", "2", "-c", str(bad), "--logs", str(logs), "--id-prefix", "bad", "--json"])
        summary = json.loads(capsys.readouterr().out)
    assert code == 1 and summary["invalid"] == ["bad-0000", "bad-0001"]
    good = tmp_path / "good.yaml"
    good.write_text(config_text("http://127.0.0.1:1/v1", failing_seats=0, probes=True))
    assert main(["batch", "-n", "1", "-c", str(good), "--logs", str(logs), "--id-prefix", "good", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["invalid"] == []
    assert main(["batch", "-n", "1", "-c", str(good), "--logs", str(tmp_path / "x"), "--id-prefix", "t", "--no-probes"]) == 0
    assert "invalid: 0" in capsys.readouterr().out

    from mafiascope.analytics.corpus import load_corpus

    c = load_corpus(logs, cache_dir=tmp_path / "cache")
    assert c.game_ids == ["good-0000"] and c.selection["excluded"]["invalid"] == 2
    assert load_corpus(logs, cache_dir=tmp_path / "cache", include_invalid=True, probed_only=False).m == 3
    assert main(["analyze", str(logs), "--boot", "0", "--cache-dir", str(tmp_path / "cache"), "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["audit"]["selection"]["excluded"]["invalid"] == 2 and rep["audit"]["selection"]["n_selected"] == 1
    assert main(["analyze", str(logs), "--boot", "0", "--cache-dir", str(tmp_path / "cache"), "--include-invalid", "--json"]) == 0
    sel = json.loads(capsys.readouterr().out)["audit"]["selection"]
    # now judged by the next filter: without probe answers they count as transcript-only games (outcomes, votes)
    assert sel["excluded"].get("invalid", 0) == 0 and sel["excluded"].get("no_probes", 0) == 0
    assert sel["n_selected"] == 3


# ----------------------------------------------------------------------------- properties


@settings(max_examples=400, deadline=None)
@given(st.integers(0, 500), st.data(), st.floats(0, 1, allow_nan=False))
def test_verdict_is_invalid_iff_share_exceeds_budget(moves, data, budget):
    fell_back = data.draw(st.integers(0, moves))
    reason = budget_verdict(moves, fell_back, budget, ["cause"])
    assert (reason is not None) == (moves > 0 and fell_back / moves > budget)
    if reason is not None:
        assert reason.startswith(f"{fell_back} of {moves} moves fell back (> ")


class FlakyBot:
    """A real offline bot whose n-th acting call fails when ``pattern[n]`` is set (fault injection)."""

    type = "bot"

    def __init__(self, name: str, pattern: list[bool]) -> None:
        self.inner = BotBackend(name, preset="analyst")
        self.name, self.model_label, self.pattern, self.n = name, "flaky", pattern, 0

    async def complete(self, request: CompletionRequest) -> Completion:
        i, self.n = self.n, self.n + 1
        if self.pattern[i % len(self.pattern)]:
            return Completion(ok=False, error=f"injected failure {i}", attempts=1)
        return await self.inner.complete(request)

    def describe(self) -> dict[str, Any]:
        return {"type": "bot", "model": "flaky"}

    async def aclose(self) -> None:
        pass


TRIED: list[int] = []


@pytest.mark.slow
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(pattern=st.lists(st.booleans(), min_size=1, max_size=40), budget=st.sampled_from([0.0, 0.1, 0.2, 0.5, 1.0]),
       seed=st.integers(0, 10_000))
async def test_random_fault_patterns_in_real_games(tmp_path_factory, pattern, budget, seed):
    TRIED.append(1)
    cfg = GameConfig(fault_budget=budget, probes={"enabled": False}, snapshots=False)
    logs = tmp_path_factory.mktemp("g")
    res = await play_game(cfg, logs_dir=logs, seed=seed, backends={"bot": FlakyBot("bot", pattern)})
    n, k, over = moves_of(Path(res.path))
    assert move_faults(read_jsonl(Path(res.path) / "game.jsonl")) == (n, k)
    assert bool(over.get("invalid")) == (k / n > budget) == res.invalid
    if len(TRIED) % 10 == 0:
        print(f"hypothesis: {len(TRIED)} fault patterns tried (real games)")
