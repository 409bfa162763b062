"""The corpus-wide step table (:func:`.viewer.step_table`) built from integer step codes.

A step is a (game, round, message number) that a probe or a logged message carries. Each is
coded as one int64 that sorts as the step order (game, round, message number, round end last),
so grouping the probes and the messages by step is a stable sort of their codes and run
boundaries, and the union of the two step sets is a sorted merge: no pandas group-by or index
join (those took most of the episode selector's time). Same rows and values as the frame-based
build kept in :mod:`.viewer` (``tests/test_step_keys.py`` pins them on damaged and real corpora).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..logs.steps import ROUND_END as END
from .corpus import SEAT_ARRAY, Corpus
from .frames import N_SEATS, death_ts, eq, n_seats
from .executor import by_games
from .load import NO_SEQ

_WIDE = 2**62


def _runs(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(stable order, start of each run of equal codes in that order, each run's code)."""
    order = np.argsort(codes, kind="stable")
    cs = codes[order]
    starts = np.flatnonzero(np.r_[True, cs[1:] != cs[:-1]]) if len(cs) else np.zeros(0, dtype=np.int64)
    return order, starts, cs[starts]


def _first_where(order: np.ndarray, starts: np.ndarray, ok: np.ndarray, last: bool = False) -> np.ndarray:
    """Per run of ``order``: the row (an index into the source) of its first (``last``: last) row with ``ok``; -1: none.

    The least (greatest) position with ``ok`` in each run by one ``reduceat`` over the sorted positions."""
    if not len(starts):
        return np.zeros(0, dtype=np.int64)
    at = np.arange(len(order), dtype=np.int64)
    hit = ok[order]
    if last:
        pos = np.maximum.reduceat(np.where(hit, at, -1), starts)
    else:
        pos = np.minimum.reduceat(np.where(hit, at, len(order)), starts)
    found = (pos >= 0) & (pos < len(order))
    return np.where(found, order[np.where(found, pos, 0)], -1).astype(np.int64)


def _objects_at(col: pd.Series, rows: np.ndarray) -> np.ndarray:
    """``col.to_numpy(dtype=object)[rows]`` without converting the whole column (categories by code)."""
    if isinstance(col.dtype, pd.CategoricalDtype):
        codes = col.cat.codes.to_numpy()[rows]
        out = np.asarray(col.cat.categories, dtype=object)[np.maximum(codes, 0)] if len(col.cat.categories) else \
            np.full(len(rows), np.nan, dtype=object)
        out[codes < 0] = np.nan
        return out
    return col.iloc[rows].to_numpy(dtype=object)


