"""Seat-level attribution: every metric split by the model (and role) of the seat it belongs to.

A seat's model comes from the setup record (``players.model``). Each metric is attributed to
one seat per row: F1/F2 and personality error to the observer, F3 to the predictor (A, the
seat that states how B feels about it), F4 to the voter, dynamics and episode switching to
the agent whose ranking moved, parse accounting to the probed seat, plan-action consistency
to the planner, the seat win rate to the seat.

A metric is an (m, seats, k) array of sufficient statistics per (game, seat) cell, built once
per report; a seat mask (a model, a model-role pair) sums its cells into the (m, k) per-game
statistics, and a function of the pooled columns gives the figure. Seats of one game are not independent, so the uncertainty
is the game-level cluster bootstrap of :mod:`.stats` (whole games are resampled, with every
seat they hold). :func:`compare` resamples the games once for both models, so games in
which both sat pair their contributions (shared game effects cancel in the difference).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import labels as L
from .accounting import plan_rows, vote_rows
from .corpus import Corpus
from .dynamics import dynamics_pairs
from .episodes import episode_seat_counts
from .f1 import _ci, f1_by_round, f1_items
from .f2 import bin_columns, brier_stat, calibration_obs, ece_stat, f2
from .f3 import actual_attitude, f3_pairs
from .f4 import vote_units
from .frames import items_with_probe, mafia_mask
from .load import K_NONE, TRAITS
from .modes import Mode
from .stats import multiplicities, percentile_ci, ratio_stat, round_or_none

Stat = Callable[[np.ndarray], np.ndarray]


@dataclass(frozen=True)
class SeatMetric:
    """One comparable metric: per-(game, seat) statistics, summed over the kept seats, and the pooled statistic."""

    key: str
    label: str
    needs_probes: bool
    per_seat: Callable[[Corpus, Mode], np.ndarray]  # (m, S, k) column sums per (game, seat) cell
    stat: Stat
    n_col: int  # column whose pooled sum is the metric's n


def seat_mask(c: Corpus, model: str | None = None, role: str | None = None) -> np.ndarray:
    """(m, seats) bool: the seats played by ``model`` (exact name) and holding ``role`` (true role name)."""
    models = c.seat_array_obj("model")
    keep = np.not_equal(models, None)
    if model is not None:
        keep &= models == model
    if role is not None:
        keep &= c.seat_array_obj("role") == role
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
        """Cell index of each row; ``self.n`` (one past the last cell) for a row without a seat."""
        g, s = np.asarray(g, dtype=np.int64), np.asarray(s, dtype=np.int64)
        ok = (s >= 0) & (s < self.S)
        return np.where(ok, g * self.S + np.where(ok, s, 0), self.n)

    def sum(self, key: np.ndarray, w: np.ndarray | None = None) -> np.ndarray:
        """(m, S) sums of ``w`` (or counts) per cell."""
        out = np.bincount(key, weights=None if w is None else np.asarray(w, dtype=float), minlength=self.n + 1)
        return out[: self.n].astype(float).reshape(self.m, self.S)


def _cells(c: Corpus) -> _Cells:
    return c.memo("seat_cells", lambda: _Cells(c))


# ----------------------------------------------------------------------------- per-seat statistics
# Each builder returns an (m, S, k) array: column sums per (game, seat) cell; a metric's per-game
# statistics over a seat mask are the sums over the mask's cells.


def _f1(col_num: str, col_den: str | None) -> Callable[[Corpus, Mode], np.ndarray]:
    def f(c: Corpus, mode: Mode) -> np.ndarray:
        it = f1_items(c, mode)
        cl = _cells(c)
        k = cl.key(it["g"].to_numpy(), it["obs"].to_numpy())
        num = it[col_num].to_numpy()
        den = np.ones(len(it), dtype=bool) if col_den is None else it[col_den].to_numpy()
        return np.stack([cl.sum(k, num & den), cl.sum(k, den)], axis=-1)

    return f


def _f2(c: Corpus, mode: Mode) -> np.ndarray:
    df = calibration_obs(c, mode)
    cl = _cells(c)
    k = cl.key(df["g"].to_numpy(), df["obs"].to_numpy())
    cols = bin_columns(df.assign(g=k), cl.n + 1)
    return cols[: cl.n].reshape(cl.m, cl.S, -1)


def _f3(c: Corpus, mode: Mode, tau: float = 50) -> np.ndarray:
    """Columns as F3's canonical summary: n, correct, actual trusts/neutral/suspects, predicted suspects."""
    df = f3_pairs(c, mode)
    cl = _cells(c)
    k = cl.key(df["g"].to_numpy(), df["A"].to_numpy())
    pred = df["pred"].to_numpy()
    act = actual_attitude(df["guess"].to_numpy(), df["conf"].to_numpy(), tau)
    cols = [cl.sum(k), cl.sum(k, pred == act)] + [cl.sum(k, act == a) for a in range(3)]
    return np.stack(cols + [cl.sum(k, pred == L.SUSPECTS)], axis=-1)


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
    df = dynamics_pairs(c, mode)
    cl = _cells(c)
    k = cl.key(df["g"].to_numpy(), df["agent"].to_numpy())
    l1 = df["l1"].to_numpy()
    has = ~np.isnan(l1)
    return np.stack([cl.sum(k[has], l1[has]), cl.sum(k[has]), cl.sum(k, df["flip"].to_numpy()),
                     cl.sum(k, df["flip_pair"].to_numpy()), cl.sum(k, df["ret"].to_numpy())], axis=-1)


