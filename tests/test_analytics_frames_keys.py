"""frames' shared keys computed in place give what their select-and-copy forms gave: the probe
ordering key (one int64 array, the round-end shift added where it applies), each item's probe row
(int32 records added without an int64 copy) and the items of one probe id (gathered by the int64
rows before the int32 cast)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest

from mafiascope.analytics import frames
from mafiascope.analytics.modes import Mode
from mafiascope.logs.steps import ROUND_END
from tests.loader_digest import loaded_corpora

MODES = (Mode(), Mode(compat="mafiascope-2026-07"))


class _Probes:
    def __init__(self, probes: pd.DataFrame, m: int):
        self.probes, self.m, self._memo = probes, m, {}

    def cols(self, table: str, cols: list[str]) -> pd.DataFrame:
        assert table == "probes"
        return self.probes[cols]

    def memo(self, key: Any, fn: Any) -> Any:
        if key not in self._memo:
            self._memo[key] = fn()
        return self._memo[key]


def _select_key(p: pd.DataFrame, compat: bool) -> np.ndarray:
    pms = p["pms"].to_numpy().astype(np.int64)
    if not compat:
        pms = np.where(pms == ROUND_END, 99_990, pms)
    return (p["round"].to_numpy().astype(np.int64) * 100_000 + (pms + 10)) * 1000 + p["probe_seq"].to_numpy()


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.int16, np.float64])
def test_order_key_equals_the_select_form(dtype) -> None:
    rng = np.random.default_rng(3)
    n = 500
    p = pd.DataFrame({"round": rng.integers(0, 9, n).astype(dtype),
                      "pms": rng.choice([ROUND_END, 0, 1, 57, 99_989], n).astype(dtype),
                      "probe_seq": rng.integers(0, 999, n).astype(dtype)})
    for mode in MODES:
        got = frames.order_key(_Probes(p, 3), mode)  # type: ignore[arg-type]
        want = _select_key(p, mode.is_compat)
        assert got.dtype == want.dtype and np.array_equal(got, want), (dtype, mode.name)
    assert frames.order_key(_Probes(p[:0], 0), MODES[0]).shape == (0,)  # type: ignore[arg-type]


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.int8, np.uint16, np.float64])
def test_pidx_adds_records_of_any_dtype(dtype) -> None:
    rng = np.random.default_rng(4)
    g = np.sort(rng.integers(0, 6, 300)).astype(np.int32)
    c = _Probes(pd.DataFrame({"g": g}), 6)
    start = frames.probe_start(c)  # type: ignore[arg-type]
    gi = np.sort(rng.integers(0, 6, 400)).astype(np.int32)
    rec = rng.integers(0, 30, 400).astype(dtype)
    for items in (pd.DataFrame({"g": gi, "rec": rec}), pd.DataFrame({"g": gi[::-1].copy(), "rec": rec})):
        got = frames.pidx(c, items)  # type: ignore[arg-type]
        want = start[items["g"].to_numpy().astype(np.int64)] + items["rec"].to_numpy(dtype=np.int64)
        assert got.dtype == np.int64 and np.array_equal(got, want)


@pytest.fixture(scope="module")
def loaded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return loaded_corpora(tmp_path_factory.mktemp("frames_keys"), ("demo", "mafiascope_en_demo"))


def _cast_then_gather(c: Any, table: str, probe_id: str | None) -> tuple[np.ndarray | None, np.ndarray]:
    pi = frames.pidx(c, c.cols(table, ["g", "rec"])).astype(np.int32)
    if probe_id is None:
        return None, pi
    keep = frames.eq(c.cols("probes", ["probe_id"])["probe_id"], probe_id)[pi]
    return (None, pi) if keep.all() else (np.flatnonzero(keep), pi[keep])


@pytest.mark.parametrize("name", ["demo", "mafiascope_en_demo"])
def test_item_rows_equal_the_int32_gather(loaded, name: str) -> None:
    c = loaded[name]
    ids = [None, "no such probe", *[str(x) for x in c.cols("probes", ["probe_id"])["probe_id"].unique()]]
    kept = 0
    for table in ("ra", "sr", "sm", "pp"):
        for probe_id in ids:
            rows, pi = frames.item_rows(c, table, probe_id)
            want_rows, want_pi = _cast_then_gather(c, table, probe_id)
            assert pi.dtype == np.int32 and np.array_equal(pi, want_pi), (table, probe_id)
            assert (rows is None) == (want_rows is None) and (rows is None or np.array_equal(rows, want_rows))
            kept += rows is None and len(pi) > 0 and probe_id is not None
    assert kept  # some table is read whole for its own probe id
