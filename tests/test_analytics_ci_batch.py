"""Pooled bootstrap intervals (intervals.pooled_entry) give the intervals computed one by one: exactly as a
report rounds them; unrounded, to the last bits only. Both pool with a float64 matrix product, one
product per interval alone and one over many intervals' columns batched, and a BLAS library may sum
the games in another order for another product width (OpenBLAS's AVX-512 kernels do)."""

from __future__ import annotations

import numpy as np
import pytest

from mafiascope.analytics.modes import Mode
from mafiascope.analytics.intervals import Interval, ci_list, cluster_ci, pooled_entry
from mafiascope.analytics.stats import ratio_stat


def _per_game(rng: np.random.Generator, m: int, k: int) -> np.ndarray:
    # counts and float sums, as the metrics pass them (float sums exercise the summation order)
    return np.column_stack([rng.integers(0, 9, m).astype(float) if j % 2 else rng.random(m) * 7 for j in range(k)])


@pytest.mark.parametrize("mode", [Mode(boot=300, seed=3), Mode(boot=200, compat="mafiascope-2026-07")])
def test_batched_equals_one_by_one(mode: Mode) -> None:
    rng = np.random.default_rng(7)
    pgs = [_per_game(rng, 40, 2) for _ in range(5)] + [_per_game(rng, 13, 3)]  # two corpus sizes in one batch
    shared = _per_game(rng, 40, 4)
    stats = [ratio_stat(0, 1), lambda p: p[:, 1] / np.where(p[:, 0] > 0, p[:, 0], np.nan)]
    empty = np.zeros((40, 2))  # no resample defined: None

    def intervals() -> dict:
        out = {"each": [ci_list(cluster_ci(pg, stats[i % 2], mode)) for i, pg in enumerate(pgs)]}
        out["shared"] = [ci_list(cluster_ci(shared, ratio_stat(a, b), mode)) for a, b in ((0, 1), (2, 3), (1, 3))]
        out["raw"] = cluster_ci(shared, ratio_stat(2, 1), mode)
        out["none"] = {"ci": ci_list(cluster_ci(empty, ratio_stat(0, 1), mode))}
        return out

    def one_by_one() -> dict:  # outside any batch: every interval's value is known at once
        return {k: [x.value() for x in v] if isinstance(v, list) else (v.value() if isinstance(v, Interval) else
                {kk: vv.value() for kk, vv in v.items()}) for k, v in intervals().items()}

    alone = one_by_one()
    batched = pooled_entry(intervals)
    inner_calls = []

    @pooled_entry
    def outer() -> dict:
        inner = pooled_entry(intervals)()  # joins the outer batch: still pending here
        inner_calls.append(any(isinstance(x, Interval) for x in inner["each"]))
        return inner

    assert not any(isinstance(x, Interval) for x in alone["each"])
    for got in (batched(), outer()):
        raw = got.pop("raw")
        assert got == {k: v for k, v in alone.items() if k != "raw"}  # rounded as the report rounds: exactly
        assert raw == pytest.approx(alone["raw"], rel=1e-12, abs=0)
    assert inner_calls == [True]
    assert alone["none"]["ci"] is None and alone["each"][0] is not None


def test_reading_a_pending_interval_early_fails_loudly() -> None:
    @pooled_entry
    def early() -> object:
        ci = cluster_ci(np.ones((5, 2)), ratio_stat(0, 1), Mode(boot=10))
        return ci.value()

    with pytest.raises(RuntimeError, match="before its batch"):
        early()


@pytest.mark.parametrize("n", [0, 1, 2, 60, 2000])
def test_key_helpers_match_pandas(n: int) -> None:
    """The numpy replacements of the pandas hashing steps (F3's last entry per key, dynamics'
    first row per key, the episode selector's step codes) give pandas' answers."""
    import pandas as pd

    from mafiascope.analytics.frames import first_of_key, last_of_key
    from mafiascope.analytics.step_keys import step_codes

    rng = np.random.default_rng(n)
    k = np.sort(rng.integers(0, max(1, n // 3), n)) * 8 + rng.integers(0, 8, n)  # nearly sorted, as item keys
    assert (last_of_key(k) == ~pd.Series(k).duplicated(keep="last").to_numpy()).all()
    rows = pd.DataFrame({"k": k, "i": np.arange(n)})
    assert (first_of_key(k) == rows.groupby("k")["i"].transform("min").to_numpy()).all()

    # the episode selector's steps: one code per distinct (game, round, message number), in step order
    g, rnd, seq = rng.integers(0, 3, n), rng.integers(0, 4, n), rng.integers(-1, 5, n)  # -1: the round end
    lo = (int(rnd.min(initial=0)), min(int(seq[seq != -1].min(initial=0)), 0))
    span = (int(rnd.max(initial=0)) - lo[0] + 1, int(seq[seq != -1].max(initial=0)) - lo[1] + 2)
    codes = step_codes(g, rnd, seq, lo, span)
    want = pd.DataFrame({"g": g, "r": rnd, "s": seq}).groupby(["g", "r", "s"]).ngroup().to_numpy()
    assert len(set(zip(codes.tolist(), want.tolist()))) == len(set(want.tolist())) == len(set(codes.tolist()))
    order = np.lexsort((np.where(seq == -1, np.inf, seq), rnd, g))  # round end after every message
    assert (np.diff(codes[order]) >= 0).all()


def test_wilson_arrays_equal_wilson() -> None:
    from mafiascope.analytics.stats import wilson, wilson_arrays

    rng = np.random.default_rng(5)
    n = rng.integers(1, 400, 3000).astype(float)
    k = np.floor(rng.random(3000) * (n + 1))
    lo, hi = wilson_arrays(k, n)
    want = [wilson(a, b) for a, b in zip(k, n)]
    assert lo.tolist() == [w[0] for w in want] and hi.tolist() == [w[1] for w in want]
