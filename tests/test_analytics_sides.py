"""Outcomes per side, the side-adjusted score, self-play and a model's own resampling (issue 32 item 4).

Hand-built games (tests/handbuilt.py: Ann is the Mafia seat) give known answers fast; corpora played by the
offline bots (``mafiascope batch --no-probes``, one preset at every seat) check the same on real logs.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mafiascope.analytics import seats
from mafiascope.analytics.corpus import load_corpus
from mafiascope.analytics.f1 import f1_by_round
from mafiascope.analytics.f2 import f2
from mafiascope.analytics.modes import Mode

from .handbuilt import write_game

OUTCOME = ("outcome.seat_win_rate", "outcome.win_rate_mafia", "outcome.win_rate_town", "outcome.side_adjusted")


def _rows(res):
    return {r["metric"]: r for r in res["rows"]}


def _self_play(root: Path, model: str, winners: str) -> Path:
    """Games in which ``model`` holds every seat; ``winners``: M (Mafia) or V per game."""
    for i, w in enumerate(winners):
        write_game(root, f"{model}-{i:02d}", "Mafia" if w == "M" else "Villagers", models=[model] * 4)
    return root


def test_self_play_outcomes_are_not_model_skill(tmp_path):
    """Two self-play corpora: every outcome figure of each model is n/a (0 counted seats) instead of its
    side's share (1/4 or 3/4 per game), and the comparison has no outcome row with a difference."""
    _self_play(tmp_path / "x", "X", "MMMM")
    _self_play(tmp_path / "y", "Y", "VVMV")
    c = load_corpus([tmp_path / "x", tmp_path / "y"])
    bm = seats.by_model(c, Mode(boot=100))
    for mdl in ("X", "Y"):
        assert bm[mdl]["self_play_games"] == 4
        for key in OUTCOME:
            assert bm[mdl]["metrics"][key]["point"] is None and bm[mdl]["metrics"][key]["n"] == 0
        assert bm[mdl]["metrics"]["f1.accuracy"]["point"] is not None  # the probe figures stay
    res = seats.compare(c, Mode(boot=100), "X", "Y")
    assert res["design"] == seats.INDEPENDENT and res["games_shared"] == 0
    assert (res["self_play_a"], res["self_play_b"]) == (4, 4)
    rows = _rows(res)
    assert all(rows[k]["diff"] is None and rows[k]["p"] is None for k in OUTCOME[1:])
    assert all(k not in res["p_holm_family"]["tests"] for k in OUTCOME)


def test_side_adjusted_score_takes_out_the_side_drawn(tmp_path):
    """Model A holds the Mafia seat of every game and the Mafia win 3 of 4: A's seat win rate (Ann 3/4, Bob
    1/4: 1/2) is below B's (1/4) only by the side; each seat's win minus its side's base rate averages 0."""
    for i, w in enumerate("MMMV"):
        write_game(tmp_path / "logs", f"g{i}", "Mafia" if w == "M" else "Villagers")
    c = load_corpus(tmp_path / "logs")
    m = seats.by_model(c, Mode(boot=0))
    a, b = m["A"]["metrics"], m["B"]["metrics"]
    assert a["outcome.seat_win_rate"]["point"] == 0.5 and b["outcome.seat_win_rate"]["point"] == 0.25
    assert a["outcome.win_rate_mafia"]["point"] == 0.75 and a["outcome.win_rate_town"]["point"] == 0.25
    assert b["outcome.win_rate_mafia"]["point"] is None and b["outcome.win_rate_mafia"]["n"] == 0
    assert a["outcome.side_adjusted"]["point"] == 0 and b["outcome.side_adjusted"]["point"] == 0
    # a self-play game joining the corpus changes neither the base rates nor anyone's score
    write_game(tmp_path / "logs", "solo", "Villagers", models=["A"] * 4)
    c2 = load_corpus(tmp_path / "logs")
    assert seats.by_model(c2, Mode(boot=0))["A"]["metrics"]["outcome.side_adjusted"] == a["outcome.side_adjusted"]


