"""Study runs: resume after kill -9, two runners, budget stop, invalid games, Ray, estimate vs actual."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
import yaml

from mafiascope.cli import main
from mafiascope.play.ledger import Runner, StudyLedger
from mafiascope.study.run import StudyError, load_study, plan_study, run_study, settle_result
from mafiascope.study.spec import load_study_spec, parse_study_spec
from mafiascope.study.status import study_report, study_status

REPO = Path(__file__).resolve().parents[1]


def small_spec(tmp_path: Path, games: int = 3, probes: str = "none", **extra) -> Path:
    data = {
        "name": "tiny",
        "seed": 1,
        "games_per_arm": games,
        "backends": {"bal": {"type": "bot", "preset": "balanced", "price": {"prompt_per_mtok": 1.0, "completion_per_mtok": 4.0}},
                     "ana": "analyst"},
        "arms": [{"name": "one", "lineup": "bal", "rules": "classic", "probes": probes},
                 {"name": "mix", "lineup": {"roster": ["bal", "ana"]}, "rules": "classic", "probes": probes}],
        "executor": {"kind": "local", "parallel": 2},
        "out": str(tmp_path / "study"),
        **extra,
    }  # fmt: skip
    path = tmp_path / "tiny.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def _settled_once(study_dir: Path) -> Counter:
    """How many settling records (finished/invalid) each game has in the ledger."""
    return Counter(r["game_id"] for r in StudyLedger(study_dir).records() if r.get("state") in ("finished", "invalid"))


def _one_game_per_dir(study_dir: Path, ids: list[str]) -> None:
    assert sorted(p.name for p in (study_dir / "games").iterdir()) == sorted(ids)
    for gid in ids:
        kinds = [json.loads(line)["kind"] for line in (study_dir / "games" / gid / "game.jsonl").read_text().splitlines()]
        assert kinds.count("setup") == 1 and kinds.count("game_over") == 1 and kinds[-1] == "game_over"


def test_run_then_resume_plays_nothing_twice(tmp_path):
    spec = load_study_spec(small_spec(tmp_path))
    s1 = run_study(spec, quiet=True, limit=4)
    assert s1["played_now"] == 4 and s1["counts"]["finished"] == 4 and s1["counts"]["pending"] == 2
    s2 = run_study(spec, quiet=True)
    assert s2["played_now"] == 2 and s2["counts"]["finished"] == 6
    assert run_study(spec, quiet=True)["played_now"] == 0
    d = spec.study_dir()
    ids = [g["game_id"] for g in plan_study(spec)["schedule"]]
    assert set(_settled_once(d).values()) == {1} and set(_settled_once(d)) == set(ids)
    _one_game_per_dir(d, ids)
    # per-backend usage and money come from the logs: only the priced backend costs
    st = study_status(spec, d)
    assert st["spend"]["money"] > 0 and set(st["spend"]["by_backend"]) == {"bal", "ana"}
    assert st["provenance"]["spec_hash"] == spec.spec_hash() and st["provenance"]["mafiascope_version"]
    plan = json.loads((d / "plan.json").read_text())
    assert plan["provenance"]["seed"] == 1 and plan["provenance"]["python"]
    # the saved spec reloads from the directory alone
    spec2, d2 = load_study(d)
    assert spec2.spec_hash() == spec.spec_hash() and d2 == d


@pytest.mark.slow
def test_kill_9_mid_study_then_resume(tmp_path):
    path = small_spec(tmp_path, games=4, probes="suspicion", executor={"kind": "local", "parallel": 2})
    spec = load_study_spec(path)
    d = spec.study_dir()
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen([sys.executable, "-m", "mafiascope", "study", "run", str(path), "--json"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        deadline = time.time() + 120
        while time.time() < deadline:
            rows = StudyLedger(d).rows() if (d / "ledger.jsonl").is_file() else {}
            states = Counter(r.get("state") for r in rows.values())
            if states["finished"] >= 1 and states["running"] >= 1:
                break
            time.sleep(0.05)
        else:
            pytest.fail("the study never got going")
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
    finally:
        if proc.poll() is None:
            proc.kill()
    before = StudyLedger(d).rows()
    killed = [g for g, r in before.items() if r["state"] == "running"]
    never = [g for g, r in before.items() if r["state"] == "pending"]
    assert killed and never
    s = run_study(spec, quiet=True)
    assert s["counts"]["finished"] == 8 and s["played_now"] == len(killed) + len(never)
    ids = list(before)
    assert set(_settled_once(d).values()) == {1} and set(_settled_once(d)) == set(ids)
    _one_game_per_dir(d, ids)
    assert all(StudyLedger(d).rows()[g]["attempts"] == 2 for g in killed)


@pytest.mark.slow
def test_two_runners_at_once_share_the_games(tmp_path):
    path = small_spec(tmp_path, games=4, probes="suspicion")
    spec = load_study_spec(path)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    cmd = [sys.executable, "-m", "mafiascope", "study", "run", str(path), "--json", "--parallel", "1"]
    procs = [subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL) for _ in range(2)]
    outs = [json.loads(p.communicate(timeout=300)[0]) for p in procs]
    assert sum(o["played_now"] for o in outs) == 8
    d = spec.study_dir()
    assert set(_settled_once(d).values()) == {1} and len(_settled_once(d)) == 8
    claims = Counter(r["game_id"] for r in StudyLedger(d).records() if r.get("state") == "running")
    assert set(claims.values()) == {1}
    _one_game_per_dir(d, list(claims))


def test_budget_stops_before_the_game_that_would_exceed_it(tmp_path):
    spec = load_study_spec(small_spec(tmp_path, games=4))
    per_game = plan_study(spec)["estimate"]["arms"]["one"]["per_game"]["money"]
    assert per_game > 0
    spec = spec.model_copy(update={"budget": spec.budget.model_copy(update={"money": per_game * 2.5})})
    s = run_study(spec, quiet=True, parallel=1)
    assert s["stopped"].startswith("budget: money") and s["counts"]["pending"] > 0
    assert 0 < s["spend"]["money"] <= per_game * 2.5
    assert s["last_stop"] == s["stopped"]
    # a larger budget continues the same study (the budget is not part of the spec hash)
    more = spec.model_copy(update={"budget": spec.budget.model_copy(update={"money": 1000.0})})
    assert run_study(more, quiet=True)["counts"]["finished"] == 8


def test_invalid_games_are_counted_and_excluded(tmp_path):
    spec = load_study_spec(small_spec(tmp_path, games=1))
    d = spec.study_dir()
    run_study(spec, quiet=True, limit=1)  # makes the ledger; arm "one" game 0 finished
    led = StudyLedger(d)
    gid = "tiny-mix-0000"
    with Runner(d) as r:
        row, _ = led.claim(r)
        assert row["game_id"] == gid
        gdir = d / "games" / gid
        gdir.mkdir(parents=True)
        setup = {"game_id": gid, "kind": "setup", "round": 0, "schema_version": 1,
                 "players": [{"name": "Ann", "role": "Mafia", "backend": "bal"}, {"name": "Bob", "role": "Villager", "backend": "ana"}]}
        over = {"game_id": gid, "kind": "game_over", "round": 2, "winner": "Villagers", "invalid": True,
                "invalid_reason": "fault budget: 9 of 30 calls faulted (> 20%)",
                "cost": {"act": {"calls": 30, "prompt_tokens": 3000, "completion_tokens": 300,
                                 "by_backend": {"bal": {"calls": 20, "prompt_tokens": 2000, "completion_tokens": 200},
                                                "ana": {"calls": 10, "prompt_tokens": 1000, "completion_tokens": 100}}}}}  # fmt: skip
        (gdir / "game.jsonl").write_text(json.dumps(setup) + "\n" + json.dumps(over) + "\n")
        state, spend = settle_result(led, r, gid, {"winner": "Villagers", "rounds": 2, "faults": 9, "seconds": 1.0}, d / "games",
                                     {b: s.price for b, s in spec.backends.items()})  # fmt: skip
    assert state == "invalid" and spend == pytest.approx(2000 / 1e6 * 1.0 + 200 / 1e6 * 4.0)
    st = study_status(spec, d)
    assert st["counts"]["invalid"] == 1 and st["invalid"] == [{"game_id": gid, "reason": over["invalid_reason"]}]
    assert st["spend"]["money"] >= spend  # an invalid game's spend is counted
    rep = study_report(spec, d)
    assert rep["arms"]["mix"]["invalid"] == 1 and rep["arms"]["mix"]["finished"] == 0 and gid not in rep["arms"]["mix"]["game_ids"]
    # a re-run never replays an invalid game
    s = run_study(spec, quiet=True)
    assert s["counts"] == {"pending": 0, "running": 0, "finished": 1, "failed": 0, "invalid": 1, "cut": 0}


def test_preflight_names_the_backend_and_writes_nothing(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("STUDY_TEST_KEY", raising=False)
    path = small_spec(tmp_path)
    data = yaml.safe_load(path.read_text())
    data["backends"]["api"] = {"type": "openai", "model": "m", "base_url": "http://127.0.0.1:9/v1", "api_key": "${STUDY_TEST_KEY}"}
    data["arms"][0]["lineup"] = "api"
    path.write_text(yaml.safe_dump(data))
    assert main(["study", "run", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "backends.api: backend 'api': api_key refers to ${STUDY_TEST_KEY}, which is not set" in err
    assert not (tmp_path / "study").exists()
    # the plan needs no keys
    assert main(["study", "plan", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["games"] == 6


@pytest.mark.slow
def test_cli_plan_status_report(tmp_path, capsys):
    from .test_cli_docs import _documented_keys

    path = small_spec(tmp_path, games=2)
    assert main(["study", "status", str(path)]) == 2
    assert "no study has run here" in capsys.readouterr().err
    assert main(["study", "plan", str(path), "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert set(plan) == _documented_keys("### `mafiascope study plan ")
    assert [g["game_id"] for g in plan["schedule"][:3]] == ["tiny-one-0000", "tiny-mix-0000", "tiny-one-0001"]
    t = plan["estimate"]["total"]
    assert t["calls_90"][0] <= t["calls"] <= t["calls_90"][1] and t["money"] > 0
    assert main(["study", "run", str(path), "--json"]) == 0
    run = json.loads(capsys.readouterr().out)
    assert set(run) == _documented_keys("### `mafiascope study run ")
    assert main(["study", "status", str(tmp_path / "study"), "--json"]) == 0
    st = json.loads(capsys.readouterr().out)
    assert set(st) == _documented_keys("### `mafiascope study status ") and st["counts"]["finished"] == 4
    assert main(["study", "report", str(path), "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert set(rep) == _documented_keys("### `mafiascope study report ") and rep["arms"]["one"]["finished"] == 2
    assert main(["study", "status", str(path)]) == 0 and "estimate vs actual" in capsys.readouterr().out
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\nbackends: {a: balanced}\narms: [{name: a, lineup: b}]\n")
    assert main(["study", "plan", str(bad)]) == 2
    assert "arms.0.lineup.backend: 'b' is not in backends" in capsys.readouterr().err


@pytest.mark.slow
def test_ray_executor(tmp_path):
    ray = pytest.importorskip("ray", reason="Ray is an optional extra: pip install 'mafiascope[ray]'")
    spec = load_study_spec(small_spec(tmp_path, games=1))
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, ignore_reinit_error=True)
    try:
        s = run_study(spec, quiet=True, executor="ray")
    finally:
        ray.shutdown()
    assert s["counts"]["finished"] == 2 and s["spend"]["money"] > 0
    assert set(_settled_once(spec.study_dir()).values()) == {1}


@pytest.mark.slow
def test_estimate_vs_actual_on_the_offline_example(tmp_path):
    spec = load_study_spec(REPO / "configs" / "studies" / "bots_quick.yaml")
    s = run_study(spec, tmp_path / "bq", quiet=True)
    assert s["counts"]["finished"] == spec.total_games()
    err = s["estimate_vs_actual"]["error"]
    for k in ("calls", "prompt_tokens", "completion_tokens", "money"):
        assert abs(err[k]) <= 0.25, (k, err)


def test_a_literal_key_is_never_saved_and_a_resume_from_the_directory_says_so(tmp_path):
    from mafiascope.study.run import StudyError, _preflight, _saved_spec

    data = yaml.safe_load(small_spec(tmp_path).read_text())
    data["backends"]["api"] = {"type": "openai", "model": "m", "base_url": "http://127.0.0.1:9/v1", "api_key": "sk-literal-123"}
    spec = parse_study_spec(data, "lit.yaml")
    saved = _saved_spec(spec)
    assert "sk-literal-123" not in json.dumps(saved) and saved["backends"]["bal"]["price"]["prompt_per_mtok"] == 1.0
    again = parse_study_spec(saved, "spec.json")
    assert again.spec_hash() == spec.spec_hash()
    data["arms"][0]["lineup"] = "api"
    with pytest.raises(StudyError, match=r"backends.api.api_key: the key was written into the spec"):
        _preflight(parse_study_spec(_saved_spec(parse_study_spec(data, "lit.yaml")), "spec.json"))


def test_status_text_marks_dead_runners_games_and_drops_a_stop_that_no_longer_holds(tmp_path, capsys):
    spec = load_study_spec(small_spec(tmp_path, games=2))
    d = spec.study_dir()
    per_game = plan_study(spec)["estimate"]["arms"]["one"]["per_game"]["money"]
    tight = spec.model_copy(update={"budget": spec.budget.model_copy(update={"money": per_game * 1.5})})
    assert run_study(tight, quiet=True, parallel=1)["stopped"].startswith("budget: money")
    assert main(["study", "status", str(d)]) == 0
    assert "last stop: budget: money" in capsys.readouterr().out  # the study is stopped: say why
    led = StudyLedger(d)
    with Runner(d) as r:  # a runner claims a game, then dies (its lock is released)
        row, _ = led.claim(r)
    assert main(["study", "status", str(d)]) == 0
    out = capsys.readouterr().out
    assert f"held by a dead runner (replayed from scratch by the next study run): {row['game_id']}" in out
    assert f"running 1 (1 held by a dead runner)" in out
    assert "last stop" not in out  # a runner went on after the stop
    assert study_status(spec, d)["arms"][row["arm"]]["stale"] == 1
    assert run_study(spec, quiet=True)["counts"]["finished"] == 4
    assert main(["study", "status", str(d)]) == 0
    out = capsys.readouterr().out
    assert "last stop" not in out and "dead runner" not in out
    assert study_status(spec, d)["last_stop"] is None


def test_a_pilot_grows_into_the_main_study_and_a_changed_arm_is_refused(tmp_path):
    """More games per arm and a new arm keep the games played and schedule only the new ones; the first N
    games of a grown arm are the pilot's games (same ids, seeds, seating); a changed arm is refused by name."""
    path = small_spec(tmp_path, games=2)
    pilot = load_study_spec(path)
    d = pilot.study_dir()
    assert run_study(pilot, quiet=True)["counts"]["finished"] == 4
    played = {g: (r["seed"], r.get("winner"), r.get("rounds")) for g, r in StudyLedger(d).rows().items()}
    data = yaml.safe_load(path.read_text())
    data["games_per_arm"] = 3
    data["arms"].append({"name": "ten", "lineup": {"roster": ["bal", "ana"]}, "rules": "sport", "probes": "none", "games": 1})
    path.write_text(yaml.safe_dump(data))
    main_spec = load_study_spec(path)
    first = {g["game_id"]: g for g in plan_study(pilot)["schedule"]}
    grown = {g["game_id"]: g for g in plan_study(main_spec)["schedule"]}
    assert all(grown[g] == first[g] for g in first)  # the pilot's games are the grown study's first games
    s = run_study(main_spec, quiet=True)
    assert s["played_now"] == 3 and s["counts"]["finished"] == 7 and s["scheduled"] == 7
    rows = StudyLedger(d).rows()
    assert {g: (rows[g]["seed"], rows[g].get("winner"), rows[g].get("rounds")) for g in played} == played
    assert set(_settled_once(d).values()) == {1}  # nothing replayed
    assert StudyLedger(d).header()["spec_hash"] == main_spec.spec_hash()
    plan = json.loads((d / "plan.json").read_text())
    assert plan["games"] == 7 and plan["grown"][-1]["arms_added"] == ["ten"]
    assert load_study(d)[0].spec_hash() == main_spec.spec_hash()  # the directory resumes as the grown study
    assert study_report(main_spec, d)["arms"]["ten"]["finished"] == 1
    # a changed arm, a dropped arm or fewer games: refused, naming the arm and the field, nothing written
    size = (d / "ledger.jsonl").stat().st_size
    for change, message in (
        (lambda x: x["arms"][1]["lineup"]["roster"].reverse(), "arm 'mix': lineup.roster changed (["),
        (lambda x: x["arms"][0].update(rules="classic_sheriff"), "arm 'one': rules changed (\"classic\" in this study directory, \"classic_sheriff\" in the spec)"),
        (lambda x: x["arms"][0].update(language="ru"), "arm 'one': language changed"),
        (lambda x: x["arms"][0].update(probes="suspicion"), "arm 'one': probes changed"),
        (lambda x: x.update(seed=2), "arm 'one': seed changed (1 in this study directory, 2 in the spec)"),
        (lambda x: x["backends"]["bal"].update(preset="analyst"), "arm 'one': backends.bal.preset changed"),
        (lambda x: x["arms"].pop(), "arms: 'ten' has games in this study directory but is not in the spec"),
        (lambda x: x.update(games_per_arm=2), "arm 'one': 2 games in the spec but 3 already scheduled"),
    ):  # fmt: skip
        other = yaml.safe_load(path.read_text())
        change(other)
        with pytest.raises(StudyError, match=re.escape(message)):
            run_study(parse_study_spec(other, str(path)), quiet=True)
        assert (d / "ledger.jsonl").stat().st_size == size
    # a price is not part of an arm: it may change (the games are the same), nothing is replayed
    cheaper = yaml.safe_load(path.read_text())
    cheaper["backends"]["bal"]["price"]["prompt_per_mtok"] = 0.5
    assert run_study(parse_study_spec(cheaper, str(path)), quiet=True)["played_now"] == 0


