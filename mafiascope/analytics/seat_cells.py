"""What each metric counts per seat: the (m, seats, k) statistics per (game, seat) cell that
:mod:`.seats` sums over a seat mask (a model, a model-role pair) and resamples by game."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from . import labels as L
from .accounting import personality_rows, plan_rows, vote_rows
from .corpus import Cached, Corpus
from .dynamics import pair_arrays as dynamics_arrays
from .episodes import episode_seat_counts
from .f1 import CODE_SETS, f1_arrays, outcome_codes
from .f2 import brier_stat, ece_stat, obs_cells
from .f2_cells import COLS
from .f3 import codes_of as f3_codes, pair_arrays as f3_pair_arrays
from .f4 import vote_units
from .frames import mafia_mask
from .load import K_NONE
from .modes import Mode
from .personality_blocks import seat_sums, whole_sums
from .stats import ratio_stat


Stat = Callable[[np.ndarray], np.ndarray]
SEAT_CELLS = Cached("seat_cells", report=True)
F1_CODE_CELLS = Cached("f1_code_cells")


@dataclass(frozen=True)
class SeatMetric:
    """One comparable metric: per-(game, seat) statistics, summed over the kept seats, and the pooled statistic."""

    key: str
    label: str
    needs_probes: bool
    per_seat: Callable[[Corpus, Mode], np.ndarray]  # (m, S, k) column sums per (game, seat) cell
    stat: Stat
    n_col: int  # column whose pooled sum is the metric's n


def _seat_codes(c: Corpus, col: str) -> tuple[dict[object, int], np.ndarray]:
    """(value -> code, (m, seats) code of each slot) of an object seat column, -1 for None/NaN;
    memoised (kept by a lean report): a seat mask compares small integers, not Python objects."""

    def build() -> tuple[dict[object, int], np.ndarray]:
        arr = c.seat_array_obj(col)
        codes, uniques = pd.factorize(arr.ravel())
        return {u: i for i, u in enumerate(uniques.tolist())}, codes.reshape(arr.shape)

    return c.memo(SEAT_CELLS.key("codes", col), build)


def _code_eq(c: Corpus, col: str, value: str) -> np.ndarray:
    index, codes = _seat_codes(c, col)
    at = index.get(value)
    return np.zeros(codes.shape, dtype=bool) if at is None else codes == at


def seat_mask(c: Corpus, model: str | None = None, role: str | None = None) -> np.ndarray:
    """(m, seats) bool: the seats played by ``model`` (exact name) and holding ``role`` (true role name)."""
    keep = c.memo(SEAT_CELLS.key("seated"), lambda: np.not_equal(c.seat_array_obj("model"), None)).copy()
    if model is not None:
        keep &= _code_eq(c, "model", model)
    if role is not None:
        keep &= _code_eq(c, "role", role)
    return keep


class _Cells:
    """Row -> (game, seat) cell keys for per-seat sufficient statistics.

    A builder sums its rows into ``m x S`` cells (``S`` = the corpus's seat slots); a seat mask
    then keeps the cells of its seats. Rows whose seat is not a seat slot count for no mask
    (as before, where such rows failed every mask). Building the cells once serves every mask
    of a report (each model, each model-role pair) and every comparison."""

    def __init__(self, c: Corpus):
        self.m = c.m
        self.S = c.seat_array_obj("model").shape[1]
        self.n = self.m * self.S

    def key(self, g: np.ndarray, s: np.ndarray) -> np.ndarray:
        """Cell index of each row; ``self.n`` (one past the last cell) for a row without a seat.

        One int64 array written in place (no int64 copies of narrower inputs, no selects)."""
        g, s = _int(g), _int(s)
        k = np.multiply(g, self.S, dtype=np.int64)
        k += s
        off = (s < 0) | (s >= self.S)
        if off.any():
            k[off] = self.n
        return k

    def sum(self, key: np.ndarray, w: np.ndarray | None = None) -> np.ndarray:
        """(m, S) sums of ``w`` (or counts) per cell.

        Boolean and small-integer weights are summed a chunk of rows at a time: bincount copies its
        weights to float64, and a chunk's copy stays small (not eight bytes a row at once); the sums
        are integers, so the same in any grouping."""
        w = None if w is None else np.asarray(w)
        if w is not None and w.dtype.kind in "biu" and w.dtype.itemsize <= 2 and len(w) > _SUM_CHUNK:
            out = np.zeros(self.n + 1)
            for lo in range(0, len(w), _SUM_CHUNK):
                out += np.bincount(key[lo: lo + _SUM_CHUNK], weights=w[lo: lo + _SUM_CHUNK], minlength=self.n + 1)
        else:
            out = np.bincount(key, weights=None if w is None else w.astype(float, copy=False), minlength=self.n + 1)
        return out[: self.n].astype(float).reshape(self.m, self.S)


_SUM_CHUNK = 1 << 20  # rows a chunk of :meth:`_Cells.sum` (its float64 weights: 8 MB)


def _int(x: np.ndarray) -> np.ndarray:
    """``x`` as an integer array: signed integers as they are, anything else as int64 (as a cast would)."""
    x = np.asarray(x)
    return x if x.dtype.kind == "i" else x.astype(np.int64)


def _cells(c: Corpus) -> _Cells:
    return c.memo(SEAT_CELLS.key(), lambda: _Cells(c))


# ----------------------------------------------------------------------------- per-seat statistics
# Each builder returns an (m, S, k) array: column sums per (game, seat) cell; a metric's per-game
# statistics over a seat mask are the sums over the mask's cells.


def _f1(col_num: str, col_den: str | None) -> Callable[[Corpus, Mode], np.ndarray]:
    num, den = CODE_SETS[(col_num, col_den)]  # the outcome codes of the rows each sum counts

    def f(c: Corpus, mode: Mode) -> np.ndarray:
        cnt = _f1_code_cells(c, mode)
        return np.stack([cnt[..., num].sum(-1), cnt[..., den].sum(-1)], axis=-1).astype(float)

    return f


def _f1_code_cells(c: Corpus, mode: Mode) -> np.ndarray:
    """(m, S, codes) F1 row counts per (game, observer seat) cell and outcome code: one count serves
    the three F1 metrics (exact integers, the sums of 0/1 weights they summed). Memoised with the
    group's other intermediates."""

    def build() -> np.ndarray:
        it, cl = f1_arrays(c, mode), _cells(c)
        codes = len(CODE_SETS[("unknown", None)][1])
        k = cl.key(it["g"], it["obs"])  # rows without a seat: cell n, past the kept bins
        k *= codes
        k += outcome_codes(c, mode)
        return np.bincount(k, minlength=(cl.n + 1) * codes)[: cl.n * codes].reshape(cl.m, cl.S, codes)

    return c.memo(F1_CODE_CELLS.key(mode), build)


def _f2(c: Corpus, mode: Mode) -> np.ndarray:
    """F2's bin_columns per (game, seat) cell: its agents' sums (:func:`.f2.obs_cells`, shared with the section)."""
    cells = obs_cells(c, mode)
    cl = _cells(c)
    out = np.zeros((cl.n, COLS))
    out[cells.agents] = cells.agent_cols
    return out.reshape(cl.m, cl.S, COLS)


_F3_BLOCK = 1 << 20  # pairs summed into the seat cells at a time: bounds the keys' and masks' temporaries


def _f3(c: Corpus, mode: Mode, tau: float = 50) -> np.ndarray:
    """Columns as F3's canonical summary: n, correct, actual trusts/neutral/suspects, predicted suspects.

    Each pair's (predicted, actual) code at ``tau`` counted per cell by one ``bincount`` a block of
    pairs at a time; the columns are sums of those counts. Every column is a count, and counts add
    exactly, so the cells equal one pass over every pair."""
    p = f3_pair_arrays(c, mode)  # f3_pairs' rows (Mafia-Mafia pairs dropped here), without building its frame
    cl = _cells(c)
    k = int(p["pred"].max(initial=0)) + 1  # predicted classes: code = pred * 3 + actual
    counts = np.zeros((cl.n + 1) * k * 3, dtype=np.int64)
    for lo in range(0, len(p["g"]), _F3_BLOCK):
        at = np.flatnonzero(~p["mm"][lo:lo + _F3_BLOCK]) + lo
        key = cl.key(p["g"][at], p["A"][at])
        key *= k * 3
        key += f3_codes(p["pred"][at], p["guess"][at], p["conf"][at], tau)
        counts += np.bincount(key, minlength=len(counts))
    h = counts.reshape(cl.n + 1, k, 3)[: cl.n]  # per cell [predicted, actual]
    d = min(k, 3)
    cols = [h.sum((1, 2)), h[:, np.arange(d), np.arange(d)].sum(1), h[:, :, 0].sum(1), h[:, :, 1].sum(1), h[:, :, 2].sum(1),
            h[:, L.SUSPECTS].sum(1) if k > L.SUSPECTS else np.zeros(cl.n, dtype=np.int64)]
    return np.stack(cols, axis=-1).astype(float).reshape(cl.m, cl.S, 6)


def _f3_acc(p: np.ndarray) -> np.ndarray:
    return np.where(p[:, 0] > 0, p[:, 1] / np.where(p[:, 0] > 0, p[:, 0], 1), np.nan)


def _f3_diff(p: np.ndarray) -> np.ndarray:
    return np.where(p[:, 0] > 0, (p[:, 1] - p[:, 2:5].max(1)) / np.where(p[:, 0] > 0, p[:, 0], 1), np.nan)


def _f4(col: str, mafia: bool, is_set: bool = False) -> Callable[[Corpus, Mode], np.ndarray]:
    def f(c: Corpus, mode: Mode) -> np.ndarray:
        cl = _cells(c)
        u = vote_units(c, mode, transcripts=False)
        if not len(u):
            return np.zeros((cl.m, cl.S, 2))
        u = u[(u["mafia_voter"].to_numpy() == mafia) & u[col].notna().to_numpy()]
        if is_set:
            hit = np.array([t in s for t, s in zip(u["target"], u[col])], dtype=float)
        else:
            hit = (u[col].to_numpy() == u["target"].to_numpy()).astype(float)
        k = cl.key(u["g"].to_numpy(), u["voter"].to_numpy())
        return np.stack([cl.sum(k, hit), cl.sum(k)], axis=-1)

    return f


def _dyn(c: Corpus, mode: Mode) -> np.ndarray:
    """Columns as dynamics' group statistics: L1 sum, L1 n, flips, flip pairs, returns."""
    d = dynamics_arrays(c, mode)  # dynamics_pairs' columns, without building its frame
    cl = _cells(c)
    k = cl.key(d["g"], d["agent"])
    l1 = d["l1"]
    has = ~np.isnan(l1)
    return np.stack([cl.sum(k[has], l1[has]), cl.sum(k[has]), cl.sum(k, d["flip"]),
                     cl.sum(k, d["flip_pair"]), cl.sum(k, d["ret"])], axis=-1)


def _episodes(c: Corpus, mode: Mode) -> np.ndarray:
    slots, switches = episode_seat_counts(c)
    cl = _cells(c)
    out = np.zeros((cl.m, cl.S, 2))
    S = min(cl.S, slots.shape[1])
    out[:, :S, 0], out[:, :S, 1] = switches[:, :S], slots[:, :S]
    return out


def _parse(c: Corpus, mode: Mode) -> np.ndarray:
    """Parsed (repaired answer) records and records: one unweighted count of 2 * cell + parsed."""
    p = c.cols("probes", ["g", "seat", "eff_kind"])
    cl = _cells(c)
    k = cl.key(p["g"].to_numpy(), p["seat"].to_numpy())  # a new array: doubled in place
    k *= 2
    k += p["eff_kind"].to_numpy() != K_NONE
    cnt = np.bincount(k, minlength=2 * (cl.n + 1))[: 2 * cl.n].reshape(cl.m, cl.S, 2)
    return np.stack([cnt[..., 1], cnt.sum(-1)], axis=-1).astype(float)


def _personality(c: Corpus, mode: Mode) -> np.ndarray:
    """Absolute error summed over traits, the number of trait estimates, the constant-50 baseline's error."""
    r = personality_rows(c)
    cl = _cells(c)
    sums = whole_sums(c, r)  # shared with the section when every value is a whole number
    cells = sums["cells"] if sums is not None and sums["shape"] == (cl.m, cl.S) else seat_sums(c, r, cl.key, cl.n)
    err, n, base = (x[: cl.n].reshape(cl.m, cl.S) for x in cells)  # by blocks of games
    return np.stack([err, n, base], axis=-1)


def _plans(c: Corpus, mode: Mode) -> np.ndarray:
    j = plan_rows(c)
    cl = _cells(c)
    if not len(j):
        return np.zeros((cl.m, cl.S, 2))
    k = cl.key(j["g"].to_numpy(), j["seat"].to_numpy())
    return np.stack([cl.sum(k, j["hit"].to_numpy()), cl.sum(k)], axis=-1)


def _votes(c: Corpus, mode: Mode) -> np.ndarray:
    """Town voters' tally votes on a Mafia seat, and their tally votes."""
    v = vote_rows(c)
    v = v[v["town_voter"].to_numpy()]
    cl = _cells(c)
    k = cl.key(v["g"].to_numpy(), v["voter"].to_numpy())
    return np.stack([cl.sum(k, v["on_mafia"].to_numpy()), cl.sum(k)], axis=-1)


def _wins(c: Corpus, mode: Mode) -> np.ndarray:
    """Seats of completed games on the winning side, and seats (draws count as losses)."""
    cl = _cells(c)
    done = c.games["completed"].to_numpy(dtype=bool)
    winner = c.games["winner"].to_numpy(dtype=object)
    maf = mafia_mask(c)
    won = np.where(maf, (winner == "Mafia")[:, None], (winner == "Villagers")[:, None])
    out = np.zeros((cl.m, cl.S, 2))
    S = min(cl.S, won.shape[1])
    out[:, :S, 0], out[:, :S, 1] = won[:, :S] & done[:, None], done[:, None]
    return out


METRICS: tuple[SeatMetric, ...] = (
    SeatMetric("outcome.seat_win_rate", "seat win rate", False, _wins, ratio_stat(0, 1), 1),
    SeatMetric("votes.town_on_mafia_rate", "town votes on Mafia", False, _votes, ratio_stat(0, 1), 1),
    SeatMetric("parse.parse_rate", "probe parse rate", True, _parse, ratio_stat(0, 1), 1),
    SeatMetric("f1.accuracy", "F1 committed accuracy", True, _f1("correct", "committed"), ratio_stat(0, 1), 1),
    SeatMetric("f1.unknown_rate", "F1 Unknown rate", True, _f1("unknown", None), ratio_stat(0, 1), 1),
    SeatMetric("f1.mafia_recall", "F1 Mafia recall", True, _f1("hit_mafia", "tgt_mafia"), ratio_stat(0, 1), 1),
    SeatMetric("f2.ece", "F2 ECE", True, _f2, ece_stat, slice(1, 15, 3)),  # type: ignore[arg-type]
    SeatMetric("f2.brier", "F2 Brier", True, _f2, brier_stat, slice(1, 15, 3)),  # type: ignore[arg-type]
    SeatMetric("f3.ratio", "F3 spotlight ratio", True, _f3, ratio_stat(5, 4), 0),
    SeatMetric("f3.accuracy", "F3 accuracy", True, _f3, _f3_acc, 0),
    SeatMetric("f3.diff", "F3 accuracy - majority", True, _f3, _f3_diff, 0),
    SeatMetric("f4.top1.innocent", "F4 top-1 hit (town voters)", True, _f4("top1", False), ratio_stat(0, 1), 1),
    SeatMetric("f4.top1.mafia", "F4 top-1 hit (Mafia voters)", True, _f4("top1", True), ratio_stat(0, 1), 1),
    SeatMetric("f4.committed_set.innocent", "F4 committed-set hit (town voters)", True,
               _f4("committed_set", False, True), ratio_stat(0, 1), 1),
    SeatMetric("dynamics.volatility", "suspicion volatility", True, _dyn, ratio_stat(0, 1), 1),
    SeatMetric("dynamics.flip_rate", "top-suspect flip rate", True, _dyn, ratio_stat(2, 3), 3),
    SeatMetric("dynamics.return_rate", "return rate", True, _dyn, ratio_stat(4, 2), 2),
    SeatMetric("episodes.switch_rate", "episode switching rate", True, _episodes, ratio_stat(0, 1), 1),
    SeatMetric("personality.mae", "personality MAE", True, _personality, ratio_stat(0, 1), 1),
    SeatMetric("personality.mae_minus_baseline", "personality MAE - constant-50 MAE", True, _personality,
               lambda p: np.where(p[:, 1] > 0, (p[:, 0] - p[:, 2]) / np.where(p[:, 1] > 0, p[:, 1], 1), np.nan), 1),
    SeatMetric("plans.rate", "plan-action consistency", True, _plans, ratio_stat(0, 1), 1),
)
METRIC_KEYS = tuple(x.key for x in METRICS)
