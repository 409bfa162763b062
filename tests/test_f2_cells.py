"""F2's sums from one pass (analytics/f2_cells.py, branch f2y) equal the sums F2 took over each subset's
rows before (kept here as the reference): per agent, per game, per model, per (model, game), over every row;
bit for bit, with whole and with fractional confidences (the second through the row bincounts). End to end:
``f2`` and the seat cells on corpora whose confidences were made fractional, against the frame-based F2."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pandas as pd
import pytest

from mafiascope.analytics import f2
from mafiascope.analytics.metrics.f2 import SUMS as F2_SUMS
from mafiascope.analytics.f2_cells import COLS, N_BINS, obs_cells
from mafiascope.analytics.frames import seat_model_codes
from mafiascope.analytics.modes import COMPAT, Mode
from tests.loader_digest import loaded_corpora
from tests.test_f2_paths import _f2_by_frame


def _rows(seed: int, whole: bool) -> tuple[dict[str, np.ndarray], int, np.ndarray, int]:
    rng = np.random.default_rng(seed)
    m, S, K = int(rng.integers(1, 30)), int(rng.integers(1, 8)), int(rng.integers(1, 5))
    n = int(rng.integers(0, 3000))
    conf = rng.integers(0, 101, n).astype(float)
    if not whole:
        conf = np.minimum(conf + rng.choice([0.0, 0.1, 0.33, 0.7], n), 100.0)  # sums whose order matters
    correct = rng.random(n) < 0.5
    g = np.sort(rng.integers(0, m, n)).astype(np.int32)
    if seed % 2:
        g = rng.permutation(g)  # nothing assumes the rows ordered by game
    rows = {"g": g, "obs": rng.integers(0, S, n).astype(np.int8), "conf": conf, "outcome": correct.astype(float),
            "bin": np.minimum(N_BINS - 1, np.floor(conf / 20).astype(int))}
    return rows, m, rng.integers(0, K, (m, S)), K + int(rng.integers(0, 2))  # a model may seat no one


def _ref(rows: dict[str, np.ndarray], sel: np.ndarray, m: int) -> tuple[np.ndarray, np.ndarray, float]:
    """F2's sums of the rows ``sel`` as F2 took them: bin_columns over games, bincounts per bin, one sum()."""
    df = pd.DataFrame({k: v[sel] for k, v in rows.items()})
    conf, out_, b = df["conf"].to_numpy(), df["outcome"].to_numpy(), df["bin"].to_numpy()
    bins = np.stack([np.bincount(b, weights=out_, minlength=N_BINS), np.bincount(b, minlength=N_BINS).astype(float),
                     np.bincount(b, weights=conf, minlength=N_BINS)], axis=1)
    return f2.bin_columns(df, m), bins, float(((conf / 100.0 - out_) ** 2).sum())


def _same(a: Any, b: Any) -> bool:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return a.shape == b.shape and a.tobytes() == b.tobytes()  # bit for bit, -0.0 included


@pytest.mark.parametrize("whole", [True, False], ids=["whole", "fractional"])
@pytest.mark.parametrize("seed", range(8))
def test_obs_cells_equal_each_subsets_sums(seed: int, whole: bool) -> None:
    rows, m, codes, K = _rows(seed, whole)
    cells = obs_cells(rows, m, codes, K)
    S = codes.shape[1]
    agent = rows["g"].astype(np.int64) * S + rows["obs"]
    model = codes[rows["g"], rows["obs"]]
    every = np.ones(len(agent), dtype=bool)
    game_cols, bins, brier = _ref(rows, every, m)
    assert _same(cells.game_cols, game_cols) and _same(cells.bins, bins) and _same(cells.brier, brier)
    assert np.array_equal(cells.agents, np.unique(agent))
    for i, a in enumerate(cells.agents.tolist()):
        sel = agent == a
        cols, _, bs = _ref(rows, sel, m)
        assert _same(cells.agent_cols[i], cols[a // S]) and _same(cells.agent_brier[i], bs)
        assert cells.agent_models[i] == codes.ravel()[a] and cells.agent_games[i] == a // S
    for j in range(-1, K + 1):
        sel = model == j
        cols, bins, bs = _ref(rows, sel, m)
        assert _same(cells.model_game_cols(j), cols)
        if 0 <= j < K:
            assert _same(cells.model_bins[j], bins) and _same(cells.model_brier[j], bs)
    assert cells.model_bins.shape == (K, N_BINS, 3) and cells.agent_cols.shape == (len(cells.agents), COLS)


def test_obs_cells_reject_an_observer_outside_the_seats() -> None:
    rows, m, codes, K = _rows(3, True)
    rows["obs"] = rows["obs"].copy()
    rows["obs"][0] = codes.shape[1]
    with pytest.raises(IndexError):
        obs_cells(rows, m, codes, K)


NAMES = ("demo", "mafiascope_en_demo")


@pytest.fixture(scope="module")
def loaded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return loaded_corpora(tmp_path_factory.mktemp("f2cells"), NAMES)


def _fractional(c, mode: Mode, monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the corpus's calibration observations' confidences fractional (both F2's rows and its frame)."""
    rows_of = f2._obs_rows

    def fractional(c, mode: Mode) -> dict[str, np.ndarray]:
        rows = rows_of(c, mode)
        rng = np.random.default_rng(7)
        rows["conf"] = np.minimum(rows["conf"] + rng.choice([0.0, 0.1, 0.33], len(rows["conf"])), 100.0)
        return rows

    monkeypatch.setattr(f2, "_obs_rows", fractional)
    c.forget(f2.CALIBRATION_OBS.key(mode), f2.CALIBRATION_CELLS.key(mode))


def _seat_cells_by_rows(c, mode: Mode) -> np.ndarray:
    """The F2 seat cells before f2y: bin_columns over (game, seat) cell keys."""
    df = f2.calibration_obs(c, mode)
    S = c.seat_array_obj("model").shape[1]
    k = df["g"].to_numpy().astype(np.int64) * S + df["obs"].to_numpy()
    return f2.bin_columns(df.assign(g=k), c.m * S + 1)[: c.m * S].reshape(c.m, S, -1)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("whole", [True, False], ids=["whole", "fractional"])
def test_f2_and_seat_cells_from_the_cells_equal_the_row_paths(loaded, name: str, whole: bool,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    c = loaded[name]
    for mode in (Mode(boot=30), Mode(compat=COMPAT.compat, boot=30)):
        if not whole:
            _fractional(c, mode, monkeypatch)
            conf = f2.calibration_obs(c, mode)["conf"].to_numpy()
            assert not np.array_equal(conf, np.trunc(conf))
        names_m = [str(x) for x in seat_model_codes(c)[0]]
        mask = np.random.default_rng(3).random(seat_model_codes(c)[1].shape) < 0.5
        for model in [None, "no-such-model", *names_m]:
            for seats in (None, mask):
                for breakdowns in (True, False):
                    got = f2.f2(c, mode, breakdowns=breakdowns, model=model, seats=seats)
                    ref = _f2_by_frame(c, mode, breakdowns, model, seats)
                    assert json.dumps(got) == json.dumps(ref), (name, model, seats is not None, breakdowns)
        assert _same(F2_SUMS.build(c, mode)["sums"], _seat_cells_by_rows(c, mode))
        c.forget(f2.CALIBRATION_OBS.key(mode), f2.CALIBRATION_CELLS.key(mode))