def _episodes(c: Corpus, mode: Mode) -> np.ndarray:
    slots, switches = episode_seat_counts(c)
    cl = _cells(c)
    out = np.zeros((cl.m, cl.S, 2))
    S = min(cl.S, slots.shape[1])
    out[:, :S, 0], out[:, :S, 1] = switches[:, :S], slots[:, :S]
    return out


def _parse(c: Corpus, mode: Mode) -> np.ndarray:
    p = c.probes
    cl = _cells(c)
    k = cl.key(p["g"].to_numpy(), p["seat"].to_numpy())
    return np.stack([cl.sum(k, p["eff_kind"].to_numpy() != K_NONE), cl.sum(k)], axis=-1)


def _personality(c: Corpus, mode: Mode) -> np.ndarray:
    """Absolute error summed over traits, the number of trait estimates, the constant-50 baseline's error."""
    it = items_with_probe(c, "pp", "personality_profile")
    it = it[(it["tgt"].to_numpy() >= 0) & (it["tgt"].to_numpy() != it["seat"].to_numpy())]
    cl = _cells(c)
    g, t = it["g"].to_numpy(dtype=np.int64), it["tgt"].to_numpy(dtype=np.int64)
    k = cl.key(g, it["seat"].to_numpy())
    err, base, n = (np.zeros((cl.m, cl.S)) for _ in range(3))
    for trait in TRAITS:
        truth = c.seat_array(trait)[g, t]
        est = it[trait].to_numpy()
        ok = ~np.isnan(truth) & ~np.isnan(est)
        err += cl.sum(k[ok], np.abs(est - truth)[ok])
        base += cl.sum(k[ok], np.abs(50 - truth)[ok])
        n += cl.sum(k[ok])
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


def _metrics(c: Corpus) -> tuple[SeatMetric, ...]:
    has_probes = len(c.probes) > 0
    return tuple(x for x in METRICS if has_probes or not x.needs_probes)


def _seat_stats(c: Corpus, mode: Mode, metric: SeatMetric) -> np.ndarray:
    """A builder's (m, S, k) statistics, built once per corpus and mode (metrics sharing a builder share them)."""
    return c.memo(("seat_stats", metric.per_seat, mode), lambda: np.asarray(metric.per_seat(c, mode), dtype=np.float64))


class _PerGame:
    """Per-game statistics of each metric builder for one seat mask: the sums over its seats."""

    def __init__(self, c: Corpus, mode: Mode, mask: np.ndarray):
        self.c, self.mode = c, mode
        self.mask = mask.astype(np.float64)
        self._got: dict[Any, np.ndarray] = {}

    def __call__(self, metric: SeatMetric) -> np.ndarray:
        key = metric.per_seat
        if key not in self._got:
            cells = _seat_stats(self.c, self.mode, metric)
            S = min(cells.shape[1], self.mask.shape[1])
            self._got[key] = np.einsum("msk,ms->mk", cells[:, :S], self.mask[:, :S])
        return self._got[key]


