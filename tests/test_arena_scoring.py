"""Arena scores on hand-built event logs with answers worked out by hand."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mafiascope.arena.scoring import load_records, report

SEATS = [("D", "Don", "maf"), ("M1", "Mafia", "maf"), ("M2", "Mafia", "maf"), ("S", "Sheriff", "sher")] + [
    (f"V{i}", "Villager", "vil") for i in range(6)
]


def write_game(root: Path, gid: str, winner: str, first_shot: str, suspects: list[str], rules: str = "sport",
               swap: dict[str, str] | None = None, extra: list[dict] | None = None) -> None:  # fmt: skip
    players = [{"name": n, "role": r, "backend": (swap or {}).get(n, m), "model": m} for n, r, m in SEATS]
    evs = [{"game_id": gid, "kind": "setup", "game_type": "tournament", "rule_set": rules, "players": players}]
    evs.append({"game_id": gid, "kind": "night_kill", "round": 1, "victim": first_shot, "first_shot": True})
    evs.append({"game_id": gid, "kind": "best_move", "round": 2, "player": first_shot, "response": "...", "suspects": suspects})
    evs += extra or []
    evs.append({"game_id": gid, "kind": "game_over", "round": 4, "winner": winner})
    (root / gid).mkdir(parents=True)
    (root / gid / "game.jsonl").write_text("\n".join(json.dumps(e) for e in evs) + "\n")


@pytest.fixture
def logs(tmp_path):
    g1_extra = [
        {"kind": "day_vote", "round": 1, "player": "M1", "target": "V0", "target_valid": True, "ballot": "vote"},
        {"kind": "day_vote", "round": 1, "player": "V0", "target": "M1", "target_valid": True, "ballot": "vote"},
        {"kind": "day_vote", "round": 1, "player": "S", "target": "V1", "target_valid": True, "ballot": "vote"},
        {"kind": "day_vote", "round": 1, "player": "V2", "target": "No", "target_valid": True, "ballot": "remove_all"},
        {"kind": "day_eliminate", "round": 1, "eliminated": "V1", "role": "Villager", "votes": 1},
        {"kind": "night_sheriff_result", "round": 1, "sheriff": "S", "checked": "M2", "result": "Mafia", "visible_to": ["S"]},
        {"kind": "night_shots", "round": 1, "shots": {"D": "V3", "M1": "V3", "M2": "V4"}, "landed": False, "visible_to": []},
    ]
    # G1: town wins; V5 (first shot) names two Mafia -> +0.25; V0 is played by "vil2"
    write_game(tmp_path, "g1", "Villagers", "V5", ["D", "M1", "V2"], swap={"V0": "vil2"}, extra=g1_extra)
    # G2: Mafia win; V5 names all three Mafia -> +0.5
    write_game(tmp_path, "g2", "Mafia", "V5", ["D", "M1", "M2"])
    # G3: town wins; no best move bonus
    write_game(tmp_path, "g3", "Villagers", "V5", ["V1", "V2"])
    # an unfinished game and a classic game are ignored
    (tmp_path / "g4").mkdir()
    (tmp_path / "g4" / "game.jsonl").write_text(json.dumps({"kind": "setup", "game_id": "g4", "game_type": "tournament", "players": []}) + "\n")
    return tmp_path


def test_points_side_means_and_scores(logs):
    recs = load_records(logs)
    assert len(recs) == 3
    g1 = next(r for r in recs if r["game_id"] == "g1")
    assert g1["points"]["V5"] == 1.25 and g1["points"]["D"] == 0.0
    rep = report(recs)
    town_mean = (7 + 0.25 + 0.5 + 7) / 21  # three games x seven town seats
    maf_mean = 3 / 9
    assert rep["side_means"]["sport"]["Villagers"] == pytest.approx(town_mean, abs=1e-4)
    assert rep["side_means"]["sport"]["Mafia"] == pytest.approx(maf_mean, abs=1e-4)
    board = {r["model"]: r for r in rep["leaderboards"]["overall"]}
    # maf: 9 seats, points 0,0,0 / 1,1,1 / 0,0,0 -> mean 1/3 - side mean 1/3 = 0
    assert board["maf"]["score"] == pytest.approx(0.0, abs=1e-4) and board["maf"]["games"] == 3
    assert board["maf"]["seats"] == 9  # games are games; the nine seats are counted apart
    # sher: 1, 0, 1 -> 2/3 - town mean
    assert board["sher"]["score"] == pytest.approx(2 / 3 - town_mean, abs=1e-4)
    # vil2: one seat, won -> 1 - town mean; a single game has no standard error
    assert board["vil2"]["score"] == pytest.approx(1 - town_mean, abs=1e-4) and board["vil2"]["se"] is None
    assert rep["leaderboards"]["mafia"][0]["model"] == "maf"
    assert {r["model"] for r in rep["leaderboards"]["town"]} == {"sher", "vil", "vil2"}


def test_pairs_are_shrunk(logs):
    rep = report(load_records(logs))
    team = {(r["a"], r["b"]): r for r in rep["pairs"]["teammates"]}
    # sher & vil2 shared one game (G1, a town win; town base rate 2/3): lift 1/3, ranked (1/3) / (1 + 4)
    assert team[("sher", "vil2")]["games"] == 1
    assert team[("sher", "vil2")]["ranked"] == pytest.approx((1 / 3) / 5, abs=1e-4)
    mism = {(r["a"], r["b"]): r for r in rep["pairs"]["mismatches"]}
    assert mism[("vil2", "maf")]["ranked"] == pytest.approx((1 / 3) / 5, abs=1e-4)
    assert mism[("maf", "vil2")]["ranked"] == pytest.approx((-1 / 3) / 5, abs=1e-4)
    riv = {(r["a"], r["b"]): r for r in rep["pairs"]["rivals"]}
    assert riv[("maf", "vil2")]["clashes"] == 1 and riv[("maf", "vil2")]["ranked"] == pytest.approx(1 / 5, abs=1e-4)
    assert riv[("maf", "sher")]["clashes"] == 0


def test_rule_measures(logs):
    rep = report(load_records(logs))
    m = rep["rule_measures"][0]
    assert m["games"] == 3 and m["mafia_wins"] == 1 and m["mafia_win_rate"] == pytest.approx(1 / 3, abs=1e-4)
    lo, hi = m["mafia_win_ci"]
    assert lo < 1 / 3 < hi
    # town ballots: V0 -> M1 (Mafia), S -> V1 (town); the yes/no ballot does not count
    assert m["town_ballots"] == 2 and m["town_ballots_on_mafia"] == 0.5
    assert m["first_vote_removed_town"] == 1 and m["town_wins_after_wrong_first_vote"] == 1
    assert m["night_shots"] == 1 and m["night_shots_missed"] == 1
    sher = next(r for r in rep["models"] if r["model"] == "sher")
    assert sher["sheriff"] == {"wins": 2, "games": 3, "mafia_found": 1, "checks": 1}


def test_spearman_between_rule_sets(tmp_path):
    # four models ranked the same way under two rule sets -> rho = 1
    for k, rules in enumerate(("sport", "imbalanced")):
        for i, (w, fs, sus) in enumerate((("Villagers", "V0", ["D", "M1", "M2"]), ("Mafia", "V5", []))):
            write_game(tmp_path, f"{rules}{i}", w, fs, sus, rules=rules, swap={"V0": "vil2", "V1": "vil2"})
    rep = report(load_records(tmp_path))
    rho = rep["spearman"][0]
    assert rho["models"] == 4 and rho["rho"] == pytest.approx(1.0) and rho["why_none"] is None


def test_leaderboard_se_is_clustered_by_game_and_ties_share_a_rank():
    from mafiascope.arena.scoring import cluster_mean_se, competition_ranks

    assert competition_ranks([0.5, 0.5, 0.2, None]) == [1, 1, 3, 4]
    # two games, three seats each, all seats of a game alike: the naive seat SE treats six
    # values as independent; resampling games sees only two clusters
    sums, counts = [3.0, 0.0], [3, 3]
    mu, se, ci = cluster_mean_se(sums, counts, boot=2000)
    naive = (sum((x - 0.5) ** 2 for x in [1, 1, 1, 0, 0, 0]) / 5 / 6) ** 0.5
    assert mu == 0.5 and se > naive * 1.4 and ci == [0.0, 1.0]
    assert cluster_mean_se([1.0], [2]) == (0.5, None, None)


def test_spearman_says_why_it_has_no_value():
    from mafiascope.arena.scoring import spearman

    two = [{"model": "x", "score": 1.0}, {"model": "y", "score": 0.0}]
    res = spearman({"sport": two, "open": two})
    assert res[0]["rho"] is None and "only 2 model(s)" in res[0]["why_none"]
