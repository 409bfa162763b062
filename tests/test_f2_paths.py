"""F2 on arrays (branch f2x) gives exactly what its frame-based form gave (kept here as the reference):
the model and seat filters applied to the observations' columns as arrays, the seat models gathered
once per corpus, the per-agent entries made in one pass. Compared as JSON text: values bit for bit,
key order, ints as ints."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

from mafiascope.analytics import f2
from mafiascope.analytics.frames import dense_groups, played_by, seat_model_codes
from mafiascope.analytics.modes import COMPAT, Mode
from tests.loader_digest import loaded_corpora

NAMES = ("demo", "mafiascope_en_demo")


@pytest.fixture(scope="module")
def loaded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return loaded_corpora(tmp_path_factory.mktemp("f2"), NAMES)


def _f2_by_frame(c, mode: Mode, breakdowns: bool, model: str | None, seats: np.ndarray | None) -> dict[str, Any]:
    """F2 before f2x: the observations' frame filtered with pandas, the seat models gathered per call."""
    df = f2.calibration_obs(c, mode)
    if model is not None:
        df = df[played_by(c, df["g"].to_numpy(), df["obs"].to_numpy(), model)]
    if seats is not None:
        df = df[seats[df["g"].to_numpy(), df["obs"].to_numpy()]]
    res = f2._with_cis(df, c.m, mode)
    if breakdowns:
        g, obs = df["g"].to_numpy().astype(np.int64), df["obs"].to_numpy().astype(np.int64)
        names_m, codes = seat_model_codes(c)
        present, mi = dense_groups(codes[g, obs], len(names_m))
        res["by_model"] = dict(zip((str(x) for x in names_m[present]), f2.grouped_summaries(df, mi, len(present))))
        names = c.seat_array_obj("name")
        S = names.shape[1]
        agents, ai = dense_groups(g * S + obs, c.m * S)
        gid = c.games["game_id"].to_numpy()
        ag_g, ag_s = agents // S, agents % S
        res["by_agent"] = [{"game_id": str(gi), "agent": str(nm), **summ} for gi, nm, summ in
                           zip(gid[ag_g].tolist(), names[ag_g, ag_s].tolist(), f2.grouped_summaries(df, ai, len(agents)))]
    return res


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("mode", [Mode(boot=40), Mode(compat=COMPAT.compat, boot=40)], ids=["default", "compat"])
def test_f2_filters_on_arrays_equal_the_frame_filters(loaded, name: str, mode: Mode) -> None:
    c = loaded[name]
    names_m = [str(x) for x in seat_model_codes(c)[0]]
    rng = np.random.default_rng(len(name))
    mask = rng.random(seat_model_codes(c)[1].shape) < 0.6
    cases = [(True, None, None), (True, None, mask), (False, None, None), (True, "no-such-model", None)]
    cases += [(b, m, s) for m in names_m for b, s in ((False, None), (True, None), (False, mask), (True, mask))]
    for breakdowns, model, seats in cases:
        got = f2.f2(c, mode, breakdowns=breakdowns, model=model, seats=seats)
        ref = _f2_by_frame(c, mode, breakdowns, model, seats)
        assert json.dumps(got) == json.dumps(ref), (name, breakdowns, model, seats is not None)
    assert len(names_m) >= 2 or name != "demo"  # the demo games seat several models
    assert len(f2.f2(c, mode)["by_agent"]) > 5