def test_side_adjusted_scores_sum_to_zero_over_the_counted_seats(tmp_path):
    """The models swap seats between games, so both hold both sides: each seat's win minus its side's base rate
    sums to zero over all counted seats (a score above 0 is a model winning more than its sides do)."""
    for i, (w, models) in enumerate((("M", "AABB"), ("V", "BBAA"), ("V", "AABB"), ("M", "BBAA"), ("M", "ABAB"))):
        write_game(tmp_path / "logs", f"g{i}", "Mafia" if w == "M" else "Villagers", models=list(models))
    c = load_corpus(tmp_path / "logs")
    m = seats.by_model(c, Mode(boot=0))
    adj = {k: m[k]["metrics"]["outcome.side_adjusted"] for k in ("A", "B")}
    assert adj["A"]["n"] == adj["B"]["n"] == 10
    assert adj["A"]["point"] * adj["A"]["n"] + adj["B"]["point"] * adj["B"]["n"] == pytest.approx(0, abs=1e-9)
    assert adj["A"]["point"] != 0  # A won more than its sides did (base rates: Mafia 3/5, town 2/5)
    assert adj["A"]["point"] == pytest.approx(_score(c, "A"), abs=1e-6)


def _score(c, model: str) -> float:
    """The side-adjusted score of ``model`` from the games' winners and seats, computed directly."""
    g, p = c.games, c.players
    side = {(gi, s): r in ("Mafia", "Don") for gi, s, r in zip(p["g"], p["seat"], p["role"])}
    base = {True: (g["winner"] == "Mafia").mean(), False: (g["winner"] == "Villagers").mean()}
    vals = [(g["winner"].iat[gi] == ("Mafia" if side[(gi, s)] else "Villagers")) - base[side[(gi, s)]]
            for gi, s, mdl in zip(p["g"], p["seat"], p["model"]) if mdl == model]
    return sum(vals) / len(vals)


def test_a_models_interval_does_not_depend_on_the_other_models_loaded(tmp_path):
    """A's figures over its own games: loading another model's games beside them changes no point and no
    interval of A (per-model metrics, F1 by round and F2), in both analysis modes."""
    for i, w in enumerate("MVVMV"):
        write_game(tmp_path / "a", f"a{i}", "Mafia" if w == "M" else "Villagers", models=["A", "A", "C", "C"])
    _self_play(tmp_path / "z", "Z", "MVMVVM")  # ids after A's
    for i, w in enumerate("VM"):
        write_game(tmp_path / "b", f"a{i}x", "Mafia" if w == "M" else "Villagers", models=["B"] * 4)  # ids among A's
    for mode in (Mode(boot=200, seed=4), Mode(compat="mafiascope-2026-07", boot=200, seed=4)):
        alone = seats.by_model(load_corpus(tmp_path / "a"), mode)["A"]
        mixed = load_corpus([tmp_path / "a", tmp_path / "b", tmp_path / "z"])
        beside = seats.by_model(mixed, mode)["A"]
        assert beside["metrics"] == alone["metrics"]
        assert beside["f1_by_round"] == alone["f1_by_round"] and beside["f2"] == alone["f2"]
        assert any(x["ci95"] and x["ci95"][0] != x["ci95"][1] for x in alone["metrics"].values())  # intervals that vary
        with seats.model_frame(mixed, mode, "A"):  # the Dashboard's per-model figures (app/analysis.py)
            assert f1_by_round(mixed, mode, model="A") == alone["f1_by_round"]
            assert f2(mixed, mode, breakdowns=False, model="A") == alone["f2"]


