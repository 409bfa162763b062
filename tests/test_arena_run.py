"""Arena batches: balanced schedule, resumable ledger, local and Ray executors, CLI."""

from __future__ import annotations

import json
import random
import shutil

import pytest

from mafiascope.arena.ledger import Ledger
from mafiascope.arena.roster import parse_roster, load_roster
from mafiascope.arena.run import ArenaError, run_arena
from mafiascope.arena.schedule import balance, make_schedule
from mafiascope.cli import main

from .scripted import ScriptedBackend

LABELS = [f"m{i}" for i in range(7)]
ROSTER = parse_roster({"name": "t", "models": {m: {"type": "bot", "preset": "balanced"} for m in LABELS}})


def random_plan(seat, kind, rnd, alive):
    rng = random.Random(hash((seat, kind, rnd, tuple(alive))) & 0xFFFF)
    others = [a for a in alive if a != seat] or ["nobody"]
    if kind == "night_mafia":
        return f"ACTION: Kill {rng.choice(others)}"
    if kind in ("night_don", "night_sheriff"):
        return f"ACTION: Check {rng.choice(others)}"
    if kind == "day_vote":
        return f"VOTE: {rng.choice(others + ['Yes'])}"
    if kind == "best_move":
        return "SUSPECTS: " + ", ".join(others[:3])
    return f"Words.\nNOMINATE: {rng.choice(others)}"


def scripted_factory(cfg):
    return {name: ScriptedBackend(name, random_plan, model_label=name) for name in cfg.backends}


def test_schedule_is_balanced_in_games_and_roles():
    sched = make_schedule(LABELS, ["sport", "open_table", "imbalanced"], 40, seed=3)
    assert len(sched) == 120 and len({g.game_id for g in sched}) == 120
    bal = balance(sched)
    games = [bal[m]["games"] for m in LABELS]
    assert max(games) - min(games) <= 1 and sum(games) == 1200
    for role, total in (("Don", 120), ("Sheriff", 120), ("Mafia", 240)):
        counts = [bal[m].get(role, 0) for m in LABELS]
        assert sum(counts) == total and max(counts) - min(counts) <= 2, (role, counts)
    # every game is a legal ten-seat table, and the mix of opponents varies
    for g in sched:
        roles = sorted(s["role"] for s in g.seats)
        assert roles.count("Don") == 1 and roles.count("Sheriff") == 1 and roles.count("Mafia") == 2 and len(roles) == 10
    tables = {tuple(sorted(s["backend"] for s in g.seats)) for g in sched}
    assert len(tables) > 10
    assert make_schedule(LABELS, ["sport"], 5, seed=3)[0].seats == make_schedule(LABELS, ["sport"], 5, seed=3)[0].seats


def test_small_roster_takes_several_seats():
    sched = make_schedule(["a", "b", "c"], ["sport"], 6, seed=1)
    bal = balance(sched)
    assert all(19 <= bal[m]["games"] <= 21 for m in "abc")
    assert all(max(sum(1 for s in g.seats if s["backend"] == m) for m in "abc") <= 4 for g in sched)


@pytest.mark.slow
def test_local_run_and_resume(tmp_path):
    run = tmp_path / "run"
    s1 = run_arena(ROSTER, "sport,open,imbalanced", 2, run, parallel=3, quiet=True, backend_factory=scripted_factory, limit=4)
    assert s1["scheduled"] == 6 and s1["finished"] == 4 and s1["played_now"] == 4
    led = Ledger(run).status()
    assert len(led["pending_ids"]) == 2
    # an interrupted game left a partial directory: it is played again from the start
    partial = run / led["pending_ids"][0]
    partial.mkdir()
    (partial / "game.jsonl").write_text('{"kind": "setup"}\n')
    s2 = run_arena(ROSTER, "sport,open_table,imbalanced", 2, run, parallel=3, quiet=True, backend_factory=scripted_factory)
    assert s2["played_now"] == 2 and s2["finished"] == 6 and s2["failed"] == 0
    s3 = run_arena(ROSTER, "sport,open,imbalanced", 2, run, quiet=True, backend_factory=scripted_factory)
    assert s3["played_now"] == 0
    # every game's seats are the scheduled models, under human names
    setup = json.loads((run / "run-sport-0000" / "game.jsonl").read_text().splitlines()[0])
    assert {p["backend"] for p in setup["players"]} <= set(LABELS) and all(p["name"] not in LABELS for p in setup["players"])
    with pytest.raises(ArenaError, match="different arena plan"):
        run_arena(ROSTER, "sport", 2, run, quiet=True, backend_factory=scripted_factory)


@pytest.mark.slow
def test_cli_run_report_json_with_bot_roster(tmp_path, capsys):
    run = tmp_path / "bots"
    assert main(["arena", "run", "--rules", "imbalanced,open", "--games", "2", "--logs", str(run), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["finished"] == 4
    assert main(["arena", "report", str(run), "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["games"] == 4 and set(rep["rule_sets"]) == {"imbalanced", "open_table"}
    assert {r["model"] for r in rep["leaderboards"]["overall"]} <= set(load_roster().labels)
    assert main(["arena", "report", str(tmp_path / "missing")]) == 2


@pytest.mark.slow
def test_ray_executor(tmp_path):
    ray = pytest.importorskip("ray", reason="Ray is an optional extra: pip install 'mafiascope[ray]'")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, ignore_reinit_error=True)
    try:
        roster = load_roster()
        s = run_arena(roster, "imbalanced", 3, tmp_path / "ray", parallel=2, executor="ray", quiet=True)
        assert s["finished"] == 3 and s["failed"] == 0
    finally:
        ray.shutdown()
    shutil.rmtree(tmp_path / "ray", ignore_errors=True)
