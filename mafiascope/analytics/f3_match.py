"""F3's matching (docs/metrics.md §6): each usable social-map item (A about B at A's probe) with
B's latest usable role-assessment entry about A at or before that probe's ordering key.

``merge_asof(direction="backward", by=(game, B, A))`` after keeping the last entry per record and
target and, of equal keys, the later probe row: the assessments' (game, B, A, key) as one int64,
one stable sort per block of games (rows in probe-row order, so the last of equal values is the
one that counts: both rules at once), then one sorted search per query.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

import numpy as np

from .executor import map_blocks
from .runtime import workers
from .corpus import Corpus
from .frames import alive_at, order_key
from .modes import Mode

_BLOCK_ITEMS = 2_000_000  # items matched at a time: bounds the matching's temporaries (games never split)


def _game_blocks(m: int, *gs: np.ndarray) -> list[tuple[int, int]]:
    """Consecutive game ranges [lo, hi) holding about ``_BLOCK_ITEMS`` rows of ``gs`` between the blocks
    in flight at once (:func:`.runtime.workers`)."""
    size = max(1, _BLOCK_ITEMS // workers())  # blocks in flight at once share the temporaries' bound
    cum = np.cumsum(sum(np.bincount(g, minlength=m) for g in gs)) if m else np.zeros(0, dtype=np.int64)
    total = int(cum[-1]) if m else 0
    cuts = np.searchsorted(cum, np.arange(1, -(-total // size)) * size, side="left") + 1
    edges = [0, *sorted(set(np.minimum(cuts, m).tolist()) - {0, m}), m]
    return list(zip(edges[:-1], edges[1:]))


_CHUNK = 1 << 20  # items tested at a time: bounds the usability test's temporaries (a few MB each)


def rows_where(n: int, test: Callable[[slice], np.ndarray]) -> np.ndarray:
    """``np.flatnonzero`` of a mask over ``n`` rows tested a chunk at a time (``test(rows slice)``),
    int32 when ``n`` fits: no row-long mask or int64 temporaries."""
    parts = [np.zeros(0, dtype=np.int32 if n < 2**31 else np.int64)]
    for lo in range(0, n, _CHUNK):
        parts.append((np.flatnonzero(test(slice(lo, lo + _CHUNK))) + lo).astype(parts[0].dtype))
    return np.concatenate(parts)


def usable_queries(c: Corpus, mode: Mode, it: dict[str, np.ndarray]) -> np.ndarray:
    """Rows of the social-map items ``it`` (g, seat, tgt, att, pi) with a seat, another seat as
    target and an attitude; default mode: the target alive at the probe's time (no item-long
    timestamp or death-time columns: a chunk of items at a time)."""
    ts = c.cols("probes", ["timestamp"])["timestamp"].to_numpy() if not mode.is_compat else None

    def test(s: slice) -> np.ndarray:
        seat, tgt = it["seat"][s], it["tgt"][s]
        ok = (seat >= 0) & (tgt >= 0) & (seat != tgt) & (it["att"][s] >= 0)
        if ts is not None:
            ok &= alive_at(c, it["g"][s], np.maximum(tgt, 0), ts[it["pi"][s]])
        return ok

    return rows_where(len(it["g"]), test)


def search(a: np.ndarray, v: Any, side: Literal["left", "right"] = "left") -> np.ndarray:
    """``np.searchsorted(a, v, side)`` with the integers ``v`` in ``a``'s integer dtype when they fit:
    a needle of another dtype (a Python int included) makes numpy convert the whole of ``a`` first,
    tens of milliseconds per call at 10 million rows."""
    v = np.asarray(v)
    if v.dtype != a.dtype and v.dtype.kind in "iu" and a.dtype.kind in "iu" and v.size:
        info = np.iinfo(a.dtype)
        if info.min <= int(v.min()) and int(v.max()) <= info.max:
            v = v.astype(a.dtype)
    return np.searchsorted(a, v, side=side)


def _in_games(rows: np.ndarray, g: np.ndarray, lo: int, hi: int, ordered: bool) -> np.ndarray:
    """The ``rows`` of games [lo, hi): ``g`` is every item's game, sorted (``ordered``), else the rows' games."""
    if ordered:
        a, b = search(g, (lo, hi))
        return rows[int(search(rows, a)):int(search(rows, b))]
    return rows[(g >= lo) & (g < hi)]


def match_block(q: np.ndarray, it: dict[str, np.ndarray], r: np.ndarray, ra: dict[str, np.ndarray],
                okey: np.ndarray, width: int, lo: int) -> tuple[np.ndarray, np.ndarray]:
    """(matched query rows, their assessment rows) for the query rows ``q`` of ``it`` and the usable
    assessment rows ``r`` of ``ra`` (in probe-row order) of games ``lo`` on; ``width`` exceeds every
    seat and target. Per (game, assessor, target, key) the last row counts: the last entry of a
    record about a target, and of records with equal keys the later probe row."""
    if not len(q) or not len(r):
        return q[:0], r[:0]
    r_key, q_key = okey[ra["pi"][r]], okey[it["pi"][q]]
    k0 = min(int(r_key.min()), int(q_key.min()))
    span = max(int(r_key.max()), int(q_key.max())) - k0 + 1
    groups = (max(int(ra["g"][r].max()), int(it["g"][q].max())) - lo + 1) * width * width
    if groups * span >= 2**62:  # pragma: no cover - keys too wide for one int64: use their ranks
        keys, rank = np.unique(np.concatenate([r_key, q_key]), return_inverse=True)
        r_key, q_key, k0, span = rank[: len(r)], rank[len(r):], 0, len(keys)
    rc = _group(ra["g"][r], ra["seat"][r], ra["tgt"][r], lo, width, span)
    r_key -= k0
    rc += r_key
    del r_key
    order = np.argsort(rc, kind="stable")  # equal values stay in probe-row order: the last one counts
    rc = rc[order]
    qg = _group(it["g"][q], it["tgt"][q], it["seat"][q], lo, width, span)
    q_key -= k0
    q_key += qg
    pos = np.searchsorted(rc, q_key, side="right")  # after the last of equal values: the one that counts
    del q_key
    pos -= 1
    hit = np.flatnonzero(rc[np.maximum(pos, 0)] >= qg)  # the same (game, B, A) group, not an earlier one
    hit = hit[pos[hit] >= 0]
    return q[hit], r[order[pos[hit]]]


def _group(g: np.ndarray, a: np.ndarray, b: np.ndarray, lo: int, width: int, span: int) -> np.ndarray:
    """``(((g - lo) * width + a) * width + b) * span`` as int64, computed in place (one temporary)."""
    out = g.astype(np.int64)
    out -= lo
    out *= width
    out += a
    out *= width
    out += b
    out *= span
    return out


def match(c: Corpus, mode: Mode, it: dict[str, np.ndarray], rows: np.ndarray, ra: dict[str, np.ndarray],
          r_ok: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(query rows, assessment rows) of every matched pair, a block of games at a time, blocks in order."""
    okey = order_key(c, mode)
    width = 1 + max([int(x.max(initial=0)) for x in (it["seat"], it["tgt"], ra["seat"], ra["tgt"])])
    sorted_ = lambda x: len(x) < 2 or bool((x[1:] >= x[:-1]).all())  # noqa: E731
    pi_ordered = sorted_(ra["pi"])
    ordered = pi_ordered and sorted_(it["g"]) and sorted_(ra["g"])
    if not pi_ordered:  # assessments not in probe-row order: put them in it (equal rows keep theirs)
        r_ok = r_ok[np.argsort(ra["pi"][r_ok], kind="stable")]
    qg, rg = (it["g"], ra["g"]) if ordered else (it["g"][rows], ra["g"][r_ok])

    def block(span: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
        lo, hi = span
        q, r = _in_games(rows, qg, lo, hi, ordered), _in_games(r_ok, rg, lo, hi, ordered)
        return match_block(q, it, r, ra, okey, width, lo)

    # pairs never cross games: a block of games at a time (blocks on worker threads, in block order)
    parts = map_blocks(block, _game_blocks(c.m, qg, rg))
    return np.concatenate([rows[:0], *(q for q, _ in parts)]), np.concatenate([r_ok[:0], *(r for _, r in parts)])