def _point(metric: SeatMetric, pg: np.ndarray) -> tuple[float | None, int]:
    tot = pg.sum(0)[None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        v = float(metric.stat(tot)[0])
    n = int(round(float(np.sum(tot[0, metric.n_col]))))
    return (None if np.isnan(v) else v), n


def _resamples(metric: SeatMetric, pg: np.ndarray, mode: Mode) -> np.ndarray | None:
    if mode.boot == 0 or pg.shape[0] == 0:
        return None
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.asarray(metric.stat(multiplicities(pg.shape[0], mode) @ pg), dtype=np.float64)


def _pooled_resamples(c: Corpus, mode: Mode, pers: list[_PerGame]) -> dict[tuple[int, Any], np.ndarray]:
    """``(mask index, builder) -> (B, k)`` resampled pooled statistics, one matrix product per
    builder for every mask at once (the multiplicity matrix is read once, not once per mask)."""
    out: dict[tuple[int, Any], np.ndarray] = {}
    if mode.boot == 0 or c.m == 0 or not pers:
        return out
    mult = multiplicities(c.m, mode)
    seen: set[Any] = set()
    for metric in _metrics(c):
        key = metric.per_seat
        if key in seen:
            continue
        seen.add(key)
        pgs = [per(metric) for per in pers]
        pooled = mult @ np.concatenate(pgs, axis=1)
        k = pgs[0].shape[1]
        for i in range(len(pers)):
            out[(i, key)] = pooled[:, i * k:(i + 1) * k]
    return out


def seat_metrics_many(c: Corpus, mode: Mode, masks: list[np.ndarray]) -> list[dict[str, dict[str, Any]]]:
    """:func:`seat_metrics` for several seat masks, sharing the per-seat statistics and the resampling."""
    pers = [_PerGame(c, mode, mask) for mask in masks]
    pooled = _pooled_resamples(c, mode, pers)
    results = []
    for i, (mask, per) in enumerate(zip(masks, pers)):
        games = int(mask.any(1).sum())
        out: dict[str, dict[str, Any]] = {}
        for metric in _metrics(c):
            pg = per(metric)
            pt, n = _point(metric, pg)
            ci = None
            if (i, metric.per_seat) in pooled:
                with np.errstate(divide="ignore", invalid="ignore"):
                    res = np.asarray(metric.stat(pooled[(i, metric.per_seat)]), dtype=np.float64)
                ci = _ci(percentile_ci(res))
            out[metric.key] = {"point": round_or_none(pt), "ci95": ci, "n": n, "games": games}
        results.append(out)
    return results


def seat_metrics(c: Corpus, mode: Mode, mask: np.ndarray) -> dict[str, dict[str, Any]]:
    """Every comparable metric over the seats of ``mask``: ``{key: {point, ci95, n, games}}``."""
    return seat_metrics_many(c, mode, [mask])[0]


def models_of(c: Corpus) -> list[str]:
    """Models seated in the corpus, sorted."""
    return sorted({str(x) for x in c.players["model"].tolist()}) if len(c.players) else []


def roles_of(c: Corpus) -> list[str]:
    return sorted({str(x) for x in c.players["role"].tolist() if str(x)}) if len(c.players) else []


def by_model(c: Corpus, mode: Mode) -> dict[str, Any]:
    """Per model: every comparable metric, F1 by round and F2 (ECE/Brier with intervals, bins); seats, games."""
    out: dict[str, Any] = {}
    has_probes = len(c.probes) > 0
    models = models_of(c)
    masks = [seat_mask(c, model=mdl) for mdl in models]
    for mdl, mask, metrics in zip(models, masks, seat_metrics_many(c, mode, masks)):
        entry: dict[str, Any] = {"seats": int(mask.sum()), "games": int(mask.any(1).sum()), "metrics": metrics}
        if has_probes:
            entry["f1_by_round"] = f1_by_round(c, mode, model=mdl)
            entry["f2"] = f2(c, mode, breakdowns=False, model=mdl)
        out[mdl] = entry
    return out


def by_model_role(c: Corpus, mode: Mode) -> dict[str, Any]:
    """``{model: {role: {seats, games, metrics}}}`` over the roles each model held."""
    pairs = [(mdl, role, seat_mask(c, model=mdl, role=role)) for mdl in models_of(c) for role in roles_of(c)]
    pairs = [p for p in pairs if p[2].any()]
    out: dict[str, Any] = {}
    for (mdl, role, mask), metrics in zip(pairs, seat_metrics_many(c, mode, [p[2] for p in pairs])):
        out.setdefault(mdl, {})[role] = {"seats": int(mask.sum()), "games": int(mask.any(1).sum()), "metrics": metrics}
    return out


# ----------------------------------------------------------------------------- comparisons


def holm(pvalues: list[float | None]) -> list[float | None]:
    """Holm step-down adjusted p-values (None stays None; the family is the non-None ones)."""
    idx = [i for i, p in enumerate(pvalues) if p is not None]
    order = sorted(idx, key=lambda i: pvalues[i])  # type: ignore[arg-type, return-value]
    k = len(order)
    out: list[float | None] = [None] * len(pvalues)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (k - rank) * float(pvalues[i])))  # type: ignore[arg-type]
        out[i] = running
    return out


