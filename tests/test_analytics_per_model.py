"""Per-model figures count the seats each model played, not every game the model appears in."""

from __future__ import annotations

from pathlib import Path

import pytest

from mafiascope.analytics import f1, f2
from mafiascope.analytics.corpus import load_corpus
from mafiascope.analytics.modes import Mode

DEMO = Path(__file__).resolve().parents[1] / "data" / "demo"


@pytest.mark.slow
def test_per_model_f1_and_f2_split_mixed_games():
    c = load_corpus(DEMO, use_cache=False)
    mode = Mode()
    models = sorted({m for ms in c.games["models"] for m in str(ms).split(",") if m})
    assert len(models) >= 3  # the demo games seat several bot presets at one table
    full = f2.f2(c, mode)
    total = f1.f1_by_round(c, mode)
    for rnd, entry in total.items():
        parts = [f1.f1_by_round(c, mode, model=m).get(rnd, {}).get("acc_n", 0) for m in models]
        assert sum(parts) == entry["acc_n"]  # every committed guess belongs to exactly one model
    eces = set()
    for m in models:
        mine = f2.f2(c, mode, breakdowns=False, model=m)
        assert mine["n"] == full["by_model"][m]["n"] and mine["ece"] == full["by_model"][m]["ece"]
        eces.add(mine["ece"])
    assert len(eces) == len(models)  # presets differ in calibration; a per-game filter made them identical
