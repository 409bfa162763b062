"""Shared derived columns over a loaded corpus: probe attributes on items, ordering keys,
alive tests. Memoised per corpus and mode; no metric logic here."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ..logs.steps import ROUND_END
from . import labels as L
from .corpus import Cached, Corpus
from .modes import Mode

_END_LAST = 99_990  # where a round-end probe sorts in default mode (after every message)

PROBE_START = Cached("probe_start", report=True)  # each game's first probe row
ORDER_KEY = Cached("order_key")
TRUE_ROLES = Cached("true_roles")
SEAT_MODEL_CODES = Cached("seat_model_codes", report=True)
N_SEATS = Cached("n_seats", report=True)
MODELS_AT_TABLE = Cached("models_at_table", report=True)
ITEMS = Cached("items")
ITEM_ROWS = Cached("item_rows")


def eq(col: pd.Series, value: str) -> np.ndarray:
    """``col == value`` as a numpy mask; compares codes for categoricals (no object array)."""
    if isinstance(col.dtype, pd.CategoricalDtype):
        cats = col.cat.categories
        return col.cat.codes.to_numpy() == (cats.get_loc(value) if value in cats else -2)
    return col.to_numpy() == value


def game_bounds(g: np.ndarray, m: int) -> np.ndarray | None:
    """(m + 1,) row offsets of each game's rows when ``g`` is sorted and in [0, m) (None otherwise):
    a binary search per game, not a pass that converts and counts every row."""
    if len(g) and (g[0] < 0 or g[-1] >= m or not bool(np.all(g[1:] >= g[:-1]))):
        return None
    return np.searchsorted(g, np.arange(m + 1, dtype=g.dtype)).astype(np.int64)


def probe_start(c: Corpus) -> np.ndarray:
    """Row offset of each game's first probe in ``c.probes`` (probes sorted by g, rec)."""

    def f() -> np.ndarray:
        g = c.cols("probes", ["g"])["g"].to_numpy()
        bounds = game_bounds(g, c.m)
        if bounds is not None:
            return bounds[:-1]
        counts = np.bincount(g, minlength=c.m)
        return np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)

    return c.memo(PROBE_START.key(), f)


def pidx(c: Corpus, items: pd.DataFrame) -> np.ndarray:
    """Each item's probe row: its game's first probe row + its ``rec``. Items are stored by game:
    each game's start is then repeated over its rows (no int64 copy and gather of every row's game)."""
    g, start = items["g"].to_numpy(), probe_start(c)
    bounds = game_bounds(g, c.m) if g.dtype.kind == "i" else None
    base = start[g.astype(np.int64)] if bounds is None else np.repeat(start, np.diff(bounds))
    rec = items["rec"].to_numpy()
    base += rec if rec.dtype.kind == "i" else rec.astype(np.int64)  # in place; no int64 copy of int32 records
    return base


def order_key(c: Corpus, mode: Mode) -> np.ndarray:
    """Per probe: (round, public_msg_seq, probe_seq) as one int64.

    compat: -1 (round end) sorts first in its round (the original's QUIRK);
    default: round-end probes sort after every message of the round.
    """

    def f() -> np.ndarray:
        p = c.cols("probes", ["round", "pms", "probe_seq"])
        pms, seq = p["pms"].to_numpy(), p["probe_seq"].to_numpy()
        if pms.dtype.kind != "i" or seq.dtype.kind != "i":
            pms = pms.astype(np.int64)
            if not mode.is_compat:
                pms = np.where(pms == ROUND_END, _END_LAST, pms)
            return (p["round"].to_numpy().astype(np.int64) * 100_000 + (pms + 10)) * 1000 + seq
        # integer columns: the same sums in one int64 array, in place (no int64 copies, no select)
        k = p["round"].to_numpy().astype(np.int64)
        k *= 100_000
        k += pms
        k += 10
        if not mode.is_compat:
            k[pms == ROUND_END] += _END_LAST - ROUND_END
        k *= 1000
        k += seq
        return k

    return c.memo(ORDER_KEY.key(mode.is_compat), f)


def true_roles(c: Corpus, mode: Mode) -> np.ndarray:
    """(m, seats) true role codes; default folds Don into Mafia for comparisons with guesses."""

    def f() -> np.ndarray:
        r = c.seat_array("role_code").copy()
        if not mode.is_compat:
            r[r == L.DON] = L.MAFIA
        return r

    return c.memo(TRUE_ROLES.key(mode.is_compat), f)


def mafia_mask(c: Corpus) -> np.ndarray:
    r = c.seat_array("role_code")
    return (r == L.MAFIA) | (r == L.DON)


def death_ts(c: Corpus) -> np.ndarray:
    return c.seat_array("death_ts", fill=-np.inf)  # padding seats count as dead


def seat_model_codes(c: Corpus) -> tuple[np.ndarray, np.ndarray]:
    """(sorted distinct ``str(model)`` of the seat slots, (m, seats) index of each slot's model in them); memoised."""

    def build() -> tuple[np.ndarray, np.ndarray]:
        names, codes = np.unique(c.seat_array_obj("model").astype(str), return_inverse=True)
        return names, codes.reshape(c.seat_array_obj("model").shape)

    return c.memo(SEAT_MODEL_CODES.key(), build)


