"""mafiascope.dataframes on the bundled corpora: one row per game, seat, counted vote, probe call and
assessed player, with the shared columns, checked against the logs read one game at a time."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest

from mafiascope import dataframes as D
from mafiascope.logs import read_game
from mafiascope.logs.schema import VoteTally
from mafiascope.play.ledger import StudyLedger

ROOT = Path(__file__).resolve().parents[1]
OURS = [ROOT / "data" / "demo", ROOT / "data" / "arena"]  # fast to parse; the original corpora in the slow lane
BUNDLED = [*OURS, ROOT / "data" / "corpus"]
SHARED = ("game_id", "language", "rule_set", "study", "arm")


@pytest.fixture(scope="module")
def corpus():
    return D.load(OURS)


@pytest.fixture(scope="module")
def frames(corpus):
    return {f.__name__: f(corpus) for f in (D.games_df, D.seats_df, D.votes_df, D.probes_df, D.beliefs_df)}


def test_one_row_per_unit_and_the_shared_columns(corpus, frames):
    assert len(frames["games_df"]) == corpus.m == 40  # invalid and probe-less games included
    assert len(frames["seats_df"]) == corpus.n_rows("players")
    assert len(frames["votes_df"]) == corpus.n_rows("votes")
    assert len(frames["probes_df"]) == corpus.n_rows("probes")
    assert len(frames["beliefs_df"]) == sum(corpus.n_rows(t) for t in ("ra", "sr", "sm", "pp"))
    for name, df in frames.items():
        assert list(df.columns[: len(SHARED)]) == list(SHARED), name
        if name != "games_df":
            assert {"model", "role", "side"} <= set(df.columns), name
            assert df["side"].isin(["Mafia", "Town"]).all(), name
    assert set(frames["games_df"]["language"]) == {"en", "ru"}
    arena = frames["games_df"][frames["games_df"]["game_id"].str.startswith("demo-bots-")]
    assert len(arena) == 30 and set(arena["study"]) == {"arena-demo-bots"}
    assert set(arena["arm"]) == {"sport", "open_table", "imbalanced"} and (arena["arm"].astype(str) == arena["rule_set"].astype(str)).all()
    assert frames["games_df"]["arm"].isna().sum() == 10  # the demo games: no ledger


def test_seats_and_votes_match_the_logs(frames):
    gid = "demo-classic-01"
    log = read_game(ROOT / "data" / "demo" / gid)
    seats = frames["seats_df"][frames["seats_df"]["game_id"] == gid]
    assert list(seats["name"]) == log.names and list(seats["role"]) == [p.role for p in log.setup.players]
    assert list(seats["model"]) == [p.model for p in log.setup.players]
    assert (seats["won"] == (seats["side"] == ("Town" if log.game_over.winner == "Villagers" else "Mafia"))).all()
    votes = frames["votes_df"][frames["votes_df"]["game_id"] == gid]
    want = sorted((t.round, voter, target) for t in log.events_of(VoteTally) for voter, target in (t.votes or {}).items())
    assert sorted(zip(votes["round"], votes["name"], votes["target_name"])) == want
    roles = dict(zip(seats["name"], seats["role"]))
    assert all(roles[n] == r for n, r in zip(votes["target_name"], votes["target_role"]))


def test_probe_calls_and_beliefs_match_the_records(frames):
    gid = "demo-classic-01"
    log = read_game(ROOT / "data" / "demo" / gid)
    probes = frames["probes_df"][frames["probes_df"]["game_id"] == gid]
    assert len(probes) == len(log.probes)
    assert sorted(zip(probes["round"], probes["name"], probes["probe_id"])) == sorted(
        (p.round, log.names[p.player_idx], p.probe_id) for p in log.probes)
    plans = probes[probes["probe_id"] == "planned_action"]
    want = [(p.answer_parsed or {}).get("action") for p in log.probes if p.probe_id == "planned_action"]
    assert sorted(plans["answer_action"].dropna()) == sorted(a for a in want if a)
    beliefs = frames["beliefs_df"]
    ra = beliefs[(beliefs["game_id"] == gid) & (beliefs["probe_id"] == "role_assessment")]
    rec = next(p for p in log.probes if p.probe_id == "role_assessment" and p.answer_parse_ok)
    rows = ra[(ra["round"] == rec.round) & (ra["msg_seq"] == rec.public_msg_seq) & (ra["seat"] == rec.player_idx)]
    got = {n: (r, float(c)) for n, r, c in zip(rows["target_name"], rows["guessed_role"], rows["confidence"])}
    assert got == {a["player"]: (a["guessed_role"], float(a["confidence"])) for a in rec.answer_parsed}
    known = ra.dropna(subset=["correct"])
    truth = known["guessed_role"].isin(["Mafia", "Don"]) == known["target_side"].eq("Mafia")
    assert (known["correct"].astype(bool) == truth).all()
    sr = beliefs[beliefs["probe_id"] == "suspicion_ranking"]
    assert sr["rank"].min() == 1 and sr["guessed_role"].isna().all()
    assert beliefs["step"].astype(str).str.match(r"^R\d+\.(\d+|end)$").all()
    only = D.beliefs_df(ROOT / "data" / "demo", probes=["role_assessment"])
    assert set(only["probe_id"]) == {"role_assessment"} and len(only) == len(beliefs[beliefs["probe_id"] == "role_assessment"]
                                                                          [lambda b: b["game_id"].str.startswith("demo-")])
    with pytest.raises(ValueError, match="no such probe"):
        D.beliefs_df(ROOT / "data" / "demo", probes=["role_asessment"])


def test_a_study_ledger_gives_the_arm(tmp_path):
    games = tmp_path / "study" / "games"
    for gid in ("demo-classic-01", "demo-classic-02"):
        shutil.copytree(ROOT / "data" / "demo" / gid, games / gid)
    StudyLedger(tmp_path / "study").init({"name": "pilot", "spec_hash": "x", "games": 2}, [
        {"game_id": "demo-classic-01", "arm": "strict", "index": 0, "seed": 1},
        {"game_id": "demo-classic-02", "arm": "loose", "index": 0, "seed": 2}])
    c = D.load(games, cache_dir=tmp_path / "cache")
    for df in (D.games_df(c), D.seats_df(c), D.beliefs_df(c)):
        arms = df.groupby("game_id", observed=True)["arm"].first().to_dict()
        assert arms == {"demo-classic-01": "strict", "demo-classic-02": "loose"} and set(df["study"]) == {"pilot"}


@pytest.mark.slow
def test_replay_branches_join_the_frames_only_when_asked_and_named(tmp_path, capsys):
    """An attribution's PRE/POST rerolls and a fork batch write games beside their parent: the frames keep
    to played games unless ``include_forks=True``, and then name each branch's experiment and arm."""
    import json

    from mafiascope.cli import main
    from mafiascope.logs.io import read_jsonl

    logs = tmp_path / "logs"
    assert main(["run", "-c", str(ROOT / "configs" / "classic.yaml"), "--seed", "3", "--logs", str(logs), "--game-id", "parent",
                 "-q", "--json"]) == 0  # fmt: skip
    speech = next(e for e in read_jsonl(logs / "parent" / "game.jsonl") if e.get("kind") == "day_discuss")
    at = f"{speech['round']}.{speech['msg_seq']}"
    assert main(["replay", "attribution", str(logs / "parent"), "--utterances", at, "-n", "1", "--probes", "none",
                 "--logs", str(logs), "--json"]) == 0  # fmt: skip
    exp = json.loads(capsys.readouterr().out.strip().splitlines()[-1])["experiment_id"]
    assert main(["fork", str(logs / "parent"), "--at", at, "-n", "1", "--logs", str(logs), "--json"]) == 0
    plain = D.games_df(D.load(logs, cache_dir=tmp_path / "cache"))
    assert list(plain["game_id"]) == ["parent"] and plain["arm"].isna().all()
    every = D.games_df(D.load(logs, cache_dir=tmp_path / "cache", include_forks=True))
    branches = every[every["forked_from"].notna()]
    assert len(every) == 4 and set(branches["forked_from"]) == {"parent"}
    named = dict(zip(branches["arm"], branches["study"]))
    assert named["pre"] == named["post"] == exp and named["fork"].startswith("fork-")
    seats = D.seats_df(D.load(logs, cache_dir=tmp_path / "cache", include_forks=True))
    assert set(seats["arm"].dropna()) == {"pre", "post", "fork"}


