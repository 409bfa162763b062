"""Forks: snapshots restore everything, interventions, seeds, inherited history, bad input."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest

from mafiascope.engine.snapshots import iter_snapshots
from mafiascope.cli import main
from mafiascope.config import parse_game_config
from mafiascope.play.game import play_game
from mafiascope.logs.io import read_jsonl
from mafiascope.replay.forks import plan_fork, run_fork_batch
from mafiascope.replay.source import ParentGame, ReplayError, parse_key

from .scripted import ScriptedBackend, table_plan

VOLATILE = ("ts", "game_id", "inherited", "latency_ms", "backends", "cost")


def bot_cfg(**over):
    data = {
        "rules": {"roles": {"Mafia": 2, "Doctor": 1, "Villager": 4}, "intro_round": True, "max_rounds": 6},
        "backends": {"b": {"type": "bot", "preset": "balanced"}, "c": {"type": "bot", "preset": "cautious"}},
        "seats": [{"backend": "b"}, {"backend": "c"}] * 3 + [{"backend": "b"}],
        "probes": {"enabled": False},
        **over,
    }
    return parse_game_config(data)


def play_bot(logs: Path, gid: str = "p", seed: int = 5, **over) -> Path:
    asyncio.run(play_game(bot_cfg(**over), logs_dir=logs, seed=seed, game_id=gid))
    return logs / gid


def strip(records):
    return [{k: v for k, v in r.items() if k not in VOLATILE} for r in records if r.get("kind") != "setup"]


@pytest.fixture(scope="module")
def parent(tmp_path_factory) -> Path:
    return play_bot(tmp_path_factory.mktemp("parent"))


def run(plan):
    return asyncio.run(run_fork_batch(plan))


# ----------------------------------------------------------------------------- restore


@pytest.mark.slow
def test_every_snapshot_restores_and_keep_seed_reproduces_the_parent(parent, tmp_path):
    """Each state.jsonl record holds everything needed: a keep-seed bot fork replays the parent exactly."""
    p = ParentGame.load(parent)
    par = read_jsonl(parent / "game.jsonl")
    keys = p.keys()
    assert len(keys) > 10
    for key in [keys[0], keys[len(keys) // 3], keys[len(keys) // 2], keys[-1]]:
        rec = run(plan_fork(p, key, 1, keep_seed=True, logs=tmp_path))
        b = rec["branches"][0]
        assert b["error"] is None
        child = read_jsonl(Path(b["path"]) / "game.jsonl")
        assert strip(child) == strip(par), f"fork at {key} diverged"


def test_last_step_fork_reproduces_ending_via_cli(parent, tmp_path, capsys):
    p = ParentGame.load(parent)
    last = p.keys()[-1]
    rc = main(["fork", str(parent), "--at", f"{last[0]}.{last[1]}", "-n", "2", "--keep-seed", "--logs", str(tmp_path), "--json"])
    assert rc == 0
    out = json.loads(capsys.readouterr().out)
    over = read_jsonl(parent / "game.jsonl")[-1]
    assert all(b["winner"] == over["winner"] and b["rounds"] == over["round"] for b in out["branches"])
    assert out["summary"]["winner"][over["winner"]]["k"] == 2


@pytest.mark.slow
def test_branch_setup_inherited_history_and_refork(parent, tmp_path):
    p = ParentGame.load(parent)
    key = p.keys()[12]
    rec = run(plan_fork(p, key, 3, logs=tmp_path, batch_seed=7))
    assert {b["error"] for b in rec["branches"]} == {None}
    seeds = set()
    for i, b in enumerate(rec["branches"]):
        d = Path(b["path"])
        recs = read_jsonl(d / "game.jsonl")
        setup = recs[0]
        assert setup["forked_from"] == p.game_id and setup["fork_point"] == list(key)
        assert setup["fork_batch_id"] == rec["fork_batch_id"] and setup["replica_idx"] == i and setup["intervention"] is None
        seeds.add(setup["fork_seed"])
        n_inh = setup["inherited_events"]
        assert all(r.get("inherited") for r in recs[1 : 1 + n_inh]) and not any(r.get("inherited") for r in recs[1 + n_inh :])
        assert strip(recs[1 : 1 + n_inh]) == strip(read_jsonl(parent / "game.jsonl")[1 : 1 + n_inh])
        assert recs[-1]["kind"] == "game_over"
        snaps = list(iter_snapshots(d / "state.jsonl"))
        assert [s.get("inherited", False) for s in snaps[: len(p.keys()[:13])]] == [True] * 13
    assert len(seeds) == 3  # replicas draw with different seeds
    # a branch forks again at an inherited step and at its own step
    child = ParentGame.load(rec["branches"][0]["path"])
    for k in (child.keys()[3], child.keys()[-1]):
        rec2 = run(plan_fork(child, k, 1, logs=tmp_path, keep_seed=True))
        assert rec2["branches"][0]["error"] is None
        assert read_jsonl(Path(rec2["branches"][0]["path"]) / "game.jsonl")[0]["forked_from"] == child.game_id
    # the batch record for the app
    batch = json.loads((tmp_path / "experiments" / f"fork-{rec['fork_batch_id']}.json").read_text())
    assert batch["status"] == "done" and batch["summary"]["finished"] == 3


@pytest.mark.slow
def test_resample_changes_outcomes(parent, tmp_path):
    p = ParentGame.load(parent)
    rec = run(plan_fork(p, p.keys()[7], 12, logs=tmp_path, batch_seed=1, parallel=4))
    texts = set()
    for b in rec["branches"]:
        texts.add(json.dumps([r.get("response") for r in read_jsonl(Path(b["path"]) / "game.jsonl") if not r.get("inherited")]))
    assert len(texts) > 1


# ----------------------------------------------------------------------------- interventions


def test_replace_utterance_is_seen_downstream(parent, tmp_path):
    p = ParentGame.load(parent)
    ev = next(e for e in p.records if e["kind"] == "day_discuss" and e["round"] == 1)
    key = (ev["round"], ev["msg_seq"])
    text = "I have no doubt at all: this is a test sentence that nobody else would say."
    rec = run(plan_fork(p, key, 1, logs=tmp_path, replace_text=text, seat=ev["player"], keep_seed=True))
    d = Path(rec["branches"][0]["path"])
    recs = read_jsonl(d / "game.jsonl")
    setup = recs[0]
    assert setup["intervention"]["type"] == "replace_utterance" and setup["intervention"]["original_text"] == ev["response"]
    assert setup["fork_point"] == list(p.previous_key(key))
    mine = next(r for r in recs if r.get("round") == key[0] and r.get("msg_seq") == key[1])
    assert mine["response"] == text and mine["player"] == ev["player"] and not mine.get("inherited")
    snaps = list(iter_snapshots(d / "state.jsonl"))
    later = [s for s in snaps if not s.get("inherited") and (s["round"], s["msg_seq"]) != key]
    other = next(pl for pl in later[0]["players"] if pl["name"] != ev["player"] and pl["alive"])
    assert any(text in m["content"] for m in other["messages"])


def test_replace_vote_changes_the_tally(parent, tmp_path):
    p = ParentGame.load(parent)
    votes = [e for e in p.records if e["kind"] == "day_vote" and e["round"] == 1]
    ev = votes[0]
    alive = p.snapshot((ev["round"], ev["msg_seq"]))["alive"]
    new_target = next(n for n in alive if n not in (ev["player"], ev.get("target")))
    rec = run(plan_fork(p, (ev["round"], ev["msg_seq"]), 1, logs=tmp_path, replace_text=f"Changed my mind.\nVOTE: {new_target}",
                        seat=ev["player"], keep_seed=True))  # fmt: skip
    recs = read_jsonl(Path(rec["branches"][0]["path"]) / "game.jsonl")
    tally = next(r for r in recs if r["kind"] == "vote_tally" and r["round"] == ev["round"])
    assert tally["votes"][ev["player"]] == new_target


def test_override_night(parent, tmp_path):
    p = ParentGame.load(parent)
    ev = next(e for e in p.records if e["kind"] == "night_mafia" and e["round"] == 1)
    mafia = {pl["name"] for pl in p.setup["players"] if pl["role"] == "Mafia"}
    victim = next(pl["name"] for pl in p.setup["players"] if pl["name"] not in mafia and pl["name"] != ev.get("target"))
    rec = run(plan_fork(p, (1, ev["msg_seq"]), 1, logs=tmp_path, override_night=(ev["player"], victim)))
    recs = read_jsonl(Path(rec["branches"][0]["path"]) / "game.jsonl")
    assert recs[0]["intervention"]["type"] == "override_night" and recs[0]["intervention"]["target"] == victim
    mine = next(r for r in recs if r["kind"] == "night_mafia" and r["round"] == 1 and r["player"] == ev["player"])
    assert mine["target"] == victim and mine["target_valid"]


def test_scripted_override_from_round_end_applies_to_next_night(tmp_path):
    roles = [("Mo", "Mafia"), ("Max", "Mafia"), ("Doc", "Doctor"), ("Ann", "Villager"), ("Bob", "Villager"), ("Cid", "Villager"), ("Dee", "Villager")]
    cfg = parse_game_config({
        "rules": {"roles": {"Mafia": 2, "Doctor": 1, "Villager": 4}, "intro_round": False, "max_rounds": 3},
        "seats": [{"name": n, "role": r, "backend": "s"} for n, r in roles], "backends": {"s": {"type": "bot"}},
        "probes": {"enabled": False},
    })  # fmt: skip
    plan = table_plan(kills={1: "Ann", 2: "Bob"}, votes={1: {n: "Cid" for n, _ in roles}}, protect={1: "Doc", 2: "Doc"})
    backend = ScriptedBackend("s", plan)
    asyncio.run(play_game(cfg, logs_dir=tmp_path, seed=1, game_id="g", backends={"s": backend}))
    p = ParentGame.load(tmp_path / "g")
    fp = plan_fork(p, "1.-1", 1, logs=tmp_path / "f", override_night=("Doc", "Bob"))
    rec = asyncio.run(run_fork_batch(fp, backends={"s": ScriptedBackend("s", plan)}))
    recs = read_jsonl(Path(rec["branches"][0]["path"]) / "game.jsonl")
    assert any(r["kind"] == "night_save" and r["round"] == 2 and r["saved"] == "Bob" for r in recs)
    # the first night action of a game without intro is forked from the rebuilt start state
    first = p.utterance((1, 1))["player"]
    fp = plan_fork(p, "1.1", 1, logs=tmp_path / "f", replace_text="ACTION: Kill Dee", seat=first)
    assert fp.base_key == (0, 0)
    rec = asyncio.run(run_fork_batch(fp, backends={"s": ScriptedBackend("s", plan)}))
    recs = read_jsonl(Path(rec["branches"][0]["path"]) / "game.jsonl")
    assert recs[1]["player"] == first and recs[1]["target"] == "Dee"


# ----------------------------------------------------------------------------- bad input


def test_bad_input_is_a_clear_error_before_any_work(parent, tmp_path, capsys):
    p = ParentGame.load(parent)
    before = sorted(x.name for x in tmp_path.iterdir())

    def err(argv):
        assert main(argv) == 2
        return capsys.readouterr().err

    assert "no snapshot at step 9.9" in err(["fork", str(parent), "--at", "9.9", "--logs", str(tmp_path)])
    assert "between 1 and 200" in err(["fork", str(parent), "--at", "1.-1", "-n", "0", "--logs", str(tmp_path)])
    assert "between 1 and 200" in err(["fork", str(parent), "--at", "1.-1", "-n", "201", "--logs", str(tmp_path)])
    assert "ROUND.SEQ" in err(["fork", str(parent), "--at", "x", "--logs", str(tmp_path)])
    assert "not found" in err(["fork", "nope", "--at", "1.1", "--logs", str(tmp_path)])
    # a dead seat named by an intervention
    dead = next(r["eliminated"] for r in p.records if r["kind"] == "day_eliminate")
    end1 = "1.-1"
    killer = [pl["name"] for pl in p.setup["players"] if pl["role"] == "Mafia" and pl["name"] != dead][0]
    msg = err(["fork", str(parent), "--at", end1, "--override-night", f"{killer}={dead}", "--logs", str(tmp_path)])
    assert dead in msg and "dead" in msg
    if any(pl["name"] == dead and pl["role"] in ("Mafia", "Doctor") for pl in p.setup["players"]):
        assert "dead" in err(["fork", str(parent), "--at", end1, "--override-night", f"{dead}={killer}", "--logs", str(tmp_path)])
    ev = next(e for e in p.records if e["kind"] == "day_discuss")
    other = next(pl["name"] for pl in p.setup["players"] if pl["name"] != ev["player"])
    assert "not " + other in err(["fork", str(parent), "--at", f"{ev['round']}.{ev['msg_seq']}", "--replace-utterance", "hi", "--seat", other, "--logs", str(tmp_path)])
    assert sorted(x.name for x in tmp_path.iterdir()) == before  # nothing was started


def test_missing_or_torn_state_file(parent, tmp_path, capsys):
    import shutil

    g = tmp_path / "nostate"
    shutil.copytree(parent, g)
    (g / "state.jsonl").unlink()
    assert main(["fork", str(g), "--at", "1.-1"]) == 2
    assert "no state.jsonl" in capsys.readouterr().err
    t = tmp_path / "torn"
    shutil.copytree(parent, t)
    lines = (t / "state.jsonl").read_text().splitlines(keepends=True)
    (t / "state.jsonl").write_text("".join(lines[:-1]) + lines[-1][: len(lines[-1]) // 2])
    p = ParentGame.load(t)
    assert p.torn_state
    last = json.loads(lines[-1])
    with pytest.raises(ReplayError, match="torn"):
        plan_fork(p, (last["round"], last["msg_seq"]), 1)
    assert plan_fork(p, p.keys()[-1], 1, logs=tmp_path / "out").n == 1  # earlier steps still fork
    m = tmp_path / "mid"
    shutil.copytree(parent, m)
    (m / "state.jsonl").write_text(lines[0] + "{not json\n" + "".join(lines[1:]))
    with pytest.raises(ReplayError, match="corrupt"):
        ParentGame.load(m)


def test_parse_key():
    assert parse_key("1.8") == (1, 8) and parse_key("2.-1") == (2, -1) and parse_key("2.end") == (2, -1) and parse_key("start") == (0, 0)
    with pytest.raises(ReplayError):
        parse_key("1")


@pytest.mark.slow
def test_fork_list_cli(parent):
    out = subprocess.run([sys.executable, "-m", "mafiascope", "fork", str(parent), "--list", "--json"], capture_output=True, text=True)
    assert out.returncode == 0
    pts = json.loads(out.stdout)["fork_points"]
    assert pts[0]["step"] == "0.1" and any(p["step"].endswith(".-1") for p in pts)
