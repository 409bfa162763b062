"""The vectorised paths equal straightforward reference implementations.

* bootstrap: compat draws equal CPython's ``random.Random(seed).randrange`` sequence, and
  the multiplicity-matrix CI equals a per-resample loop (both modes) on en_demo's F1 counts;
* F2 per-agent / per-model breakdowns equal one ``calibration_summary`` per group;
* plan-action consistency equals the per-plan filter it replaced.
"""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

EN = Path(__file__).resolve().parents[1] / "data" / "corpus" / "mafiascope_en_demo"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    from mafiascope.analytics.corpus import load_corpus

    return load_corpus(EN, cache_dir=tmp_path_factory.mktemp("cache"))


@pytest.mark.parametrize("m", [1, 2, 3, 5, 8, 127, 128, 129, 1000, 1024, 65537])
@pytest.mark.parametrize("seed", [0, 7])
def test_compat_draws_are_pythons_randrange(m, seed):
    from mafiascope.analytics.stats import python_randrange_stream

    rng = random.Random(seed)
    assert python_randrange_stream(m, 3000, seed).tolist() == [rng.randrange(m) for _ in range(3000)]


def _reference_ratio_ci(k, n, B, seed, compat):
    """The original's bootstrap: B resamples of m game indices, pooled ratio, percentile CI."""
    m = len(k)
    if compat:
        rng = random.Random(seed)
        draws = [[rng.randrange(m) for _ in range(m)] for _ in range(B)]
    else:
        draws = np.random.default_rng(seed).integers(0, m, size=(B, m)).tolist()
    vals = []
    for idx in draws:
        kk, nn = sum(k[i] for i in idx), sum(n[i] for i in idx)
        if nn > 0:
            vals.append(kk / nn)
    vals.sort()
    return (vals[int(0.025 * len(vals))], vals[min(len(vals) - 1, int(0.975 * len(vals)))])


@pytest.mark.parametrize("compat", [None, "mafiascope-2026-07"])
@pytest.mark.slow
def test_vectorised_bootstrap_equals_reference(corpus, compat):
    from mafiascope.analytics.f1 import f1_items
    from mafiascope.analytics.modes import Mode
    from mafiascope.analytics.intervals import ratio_ci

    mode = Mode(compat=compat, boot=300)
    it = f1_items(corpus, mode)
    checked = 0
    for _, df in it.groupby("round"):
        g = df["g"].to_numpy()
        com = df["committed"].to_numpy()
        k = np.bincount(g, weights=(df["correct"].to_numpy() & com).astype(float), minlength=corpus.m)
        n = np.bincount(g, weights=com.astype(float), minlength=corpus.m)
        if n.sum() == 0:
            continue
        assert ratio_ci(k, n, mode).value() == _reference_ratio_ci(k.tolist(), n.tolist(), 300, 0, bool(compat))
        checked += 1
    assert checked >= 2


@pytest.mark.slow
def test_plan_consistency_equals_per_plan_filter(tmp_path):
    from mafiascope.analytics import accounting
    from mafiascope.analytics.corpus import load_corpus
    from mafiascope.analytics.frames import items_with_probe

    c = load_corpus(EN, cache_dir=tmp_path)
    rng = np.random.default_rng(0)
    pa = c.pa.copy()
    pa["action"] = rng.choice([" Vote", "kill", "protect", "check", "talk", "VOTE "], len(pa))
    pa["tgt"] = rng.integers(-1, 7, len(pa)).astype(pa["tgt"].dtype)
    ev = c.events.copy()
    ev["target"] = np.where(rng.random(len(ev)) < 0.7, rng.integers(-1, 7, len(ev)), ev["target"]).astype(ev["target"].dtype)
    c.pa, c.events = pa, ev
    c.forget(*c.memo_keys())

    items = items_with_probe(c, "pa")
    acts = c.events[c.events["target"].to_numpy() >= 0]
    k = n = 0
    by: dict[str, list[int]] = {}
    for row in items.itertuples(index=False):
        kind = accounting.ACTION_KIND.get(str(row.action).strip().lower())
        if kind is None or row.tgt < 0:
            continue
        cand = acts[(acts["g"] == row.g) & (acts["player"] == row.seat) & (acts["kind"] == kind)
                    & (acts["ts"] > row.timestamp)]
        if not len(cand):
            continue
        hit = int(cand.iloc[0]["target"] == row.tgt)
        k, n = k + hit, n + 1
        by.setdefault(kind, [0, 0])
        by[kind][0] += hit
        by[kind][1] += 1
    got = accounting.plan_action_consistency(c)
    assert n > 5 and (got["n"], got["k"], got["by_action"]) == (n, k, by)


@pytest.mark.slow
def test_plan_consistency_has_data_on_the_demo_corpus():
    """The shipped battery asks planned_action after the seat's own message: plans are scored
    against the next action of that kind, which may come in a later round (n was 0 before)."""
    from mafiascope.analytics import accounting
    from mafiascope.analytics.corpus import load_corpus

    c = load_corpus(Path(__file__).resolve().parents[1] / "data" / "demo", use_cache=False)
    got = accounting.plan_action_consistency(c)
    assert got["n"] > 20 and 0 <= got["k"] <= got["n"] and set(got["by_action"]) >= {"day_vote"}