def sorted_union(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``np.union1d`` of two sorted arrays of distinct values: a stable sort (timsort) merges their two
    runs in linear time, where ``union1d`` hashes or sorts the whole concatenation (0.4 s at 10,000 games)."""
    u = np.concatenate([a, b])
    u.sort(kind="stable")
    return u[np.r_[True, u[1:] != u[:-1]]] if len(u) else u


def step_codes(g: np.ndarray, rnd: np.ndarray, seq: np.ndarray, lo: tuple[int, int], span: tuple[int, int]) -> np.ndarray:
    """One int64 per step, in step order (round end after every message of its round). Computed in
    place in two int64 arrays (integer arithmetic: the same values as the expression with temporaries)."""
    out = g.astype(np.int64)
    out *= span[0]
    out += rnd
    out -= lo[0]
    out *= span[1]
    s = seq.astype(np.int64)
    s[seq == END] = span[1] - 1 + lo[1]
    s -= lo[1]
    out += s
    return out


# what :func:`fast_step_table` reads: these columns and the per-game death times and seat counts
_STEP_TABLES = {"probes": ("round", "pms", "probe_seq", "timestamp", "phase"),
                "events": ("round", "msg_seq", "player", "kind", "ts")}
_STEP_MEMO = (SEAT_ARRAY.key("death_ts"), N_SEATS.key())


def step_codes_table(c: Corpus) -> dict[str, np.ndarray] | None:
    """:func:`fast_step_table`, a block of games at a time on a large corpus (steps never span games and come
    in game order); None when the codes would not fit an int64."""
    death_ts(c), n_seats(c)  # the per-game arrays the views get sliced
    return by_games(c, lambda view, lo, hi: fast_step_table(view), _STEP_TABLES, _STEP_MEMO)


def fast_step_table(c: Corpus) -> dict[str, np.ndarray] | None:
    """:func:`.viewer.step_table`'s arrays by step codes; None when the codes would not fit an int64."""
    p = c.cols("probes", ["g", "round", "pms", "probe_seq", "timestamp", "phase"])
    ev = c.cols("events", ["g", "round", "msg_seq", "player", "kind", "ts"])
    is_msg = ev["msg_seq"].to_numpy() != NO_SEQ
    pg, pr, ps = p["g"].to_numpy(), p["round"].to_numpy(), p["pms"].to_numpy()
    mg, mr, msq = (ev[k].to_numpy()[is_msg] for k in ("g", "round", "msg_seq"))
    rounds = np.concatenate([pr, mr]).astype(np.int64)
    seqs = np.concatenate([ps, msq]).astype(np.int64)
    seqs = seqs[seqs != END]
    lo = (int(rounds.min(initial=0)), min(int(seqs.min(initial=0)), 0))
    span = (int(rounds.max(initial=0)) - lo[0] + 1, int(seqs.max(initial=0)) - lo[1] + 2)  # +1: the round end's slot
    if float(c.m + 1) * span[0] * span[1] >= _WIDE:  # pragma: no cover - absurd round / message numbers
        return None
    # probes per step: earliest timestamp, first known phase, any discussion probe
    po, pst, pu = _runs(step_codes(pg, pr, ps, lo, span))
    pts = p["timestamp"].to_numpy()[po]
    p_ts = np.fmin.reduceat(pts, pst) if len(pst) else pts[:0]  # NaN-skipping min, NaN when all are NaN
    phase = p["phase"]
    pcodes = phase.cat.codes.to_numpy()
    p_phase = _first_where(po, pst, pcodes >= 0)
    p_disc = np.logical_or.reduceat(eq(phase, "day_discuss")[po], pst) if len(pst) else np.zeros(0, dtype=bool)
    # messages per step: the first message's time and kind, the last known speaker
    mo, mst, mu = _runs(step_codes(mg, mr, msq, lo, span))
    m_rows = np.flatnonzero(is_msg)
    m_first = mo[mst] if len(mst) else np.zeros(0, dtype=np.int64)
    who = ev["player"].to_numpy()[is_msg]
    m_spk = _first_where(mo, mst, who >= 0, last=True)
    # every step, in step order
    codes = sorted_union(pu, mu)
    ip = np.searchsorted(pu, codes)
    in_pk = (ip < len(pu)) & (pu[np.minimum(ip, max(len(pu) - 1, 0))] == codes) if len(pu) else np.zeros(len(codes), bool)
    im = np.searchsorted(mu, codes)
    in_m = (im < len(mu)) & (mu[np.minimum(im, max(len(mu) - 1, 0))] == codes) if len(mu) else np.zeros(len(codes), bool)
    ipc, imc = ip[in_pk], im[in_m]
    g = np.empty(len(codes), dtype=np.int64)
    rnd = np.empty(len(codes), dtype=np.int64)
    seq = np.empty(len(codes), dtype=np.int64)
    src_p = po[pst][ipc]  # a probe row of each probe step
    g[in_pk], rnd[in_pk], seq[in_pk] = pg[src_p], pr[src_p], ps[src_p]
    src_m = m_first[imc]
    g[in_m], rnd[in_m], seq[in_m] = mg[src_m], mr[src_m], msq[src_m]
    # a step "has probes" when a probe there has a phase (as the frame build's outer join reads it)
    ph_row = np.full(len(codes), -1, dtype=np.int64)
    ph_row[in_pk] = p_phase[ipc]
    in_p = ph_row >= 0
    kind = np.full(len(codes), np.nan, dtype=object)
    kind[in_m] = _objects_at(ev["kind"], m_rows[src_m])
    has_msg = np.zeros(len(codes), dtype=bool)
    has_msg[in_m] = ~pd.isna(kind[in_m])
    step_pts = np.full(len(codes), np.nan)
    step_pts[in_pk] = p_ts[ipc]
    mts = np.full(len(codes), np.nan)
    mts[in_m] = ev["ts"].to_numpy()[m_rows[src_m]]
    ts = np.where(in_p & np.isfinite(step_pts), step_pts, np.where(has_msg, mts, np.inf))
    cats = np.asarray(phase.cat.categories, dtype=object)
    ph = kind.copy()
    ph[in_p] = cats[pcodes[ph_row[in_p]]]
    speaker = np.full(len(codes), -1, dtype=np.int64)
    spk_rows = m_spk[imc]
    speaker[np.flatnonzero(in_m)[spk_rows >= 0]] = who[spk_rows[spk_rows >= 0]]
    disc = np.zeros(len(codes), dtype=bool)
    disc[in_pk] = p_disc[ipc]
    starts = np.searchsorted(g, g, side="left")
    dts = c.seat_array("death_ts", fill=-np.inf)
    seats = np.arange(dts.shape[1])
    alive = ~(dts[g] < ts[:, None]) & (seats < n_seats(c)[g][:, None])
    return {"g": g, "round": rnd, "seq": seq, "idx": np.arange(len(g)) - starts, "ts": ts, "phase": ph,
            "speaker": speaker, "has_message": has_msg, "disc": disc, "alive": alive}
