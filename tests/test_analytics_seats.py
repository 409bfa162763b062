"""Seat-level attribution and model comparisons on hand-built logs with known answers."""

from __future__ import annotations

import math

import numpy as np
import pytest

from mafiascope.analytics import seats
from mafiascope.analytics.corpus import load_corpus
from mafiascope.analytics.modes import Mode

from .handbuilt import write_corpus


@pytest.fixture()
def corpus(tmp_path):
    return load_corpus(write_corpus(tmp_path / "logs"), use_cache=False)


def _rows(res):
    return {r["metric"]: r for r in res["rows"]}


def test_metrics_are_attributed_to_each_seats_model(corpus):
    bm = seats.by_model(corpus, Mode(boot=200))
    a, b = bm["A"]["metrics"], bm["B"]["metrics"]
    assert (bm["A"]["seats"], bm["A"]["games"]) == (6, 3)
    assert math.isclose(a["f1.accuracy"]["point"], 2 / 3, abs_tol=1e-6) and a["f1.accuracy"]["n"] == 9
    assert math.isclose(b["f1.accuracy"]["point"], 1 / 2, abs_tol=1e-6) and b["f1.accuracy"]["n"] == 6
    assert a["f1.unknown_rate"]["point"] == 0 and math.isclose(b["f1.unknown_rate"]["point"], 1 / 3, abs_tol=1e-6)
    # ECE: Bob's bins 80-99 (2 right, mean 85) and 60-79 (1 wrong at 60): 2/3*0.15 + 1/3*0.6
    assert math.isclose(a["f2.ece"]["point"], 0.3, abs_tol=1e-6)
    assert math.isclose(a["f2.brier"]["point"], (0.1 ** 2 + 0.2 ** 2 + 0.6 ** 2) / 3, abs_tol=1e-6)
    assert a["parse.parse_rate"]["point"] == 1.0 and b["parse.parse_rate"]["point"] == 0.5
    # Ann (Mafia, A) wins one game, Bob (A) two; Cy and Dee (B) win two games each
    assert a["outcome.seat_win_rate"]["point"] == 0.5 and math.isclose(b["outcome.seat_win_rate"]["point"], 2 / 3, abs_tol=1e-6)
    # identical games: every resample gives the same value, so the interval collapses on it
    assert a["f1.accuracy"]["ci95"] == [a["f1.accuracy"]["point"]] * 2
    assert bm["A"]["f2"]["ece_ci95"] is not None and set(bm["A"]["f1_by_round"]) == {"1"}


def test_model_by_role_splits_the_seats(corpus):
    br = seats.by_model_role(corpus, Mode(boot=0))
    assert set(br["A"]) == {"Mafia", "Villager"} and set(br["B"]) == {"Villager"}
    assert br["A"]["Mafia"]["seats"] == 3
    assert br["A"]["Mafia"]["metrics"]["outcome.seat_win_rate"]["point"] == pytest.approx(1 / 3, abs=1e-6)
    assert br["A"]["Villager"]["metrics"]["outcome.seat_win_rate"]["point"] == pytest.approx(2 / 3, abs=1e-6)


def test_compare_gives_difference_interval_and_holm_p(corpus):
    res = seats.compare(corpus, Mode(boot=199, seed=3), "A", "B")
    r = _rows(res)
    assert res["games_shared"] == 3 and (res["seats_a"], res["seats_b"]) == (6, 6)
    acc = r["f1.accuracy"]
    assert acc["diff"] == pytest.approx(1 / 6, abs=1e-6) and acc["diff_ci95"] == [pytest.approx(1 / 6, abs=1e-6)] * 2
    assert acc["p"] is None and acc["p_holm"] is None  # the same difference in every resample: not testable
    assert acc["p_boot_tail"] == pytest.approx(2 / 200)  # the tail share: its +1-corrected floor
    assert r["f1.unknown_rate"]["diff"] == pytest.approx(-1 / 3, abs=1e-6)
    # the seat win rates differ (1/2 against 2/3) only because A drew the Mafia seat: the seat win rate is not
    # compared; each side's base rate taken out, both models score 0 (Ann wins as often as the Mafia side does)
    assert "outcome.seat_win_rate" not in r
    adj = r["outcome.side_adjusted"]
    assert adj["a"] == pytest.approx(0, abs=1e-6) and adj["b"] == pytest.approx(0, abs=1e-6) and adj["diff"] == 0
    town = r["outcome.win_rate_town"]
    assert town["a"] == pytest.approx(2 / 3, abs=1e-6) and town["b"] == pytest.approx(2 / 3, abs=1e-6)
    assert r["outcome.win_rate_mafia"]["a"] == pytest.approx(1 / 3, abs=1e-6) and r["outcome.win_rate_mafia"]["b"] is None
    tested = [x for x in res["rows"] if x["p"] is not None]
    assert all(x["p_holm"] >= x["p"] for x in tested)
    assert r["f3.ratio"]["p"] is None and r["f3.ratio"]["p_holm"] is None  # no data: outside the family
    fam = res["p_holm_family"]
    assert fam["tests"] == [x["metric"] for x in tested] and fam["size"] == len(tested)
    assert f"the {len(tested)} metrics of A vs B" in fam["text"]
    assert seats.compare(corpus, Mode(boot=0), "A", "B")["rows"][2]["diff_ci95"] is None
    with pytest.raises(KeyError):
        seats.compare(corpus, Mode(boot=0), "A", "nope")