def test_frames_take_paths_and_selection():
    df = D.games_df(ROOT / "data" / "demo")
    assert len(df) == 10 and df["game_id"].is_unique
    ru = D.seats_df(D.load(OURS, language="ru"))
    assert set(ru["language"]) == {"ru"} and len(ru) > 0
    empty = D.probes_df(D.load(ROOT / "data" / "arena"))
    assert empty.empty and isinstance(empty, pd.DataFrame)


@pytest.mark.slow
def test_the_original_corpora_read_as_they_are():
    """The original MafiaScope format (no ledger, no plans): every frame, Russian and English."""
    c = D.load(ROOT / "data" / "corpus")
    games, beliefs = D.games_df(c), D.beliefs_df(c)
    assert len(games) == 6 and set(games["model"]) == {"deepseek-chat"} and games["arm"].isna().all()
    assert len(D.seats_df(c)) == c.n_rows("players") and len(D.votes_df(c)) == c.n_rows("votes") == 43  # the tally's (one vote it dropped)
    assert len(D.probes_df(c)) == c.n_rows("probes") and set(beliefs["language"]) == {"en", "ru"}
    assert beliefs.loc[beliefs["probe_id"] == "role_assessment", "correct"].notna().any()


@pytest.mark.slow
def test_custom_probe_fields_become_answer_columns(tmp_path):
    from mafiascope.cli import main

    from .test_custom_probes import BATTERY

    (tmp_path / "battery.yaml").write_text(BATTERY)
    logs = tmp_path / "logs"
    assert main(["run", "-c", "configs/classic.yaml", "--probes-file", str(tmp_path / "battery.yaml"), "--logs", str(logs),
                 "--seed", "3", "-q", "--json"]) == 0
    p = D.probes_df(logs)
    threat = p[p["probe_id"] == "threat"]
    assert len(threat) > 0 and {"answer_target", "answer_danger", "answer_mood", "answer_p_right"} <= set(p.columns)
    assert threat["answer_mood"].isin(["calm", "worried", "angry"]).all()
    assert p.loc[p["probe_id"] == "role_assessment", "answer_danger"].isna().all()
