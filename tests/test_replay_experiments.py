"""Attribution, bifurcation and instrument validation with offline bots; probes survive forks."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from mafiascope.cli import main
from mafiascope.logs.io import iter_probe_records, read_jsonl
from mafiascope.replay.bifurcation import farthest_point
from mafiascope.replay.experiments import fisher_exact, newcombe, suspicion_ranks
from mafiascope.replay.forks import plan_fork, run_fork_batch
from mafiascope.replay.source import ParentGame
from mafiascope.replay.validate import headline

from .test_replay_forks import bot_cfg, play_bot


@pytest.fixture(scope="module")
def probed(tmp_path_factory) -> Path:
    logs = tmp_path_factory.mktemp("probed")
    return play_bot(logs, gid="pp", seed=11, probes={"enabled": True})


@pytest.mark.slow
def test_probed_fork_keeps_inherited_probes_and_reproduces_them(probed, tmp_path):
    p = ParentGame.load(probed)
    key = p.keys()[len(p.keys()) // 2]
    rec = asyncio.run(run_fork_batch(plan_fork(p, key, 1, keep_seed=True, logs=tmp_path)))
    d = Path(rec["branches"][0]["path"])
    skip = ("timestamp", "game_id", "inherited", "latency_ms", "finished_ts", "started_ts")

    def norm(rows):
        return sorted((json.dumps({k: v for k, v in r.items() if k not in skip}, sort_keys=True) for r in rows))

    child = list(iter_probe_records(d))
    assert any(r.get("inherited") for r in child) and any(not r.get("inherited") for r in child)
    assert norm(child) == norm(list(iter_probe_records(probed)))  # chain memory restored exactly


@pytest.mark.slow
def test_suspicion_only_and_no_probes(probed, tmp_path):
    p = ParentGame.load(probed)
    key = p.keys()[-3]
    for mode, want in (("suspicion", {"suspicion_ranking"}), ("none", set())):
        rec = asyncio.run(run_fork_batch(plan_fork(p, key, 1, probes=mode, logs=tmp_path / mode)))
        d = Path(rec["branches"][0]["path"])
        own = [r for r in list(iter_probe_records(d)) if not r.get("inherited")] if (d / "introspection.jsonl").exists() else []
        assert {r["probe_id"] for r in own} <= want
        assert read_jsonl(d / "game.jsonl")[0]["fork_probes"] == mode


@pytest.mark.slow
def test_attribution_end_to_end(probed, tmp_path, capsys):
    p = ParentGame.load(probed)
    speeches = [e for e in p.records if e["kind"] == "day_discuss" and e["round"] == 1][:2]
    steps = ",".join(f"{e['round']}.{e['msg_seq']}" for e in speeches)
    target = next(e["eliminated"] for e in p.records if e["kind"] == "day_eliminate") if any(
        e["kind"] == "day_eliminate" for e in p.records) else speeches[0]["player"]  # fmt: skip
    assert main(["replay", "attribution", str(probed), "--utterances", steps, "-n", "2", "--target", target, "--dry-run", "--json",
                 "--logs", str(tmp_path)]) == 0  # fmt: skip
    est = json.loads(capsys.readouterr().out)["estimate"]
    assert est["forks"] == 8 and est["act"] > 0 and est["probe"] > 0
    assert not (tmp_path / "experiments").exists()  # a dry run starts nothing
    assert main(["replay", "attribution", str(probed), "--utterances", steps, "-n", "3", "--target", target, "--json",
                 "--logs", str(tmp_path), "--batch-seed", "3"]) == 0  # fmt: skip
    res = json.loads(capsys.readouterr().out)
    assert Path(res["path"]).is_file() and len(res["utterances"]) == 2
    u = res["utterances"][0]
    assert u["pre"]["fork_point"] == list(p.previous_key((speeches[0]["round"], speeches[0]["msg_seq"])))
    assert u["post"]["fork_point"] == [speeches[0]["round"], speeches[0]["msg_seq"]]
    d = u["delta_post_minus_pre"]
    assert d["p_eliminate_target"]["pre"]["n"] == 3 and 0 <= d["p_eliminate_target"]["fisher_p"] <= 1
    assert any(v is not None for v in u["post"]["aggregate"]["mean_suspicion"].values())
    assert set(d["suspicion_ci95"]) == set(d["suspicion"])
    assert any(ci is not None and ci[0] <= d["suspicion"][p] <= ci[1] for p, ci in d["suspicion_ci95"].items())
    # the experiment's Fisher tests are one named Holm family: two messages, two contrasts each
    fam = res["p_holm_family"]
    assert fam["size"] == 4 == len(fam["tests"]) and "Holm" in fam["text"] and "no multiplicity" not in res["notes"]
    for v in res["utterances"]:
        for c in (v["delta_post_minus_pre"]["p_mafia_win"], v["delta_post_minus_pre"]["p_eliminate_target"]):
            assert c["fisher_p"] <= c["fisher_p_holm"] <= 1
    # arms are marked in the branches' setups
    g = read_jsonl(Path(tmp_path) / u["pre"]["replicas"][0]["game_id"] / "game.jsonl")[0]
    assert g["arm"] == "pre" and g["experiment"] == res["experiment_id"]


@pytest.mark.slow
def test_bifurcation_end_to_end(probed, tmp_path, capsys):
    p = ParentGame.load(probed)
    vote = next(e for e in p.records if e["kind"] == "day_vote")
    at = f"{vote['round']}.{vote['msg_seq']}"
    assert main(["replay", "bifurcate", str(probed), "--at", at, "--seat", vote["player"], "--samples", "30", "--select", "5",
                 "--logs", str(tmp_path), "--json", "--batch-seed", "1"]) == 0  # fmt: skip
    res = json.loads(capsys.readouterr().out)
    vs = res["variants"]
    assert vs[0]["source"] == "factual" and vs[0]["text"] == vote["response"]
    assert set(res["target_dist_samples"]) <= set(res["targets_selected"]) | {vs[0]["target"]}  # every target reached is covered
    for v in vs:
        assert v["error"] is None and v["winner"]
        recs = read_jsonl(Path(v["path"]) / "game.jsonl")
        assert recs[0]["intervention"]["variant_idx"] == v["variant_idx"]
        mine = next(r for r in recs if r.get("round") == vote["round"] and r.get("msg_seq") == vote["msg_seq"])
        assert mine["response"] == v["text"]
    assert Path(res["path"]).is_file()
    # the seat is checked
    other = next(pl["name"] for pl in p.setup["players"] if pl["name"] != vote["player"])
    assert main(["replay", "bifurcate", str(probed), "--at", at, "--seat", other, "--logs", str(tmp_path)]) == 2


@pytest.mark.slow
def test_attribution_text_shows_intervals_and_fisher_p(probed, tmp_path, capsys):
    p = ParentGame.load(probed)
    e = next(e for e in p.records if e["kind"] == "day_discuss" and e["round"] == 1)
    assert main(["replay", "attribution", str(probed), "--utterances", f"{e['round']}.{e['msg_seq']}", "-n", "2",
                 "--logs", str(tmp_path), "--batch-seed", "5"]) == 0  # fmt: skip
    line = next(ln for ln in capsys.readouterr().out.splitlines() if "P(Mafia wins)" in ln)
    assert "Fisher p=" in line and "Holm p=" in line and "POST-PRE" in line and "suspicion delta" in line
    res = json.loads(next(Path(tmp_path, "experiments").glob("attr-*.json")).read_text(encoding="utf-8"))
    u = res["utterances"][0]["delta_post_minus_pre"]["p_mafia_win"]
    u["fisher_p"], u["fisher_p_holm"] = 3e-12, 4.2e-5  # as printed: never 0, floored at 1e-6, scientific below 0.001
    from mafiascope.cli.commands.replay import _attribution_text

    line = next(ln for ln in _attribution_text({**res, "path": "x"}) if "P(Mafia wins)" in ln)
    assert "Fisher p=< 1e-6, Holm p=4.2e-05" in line, line
    assert any(ln.startswith("  Holm p: Holm over the experiment's 1 Fisher tests") for ln in _attribution_text({**res, "path": "x"}))


@pytest.mark.slow
def test_bifurcation_continues_each_variant_k_times_and_explains_a_shortfall(probed, tmp_path, capsys):
    p = ParentGame.load(probed)
    vote = next(e for e in p.records if e["kind"] == "day_vote")
    at = f"{vote['round']}.{vote['msg_seq']}"
    assert main(["replay", "bifurcate", str(probed), "--at", at, "--seat", vote["player"], "--samples", "3", "--select", "10",
                 "--continuations", "2", "--logs", str(tmp_path), "--json", "--batch-seed", "2"]) == 0  # fmt: skip
    res = json.loads(capsys.readouterr().out)
    vs = res["variants"]
    assert len(vs) < 10 and "distinct texts" in res["shortfall"] and res["continuations_per_variant"] == 2
    ids = [c["fork_game_id"] for v in vs for c in v["continuations"]]
    assert len(ids) == 2 * len(vs) == len(set(ids))  # every continuation is its own game
    assert all(v["fork_game_id"] == v["continuations"][0]["fork_game_id"] and v["mafia_wins"]["n"] == 2 for v in vs)
    assert sum(res["winners"].values()) == 2 * len(vs)
    assert main(["replay", "bifurcate", str(probed), "--at", at, "--continuations", "0", "--logs", str(tmp_path)]) == 2


def test_farthest_point_covers_targets():
    texts = ["VOTE: A", "VOTE: A again", "VOTE: B", "totally different words VOTE: A", "VOTE: C", "VOTE: B!"]
    targets = ["A", "A", "B", "A", "C", "B"]
    idx = farthest_point(texts, targets, 4)
    assert idx[0] == 0 and {targets[i] for i in idx} == {"A", "B", "C"} and len(set(idx)) == 4


def test_statistics_helpers():
    assert fisher_exact(2, 5, 4, 5) == pytest.approx(0.5238, abs=1e-3)
    lo, hi = newcombe(4, 5, 2, 5)
    assert lo < 0.4 < hi
    assert suspicion_ranks([{"player": "A", "score": 90}, {"player": "B", "score": 10}, {"player": "Me", "score": 99}], "Me") == {"A": 1.0, "B": 0.0}
    assert headline("suspicion_ranking", {"answer_parse_ok": True, "answer_parsed": [{"player": "A", "score": 1}, {"player": "B", "score": 5}]}) == "B"


@pytest.mark.slow
def test_validate_ab_and_repeat(tmp_path, capsys):
    import yaml

    cfg = tmp_path / "c.yaml"
    data = bot_cfg().model_dump(mode="json")
    data["probes"] = {"enabled": True, "battery": "suspicion"}
    cfg.write_text(yaml.safe_dump(data))
    assert main(["validate", "ab", "-c", str(cfg), "--games", "3", "--logs", str(tmp_path / "ab"), "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["mafia_wins"]["probed"]["n"] == 3 and res["mafia_wins"]["unprobed"]["n"] == 3
    assert res["identical_pairs"] == 3  # bots: probing never changes the game
    assert res["mafia_wins"]["fisher_p"] == 1.0 and res["rounds"]["mann_whitney_p"] == 1.0
    assert res["p_holm_family"]["size"] == 3 and res["mafia_wins"]["fisher_p_holm"] == 1.0
    assert main(["validate", "repeat", str(tmp_path / "ab" / "probed"), "--states", "3", "--repeats", "3", "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["states"] == 3 and rep["overall"]["pairs"] > 0 and "suspicion_ranking" in rep["per_probe"]
    assert main(["validate", "repeat", str(tmp_path / "ab" / "unprobed"), "--states", "2", "--repeats", "2"]) == 2


def test_an_experiments_tests_are_one_holm_family_rounded_never_zero():
    from mafiascope.replay.experiments import adjust_family

    a, b, c, gone = {"fisher_p": 1e-300}, {"fisher_p": 0.04}, {"mann_whitney_p": 0.5}, {"fisher_p": None}
    fam = adjust_family([("a", a, "fisher_p"), ("b", b, "fisher_p"), ("c", c, "mann_whitney_p"), ("empty arm", gone, "fisher_p")],
                        "Holm over {n} tests")  # fmt: skip
    assert fam == {"size": 3, "text": "Holm over 3 tests", "tests": ["a", "b", "c"]}
    assert a["fisher_p"] > 0 and a["fisher_p_holm"] == pytest.approx(3e-300)  # rounded to 3 figures, never 0
    assert b["fisher_p_holm"] == 0.08 and c["mann_whitney_p_holm"] == 0.5  # step-down: 3p, 2p, p (monotone)
    assert gone["fisher_p_holm"] is None