def test_a_grown_ten_seat_roster_keeps_its_first_games():
    data = {"name": "g", "seed": 4, "games_per_arm": 3, "backends": {"a": "balanced", "b": "analyst", "c": "cautious"},
            "arms": [{"name": "t", "lineup": {"roster": ["a", "b", "c"]}, "rules": "sport", "probes": "none"}]}  # fmt: skip
    from mafiascope.study.schedule import study_schedule

    small = study_schedule(parse_study_spec(data, "g.yaml"))
    big = study_schedule(parse_study_spec({**data, "games_per_arm": 9}, "g.yaml"))
    assert [g.as_dict() for g in big[:3]] == [g.as_dict() for g in small]


@pytest.mark.slow  # runs a small study twice
def test_status_and_run_survive_a_tampered_ledger(tmp_path, capsys):
    """Issue 31 item 6. Seen: a tampered row crashed `study status` and `study run`; a row nobody scheduled was
    claimed, crashed the run (KeyError) and stayed `running`, so every rerun crashed on it again."""
    path = small_spec(tmp_path, games=1)
    ledger = tmp_path / "study" / "ledger.jsonl"
    assert main(["study", "run", str(path), "--json"]) == 0
    n = len(ledger.read_text().splitlines())
    with open(ledger, "a") as fh:
        fh.write('{"event": "state", "game_id": "tiny-one-0000", "state": {"x": 1}}\n'
                 '{"event": "row", "game_id": "planted-0001", "arm": "one", "index": 7, "seed": 3}\n'
                 '{"event": "state", "game_id": "tiny-mix-0000", "state": "finished", "usage": {"calls": "many"}}\n')
    capsys.readouterr()
    with pytest.warns(UserWarning) as caught:  # the CLI prints them as "mafiascope: warning: FILE:LINE: ..."
        assert main(["study", "status", str(tmp_path / "study")]) == 0
    err = "\n".join(str(w.message) for w in caught)
    capsys.readouterr()
    assert f"ledger.jsonl:{n + 1}: skipping a bad ledger record (state: expected one of" in err
    assert f"ledger.jsonl:{n + 3}: skipping a bad ledger record (usage: expected a mapping of counts)" in err
    for _ in range(2):
        with pytest.warns(UserWarning):
            assert main(["study", "run", str(path), "--json"]) == 1  # a failed game (the planted row): exit 1
        out = json.loads(capsys.readouterr().out)
        assert out["counts"]["running"] == 0 and out["counts"]["finished"] == 2
    rows = StudyLedger(tmp_path / "study").rows()
    assert rows["planted-0001"]["state"] == "failed" and rows["planted-0001"]["error"] == "not in this run's schedule"