def bootstrap_p(diffs: np.ndarray) -> float | None:
    """Two-sided bootstrap p-value of a zero difference: twice the smaller tail share of the
    resampled differences at or beyond zero, with the +1 correction (never 0)."""
    d = diffs[~np.isnan(diffs)]
    if not len(d):
        return None
    lo, hi = int((d <= 0).sum()), int((d >= 0).sum())
    return min(1.0, 2 * (min(lo, hi) + 1) / (len(d) + 1))


def compare(c: Corpus, mode: Mode, a: str, b: str, *, role: str | None = None) -> dict[str, Any]:
    """Model ``a`` minus model ``b`` on every metric: difference, cluster-bootstrap CI, p, Holm p.

    Both models' statistics are pooled under the same resampled games (paired where both sat
    in a game). ``role`` restricts both to seats of that true role.
    """
    known = models_of(c)
    for mdl in (a, b):
        if mdl not in known:
            raise KeyError(mdl)
    ma, mb = seat_mask(c, model=a, role=role), seat_mask(c, model=b, role=role)
    pa, pb = _PerGame(c, mode, ma), _PerGame(c, mode, mb)
    rows: list[dict[str, Any]] = []
    for metric in _metrics(c):
        ga, gb = pa(metric), pb(metric)
        va, na = _point(metric, ga)
        vb, nb = _point(metric, gb)
        ra, rb = _resamples(metric, ga, mode), _resamples(metric, gb, mode)
        diff = None if va is None or vb is None else va - vb
        ci = p = None
        if ra is not None and rb is not None and diff is not None:
            d = ra - rb
            ci = _ci(percentile_ci(d))
            p = bootstrap_p(d)
        rows.append({"metric": metric.key, "label": metric.label, "a": round_or_none(va), "b": round_or_none(vb),
                     "n_a": na, "n_b": nb, "diff": round_or_none(diff), "diff_ci95": ci, "p": round_or_none(p)})
    for row, ph in zip(rows, holm([r["p"] for r in rows])):
        row["p_holm"] = round_or_none(ph)
    shared = int((ma.any(1) & mb.any(1)).sum())
    return {"a": a, "b": b, "role": role, "boot": mode.boot, "seed": mode.seed,
            "games_a": int(ma.any(1).sum()), "games_b": int(mb.any(1).sum()), "games_shared": shared,
            "seats_a": int(ma.sum()), "seats_b": int(mb.sum()), "rows": rows}


def compare_all(c: Corpus, mode: Mode) -> list[dict[str, Any]]:
    """:func:`compare` for every pair of models in the corpus (sorted names, a < b). Each row also gets
    ``p_holm_all``: Holm over every test of every pair (the family of a whole report)."""
    ms = models_of(c)
    out = [compare(c, mode, x, y) for i, x in enumerate(ms) for y in ms[i + 1:]]
    rows = [r for cmp in out for r in cmp["rows"]]
    for r, ph in zip(rows, holm([r["p"] for r in rows])):
        r["p_holm_all"] = round_or_none(ph)
    return out
