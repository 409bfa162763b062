"""Study specs, schedules and the estimate (no games played)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from mafiascope.config import ConfigError
from mafiascope.provenance import content_hash, provenance
from mafiascope.study.estimate import estimate_study, load_defaults
from mafiascope.study.schedule import game_config, study_schedule
from mafiascope.study.spec import load_study_spec, parse_study_spec

REPO = Path(__file__).resolve().parents[1]


def spec_data(probes: str = "chained", games: int = 10, lineup=None, rules: str = "classic") -> dict:
    return {
        "name": "p", "seed": 3, "games_per_arm": games,
        "backends": {"a": {"type": "bot", "preset": "balanced", "price": {"prompt_per_mtok": 1.0, "completion_per_mtok": 2.0}},
                     "b": "analyst"},
        "arms": [{"name": "x", "lineup": lineup or "a", "rules": rules, "probes": probes}],
    }  # fmt: skip


def test_shipped_examples_load_and_plan_without_keys(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    for name in ("bots_quick", "two_models"):
        spec = load_study_spec(REPO / "configs" / "studies" / f"{name}.yaml")
        est = estimate_study(spec, study_schedule(spec))
        assert est["total"]["games"] == spec.total_games() and est["total"]["calls"] > 0
    two = load_study_spec(REPO / "configs" / "studies" / "two_models.yaml")
    assert estimate_study(two, study_schedule(two))["total"]["money"] > 0


def test_errors_name_the_file_and_field():
    data = spec_data()
    data["arms"][0]["lineup"] = {"seats": ["a", "zz"]}
    data["executor"] = {"kind": "slurm"}
    with pytest.raises(ConfigError) as exc:
        parse_study_spec(data, "s.yaml")
    text = str(exc.value)
    assert text.startswith("s.yaml: invalid study spec") and "executor.kind" in text
    data.pop("executor")
    with pytest.raises(ConfigError) as exc:
        parse_study_spec(data, "s.yaml")
    assert "arms.0.lineup.seats.1: 'zz' is not in backends" in str(exc.value) and "2 seats given but rule set classic seats 7" in str(exc.value)
    with pytest.raises(ConfigError, match=r"s.yaml: description: \$\{\.\.\.\} is resolved only in credential fields"):
        parse_study_spec({**spec_data(), "description": "${NOPE_NOT_SET}"}, "s.yaml")


def test_schedule_interleaves_arms_and_seeds_do_not_depend_on_the_directory():
    data = spec_data(games=3)
    data["arms"].append({"name": "y", "lineup": {"roster": ["a", "b"]}, "rules": "classic", "probes": "none", "games": 2})
    spec = parse_study_spec(data, "a.yaml")
    sched = study_schedule(spec)
    assert [g.game_id for g in sched] == ["p-x-0000", "p-y-0000", "p-x-0001", "p-y-0001", "p-x-0002"]
    again = study_schedule(parse_study_spec({**data, "out": "/elsewhere"}, "b.yaml"))
    assert [g.seed for g in sched] == [g.seed for g in again] and len({g.seed for g in sched}) == 5
    seats = Counter(s["backend"] for g in sched if g.arm == "y" for s in g.seats)
    assert abs(seats["a"] - seats["b"]) <= 1  # the classic roster is rotated over the seats
    cfg = game_config(spec, sched[0])
    assert cfg.fault_budget == 0.2 and cfg.seed == sched[0].seed and set(cfg.backends) == {"a"} and cfg.probes.enabled
    assert not game_config(spec, sched[1]).probes.enabled
    ten = parse_study_spec(spec_data(lineup={"roster": ["a", "b"]}, rules="sport", probes="none"), "t.yaml")
    roles = Counter(s["role"] for g in study_schedule(ten) for s in g.seats)
    assert roles["Don"] == 10 and roles["Sheriff"] == 10  # the Arena's balanced schedule deals the roles


def test_probe_calls_follow_the_battery_size():
    prof = load_defaults()["profiles"]["classic|en"]
    steps = prof["seat_steps"]
    pair_steps = sum(steps[w][0] for w in ("after_each_message", "after_night_action", "after_round"))
    per = {}
    for battery in ("chained", "suspicion", "none"):
        spec = parse_study_spec(spec_data(battery), "s.yaml")
        per[battery] = estimate_study(spec, study_schedule(spec))["arms"]["x"]
    assert per["none"]["probe_calls"] == 0
    assert per["suspicion"]["probe_calls"] == pytest.approx(10 * pair_steps, abs=1)  # one probe on every (step, seat)
    assert per["chained"]["probe_calls"] == pytest.approx(10 * (4 * pair_steps + steps["own_turn"][0]), abs=2)
    assert per["chained"]["money"] > per["suspicion"]["money"] > per["none"]["money"] > 0
    lo, hi = per["chained"]["calls_90"]
    assert lo < per["chained"]["calls"] < hi


def test_money_follows_prices_and_seat_shares_and_the_interval_narrows_with_n():
    mixed = parse_study_spec(spec_data("none", lineup={"roster": ["a", "b"]}), "s.yaml")
    only_a = parse_study_spec(spec_data("none"), "s.yaml")
    ma = estimate_study(only_a, study_schedule(only_a))["arms"]["x"]
    mm = estimate_study(mixed, study_schedule(mixed))["arms"]["x"]
    assert mm["seat_shares"]["a"] == pytest.approx(0.5, abs=0.05) and mm["money"] == pytest.approx(ma["money"] * mm["seat_shares"]["a"], rel=1e-3)
    big = parse_study_spec(spec_data("none", games=200), "s.yaml")
    assert estimate_study(big, study_schedule(big))["arms"]["x"]["rel_halfwidth90"] < ma["rel_halfwidth90"]


def test_own_games_replace_the_bundled_profile():
    spec = parse_study_spec(spec_data("none", games=4), "s.yaml")
    sched = study_schedule(spec)
    usage = {"calls": 100, "act_calls": 100, "probe_calls": 0, "prompt_tokens": 50000, "completion_tokens": 2000}
    rows = {g.game_id: {"arm": "x", "state": "finished", "usage": usage, "money": 0.054, "seconds": 1.0} for g in sched[:2]}
    est = estimate_study(spec, sched, rows)["arms"]["x"]
    assert est["source"] == "own:2 games" and est["calls"] == 400 and est["money"] == pytest.approx(4 * 0.054)
    assert estimate_study(spec, sched, dict(list(rows.items())[:1]))["arms"]["x"]["source"].startswith("bundled:classic|en")


def test_provenance():
    p = provenance({"spec_hash": "abc", "seed": 1})
    assert p["mafiascope_version"] and p["python"] and "pydantic" in p["packages"] and p["spec_hash"] == "abc" and p["seed"] == 1
    assert p["git_commit"] is None or len(p["git_commit"].split("+")[0]) == 40
    assert content_hash({"b": 1, "a": 2}) == content_hash({"a": 2, "b": 1})
    base = parse_study_spec(spec_data(), "s.yaml")
    budget = parse_study_spec({**spec_data(), "budget": {"money": 3}}, "s.yaml")
    other = parse_study_spec({**spec_data(), "seed": 4}, "s.yaml")
    assert base.spec_hash() == budget.spec_hash() != other.spec_hash()


def test_batch_dry_run_counts_the_battery_and_plays_nothing(tmp_path, capsys):
    from mafiascope.cli import main

    assert main(["batch", "-n", "5", "--dry-run", "--json", "--logs", str(tmp_path / "logs")]) == 0
    probed = json.loads(capsys.readouterr().out)
    assert main(["batch", "-n", "5", "--dry-run", "--json", "--no-probes", "--logs", str(tmp_path / "logs")]) == 0
    bare = json.loads(capsys.readouterr().out)
    assert probed["probe_calls"] > 10 * probed["act_calls"] and bare["probe_calls"] == 0 and bare["act_calls"] == probed["act_calls"]
    assert probed["calls_90"][0] < probed["calls"] < probed["calls_90"][1] and probed["paid_share"] == 0
    assert not (tmp_path / "logs").exists()


@pytest.mark.slow
def test_calibrate_measures_cpu_seconds_and_keeps_other_profiles(tmp_path):
    """Calibration times each game by this process's CPU (a loaded machine's wall time measures its neighbours)."""
    import json as _json

    from mafiascope.study.calibrate import calibrate
    from mafiascope.study.estimate import DEFAULTS_FILE

    out = tmp_path / "defaults.json"
    out.write_text(DEFAULTS_FILE.read_text(encoding="utf-8"), encoding="utf-8")
    data = calibrate(games=2, out=out, rule_sets=("classic",), languages=("en",))
    prof = data["profiles"]["classic|en"]
    assert prof["games"] == 2 and prof["seconds_basis"] == "cpu" and prof["seconds_per_game"] > 0
    saved = _json.loads(out.read_text())
    assert "sport|en" in saved["profiles"] and saved["profiles"]["classic|en"] == prof  # the others are kept


def test_shipped_specs_are_found_by_name_from_any_directory(tmp_path, monkeypatch, capsys):
    """``study plan/run/status`` take a shipped spec as ``run -c`` takes a config: by its path in the
    checkout, by ``studies/NAME`` or by its bare name, from a directory that holds no configs/."""
    from mafiascope.cli import main

    monkeypatch.chdir(tmp_path)
    for ref in ("configs/studies/bots_quick.yaml", "studies/bots_quick", "bots_quick"):
        assert main(["study", "plan", ref, "--json"]) == 0, ref
        assert json.loads(capsys.readouterr().out)["study"] == "bots-quick"
    assert main(["study", "run", "bots_quick", "--limit", "0", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["counts"]["pending"] == 22
    assert (tmp_path / "logs" / "studies" / "bots-quick" / "ledger.jsonl").is_file()
    assert main(["study", "status", "bots_quick", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["scheduled"] == 22
    assert main(["study", "plan", "no_such_study"]) == 2
    err = capsys.readouterr().err
    assert "no_such_study: no such study spec or study directory" in err and "bots_quick, two_models" in err


def test_the_duration_estimate_learns_from_the_study_s_own_games():
    """Calls and money already came from the study's own games; the duration did not (a hosted arm kept its
    latency_s guess). Now it is the arm's games' seconds at the concurrency the ledger saw."""
    data = {"name": "d", "seed": 0, "games_per_arm": 80, "executor": {"kind": "local", "parallel": 4},
            "backends": {"m": {"type": "openai", "model": "x", "base_url": "http://127.0.0.1:9/v1", "api_key": "${NOPE_KEY}",
                               "latency_s": 0.2, "price": {"prompt_per_mtok": 1.0, "completion_per_mtok": 2.0}}},
            "arms": [{"name": "a", "lineup": "m", "rules": "classic", "probes": "none"}]}  # fmt: skip
    spec = parse_study_spec(data, "d.yaml")
    sched = study_schedule(spec)
    planned = estimate_study(spec, sched)["arms"]["a"]["duration_s"]
    usage = {"calls": 40, "act_calls": 40, "probe_calls": 0, "prompt_tokens": 40000, "completion_tokens": 3000}
    rows, t0 = {}, 1_000.0
    for i, g in enumerate(sched[:40]):  # four at a time, each 24 s (with a little spread)
        secs = 24.0 + (i % 3) - 1
        start = t0 + (i // 4) * 24.0
        rows[g.game_id] = {"arm": "a", "state": "finished", "usage": usage, "money": 0.046, "seconds": secs,
                           "started": start, "updated": start + secs}  # fmt: skip
    est = estimate_study(spec, sched, rows)["arms"]["a"]
    assert est["source"] == "own:40 games"
    assert est["duration_s"] == pytest.approx(80 * 24.0 / 4, rel=0.05) and planned < est["duration_s"] / 2
    lo, hi = est["duration_s_90"]
    assert lo < est["duration_s"] < hi and hi - lo < 0.1 * est["duration_s"]
    done = {g.game_id: {**rows[sched[i % 40].game_id]} for i, g in enumerate(sched)}  # every game settled
    final = estimate_study(spec, sched, done)["arms"]["a"]
    assert final["money_90"][0] == final["money_90"][1] == final["money"]  # nothing left to be uncertain about


def test_t90_is_student_s_quantile():
    from scipy.stats import t

    from mafiascope.study.estimate import t90

    assert max(abs(t90(df) / t.ppf(0.95, df) - 1) for df in range(1, 400)) < 5e-4