def _underestimating_defaults(monkeypatch, share: float) -> None:
    """The bundled profiles scaled down to ``share`` of their tokens: the plan expects games far cheaper than
    they are (a hosted model writing longer than the bots the profiles were measured on)."""
    import copy

    from mafiascope.study import estimate

    real = estimate.load_defaults()
    low = copy.deepcopy(real)
    for prof in low["profiles"].values():
        for g in prof["per_game"]:
            g["act"] = [g["act"][0], g["act"][1] * share, g["act"][2] * share]
            g["probes"] = {pid: [v[0], v[1] * share, v[2] * share] for pid, v in g["probes"].items()}
    monkeypatch.setattr(estimate, "load_defaults", lambda: low)


def test_the_budget_is_a_hard_cap_with_parallel_games(tmp_path, monkeypatch):
    """However wrong the estimate, spend never passes budget.money: every call reserves its ceiling first, and
    a game the budget cannot carry on is cut (recorded as such, left out of the report), not counted."""
    _underestimating_defaults(monkeypatch, 0.25)
    spec = load_study_spec(small_spec(tmp_path, games=6))
    d = spec.study_dir()
    expected = plan_study(spec)["estimate"]["arms"]["one"]["per_game"]["money"]
    cap = expected * 9  # about two and a half real games
    capped = spec.model_copy(update={"budget": spec.budget.model_copy(update={"money": cap})})
    s = run_study(capped, quiet=True, parallel=3)
    assert 0 < s["spend"]["money"] <= cap, (s["spend"]["money"], cap)
    spent_money, _ = StudyLedger(d).spent()
    assert spent_money == s["spend"]["money"]
    rows = StudyLedger(d).rows()
    cut = [r for r in rows.values() if r["state"] == "cut"]
    assert cut and all(r["cut"].startswith("the budget's hard cap") and r["metered"]["money"] >= r["money"] for r in cut)
    for r in cut:  # the game's log says it was cut; analytics and the report leave it out
        over = json.loads((d / "games" / r["game_id"] / "game.jsonl").read_text().splitlines()[-1])
        assert over["kind"] == "game_over" and over["reason"] == "budget_cut" and over["invalid"] and over["cut"]
    rep = study_report(capped, d)
    assert all(r["game_id"] not in a["game_ids"] for a in rep["arms"].values() for r in cut)
    assert sum(a["cut"] for a in rep["arms"].values()) == len(cut)
    assert all(not r.get("metered", {}).get("over_ceiling") for r in rows.values())
    # a larger budget replays the cut games from scratch and plays the rest; spend stays within the new cap
    more = capped.model_copy(update={"budget": capped.budget.model_copy(update={"money": cap * 10})})
    s2 = run_study(more, quiet=True, parallel=3)
    assert s2["counts"]["finished"] == 12 and s2["counts"]["cut"] == 0
    assert StudyLedger(d).spent()[0] <= cap * 10


