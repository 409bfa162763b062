"""F2 -- calibration (docs/metrics.md §5): bins of width 20 (100 folded into the top
bin), per-bin accuracy and mean confidence with Wilson 95% intervals and bootstrap CIs,
ECE and Brier; per corpus, per agent (game, seat) and per model.

Observations are exactly F1's committed items with a confidence in [0, 100].
"""

from __future__ import annotations

from itertools import islice
from typing import Any, Mapping, Union

import numpy as np
import pandas as pd

from . import f2_cells
from .arrays_out import gc_paused, group_sums, rounded_list
from .executor import map_blocks
from .corpus import Cached, Corpus
from .f1 import f1_arrays
from .f2_cells import ObsCells
from .frames import seat_model_codes
from .modes import Mode
from .intervals import ci_list as _ci, cluster_ci, pooled_entry
from .stats import ratio_stat, round_or_none, wilson, wilson_arrays

N_BINS = 5
Obs = Union[pd.DataFrame, Mapping[str, np.ndarray]]  # calibration_obs() or its columns as arrays
CALIBRATION_OBS = Cached("calibration_obs")
CALIBRATION_CELLS = Cached("calibration_cells")


def calibration_obs(c: Corpus, mode: Mode) -> pd.DataFrame:
    """F1's committed items with a confidence in [0, 100]: ``g``, ``obs``, ``conf``, ``correct``,
    ``bin``, ``outcome`` (only the columns F2 reads; built once per corpus and mode)."""
    return c.memo(CALIBRATION_OBS.key(mode), lambda: pd.DataFrame(_obs_rows(c, mode)).astype({"bin": int}))


def _obs_rows(c: Corpus, mode: Mode) -> dict[str, np.ndarray]:
    """:func:`calibration_obs`' columns as arrays (F2's sums read these, not a memoised frame)."""
    it = f1_arrays(c, mode)  # f1_items' columns, without building its frame
    conf = it["conf"]
    with np.errstate(invalid="ignore"):  # NaN compares False: not kept
        at = np.flatnonzero(it["committed"] & (conf >= 0) & (conf <= 100))
    out = {"g": np.empty(len(at), it["g"].dtype), "obs": np.empty(len(at), it["obs"].dtype),
           "conf": np.empty(len(at), conf.dtype), "correct": np.empty(len(at), bool),
           "bin": np.empty(len(at), np.int8), "outcome": np.empty(len(at))}

    def fill(lo: int) -> None:  # a chunk of the kept rows, in place (chunks on worker threads)
        s = slice(lo, lo + _OBS_CHUNK)
        rows = at[s]
        for k in ("g", "obs", "conf", "correct"):
            out[k][s] = it[k][rows]
        out["bin"][s] = np.minimum(N_BINS - 1, np.floor(out["conf"][s] / 20))
        out["outcome"][s] = out["correct"][s]

    map_blocks(fill, range(0, len(at), _OBS_CHUNK))
    return out


_OBS_CHUNK = 1 << 20  # kept rows gathered per chunk


