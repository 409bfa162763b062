"""Properties of the public analytics functions, on generated inputs: the figures follow their definitions
in docs/metrics.md (calibration §5, personality error §14.1, intervals §9, Holm §16) with fractional,
missing and boundary values the bundled corpora do not hold, and the per-seat figures add up over models.
(The bundled corpora's figures are pinned by tests/test_report_golden.py.)"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mafiascope.analytics.f2 import calibration_summary, grouped_summaries
from mafiascope.analytics.modes import Mode
from mafiascope.analytics.pvalues import holm
from mafiascope.analytics.stats import percentile_ci, wilson
from tests.loader_digest import loaded_corpora

CONF = st.one_of(st.integers(0, 100).map(float), st.floats(0, 100, allow_nan=False), st.sampled_from([0.0, 19.99, 20.0, 99.5, 100.0]))


@st.composite
def observations(draw: Any) -> pd.DataFrame:
    n = draw(st.integers(0, 60))
    conf = np.array(draw(st.lists(CONF, min_size=n, max_size=n)))
    out = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=float)
    return pd.DataFrame({"conf": conf, "outcome": out, "bin": np.minimum(4, np.floor(conf / 20)).astype(int),
                         "g": np.zeros(n, dtype=np.int64)})


@settings(max_examples=30, deadline=None)
@given(observations())
def test_calibration_follows_its_definition(df: pd.DataFrame) -> None:
    """Bins of width 20 with 100 in the top one; per bin n, accuracy, mean confidence; ECE = sum over bins of
    n_bin / N |acc - mean_conf / 100|; Brier = mean of (conf / 100 - outcome)^2."""
    got = calibration_summary(df)
    assert got["n"] == len(df)
    if not len(df):
        assert got["ece"] is None and got["brier"] is None and got["bins"] == {}
        return
    ece = 0.0
    for j in range(5):
        rows = df[df["bin"] == j]
        name = f"{20 * j}-{20 * j + 19}"
        if not len(rows):
            assert name not in got["bins"]
            continue
        acc, mc = rows["outcome"].mean(), rows["conf"].mean()
        e = got["bins"][name]
        assert e["n"] == len(rows) and math.isclose(e["acc"], acc, abs_tol=1e-6) and math.isclose(e["mean_conf"], mc, abs_tol=1e-6)
        lo, hi = e["wilson95"]
        assert 0 <= lo <= acc + 1e-6 and acc - 1e-6 <= hi <= 1
        ece += len(rows) / len(df) * abs(acc - mc / 100)
    assert math.isclose(got["ece"], ece, abs_tol=1e-6)
    assert math.isclose(got["brier"], float(((df["conf"] / 100 - df["outcome"]) ** 2).mean()), abs_tol=1e-6)


@settings(max_examples=25, deadline=None)
@given(observations(), st.integers(1, 5), st.randoms(use_true_random=False))
def test_grouped_calibration_is_each_groups_own(df: pd.DataFrame, k: int, rnd: Any) -> None:
    """The summaries of groups of observations in one pass are each group's summary alone, exactly."""
    keys = np.array([rnd.randrange(k) for _ in range(len(df))], dtype=np.int64)
    got = grouped_summaries(df, keys, k)
    for j in range(k):
        assert got[j] == calibration_summary(df[keys == j].reset_index(drop=True))


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return loaded_corpora(tmp_path_factory.mktemp("properties"), ("demo",))["demo"]