def models_at_table(c: Corpus) -> np.ndarray:
    """(m,) how many distinct models hold a seat in each game (1: self-play; 0: no seat); memoised."""

    def build() -> np.ndarray:
        names, codes = seat_model_codes(c)
        k = np.where(np.not_equal(c.seat_array_obj("model"), None), codes, -1)
        if not k.size:
            return np.zeros(c.m, dtype=np.int64)
        k = np.sort(k, axis=1)
        new = np.ones(k.shape, dtype=bool)
        new[:, 1:] = k[:, 1:] != k[:, :-1]
        return ((k >= 0) & new).sum(1)

    return c.memo(MODELS_AT_TABLE.key(), build)


def dense_groups(codes: np.ndarray, n_codes: int) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(codes, return_inverse=True)`` for integer codes in [0, n_codes), by counting, not sorting."""
    present = np.flatnonzero(np.bincount(codes, minlength=n_codes))
    rank = np.zeros(n_codes, dtype=np.int64)
    rank[present] = np.arange(len(present))
    return present, rank[codes]


def played_by(c: Corpus, g: np.ndarray, seat: np.ndarray, model: str) -> np.ndarray:
    """Rows whose seat (g, seat) is played by ``model``: ``str(seat's model) == model``, compared as
    integer codes (the model strings are factorised once per corpus, not converted per row)."""
    names, codes = seat_model_codes(c)
    hit = np.flatnonzero(names == model)
    if not len(hit):
        return np.zeros(len(g), dtype=bool)
    return at_seats(codes == hit[0], g, seat)  # (m, seats): one byte a slot


def at_seats(mask: np.ndarray, g: np.ndarray, seat: np.ndarray) -> np.ndarray:
    """``mask[g, seat]`` of an (m, seats) array: one flat gather when every (g, seat) is in range (no
    2-d index checks), else numpy's own indexing (its wrap-around and IndexError)."""
    g, seat = np.asarray(g), np.asarray(seat)
    if len(g) and g.dtype.kind == seat.dtype.kind == "i" and 0 <= g.min() and g.max() < mask.shape[0] \
            and 0 <= seat.min() and seat.max() < mask.shape[1]:
        at = np.multiply(g, mask.shape[1], dtype=np.int64)
        at += seat
        return np.take(mask.ravel(), at)
    return mask[g, seat]


def n_seats(c: Corpus) -> np.ndarray:
    return c.memo(N_SEATS.key(), lambda: np.bincount(c.players["g"].to_numpy(), minlength=c.m))


# item frames that several metrics of one report read: kept per corpus; the others are
# rebuilt on demand (each is tens of MB on a 1,000-game corpus)
_SHARED_ITEMS = {("ra", "role_assessment", False), ("sr", "suspicion_ranking", False)}


def items_with_probe(c: Corpus, table: str, probe_id: str | None = None, raw_only: bool = False,
                     game: int | None = None, cols: Sequence[str] | None = None,
                     probe_cols: Sequence[str] | None = None) -> pd.DataFrame:
    """Item rows joined with their probe's g, seat, round, pms, probe_seq, timestamp, parse_ok, rec.

    ``raw_only``: only items of the stored answer of parse-ok records (raw parse mode).
    ``game``: only that game's items (reads the game's rows only).
    ``cols``: only these item columns (with ``g`` and ``rec``), read on their own instead of the
    whole table; the rows and the values of those columns are the same.
    ``probe_cols``: only these of the probe columns (``pi`` always), with ``cols``: a caller that
    reads few of them does not gather the others for every item.
    """
    if game is not None:
        return _items_with_probe(c, c.game_rows(table, game), probe_id, raw_only)
    key = (table, probe_id, raw_only)
    if cols is None:
        get = lambda: getattr(c, table)  # noqa: E731
    else:
        want = ["g", "rec", *(["src"] if raw_only else []), *cols]
        get = lambda: c.cols(table, list(dict.fromkeys(want)))  # noqa: E731
    if key in _SHARED_ITEMS and cols is None:  # pandas copy-on-write keeps the shared frame unchanged
        return c.memo(ITEMS.key(*key), lambda: _items_with_probe(c, get(), probe_id, raw_only))
    return _items_with_probe(c, get(), probe_id, raw_only, _PROBE_COLS if cols is None or probe_cols is None
                             else [k for k in _PROBE_COLS if k in probe_cols])


_PROBE_COLS = ["seat", "round", "pms", "probe_seq", "timestamp", "parse_ok"]


def _items_with_probe(c: Corpus, items: pd.DataFrame, probe_id: str | None, raw_only: bool,
                      gather: Sequence[str] = tuple(_PROBE_COLS)) -> pd.DataFrame:
    # rows are selected before the probe columns are gathered: the frame is built once, at its final size
    pi = pidx(c, items)
    need = [*(["probe_id"] if probe_id is not None else []), *(["parse_ok"] if raw_only else []), *gather]
    p = c.cols("probes", list(dict.fromkeys(need)))
    keep = None if probe_id is None else eq(p["probe_id"], probe_id)[pi]
    if raw_only:
        raw = (items["src"].to_numpy() == 0) & p["parse_ok"].to_numpy()[pi]
        keep = raw if keep is None else keep & raw
    if keep is not None and not keep.all():  # all kept: the item columns stay shared with the table (copy-on-write)
        items, pi = items[keep], pi[keep]
    return items.assign(pi=pi, **{k: p[k].to_numpy()[pi] for k in gather})


def item_rows(c: Corpus, table: str, probe_id: str | None) -> tuple[np.ndarray | None, np.ndarray]:
    """(kept rows of ``table`` or None when every row is kept, each kept row's probe row) for the
    items of ``probe_id`` (all items: None); memoised: F1, F3, dynamics and episodes share it."""

    def build() -> tuple[np.ndarray | None, np.ndarray]:
        pi = pidx(c, c.cols(table, ["g", "rec"]))
        rows = None
        if probe_id is not None:  # gathered by the int64 rows (an int32 index is copied to int64 by numpy)
            keep = eq(c.cols("probes", ["probe_id"])["probe_id"], probe_id)[pi]
            if not keep.all():
                rows, pi = np.flatnonzero(keep), pi[keep]
        if c.n_rows("probes") < 2**31:  # kept for the whole report: four bytes a row
            pi = pi.astype(np.int32)
        return rows, pi

    return c.memo(ITEM_ROWS.key(table, probe_id), build)


def item_arrays(c: Corpus, table: str, probe_id: str | None, cols: tuple[str, ...],
                probe_cols: tuple[str, ...] = ()) -> dict[str, np.ndarray]:
    """The items of ``probe_id`` as arrays: the item columns ``cols`` (views when every row is kept),
    their probe's ``probe_cols`` (``c.probes`` columns, gathered) and ``pi`` (probe row; int32 when it fits).

    The same rows and values as :func:`items_with_probe`'s frame (probe column ``pms`` and the
    others by their ``c.probes`` names), without building a frame of every column."""
    rows, pi = item_rows(c, table, probe_id)
    df = c.cols(table, list(cols))
    out = {k: df[k].to_numpy() if rows is None else df[k].to_numpy()[rows] for k in cols}
    p = c.cols("probes", list(probe_cols))
    out.update({k: p[k].to_numpy()[pi] for k in probe_cols})
    out["pi"] = pi
    return out


def item_col(c: Corpus, table: str, probe_id: str | None, col: str, at: np.ndarray) -> np.ndarray:
    """Column ``col`` of the items of ``probe_id`` at positions ``at`` of :func:`item_arrays`' rows."""
    rows, _ = item_rows(c, table, probe_id)
    return c.cols(table, [col])[col].to_numpy()[at if rows is None else rows[at]]


def last_of_key(keys: np.ndarray) -> np.ndarray:
    """True at the last row of each distinct key (``~Series(keys).duplicated(keep="last")``).

    A stable sort groups equal keys in row order; item keys are nearly sorted already (items are
    stored by game and record), which the sort exploits: much faster than hashing ten million keys."""
    order = np.argsort(keys, kind="stable")
    ks = keys[order]
    out = np.zeros(len(keys), dtype=bool)
    out[order[np.r_[ks[1:] != ks[:-1], True][: len(ks)]]] = True
    return out


def first_of_key(keys: np.ndarray) -> np.ndarray:
    """Per row: the row number of the first row with its key (``groupby(keys).transform("min")`` of the row number)."""
    order = np.argsort(keys, kind="stable")
    ks = keys[order]
    starts = np.r_[True, ks[1:] != ks[:-1]][: len(ks)]
    first = order[starts][np.cumsum(starts) - 1]  # each sorted row -> its group's first row number
    out = np.empty(len(keys), dtype=np.int64)
    out[order] = first
    return out


def alive_at(c: Corpus, g: np.ndarray, seat: np.ndarray, t: np.ndarray, strict: bool = False) -> np.ndarray:
    """Seat alive at time t: no death with ts <= t (library) or ts < t (``strict``, viewer)."""
    d = death_ts(c)[g, seat]
    return d >= t if strict else d > t


def alive_matrix(c: Corpus, g: np.ndarray, t: np.ndarray, strict: bool = False) -> np.ndarray:
    """(len(g), seats) alive mask at times t.

    Rows come in runs of one (game, time) (a probe's items are stored together): each run's
    seats are gathered and compared once and its row repeated, instead of gathering every row's
    death times (an (items, seats) float array); a row's result depends on its (g, t) only."""
    d, g, t = death_ts(c), np.asarray(g), np.asarray(t)
    n = len(g)
    start = np.ones(n, dtype=bool)
    if n > 1:
        np.not_equal(g[1:], g[:-1], out=start[1:])
        start[1:] |= t[1:] != t[:-1]  # NaN != NaN: a NaN time is a run of its own (alive nowhere)
    at = np.flatnonzero(start)
    dt, tt = np.take(d, g[at], axis=0), t[at, None]
    alive = dt >= tt if strict else dt > tt
    return alive if len(at) == n else np.repeat(alive, np.diff(np.append(at, n)), axis=0)