def test_holm_adjustment_known_values():
    assert seats.holm([0.01, 0.04, 0.03, None]) == [pytest.approx(0.03), pytest.approx(0.06), pytest.approx(0.06), None]
    assert seats.holm([0.5, 0.9]) == [1.0, 1.0]


def test_bootstrap_tail_p_is_two_sided():
    assert seats.bootstrap_tail_p(np.array([1.0] * 99)) == pytest.approx(0.02)
    assert seats.bootstrap_tail_p(np.array([-1.0, 1.0] * 50)) == 1.0
    assert seats.bootstrap_tail_p(np.array([np.nan])) is None


def test_bootstrap_p_refers_the_standard_error_to_t_with_games_minus_one_df():
    from scipy.stats import t

    d = np.array([-1.0, 1.0] * 500)  # SE = std(ddof=1)
    se = float(np.std(d, ddof=1))
    assert seats.bootstrap_p(d, 2 * se, 11) == pytest.approx(2 * t.sf(2, 10))
    assert seats.bootstrap_p(d, -2 * se, 11) == seats.bootstrap_p(d, 2 * se, 11)  # two-sided
    assert seats.bootstrap_p(d, 0.0, 11) == 1.0
    assert seats.bootstrap_p(np.full(50, 0.25), 0.25, 9) is None  # no variation: not testable
    assert seats.bootstrap_p(np.full(50, 0.0), 0.0, 9) == 1.0
    assert seats.bootstrap_p(d, 1.0, 1) is None and seats.bootstrap_p(d, None, 9) is None
    assert seats.bootstrap_p(np.array([np.nan, 1.0]), 1.0, 9) is None  # one defined resample


def test_bootstrap_p_resolution_does_not_depend_on_the_resamples():
    rng = np.random.default_rng(0)
    small, large = rng.normal(0.1, 0.02, 200), rng.normal(0.1, 0.02, 20_000)  # 5 SE from 0: p ~ 6e-7
    ps, pl = seats.bootstrap_p(small, 0.1, 500), seats.bootstrap_p(large, 0.1, 500)
    assert 0 < ps < 1e-5 and 0 < pl < 1e-5 and ps < 2 / 201  # far below the tail share's floor for B = 200
    assert math.isclose(math.log10(ps), math.log10(pl), abs_tol=1.0)
    tiny = seats.bootstrap_p(rng.normal(0.5, 1e-4, 100), 0.5, 10_000)
    assert tiny is not None and tiny > 0  # an underflow is never stored as 0


def test_p_values_are_never_printed_as_zero():
    from mafiascope.analytics.pvalues import format_p, round_p

    assert [format_p(p) for p in (1.0, 0.0421, 0.001, 2.43e-5, 4e-7, 1e-300)] == [
        "1.000", "0.042", "0.001", "2.4e-05", "< 1e-6", "< 1e-6"]
    assert format_p(None) == "–" and format_p(None, "n/a") == "n/a"
    assert format_p(2.43e-5, latex=True) == "$2.4\\times10^{-5}$" and format_p(1e-9, latex=True) == "$<10^{-6}$"
    assert round_p(3.3817e-33) == 3.38e-33 and round_p(None) is None  # significant figures, not decimals


@pytest.mark.slow
def test_demo_per_model_parts_add_up():
    from pathlib import Path

    c = load_corpus(Path(__file__).resolve().parents[1] / "data" / "demo", use_cache=False)
    mode = Mode(boot=0)
    whole = seats.seat_metrics(c, mode, seats.seat_mask(c))
    parts = [seats.seat_metrics(c, mode, seats.seat_mask(c, model=m)) for m in seats.models_of(c)]
    for key in ("f1.accuracy", "f3.ratio", "dynamics.flip_rate", "plans.rate", "parse.parse_rate", "episodes.switch_rate"):
        assert sum(p[key]["n"] for p in parts) == whole[key]["n"] > 0, key


def test_compare_all_adds_a_report_wide_holm(tmp_path):
    c = load_corpus(write_corpus(tmp_path / "three", models=["A", "B", "B", "C"]), use_cache=False)
    res = seats.compare_all(c, Mode(boot=99))
    assert [(x["a"], x["b"]) for x in res] == [("A", "B"), ("A", "C"), ("B", "C")]
    rows = [r for x in res for r in x["rows"] if r["p"] is not None]
    assert rows and all(r["p_holm_all"] >= r["p_holm"] - 1e-12 for r in rows)
    fam = res[0]["p_holm_all_family"]
    assert all(x["p_holm_all_family"] == fam for x in res) and fam["size"] == len(rows) == len(fam["tests"])
    assert fam["text"].startswith(f"all {len(rows)} tests of the 3 model pairs")
