"""Arena fixed seating (every game seats the same ten backends, the engine deals roles) and the bundled demo run."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from mafiascope.arena.ledger import Ledger
from mafiascope.arena.roster import load_roster, load_seating, parse_roster
from mafiascope.arena.run import ArenaError, estimate, run_arena
from mafiascope.arena.schedule import balance, make_fixed_schedule
from mafiascope.cli import main
from mafiascope.config import ConfigError

ROOT = Path(__file__).resolve().parents[1]
DEMO_RUN = ROOT / "data" / "arena" / "demo-bots"
MODELS = {"a": "balanced", "b": "aggressive", "c": "cautious"}
SEATING = ["a", "a", "a", "a", "b", "b", "b", "c", "c", "c"]


def fixed_roster(seating: list[str] = SEATING):
    return parse_roster({"name": "fx", "models": MODELS, "seating": seating})


def setups(run: Path) -> dict[str, dict]:
    return {p.name: json.loads((p / "game.jsonl").read_text().splitlines()[0]) for p in sorted(run.iterdir()) if (p / "game.jsonl").is_file()}


def test_fixed_schedule_seats_the_mapping_in_every_game():
    sched = make_fixed_schedule(SEATING, ["sport", "imbalanced"], 3, seed=7, prefix="x")
    assert [g.game_id for g in sched][:3] == ["x-sport-0000", "x-imbalanced-0000", "x-sport-0001"] and len(sched) == 6
    assert all([s["backend"] for s in g.seats] == SEATING and all(s["role"] is None for s in g.seats) for g in sched)
    assert len({g.seed for g in sched}) == 6  # every game its own seed, so its own deal
    assert balance(sched) == {"a": {"games": 24}, "b": {"games": 18}, "c": {"games": 18}}
    with pytest.raises(ValueError, match="seating: .*10 seats, got 9"):
        make_fixed_schedule(SEATING[:9], ["sport"], 1)


def test_seating_errors_name_the_field(tmp_path):
    with pytest.raises(ConfigError, match=r"seating: the ten-seat rules need exactly 10 seats, got 9"):
        fixed_roster(SEATING[:9])
    with pytest.raises(ConfigError, match=r"seating\[3\]: unknown label 'zed'") as exc:
        fixed_roster(SEATING[:3] + ["zed"] + SEATING[4:])
    assert "roster labels: a, b, c" in str(exc.value)
    with pytest.raises(ConfigError, match="seating: expected a list"):
        parse_roster({"name": "fx", "models": MODELS, "seating": "a"})
    f = tmp_path / "seating.yaml"
    f.write_text("seats: [a]\n")
    with pytest.raises(ConfigError, match="seating: missing"):
        load_seating(f, parse_roster({"models": MODELS}))
    f.write_text(json.dumps({"seating": SEATING}))
    assert load_seating(f, parse_roster({"models": MODELS})).seating == SEATING


def test_estimate_covers_both_modes():
    models = {"gpt": {"type": "openai", "model": "gpt-4o-mini"}, **MODELS}
    balanced = estimate(parse_roster({"models": models}), ["sport"], 10)
    fixed = estimate(parse_roster({"models": models, "seating": ["gpt"] + SEATING[1:]}), ["sport"], 10)
    assert balanced["mode"] == "balanced" and balanced["paid_share"] == 0.25
    assert fixed["mode"] == "fixed" and fixed["paid_share"] == 0.1 and fixed["calls"] == balanced["calls"]
    assert fixed["paid_calls"] == fixed["calls"] // 10
    probed = estimate(parse_roster({"models": models}), ["sport"], 10, probes=True)
    assert probed["act_calls"] == balanced["calls"] and probed["probe_calls"] > 10 * balanced["calls"]
    assert probed["calls"] == probed["act_calls"] + probed["probe_calls"] and probed["prompt_tokens"] > balanced["prompt_tokens"]
    assert balanced["probe_calls"] == 0 and balanced["probes"] is False


@pytest.mark.slow
def test_fixed_run_seats_the_mapping_roles_vary_and_resumes(tmp_path):
    run = tmp_path / "fixed"
    s1 = run_arena(fixed_roster(), "sport,imbalanced", 3, run, parallel=2, quiet=True, limit=2)
    assert s1["scheduled"] == 6 and s1["finished"] == 2
    plan = Ledger(run).plan()
    assert plan["mode"] == "fixed" and plan["seating"] == SEATING
    s2 = run_arena(fixed_roster(), "sport,imbalanced", 3, run, parallel=2, quiet=True)
    assert s2["played_now"] == 4 and s2["finished"] == 6 and s2["failed"] == 0
    games = setups(run)
    assert len(games) == 6
    deals = set()
    for setup in games.values():
        assert Counter(p["backend"] for p in setup["players"]) == Counter(SEATING)
        deals.add(tuple(sorted((p["backend"], p["role"]) for p in setup["players"])))
    assert len(deals) > 1  # the engine deals the roles per game: a model holds different roles across games
    # a different seating is a different plan; the same one finds nothing left to play
    with pytest.raises(ArenaError, match="different arena plan"):
        run_arena(fixed_roster(list(reversed(SEATING))), "sport,imbalanced", 3, run, quiet=True)
    with pytest.raises(ArenaError, match="different arena plan"):
        run_arena(parse_roster({"name": "fx", "models": MODELS}), "sport,imbalanced", 3, run, quiet=True)
    assert run_arena(fixed_roster(), "sport,imbalanced", 3, run, quiet=True)["played_now"] == 0
    # leaderboards count every seat a model held, and the games it sat in
    from mafiascope.arena.scoring import load_records, report

    rep = report(load_records(run))
    assert {r["model"]: r["seats"] for r in rep["leaderboards"]["overall"]} == {"a": 24, "b": 18, "c": 18}
    assert {r["model"]: r["games"] for r in rep["leaderboards"]["overall"]} == {"a": 6, "b": 6, "c": 6}


@pytest.mark.slow
def test_balanced_ledger_without_mode_still_resumes(tmp_path):
    run = tmp_path / "old"
    roster = parse_roster({"name": "old", "models": MODELS})
    run_arena(roster, "imbalanced", 2, run, quiet=True, limit=1)
    lines = (run / "ledger.jsonl").read_text().splitlines()
    plan = json.loads(lines[0])
    assert plan["params"].pop("mode") == "balanced"  # a ledger written before fixed seating existed
    (run / "ledger.jsonl").write_text("\n".join([json.dumps(plan), *lines[1:]]) + "\n")
    assert run_arena(roster, "imbalanced", 2, run, quiet=True)["played_now"] == 1


@pytest.mark.slow
def test_cli_seating_file_and_roster_key(tmp_path, capsys):
    seating = tmp_path / "seating.yaml"
    seating.write_text("\n".join(f"- bot-{p}" for p in ["balanced"] * 4 + ["analyst"] * 3 + ["gullible"] * 3) + "\n")
    run = tmp_path / "cli"
    assert main(["arena", "run", "--seating", str(seating), "--rules", "imbalanced", "--games", "2", "--logs", str(run), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["finished"] == 2
    assert Ledger(run).plan()["mode"] == "fixed"
    assert all(Counter(p["backend"] for p in s["players"]) == {"bot-balanced": 4, "bot-analyst": 3, "bot-gullible": 3}
               for s in setups(run).values())  # fmt: skip
    assert main(["arena", "estimate", "--seating", str(seating), "--rules", "sport", "--games", "2", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["mode"] == "fixed"
    # a `seating:` list in the roster YAML does the same
    roster = tmp_path / "roster.yaml"
    roster.write_text("name: r\nmodels: {x: balanced, y: cautious}\nseating: [x, x, x, x, x, y, y, y, y, nobody]\n")
    assert main(["arena", "estimate", "--roster", str(roster), "--games", "1"]) == 2
    err = capsys.readouterr().err
    assert "seating[9]: unknown label 'nobody'" in err and str(roster) in err
    seating.write_text("- bot-balanced\n")
    assert main(["arena", "run", "--seating", str(seating), "--games", "1", "--logs", str(tmp_path / "no")]) == 2
    assert "seating: the ten-seat rules need exactly 10 seats, got 1" in capsys.readouterr().err
    assert not (tmp_path / "no").exists()


@pytest.mark.slow
def test_bundled_demo_run_matches_the_demo_command(tmp_path, monkeypatch, capsys):
    """data/arena/demo-bots is `mafiascope demo --arena-only --force`: complete, and regenerated identically."""
    from mafiascope.cli.commands import demo

    plan = Ledger(DEMO_RUN).plan()
    assert plan is not None, "data/arena/demo-bots is missing: run `mafiascope demo --arena-only --force`"
    assert plan["roster"] == load_roster().fingerprint() and plan["mode"] == "balanced" and not plan["probes"]
    assert (plan["rules"], plan["games"], plan["seed"]) == (demo.DEMO_ARENA["rules"], demo.DEMO_ARENA["games"], demo.DEMO_ARENA["seed"])
    status = Ledger(DEMO_RUN).status()
    assert status["finished"] == status["scheduled"] == len(plan["rules"]) * plan["games"]
    assert not list(DEMO_RUN.glob("*/state.jsonl")) and not list(DEMO_RUN.glob("*/introspection.jsonl"))
    # the first game of each rule set does not depend on the number of games: regenerate one per rule set
    monkeypatch.setitem(demo.DEMO_ARENA, "games", 1)
    out = tmp_path / "demo-bots"
    assert main(["demo", "--arena-only", "--arena-out", str(out), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["arena"]["finished"] == 3
    assert main(["demo", "--arena-only", "--arena-out", str(out)]) == 2  # exists: needs --force

    def strip(rec):
        if isinstance(rec, dict):
            return {k: strip(v) for k, v in rec.items() if k not in ("ts", "latency_ms", "seconds")}
        return [strip(v) for v in rec] if isinstance(rec, list) else rec

    for gdir in sorted(out.glob("*/game.jsonl")):
        fresh = [strip(json.loads(x)) for x in gdir.read_text().splitlines()]
        bundled = [strip(json.loads(x)) for x in (DEMO_RUN / gdir.parent.name / "game.jsonl").read_text().splitlines()]
        assert fresh == bundled, gdir.parent.name