def test_independent_samples_are_resampled_within_each_models_games(tmp_path):
    """Two corpora with no shared game: each model's resamples in the comparison are its own figures' (the
    difference's interval is that of two independent bootstraps), labelled independent samples."""
    _self_play(tmp_path / "x", "X", "MVMMVVMV")
    for i, w in enumerate("VVMVMV"):
        write_game(tmp_path / "y", f"y{i}", "Mafia" if w == "M" else "Villagers", models=["Y"] * 4)
    c = load_corpus([tmp_path / "x", tmp_path / "y"])
    mode = Mode(boot=300, seed=1)
    res = seats.compare(c, mode, "X", "Y")
    assert res["design"] == seats.INDEPENDENT
    cx = load_corpus(tmp_path / "x")
    px = seats.by_model(cx, mode)["X"]["metrics"]["votes.town_on_mafia_rate"]
    row = _rows(res)["votes.town_on_mafia_rate"]
    assert row["a"] == px["point"] and row["games_a"] == px["games"] == 8
    shared = load_corpus(tmp_path / "x")
    assert seats.design(seats.seat_mask(shared, model="X"), seats.seat_mask(shared, model="X")) == seats.PAIRED


# ----------------------------------------------------------------------------- games played by the bots


def _bot_corpus(root: Path, preset: str, n: int, prefix: str) -> Path:
    """``n`` self-play games of one bot preset at every seat, played by ``mafiascope batch --no-probes``."""
    import yaml

    from mafiascope.cli import main
    from mafiascope.config import shipped_config

    cfg = yaml.safe_load(shipped_config("classic.yaml").read_text(encoding="utf-8"))
    cfg["seats"] = [{"backend": "b"}] * len(cfg["seats"])
    cfg["backends"] = {"b": {"type": "bot", "preset": preset}}
    cfg["snapshots"] = False
    path = root / f"{preset}.yaml"
    path.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    logs = root / preset
    assert main(["batch", "-c", str(path), "--logs", str(logs), "-n", str(n), "--no-probes", "--parallel", "2",
                 "--id-prefix", prefix, "--no-preflight", "--json"]) == 0
    return logs


@pytest.fixture(scope="module")
def bot_corpora(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("sides")
    return {"balanced": _bot_corpus(root, "balanced", 6, "bal"), "gullible": _bot_corpus(root, "gullible", 5, "gul")}


@pytest.mark.slow
def test_bot_self_play_corpora_compare_without_outcome_rows(bot_corpora, capsys):
    """The held-out-corpora case: two self-play corpora of two models. Before, each model's seat win rate was
    exactly 2/7 or 5/7 per game and was compared with a p-value; now no outcome figure, and the text says why."""
    from mafiascope.cli import main

    assert main(["compare", str(bot_corpora["balanced"]), str(bot_corpora["gullible"]), "--models",
                 "bot-balanced,bot-gullible", "--boot", "200", "--no-cache"]) == 0
    out = capsys.readouterr().out
    assert "independent samples" in out and "self-play" in out
    table = [ln for ln in out.splitlines() if re.match(r"\s+\S.*\s[+-]\d\.\d{3} \[", ln)]  # rows with a difference
    assert table and not any("win rate" in ln or "side-adjusted" in ln for ln in table)
    c = load_corpus([bot_corpora["balanced"], bot_corpora["gullible"]], probed_only=False)
    bm = seats.by_model(c, Mode(boot=100))
    assert bm["bot-balanced"]["self_play_games"] == 6 and bm["bot-gullible"]["self_play_games"] == 5
    assert all(bm[m]["metrics"][k]["point"] is None for m in bm for k in OUTCOME)
    assert bm["bot-balanced"]["metrics"]["votes.town_on_mafia_rate"]["n"] > 0


@pytest.mark.slow
def test_bot_corpus_interval_alone_and_beside_another(bot_corpora):
    mode = Mode(boot=300)
    alone = seats.by_model(load_corpus(bot_corpora["balanced"], probed_only=False), mode)
    both = seats.by_model(load_corpus([bot_corpora["balanced"], bot_corpora["gullible"]], probed_only=False,
                                      use_cache=False), mode)
    assert both["bot-balanced"]["metrics"] == alone["bot-balanced"]["metrics"]
    ci = alone["bot-balanced"]["metrics"]["votes.town_on_mafia_rate"]["ci95"]
    assert ci is not None and ci[0] < ci[1]
