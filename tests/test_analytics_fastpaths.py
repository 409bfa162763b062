"""Counting paths of the warm report give the pandas group-by answers they replaced (same order)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mafiascope.analytics.accounting import K_NONE, _by_probe
from mafiascope.analytics.corpus import load_corpus

DEMO = Path(__file__).resolve().parents[1] / "data" / "demo"


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory):
    return load_corpus(DEMO, cache_dir=tmp_path_factory.mktemp("cache"), probed_only=False)


@pytest.mark.parametrize("variant", ["all", "reversed", "one_seat"])
def test_by_probe_counts_match_groupby(demo, variant: str) -> None:
    c = demo
    p = {"all": c.probes, "reversed": c.probes.iloc[::-1], "one_seat": c.probes[c.probes["seat"] == 2]}[variant]
    want_raw, want_rep = {}, {}
    for pid, sub in p.groupby("probe_id", sort=False, observed=True):
        want_raw[pid] = [int((sub["stored_kind"] != K_NONE).sum()), len(sub)]
        want_rep[pid] = [int((sub["eff_kind"] != K_NONE).sum()), len(sub)]
    raw, rep = _by_probe(p)
    assert list(raw.items()) == list(want_raw.items()) and list(rep.items()) == list(want_rep.items())
    assert len(raw) >= 3