@pytest.mark.parametrize("seed", range(4))
def test_personality_error_follows_its_definition(demo: Any, seed: int) -> None:
    """Mean |estimate - generating value| per trait and per round (traits pooled), and the constant-50
    baseline's, over the estimates of another seat where both values are present: with estimates made
    fractional and missing here and there (the demo games' are whole numbers)."""
    from mafiascope.analytics.accounting import personality_error
    from mafiascope.analytics.answer_rows import TRAITS
    from mafiascope.analytics.frames import items_with_probe

    rng = np.random.default_rng(seed)
    pp = demo.pp.copy()
    for k in TRAITS:
        v = pp[k].to_numpy(dtype=float) + rng.choice([0.0, 0.25, 0.5], len(pp)) * (seed % 2)
        v[rng.random(len(v)) < 0.2] = np.nan
        pp[k] = v
    c = demo.with_tables(pp=pp)
    got = personality_error(c)
    it = items_with_probe(c, "pp", "personality_profile")
    it = it[(it["tgt"] >= 0) & (it["tgt"] != it["seat"])]
    g, t = it["g"].to_numpy(), it["tgt"].to_numpy()
    assert got["n"] == len(it) > 0
    err_all, base_all, rounds = {}, {}, it["round"].to_numpy()
    for k in TRAITS:
        truth = c.seat_array(k)[g, t]
        est = it[k].to_numpy(dtype=float)
        ok = ~np.isnan(truth) & ~np.isnan(est)
        err_all[k], base_all[k] = np.where(ok, np.abs(est - truth), np.nan), np.where(ok, np.abs(50 - truth), np.nan)
        assert math.isclose(got["mae"][k], np.nanmean(err_all[k]), abs_tol=1e-6)
        assert math.isclose(got["baseline50_mae"][k], np.nanmean(base_all[k]), abs_tol=1e-6)
    for r, v in got["by_round"].items():
        at = rounds == int(r)
        assert math.isclose(v["mae"], np.nanmean(np.concatenate([err_all[k][at] for k in TRAITS])), abs_tol=1e-6)


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 500), st.integers(0, 500))
def test_wilson_brackets_the_share(k: int, n: int) -> None:
    k = min(k, n)
    lo, hi = wilson(k, n)
    assert 0 <= lo <= hi <= 1
    if n:
        assert lo <= k / n + 1e-12 and k / n - 1e-12 <= hi
    else:
        assert (lo, hi) == (0.0, 1.0)


@settings(max_examples=80, deadline=None)
@given(st.lists(st.one_of(st.none(), st.floats(0, 1, allow_nan=False)), max_size=30))
def test_holm_adjustment(ps: list[float | None]) -> None:
    """Each adjusted p is at least its p and at most 1, None stays None, and the order of the p-values is kept."""
    adj = holm(ps)
    for p, a in zip(ps, adj):
        assert (a is None) == (p is None)
        if p is not None:
            assert p <= a <= 1 or math.isclose(a, min(1.0, p))
    pairs = sorted((p, a) for p, a in zip(ps, adj) if p is not None)
    assert all(a1 <= a2 for (_, a1), (_, a2) in zip(pairs, pairs[1:]))


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(st.floats(-5, 5, allow_nan=False), st.just(float("nan"))), max_size=300))
def test_percentile_interval_reads_the_sorted_defined_values(vals: list[float]) -> None:
    """The values at floor(0.025 K) and min(K - 1, floor(0.975 K)) of the K defined values, sorted."""
    v = np.array(vals, dtype=float)
    got = percentile_ci(v)
    d = np.sort(v[~np.isnan(v)])
    if not len(d):
        assert got is None
    else:
        assert got == (d[int(0.025 * len(d))], d[min(len(d) - 1, int(0.975 * len(d)))])


def test_per_model_units_add_up_to_every_seats(demo: Any) -> None:
    """A seat-level statistic's n over every seated seat is the sum of its n over the models (each seat plays
    one model), and so is its n over the models' roles."""
    from mafiascope.analytics import seats

    mode = Mode(boot=0)
    everyone = seats.seat_metrics(demo, mode, seats.seat_mask(demo))
    per_model = seats.by_model(demo, mode)
    per_role = seats.by_model_role(demo, mode)
    for key, x in everyone.items():
        assert x["n"] == sum(e["metrics"][key]["n"] for e in per_model.values()), key
        assert x["n"] == sum(e["metrics"][key]["n"] for roles in per_role.values() for e in roles.values()), key
