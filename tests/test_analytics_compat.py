"""Compat mode reproduces every figure the original MafiaScope computed on the bundled English demo
corpus (tests/fixtures/reference/original_en_demo.json: the original's figures, under our metric
names; its ``source`` says how they were made); default differs only as documented."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
REF = ROOT / "tests" / "fixtures" / "reference" / "original_en_demo.json"
CORPUS = ROOT / json.loads(REF.read_text(encoding="utf-8"))["source"]["corpus"]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    from mafiascope.analytics.corpus import load_corpus

    return load_corpus(CORPUS, cache_dir=tmp_path_factory.mktemp("cache"))


@pytest.fixture(scope="module")
def ref():
    return json.loads(REF.read_text())


def _same(mine, theirs, path="", tol=5e-7):
    """Recursive comparison at the printed precision (6 decimals, 4 in the viewer)."""
    if isinstance(theirs, dict):
        for k, v in theirs.items():
            assert k in mine, f"{path}.{k} missing"
            _same(mine[k], v, f"{path}.{k}", tol)
    elif isinstance(theirs, list):
        assert isinstance(mine, list) and len(mine) == len(theirs), f"{path}: {mine} != {theirs}"
        for i, (a, b) in enumerate(zip(mine, theirs)):
            _same(a, b, f"{path}[{i}]", tol)
    elif isinstance(theirs, float) or (isinstance(theirs, int) and not isinstance(theirs, bool) and isinstance(mine, float)):
        assert mine is not None and math.isclose(mine, theirs, abs_tol=tol), f"{path}: {mine} != {theirs}"
    else:
        assert mine == theirs, f"{path}: {mine!r} != {theirs!r}"


@pytest.mark.slow
def test_parse_cost_outcome(corpus, ref):
    from mafiascope.analytics import accounting
    from mafiascope.analytics.modes import COMPAT

    r = ref["corpus"]
    p = accounting.parse_accounting(corpus, COMPAT)
    _same({"probe_calls": p["calls"], **p}, r["parse"], "parse")
    _same(accounting.probe_cost(corpus), r["probe_cost"], "cost")
    o = accounting.outcomes(corpus)
    assert (o["completed"], o["mafia_wins"]) == (r["outcome"]["completed"], r["outcome"]["mafia_wins"])
    assert corpus.m == r["games"] and sorted(corpus.game_ids) == ref["source"]["games"]
    games = [d for d in CORPUS.iterdir() if (d / "game.jsonl").is_file()]
    assert len(games) == r["registry_games"]
    assert [d.name for d in games if not (d / "introspection.jsonl").is_file()] == r["registry_games_without_probe_log"]


def test_f1_f2_f3(corpus, ref):
    from mafiascope.analytics import f1, f2, f3
    from mafiascope.analytics.modes import COMPAT

    _same(f1.f1_by_round(corpus, COMPAT), ref["f1_by_round"], "f1")
    _same(f2.f2(corpus, COMPAT, breakdowns=False), ref["f2"], "f2")
    _same(f3.f3(corpus, COMPAT), ref["f3"], "f3")
    pub = ref["published"]
    can = f3.f3(corpus, COMPAT)["canonical"]
    assert round(can["suspects_ratio"], 2) == pub["f3_ratio"]
    assert [round(x, 2) for x in can["ratio_ci95"]] == pub["f3_ratio_ci95"]


def test_f4_probe_rules(corpus, ref):
    from mafiascope.analytics import f4
    from mafiascope.analytics.modes import COMPAT

    mine = f4.f4(corpus, COMPAT, transcripts=False)
    for grp, entry in ref["f4"].items():
        assert mine[grp]["n_votes"] == entry["n_votes"]
        for rule in ("top1", "committed_set", "post_vote_top1"):
            _same(mine[grp][rule], entry[rule], f"f4.{grp}.{rule}")


@pytest.mark.slow
def test_f4_transcript_most_mentioned_innocent(corpus, ref):
    from mafiascope.analytics import f4
    from mafiascope.analytics.modes import COMPAT

    mine = f4.f4(corpus, COMPAT, transcripts=True)
    _same(mine["innocent"]["transcript_most_mentioned"], ref["f4"]["innocent"]["transcript_most_mentioned"])


def test_f4_transcript_baselines_all(corpus, ref):
    from mafiascope.analytics import f4
    from mafiascope.analytics.modes import COMPAT

    mine = f4.f4(corpus, COMPAT, transcripts=True)
    for grp, entry in ref["f4"].items():
        for k in ("transcript_most_mentioned", "transcript_most_accused"):
            _same(mine[grp][k], entry[k], f"f4.{grp}.{k}")


def test_dynamics(corpus, ref):
    from mafiascope.analytics import dynamics
    from mafiascope.analytics.modes import COMPAT

    _same(dynamics.dynamics(corpus, COMPAT), ref["dynamics"], "dyn")


@pytest.mark.slow
def test_viewer_metrics_every_game(corpus, ref):
    from mafiascope.analytics import viewer
    from mafiascope.analytics.modes import COMPAT

    for gid, theirs in ref["viewer"].items():
        _same(viewer.step_metrics(corpus, gid, COMPAT), theirs, gid, tol=5e-5)


@pytest.mark.slow
def test_default_mode_documented_differences(corpus):
    """Default corrects the quirks: round-end last, alive filters, n not doubled; probe-free parts unchanged."""
    from mafiascope.analytics import accounting, dynamics, f1, f2, f3, f4
    from mafiascope.analytics.modes import COMPAT, DEFAULT

    dc, dd = dynamics.dynamics(corpus, COMPAT), dynamics.dynamics(corpus, DEFAULT)
    # the Mafia n is doubled only in compat
    assert dc["Mafia"]["volatility"]["n"] == 2 * dd["Mafia"]["volatility"]["n"]
    # moving round-end probes last changes the sequences (docs/metrics.md §1.5: volatility and flips move)
    assert dd["all"]["volatility"]["point"] != dc["all"]["volatility"]["point"]
    assert dd["all"]["volatility"]["n"] == dc["all"]["volatility"]["n"]  # same pairs, other order
    # the alive filter on targets only removes items (guesses about dead players)
    for r, v in f1.f1_by_round(corpus, COMPAT).items():
        assert f1.f1_by_round(corpus, DEFAULT)[r]["acc_n"] <= v["acc_n"]
    assert f2.f2(corpus, DEFAULT, breakdowns=False)["n"] <= f2.f2(corpus, COMPAT, breakdowns=False)["n"]
    # F3 ordering fix changes the ratio (no look-ahead to the round-end assessment)
    assert f3.f3(corpus, DEFAULT)["canonical"]["suspects_ratio"] != f3.f3(corpus, COMPAT)["canonical"]["suspects_ratio"]
    # parse accounting does not depend on the mode
    assert accounting.parse_accounting(corpus, DEFAULT) == accounting.parse_accounting(corpus, COMPAT)
    # F4 alive set from deaths can only add candidates: chance of top-1 cannot rise
    a, b = f4.f4(corpus, COMPAT, transcripts=False), f4.f4(corpus, DEFAULT, transcripts=False)
    assert b["innocent"]["top1"]["chance"] <= a["innocent"]["top1"]["chance"]


@pytest.mark.parametrize("mode_name", ["COMPAT", "DEFAULT"])
@pytest.mark.slow
def test_viewer_match_per_step_agrees_with_summary(corpus, mode_name):
    """per_step[i]['match'][agent] is the one series: the last-step and pooled figures are read off it."""
    from mafiascope.analytics import modes, viewer

    mode = getattr(modes, mode_name)
    for gid in corpus.game_ids:
        res = viewer.step_metrics(corpus, gid, mode)
        ps = res["per_step"]
        assert all("match" in s for s in ps)
        for agent, last in res["impersonate_match_last_step_per_agent"].items():
            at = ps[last["step"]]
            assert at["label"] == last["label"]
            assert {k: at["match"][agent][k] for k in ("matched", "total")} == {"matched": last["matched"], "total": last["total"]}
            later = [s["match"].get(agent, {}).get("total", 0) for s in ps[last["step"] + 1:]]
            assert not any(later), f"{gid} {agent}: a later step has a score"
        pooled = res["impersonate_match_pooled"]
        assert pooled["matched"] == sum(v["matched"] for s in ps for v in s["match"].values())
        assert pooled["total"] == sum(v["total"] for s in ps for v in s["match"].values())
        for s in ps:
            for agent, v in s["match"].items():
                assert v["total"] - v["matched"] == len(v["mismatched"]) and agent not in v["mismatched"]


@pytest.mark.parametrize("mode_name", ["COMPAT", "DEFAULT"])
def test_f3_pairs_carry_the_step(corpus, mode_name):
    """f3_pairs names the predictor's probe step as (round, public_msg_seq), -1 = round end, in both modes."""
    from mafiascope.analytics import f3, modes

    p = f3.f3_pairs(corpus, getattr(modes, mode_name))
    probes = corpus.probes
    assert len(p) and (p["round"].to_numpy() == p["a_round"].to_numpy()).all()
    steps = set(zip(probes["round"].tolist(), probes["pms"].tolist()))
    assert set(zip(p["round"].tolist(), p["public_msg_seq"].tolist())) <= steps
    assert (p["public_msg_seq"].to_numpy() == -1).any()


def test_compat_transcript_rule_ties_and_forms():
    """The restated original rule on hand-built messages: tie order, case, Cyrillic forms, cue sentences."""
    from mafiascope.analytics.f4 import _transcript_picks

    names = ["Alex", "Bailey", "Casey", "Gray"]
    # one message mentions Alex and Casey once each: the tie goes to the name sorting last (Casey),
    # not to the one written last in the text
    assert _transcript_picks(["Casey and Alex talked."], [0, 2], names, compat=True) == (2, None)
    # a later message wins a tie over an earlier one
    assert _transcript_picks(["Casey is loud.", "Alex is quiet."], [0, 2], names, compat=True) == (0, None)
    # names are case-sensitive; a transliteration stem plus an inflection counts ("Алексу" is Alex)
    assert _transcript_picks(["gray gray. Алексу подозреваю!"], [0, 3], names, compat=True) == (0, 0)
    # accusation counts only sentences with a cue; mentions in other sentences do not
    mm, ma = _transcript_picks(["Bailey Bailey is nice.\nI suspect Casey."], [1, 2], names, compat=True)
    assert (mm, ma) == (1, 2)
