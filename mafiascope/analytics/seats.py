"""Seat-level attribution: every metric split by the model (and role) of the seat it belongs to.

A seat's model comes from the setup record (``players.model``). Each metric is attributed to
one seat per row: F1/F2 and personality error to the observer, F3 to the predictor (A, the
seat that states how B feels about it), F4 and the town votes to the voter, dynamics and episode
switching to the agent whose ranking moved, parse accounting to the probed seat, plan-action
consistency to the planner, the outcome figures to the seat.

A metric is an (m, seats, k) array of sufficient statistics per (game, seat) cell, built once
per report over the games it counts (probe metrics: the games with probe logs; the outcome figures:
completed games with more than one model); a seat mask (a model, a model-role pair) sums its cells into
the (m, k) per-game statistics, and a function of the pooled columns gives the figure. Seats of one game
are not independent, so the uncertainty is the game-level cluster bootstrap of :mod:`.stats`, over the
games holding the mask's seats alone (whole games are resampled, with every seat they hold; the draws
depend on those games and the seed only). :func:`compare` resamples the games both models sat in
together (shared game effects cancel in the difference) and each model's other games apart.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import pandas as pd

from .corpus import Cached, Corpus
from .executor import seat_sums
from .f1 import f1_by_round_models
from .f2 import f2
from .frames import models_at_table
from .metric import Metric, Place, Statistic
from . import metrics as registered
from .modes import Mode
from .pooled_product import count_columns, pooled_columns
from .pvalues import bootstrap_p, bootstrap_tail_p, holm, holm_family, round_p
from .intervals import ci_list as _ci, pooled, pooled_entry
from .pairing import INDEPENDENT, PAIRED, PARTLY_PAIRED, design, frame_multiplicities, paired_resamples, strata  # noqa: F401
from .resample_frames import resampling_frame
from .stats import percentile_ci, round_or_none

MODELS_OF = Cached("models_of", report=True)
ROLES_OF = Cached("roles_of", report=True)
BY_MODEL_ENTRIES = Cached("by_model_entries", report=True)
SEAT_CODES = Cached("seat_codes", report=True)  # an object seat column's values as small integer codes
SEATED = Cached("seated", report=True)
COUNT_COLUMNS = Cached("count_columns", report=True)
COUNTED = Cached("counted_games", report=True)  # the games whose seats a metric counts


def _metrics(c: Corpus) -> tuple[Metric, ...]:
    """The registered metrics with data in ``c``: those needing probe logs only when some game has them."""
    has_probes = c.probed().n_rows("probes") > 0
    return tuple(x for x in registered.registry() if has_probes or not x.needs_probes)


def _corpus_of(c: Corpus, metric: Metric) -> Corpus:
    """The games a metric counts: those with probe records when it reads probes, else every selected game."""
    return c.probed() if metric.needs_probes else c


def _on(c: Corpus, cm: Corpus, mask: np.ndarray) -> np.ndarray:
    """``mask`` (over ``c``'s games) over the games of ``cm`` (``c`` or its probed games)."""
    return mask if cm is c else mask[c.games["n_probes"].to_numpy() > 0]


def _counted(cm: Corpus, mode: Mode, metric: Metric) -> np.ndarray | None:
    """(m,) the games whose seats ``metric`` counts (None: every game); memoised."""
    if metric.games is None:
        return None
    return cm.memo(COUNTED.key(metric, mode), lambda: np.asarray(metric.games(cm, mode), dtype=bool))


def _seat_codes(c: Corpus, col: str) -> tuple[dict[object, int], np.ndarray]:
    """(value -> code, (m, seats) code of each slot) of an object seat column, -1 for None/NaN;
    memoised (kept by a lean report): a seat mask compares small integers, not Python objects."""

    def build() -> tuple[dict[object, int], np.ndarray]:
        arr = c.seat_array_obj(col)
        codes, uniques = pd.factorize(arr.ravel())
        return {u: i for i, u in enumerate(uniques.tolist())}, codes.reshape(arr.shape)

    return c.memo(SEAT_CODES.key(col), build)


def _code_eq(c: Corpus, col: str, value: str) -> np.ndarray:
    index, codes = _seat_codes(c, col)
    at = index.get(value)
    return np.zeros(codes.shape, dtype=bool) if at is None else codes == at


def seat_mask(c: Corpus, model: str | None = None, role: str | None = None) -> np.ndarray:
    """(m, seats) bool: the seats played by ``model`` (exact name) and holding ``role`` (true role name)."""
    keep = c.memo(SEATED.key(), lambda: np.not_equal(c.seat_array_obj("model"), None)).copy()
    if model is not None:
        keep &= _code_eq(c, "model", model)
    if role is not None:
        keep &= _code_eq(c, "role", role)
    return keep


def _count_columns(c: Corpus, mode: Mode, metric: Metric) -> np.ndarray:
    """Which of a metric's columns hold non-negative integers (counts): so does every seat mask's
    sum of them, which :func:`.pooled_product.pooled_columns` then pools in float32."""
    return c.memo(COUNT_COLUMNS.key(metric, mode), lambda: count_columns(seat_sums(c, mode, metric)))


class _PerGame:
    """Per-game statistics of each metric for one seat mask: the sums over its seats in the games the metric
    counts (the probed games for a probe metric; :attr:`.metric.Metric.games`)."""

    def __init__(self, c: Corpus, mode: Mode, mask: np.ndarray):
        self.c, self.mode = c, mode
        self.mask = mask
        self._got: dict[Metric, np.ndarray] = {}
        self._tot: dict[Metric, np.ndarray] = {}
        self._games: dict[Metric, np.ndarray] = {}

    def seats(self, metric: Metric) -> np.ndarray:
        """(m, seats) bool over the metric's corpus: the mask's seats in the games the metric counts."""
        cm = _corpus_of(self.c, metric)
        keep = _on(self.c, cm, self.mask)
        counted = _counted(cm, self.mode, metric)
        return keep if counted is None else keep & counted[:, None]

    def __call__(self, metric: Metric) -> np.ndarray:
        if metric not in self._got:
            cm = _corpus_of(self.c, metric)
            cells = seat_sums(cm, self.mode, metric)
            keep = self.seats(metric)
            S = min(cells.shape[1], keep.shape[1])
            self._got[metric] = np.einsum("msk,ms->mk", cells[:, :S], keep[:, :S].astype(np.float64))
            self._games[metric] = keep.any(1)
        return self._got[metric]

    def games(self, metric: Metric) -> np.ndarray:
        """(m,) bool over the metric's corpus: the games holding the mask's counted seats (its resampling frame)."""
        self(metric)
        return self._games[metric]

    def total(self, metric: Metric) -> np.ndarray:
        """(1, k) pooled statistics over every game: summed once per metric, not once per statistic."""
        if metric not in self._tot:
            self._tot[metric] = self(metric).sum(0)[None, :]
        return self._tot[metric]


def _point(metric: Metric, st: Statistic, tot: np.ndarray) -> tuple[float | None, int]:
    v = float(metric.values(st, tot)[0])
    return (None if np.isnan(v) else v), metric.n(st, tot)


def _pooled_resamples(c: Corpus, mode: Mode, pers: list[_PerGame]) -> dict[tuple[int, Metric], np.ndarray]:
    """``(mask index, metric) -> (B, k)`` resampled pooled sums, each mask's over its own games (the games
    holding its counted seats: its frame), so a model's intervals do not depend on the other games loaded.
    Masks and metrics sharing a frame are pooled together (:func:`.pooled_product.pooled_columns`: the
    multiplicity matrix is read once, and each column's values are the same as alone)."""
    out: dict[tuple[int, Metric], np.ndarray] = {}
    if mode.boot == 0 or c.m == 0 or not pers:
        return out
    frames: dict[tuple[int, bytes], list[tuple[int, Metric]]] = {}
    corpus_of: dict[int, Corpus] = {}
    for metric in _metrics(c):
        cm = _corpus_of(c, metric)
        corpus_of[id(cm)] = cm
        for i, per in enumerate(pers):
            g = per.games(metric)
            if g.any():
                frames.setdefault((id(cm), np.packbits(g).tobytes()), []).append((i, metric))
    for (cid, _), members in frames.items():
        cm = corpus_of[cid]
        games = pers[members[0][0]].games(members[0][1])
        blocks = [pers[i](metric)[games] for i, metric in members]
        counts = [_count_columns(cm, mode, metric) for _, metric in members]
        pooled = pooled_columns(frame_multiplicities(cm, mode, games), blocks, counts)
        at = 0
        for (i, metric), b in zip(members, blocks):
            out[(i, metric)] = pooled[:, at: at + b.shape[1]]
            at += b.shape[1]
    return out


def _entry(metric: Metric, st: Statistic, per: _PerGame, pooled: np.ndarray | None) -> dict[str, Any]:
    """One statistic of one seat mask: ``{point, ci95, n, games, fragile}`` (``games``: games holding its data)."""
    pt, n = _point(metric, st, per.total(metric))
    games = int((metric.n_per_game(st, per(metric)) > 0).sum())
    ci = None if pooled is None else _ci(percentile_ci(metric.values(st, pooled)))
    return {"point": round_or_none(pt), "ci95": ci, "n": n, "games": games,
            "fragile": st.fragile(n, games) if pt is not None else None}


def seat_metrics_many(c: Corpus, mode: Mode, masks: list[np.ndarray]) -> list[dict[str, dict[str, Any]]]:
    """:func:`seat_metrics` for several seat masks, sharing the per-seat statistics and the resampling."""
    pers = [_PerGame(c, mode, mask) for mask in masks]
    pooled = _pooled_resamples(c, mode, pers)
    results = []
    for i, per in enumerate(pers):
        out: dict[str, dict[str, Any]] = {}
        for metric in _metrics(c):
            for st in metric.statistics:
                if Place.BY_MODEL in st.shown:
                    out[st.key] = _entry(metric, st, per, pooled.get((i, metric)))
        results.append(out)
    return results


def seat_metrics(c: Corpus, mode: Mode, mask: np.ndarray) -> dict[str, dict[str, Any]]:
    """Every comparable metric over the seats of ``mask``: ``{key: {point, ci95, n, games, fragile}}``."""
    return seat_metrics_many(c, mode, [mask])[0]


def self_play_games(c: Corpus, mask: np.ndarray) -> int:
    """Games holding ``mask``'s seats in which one model holds every seat."""
    return int((mask.any(1) & (models_at_table(c) == 1)).sum())


def models_of(c: Corpus) -> list[str]:
    """Models seated in the corpus, sorted (but those left out for too few games: ``--min-games``)."""

    def build() -> list[str]:
        left_out = c.selection.get("models_left_out") or {}  # --min-games
        return sorted({str(x) for x in c.cols("players", ["model"])["model"].tolist()} - set(left_out)) \
            if c.n_rows("players") else []

    return list(c.memo(MODELS_OF.key(), build))


def roles_of(c: Corpus) -> list[str]:
    def build() -> list[str]:
        return sorted({str(x) for x in c.cols("players", ["role"])["role"].tolist() if str(x)}) if c.n_rows("players") else []

    return list(c.memo(ROLES_OF.key(), build))


def model_frame(c: Corpus, mode: Mode, model: str) -> Any:
    """A :func:`.resample_frames.resampling_frame` of ``model``'s games: inside it, F1 by round and F2 of that
    model's seats resample its games alone, with their own draws."""
    return resampling_frame(seat_mask(c, model=model).any(1), c.game_ids, mode)


@pooled_entry
def _model_entries(c: Corpus, mode: Mode) -> dict[str, dict[str, Any]]:
    # one batch holding each model's F1 and F2 intervals in model order, as by_model pooled them; every
    # model's F1 from one grouping of the rows by (model, round), taken model by model between the F2s,
    # each model's intervals over its own probed games
    cp = c.probed()
    models = models_of(c)
    rounds = f1_by_round_models(cp, mode, models)
    out = {}
    for mdl in models:
        with model_frame(cp, mode, mdl):
            out[mdl] = {"f1_by_round": next(rounds), "f2": f2(cp, mode, breakdowns=False, model=mdl)}
    return out


def model_entries(c: Corpus, mode: Mode) -> dict[str, dict[str, Any]]:
    """F1 by round and F2 of each model's seats in the probed games, each model's intervals over its own games
    (memoised; a copy each call)."""
    return copy.deepcopy(c.memo(BY_MODEL_ENTRIES.key(mode), lambda: pooled(_model_entries, c, mode)))


def prime(c: Corpus, mode: Mode, sections: set[str]) -> None:
    """Build now the per-seat statistics of the metrics of these report sections (and, with F1 and
    F2, each model's F1 by round and F2), while the sections' intermediates are still memoised; a
    lean report then drops those intermediates (:func:`.report.build_report`)."""
    for metric in _metrics(c):
        if metric.section in sections:
            seat_sums(_corpus_of(c, metric), mode, metric)
    if {"f1", "f2"} <= sections and c.probed().n_rows("probes"):
        c.memo(BY_MODEL_ENTRIES.key(mode), lambda: pooled(_model_entries, c, mode))


def by_model(c: Corpus, mode: Mode) -> dict[str, Any]:
    """Per model: every comparable metric, F1 by round and F2 (ECE/Brier with intervals, bins); seats, games,
    self-play games (one model at the table: left out of the outcome statistics)."""
    out: dict[str, Any] = {}
    has_probes = c.probed().n_rows("probes") > 0
    models = models_of(c)
    masks = [seat_mask(c, model=mdl) for mdl in models]
    entries = model_entries(c, mode) if has_probes else {}
    for mdl, mask, metrics in zip(models, masks, seat_metrics_many(c, mode, masks)):
        entry: dict[str, Any] = {"seats": int(mask.sum()), "games": int(mask.any(1).sum()),
                                 "self_play_games": self_play_games(c, mask), "metrics": metrics}
        if has_probes:
            entry.update(entries[mdl])
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

def compare(c: Corpus, mode: Mode, a: str, b: str, *, role: str | None = None) -> dict[str, Any]:
    """Model ``a`` minus model ``b`` on every metric: difference, cluster-bootstrap CI, p, Holm p.

    The games both sat in are resampled together (paired); the games of one model alone are resampled
    apart from the other's (:func:`.pairing.paired_resamples`; ``design`` says which holds). ``role`` restricts both
    to seats of that true role. ``p`` is :func:`.pvalues.bootstrap_p` (bootstrap standard error, t
    reference); ``p_holm`` is Holm over the pair's metrics that have a p, named in ``p_holm_family``.
    """
    return _compare(c, mode, a, b, role=role)[0]


def _compare(c: Corpus, mode: Mode, a: str, b: str, *, role: str | None = None) -> tuple[dict[str, Any], list[float | None]]:
    """:func:`compare`'s result and its rows' unrounded p-values (for a wider Holm family)."""
    known = models_of(c)
    for mdl in (a, b):
        if mdl not in known:
            raise KeyError(mdl)
    ma, mb = seat_mask(c, model=a, role=role), seat_mask(c, model=b, role=role)
    pa, pb = _PerGame(c, mode, ma), _PerGame(c, mode, mb)
    rows: list[dict[str, Any]] = []
    raw_p: list[float | None] = []  # unrounded, for the Holm adjustments
    for metric in _metrics(c):
        ga, gb = pa(metric), pb(metric)
        ra, rb = paired_resamples(_corpus_of(c, metric), mode, ga, gb, strata(pa.games(metric), pb.games(metric)))
        for st in metric.statistics:
            if Place.COMPARE in st.shown or Place.DASHBOARD in st.shown:
                row, p = _diff_row(metric, st, (pa.total(metric), ga, ra), (pb.total(metric), gb, rb))
                rows.append(row)
                raw_p.append(p)
    for row, ph in zip(rows, holm(raw_p)):
        row["p_holm"] = round_p(ph)
    family = [r["metric"] for r, p in zip(rows, raw_p) if p is not None]
    shared = int((ma.any(1) & mb.any(1)).sum())
    return {"a": a, "b": b, "role": role, "boot": mode.boot, "seed": mode.seed, "design": design(ma, mb),
            "games_a": int(ma.any(1).sum()), "games_b": int(mb.any(1).sum()), "games_shared": shared,
            "seats_a": int(ma.sum()), "seats_b": int(mb.sum()),
            "self_play_a": self_play_games(c, ma), "self_play_b": self_play_games(c, mb), "rows": rows,
            "p_holm_family": holm_family(f"the {len(family)} metrics of {a} vs {b} that have a p", family)}, raw_p


Side = tuple[np.ndarray, np.ndarray, "np.ndarray | None"]  # (pooled sums, per-game sums, resampled pooled sums)


def _diff_row(metric: Metric, st: Statistic, a: Side, b: Side) -> tuple[dict[str, Any], float | None]:
    """One statistic of side a minus side b: both values and their n and games, the difference, its interval,
    p (the unrounded p returned apart, for Holm)."""
    (ta, ga, ra), (tb, gb, rb) = a, b
    va, na = _point(metric, st, ta)
    vb, nb = _point(metric, st, tb)
    games_a = int((metric.n_per_game(st, ga) > 0).sum())
    games_b = int((metric.n_per_game(st, gb) > 0).sum())
    diff = None if va is None or vb is None else va - vb
    ci = p = p_tail = None
    if ra is not None and rb is not None and diff is not None:
        d = metric.values(st, ra) - metric.values(st, rb)
        ci = _ci(percentile_ci(d))
        p, p_tail = bootstrap_p(d, diff, _games_with_data(ga, gb)), bootstrap_tail_p(d)
    return {"metric": st.key, "label": st.label, "direction": st.direction.value,
            "a": round_or_none(va), "b": round_or_none(vb), "n_a": na, "n_b": nb,
            "games_a": games_a, "games_b": games_b,
            "fragile_a": st.fragile(na, games_a) if va is not None else None,
            "fragile_b": st.fragile(nb, games_b) if vb is not None else None,
            "diff": round_or_none(diff), "diff_ci95": ci, "p": round_p(p), "p_boot_tail": round_p(p_tail)}, p


def _games_with_data(ga: np.ndarray, gb: np.ndarray) -> int:
    """Games (clusters) holding any sum of the metric for either model: the resampled units of a difference."""
    return int((np.any(ga != 0, axis=1) | np.any(gb != 0, axis=1)).sum())


def compare_all(c: Corpus, mode: Mode) -> list[dict[str, Any]]:
    """:func:`compare` for every pair of models in the corpus (sorted names, a < b). Each row also gets
    ``p_holm_all``: Holm over every test of every pair (the family of a whole report)."""
    ms = models_of(c)
    done = [_compare(c, mode, x, y) for i, x in enumerate(ms) for y in ms[i + 1:]]
    out = [cmp for cmp, _ in done]
    raw = [p for _, ps in done for p in ps]
    rows = [r for cmp in out for r in cmp["rows"]]
    for r, ph in zip(rows, holm(raw)):
        r["p_holm_all"] = round_p(ph)
    tests = [f"{cmp['a']} vs {cmp['b']}: {r['metric']}" for cmp in out for r in cmp["rows"]]
    tests = [t for t, p in zip(tests, raw) if p is not None]
    fam = holm_family(f"all {len(tests)} tests of the {len(out)} model pair{'s' if len(out) != 1 else ''} "
                      "(every metric with a p of every pair)", tests)
    for cmp in out:
        cmp["p_holm_all_family"] = fam
    return out


def compare_layers(ca: Corpus, cb: Corpus, mode: Mode, *, model: str | None = None, role: str | None = None) -> dict[str, Any]:
    """Probe layer ``ca.probe_layer`` minus ``cb.probe_layer`` on every metric, over the games both hold: the same
    games' seats read through two sets of answers (the players' own against an observer model's reading of
    the same contexts, two batteries ...). Paired by game: both layers' per-game statistics are pooled under
    the same resampled games (their frame's draws), so the games' own variation cancels in the difference.
    ``model``/``role``: only those seats. Rows, p and Holm p as in :func:`compare`, over the metrics that read probe
    answers (a metric that reads none has the same value in both layers, and would only widen the Holm family)."""
    ma, mb = seat_mask(ca, model=model, role=role), seat_mask(cb, model=model, role=role)
    pa, pb = _PerGame(ca, mode, ma), _PerGame(cb, mode, mb)
    rows: list[dict[str, Any]] = []
    raw_p: list[float | None] = []
    names_b = {m.name: m for m in _metrics(cb)}
    shared_all: set[str] = set(ca.game_ids) & set(cb.game_ids)
    for metric in _metrics(ca):
        mb_metric = names_b.get(metric.name)
        if mb_metric is None or not metric.needs_probes:  # outcomes and votes: the same games give the same figures
            continue
        cma, cmb = _corpus_of(ca, metric), _corpus_of(cb, mb_metric)
        ids_a, ids_b = cma.games["game_id"].to_numpy().astype(str), cmb.games["game_id"].to_numpy().astype(str)
        on_a, on_b = np.isin(ids_a, ids_b), np.isin(ids_b, ids_a)  # both sorted by game id: the shared games align
        ga, gb = pa(metric)[on_a], pb(mb_metric)[on_b]
        ra = rb = None
        if mode.boot and on_a.any():
            mult = frame_multiplicities(cma, mode, on_a)
            ra, rb = mult @ ga, mult @ gb
        for st in metric.statistics:
            if Place.COMPARE in st.shown or Place.DASHBOARD in st.shown:
                row, p = _diff_row(metric, st, (ga.sum(0)[None, :], ga, ra), (gb.sum(0)[None, :], gb, rb))
                rows.append(row)
                raw_p.append(p)
    for row, ph in zip(rows, holm(raw_p)):
        row["p_holm"] = round_p(ph)
    la, lb = ca.probe_layer or "game", cb.probe_layer or "game"
    family = [r["metric"] for r, p in zip(rows, raw_p) if p is not None]
    pos_a = np.isin(np.asarray(ca.game_ids, dtype=str), list(shared_all))
    pos_b = np.isin(np.asarray(cb.game_ids, dtype=str), list(shared_all))
    return {"a": f"layer {la}", "b": f"layer {lb}", "layers": [la, lb], "model": model, "role": role, "paired": "by game",
            "design": PAIRED, "boot": mode.boot, "seed": mode.seed, "games_a": ca.m, "games_b": cb.m,
            "games_shared": len(shared_all), "seats_a": int(ma[pos_a].sum()), "seats_b": int(mb[pos_b].sum()), "rows": rows,
            "p_holm_family": holm_family(f"the {len(family)} metrics of layer {la} vs layer {lb} that have a p", family)}