def _bins_ece_brier(k: np.ndarray, n: np.ndarray, cs: np.ndarray, bsum: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Vectorised ECE and Brier over rows of pooled (k, n, conf_sum) per bin and Brier sums."""
    N = n.sum(1)
    with np.errstate(divide="ignore", invalid="ignore"):
        acc = k / n
        mc = cs / n / 100.0
        terms = np.where(n > 0, n / N[:, None] * np.abs(acc - mc), 0.0)
        ece = np.where(N > 0, terms.sum(1), np.nan)
        brier = np.where(N > 0, bsum / N, np.nan)
    return ece, brier


def _bin_entries(n: np.ndarray, k: np.ndarray, cs: np.ndarray) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for j in range(N_BINS):
        if n[j] == 0:
            continue
        out[f"{20 * j}-{20 * j + 19}"] = {
            "n": int(n[j]),
            "acc": round_or_none(k[j] / n[j]),
            "mean_conf": round_or_none(cs[j] / n[j]),
            "wilson95": [round_or_none(x) for x in wilson(k[j], n[j])],
        }
    return out


BIN_NAMES = [f"{20 * j}-{20 * j + 19}" for j in range(N_BINS)]


def _bin_entries_many(n: np.ndarray, k: np.ndarray, cs: np.ndarray) -> list[dict[str, dict[str, Any]]]:
    """:func:`_bin_entries` of each row of (groups, bins) arrays, the arithmetic done on whole arrays
    (a report has one row per agent: 49,400 at 10,000 games) and on the nonzero cells only."""
    rows, cols = np.nonzero(n)  # row-major: each row's bins in order
    nn, kk, cc = n[rows, cols], k[rows, cols], cs[rows, cols]
    with np.errstate(divide="ignore", invalid="ignore"):
        acc, mc = kk / nn, cc / nn
    lo, hi = wilson_arrays(kk, nn)
    names = np.array(BIN_NAMES, dtype=object)[cols].tolist()
    with gc_paused():
        cells = zip(names, [{"n": a, "acc": b, "mean_conf": m, "wilson95": [x, y]} for a, b, m, x, y in zip(
            nn.astype(np.int64).tolist(), rounded_list(acc), rounded_list(mc), rounded_list(lo), rounded_list(hi))])
        return [dict(islice(cells, z)) for z in np.bincount(rows, minlength=n.shape[0]).tolist()]


def bin_columns(df: Obs, m: int) -> np.ndarray:
    """(m, 16) per-game sufficient statistics: (correct, n, confidence sum) per bin, then the Brier sum.

    One bincount per statistic over (game, bin) cells: each cell adds its rows in row order, as a
    bincount of the bin's rows alone did (bins are 0..N_BINS-1 by construction)."""
    conf, out_, b, g = (np.asarray(df[k]) for k in ("conf", "outcome", "bin", "g"))
    m = max(m, int(g.max(initial=-1)) + 1)
    cell = g.astype(np.int64) * N_BINS + b
    size = m * N_BINS
    stats = [np.bincount(cell, weights=out_, minlength=size), np.bincount(cell, minlength=size).astype(float),
             np.bincount(cell, weights=conf, minlength=size)]
    per_bin = np.stack([x.reshape(-1, N_BINS) for x in stats], axis=2).reshape(-1, 3 * N_BINS)
    return np.column_stack([per_bin, np.bincount(g, weights=(conf / 100.0 - out_) ** 2, minlength=m)])


def ece_stat(p: np.ndarray) -> np.ndarray:
    """ECE of pooled :func:`bin_columns` rows (NaN without observations)."""
    return _bins_ece_brier(p[:, 0:15:3], p[:, 1:15:3], p[:, 2:15:3], p[:, 15])[0]


def brier_stat(p: np.ndarray) -> np.ndarray:
    return _bins_ece_brier(p[:, 0:15:3], p[:, 1:15:3], p[:, 2:15:3], p[:, 15])[1]


def calibration_summary(df: Obs, m: int | None = None, mode: Mode | None = None, with_ci: bool = False) -> dict[str, Any]:
    conf, out_, b = np.asarray(df["conf"]), np.asarray(df["outcome"]), np.asarray(df["bin"])
    n = np.bincount(b, minlength=N_BINS).astype(float)
    k = np.bincount(b, weights=out_, minlength=N_BINS)
    cs = np.bincount(b, weights=conf, minlength=N_BINS)
    bs = float(((conf / 100.0 - out_) ** 2).sum())
    per_game = bin_columns(df, m) if with_ci and m is not None and mode is not None else None
    return _summary(n, k, cs, bs, per_game, mode)


def _summary(n: np.ndarray, k: np.ndarray, cs: np.ndarray, bs: float, per_game: np.ndarray | None,
             mode: Mode | None) -> dict[str, Any]:
    """:func:`calibration_summary` from its sums: per bin, the Brier sum and (for the intervals) per game."""
    ece, brier = _bins_ece_brier(k[None], n[None], cs[None], np.array([bs]))
    res: dict[str, Any] = {
        "n": int(n.sum()),
        "ece": round_or_none(ece[0]),
        "brier": round_or_none(brier[0]),
        "bins": {},
    }
    if per_game is not None and mode is not None:
        res["ece_ci95"] = _ci(cluster_ci(per_game, ece_stat, mode))
        res["brier_ci95"] = _ci(cluster_ci(per_game, brier_stat, mode))
        res["bins"] = _bin_entries(n, k, cs)
        for j, entry in zip((j for j in range(N_BINS) if n[j]), res["bins"].values()):
            entry["acc_ci95"] = _ci(cluster_ci(per_game[:, 3 * j : 3 * j + 2], ratio_stat(0, 1), mode))
    else:
        res["bins"] = _bin_entries(n, k, cs)
    return res


def _grouped_columns(df: Obs, keys: np.ndarray, n_groups: int) -> tuple[list[int], list, list, list]:
    """Each group's ``n``, ``ece``, ``brier`` and ``bins`` of :func:`grouped_summaries`, as lists.

    Same arithmetic as the one-group function: each (group, bin) cell adds its rows in row order (a
    bincount over the unsorted rows does), each group's Brier sum is numpy's sum of its rows in row order
    (:func:`.arrays_out.group_sums`), ECE and Brier are evaluated row-wise."""
    conf, out_, b = np.asarray(df["conf"]), np.asarray(df["outcome"]), np.asarray(df["bin"])
    cell = keys * N_BINS + b
    size = n_groups * N_BINS
    n = np.bincount(cell, minlength=size).astype(float).reshape(n_groups, N_BINS)
    k = np.bincount(cell, weights=out_, minlength=size).reshape(n_groups, N_BINS)
    cs = np.bincount(cell, weights=conf, minlength=size).reshape(n_groups, N_BINS)
    del cell
    return _group_lists(n, k, cs, group_sums((conf / 100.0 - out_) ** 2, keys, n_groups))


def _group_lists(n: np.ndarray, k: np.ndarray, cs: np.ndarray, bs: np.ndarray) -> tuple[list[int], list, list, list]:
    """:func:`_grouped_columns` from each group's (groups, bins) sums and Brier sum."""
    ece, brier = _bins_ece_brier(k, n, cs, bs)
    return n.sum(1).astype(np.int64).tolist(), rounded_list(ece), rounded_list(brier), _bin_entries_many(n, k, cs)


def grouped_summaries(df: Obs, keys: np.ndarray, n_groups: int) -> list[dict[str, Any]]:
    """:func:`calibration_summary` (no CIs) of each group of rows; ``keys`` = group per row (0..n_groups-1)."""
    return _summaries(_grouped_columns(df, keys, n_groups))


def _summaries(cols: tuple[list[int], list, list, list]) -> list[dict[str, Any]]:
    with gc_paused():
        return [{"n": nn, "ece": e, "brier": b, "bins": bins} for nn, e, b, bins in zip(*cols)]


@pooled_entry
def _with_cis(df: Obs, m: int, mode: Mode) -> dict[str, Any]:
    return calibration_summary(df, m, mode, with_ci=True)


def obs_cells(c: Corpus, mode: Mode, seats: np.ndarray | None = None) -> ObsCells:
    """The sums of every calibration observation (memoised per corpus and mode) or of ``seats``' only."""

    def build(keep: np.ndarray | None = None) -> ObsCells:
        rows = _obs_rows(c, mode)
        del rows["correct"]
        if keep is not None:
            keep = keep[rows["g"], rows["obs"]]
            rows = {k: v[keep] for k, v in rows.items()}
        names, codes = seat_model_codes(c)
        return f2_cells.obs_cells(rows, c.m, codes, len(names))

    return c.memo(CALIBRATION_CELLS.key(mode), build) if seats is None else build(seats)


@pooled_entry
def _summary_of(cells: ObsCells, j: int | None, mode: Mode) -> dict[str, Any]:
    """:func:`_with_cis` of every row of ``cells`` (``j`` None) or of model ``j``'s rows (none if -1)."""
    if j is None:
        kns, bs, per_game = cells.bins, cells.brier, cells.game_cols
    elif j < 0:
        kns, bs, per_game = np.zeros((N_BINS, 3)), 0.0, cells.model_game_cols(j)
    else:
        kns, bs, per_game = cells.model_bins[j], float(cells.model_brier[j]), cells.model_game_cols(j)
    n, k, cs = (np.ascontiguousarray(kns[:, i]) for i in (1, 0, 2))
    return _summary(n, k, cs, bs, per_game, mode)


def f2(c: Corpus, mode: Mode, *, breakdowns: bool = True, model: str | None = None,
       seats: np.ndarray | None = None) -> dict[str, Any]:
    """Calibration; ``model`` keeps only the guesses of seats played by that model (mixed-model games),
    ``seats`` (an (m, seats) mask) only those observers' guesses.

    Every figure is summed from :func:`obs_cells` (one pass over the rows for the corpus and every model)."""
    cells = obs_cells(c, mode, seats)
    names_m = seat_model_codes(c)[0]
    j = None
    if model is not None:  # played_by(): str(seat's model) == model
        hit = np.flatnonzero(names_m == model)
        j = int(hit[0]) if len(hit) else -1
    res = _summary_of(cells, j, mode)  # the breakdowns hold no intervals
    if breakdowns:
        mb = cells.model_bins
        present = np.flatnonzero(mb[:, :, 1].sum(1) > 0)  # models with rows, sorted by name
        if j is not None:
            present = present[present == j]
        left_out = set(c.selection.get("models_left_out") or {})  # --min-games: not in any per-model table
        present = np.array([i for i in present if str(names_m[i]) not in left_out], dtype=np.intp)
        res["by_model"] = dict(zip((str(x) for x in names_m[present]), _grouped(
            mb[present], cells.model_brier[present])))
        at = slice(None) if j is None else np.flatnonzero(cells.agent_models == j)
        names = c.seat_array_obj("name")
        S = names.shape[1]
        agents = cells.agents[at]
        ag_g, ag_s = agents // S, agents % S
        gid = c.games["game_id"].to_numpy()
        cols = _group_lists(*_kns_of(cells.agent_cols[at]), cells.agent_brier[at])
        with gc_paused():
            res["by_agent"] = [
                {"game_id": str(gi), "agent": str(nm), "n": nn, "ece": e, "brier": b, "bins": bins}
                for gi, nm, nn, e, b, bins in zip(gid[ag_g].tolist(), names[ag_g, ag_s].tolist(), *cols)
            ]
    return res


def _kns_of(cols: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(n, k, cs) as (groups, bins) arrays from rows in bin_columns' layout."""
    return tuple(np.ascontiguousarray(cols[:, i : 3 * N_BINS : 3]) for i in (1, 0, 2))  # type: ignore[return-value]


def _grouped(kns: np.ndarray, bs: np.ndarray) -> list[dict[str, Any]]:
    """:func:`grouped_summaries` from each group's (bins, 3) sums and Brier sum."""
    return _summaries(_group_lists(*_kns_of(kns.reshape(len(kns), 3 * N_BINS)), bs))