@pytest.mark.slow
def test_the_hard_cap_holds_on_ray_workers(tmp_path, monkeypatch):
    """A Ray worker cannot ask for more: it plays with the allowance it was given, and is cut at its end."""
    ray = pytest.importorskip("ray", reason="Ray is an optional extra: pip install 'mafiascope[ray]'")
    _underestimating_defaults(monkeypatch, 0.25)
    spec = load_study_spec(small_spec(tmp_path, games=3))
    cap = plan_study(spec)["estimate"]["arms"]["one"]["per_game"]["money"] * 9
    capped = spec.model_copy(update={"budget": spec.budget.model_copy(update={"money": cap})})
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, ignore_reinit_error=True)
    try:
        s = run_study(capped, quiet=True, executor="ray", parallel=2)
    finally:
        ray.shutdown()
    assert 0 < s["spend"]["money"] <= cap and s["counts"]["cut"] >= 1
    cut = [r for r in StudyLedger(spec.study_dir()).rows().values() if r["state"] == "cut"]
    assert all(r["metered"]["money"] <= r["allowance"]["money"] + 1e-9 for r in cut)


def test_report_gives_per_model_figures_per_arm(tmp_path, capsys):
    """Each arm's figures split by the model of each seat (the analytics' seat attribution), with intervals."""
    spec = load_study_spec(small_spec(tmp_path, games=2, probes="suspicion"))
    run_study(spec, quiet=True)
    rep = study_report(spec, spec.study_dir(), models=True)
    one = rep["arms"]["one"]["models"]
    assert set(one) == {"bot-balanced"} and one["bot-balanced"]["metrics"]["outcome.side_adjusted"]["n"] == 0  # self-play
    mix = rep["arms"]["mix"]["models"]
    assert set(mix) == {"bot-balanced", "bot-analyst"}
    assert sum(m["seats"] for m in mix.values()) == 14 and all(m["games"] == 2 for m in mix.values())
    for m in mix.values():
        win, f4 = m["metrics"]["outcome.seat_win_rate"], m["metrics"]["f4.top1.innocent"]
        assert 0 <= win["point"] <= 1 and win["n"] == m["seats"] and len(win["ci95"]) == 2
        assert -1 <= m["metrics"]["outcome.side_adjusted"]["point"] <= 1
        assert f4["point"] is not None and m["metrics"]["f1.accuracy"]["point"] is None  # the suspicion battery has no F1
    assert "models" not in study_report(spec, spec.study_dir())["arms"]["mix"]  # the app's live view skips them
    assert main(["study", "report", str(spec.study_dir())]) == 0
    out = capsys.readouterr().out
    assert "    bot-analyst " in out and "seats in 2 games: side-adjusted score" in out and "F4 top-1 hit (town voters)" in out


def test_games_in_flight_make_the_next_game_wait_not_stop(tmp_path):
    """Allowances held by games in flight (1.5 x expected) do not end a run: a game that fits once they settle
    waits; only a game that does not fit even at the expected costs of the games in flight stops the run."""
    from mafiascope.play.ledger import WAIT
    from mafiascope.study.run import _Budget
    from mafiascope.study.schedule import study_schedule

    spec = load_study_spec(small_spec(tmp_path, games=12))
    e = plan_study(spec)["estimate"]["arms"]["one"]["per_game"]["money"]
    spec = spec.model_copy(update={"budget": spec.budget.model_copy(update={"money": 10.2 * e}), "arms": spec.arms[:1]})
    run_study(spec, quiet=True, limit=0)
    led = StudyLedger(spec.study_dir())
    budget = _Budget(spec, study_schedule(spec), led.rows(), led, "local")
    with Runner(spec.study_dir()) as r:
        verdicts = [led.claim(r, budget)[1] for _ in range(8)]
        # seven games hold 10.2e (the last what was left); the eighth fits only once some settle: it waits
        assert verdicts == [None] * 7 + [WAIT]
        assert not any(x.get("event") == "stop" for x in led.records())
        for _ in range(3):  # three more expected games would not fit even at expected cost: the run stops
            led.settle(next(g for g, x in led.rows().items() if x["state"] == "running"), r, "finished", money=2.0 * e)
        row, why = led.claim(r, budget)
    assert row is None and why.startswith("budget: money")
