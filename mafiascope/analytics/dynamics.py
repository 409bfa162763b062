"""Belief dynamics (docs/metrics.md §8): suspicion volatility, top-suspect flip rate
(death-forced flips excluded) and return rate, per group; plus the belief edge stream as
a temporal-graph event table.

Vectorised: each usable ``suspicion_ranking`` answer becomes a dense row over seats (NaN =
not listed); consecutive rows of one agent form the pairs.
compat: round-end probes first in their round; the Mafia group's n is doubled (QUIRK).
default: round-end probes last; n counted once.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..export_text import write_csv
from . import labels as L
from .corpus import Cached, Corpus
from .frames import at_seats, death_ts, first_of_key, item_rows, items_with_probe, mafia_mask, order_key
from .executor import by_games, map_blocks, seat_memo
from .personality_blocks import game_blocks
from .runtime import workers
from .modes import Mode
from .intervals import ci_list as _ci, cluster_ci, pooled_entry
from .stats import ratio_stat, round_or_none


DYN_STATES = Cached("dyn_states")
DYN_PAIRS = Cached("dyn_pairs")
DYN_PAIR_ARRAYS = Cached("dyn_pair_arrays")


_STATE_ITEMS = 1 << 20  # ranking items per block of games of the states' build (cut only between games)
_STATE_KEYS = ("V", "top", "g", "agent", "pi", "ts", "round", "pms")


def suspicion_states(c: Corpus, mode: Mode) -> dict[str, np.ndarray]:
    """Usable suspicion vectors sorted per agent by the ordering key.

    Built a block of games at a time: a state's row depends on its own items only, and the order
    (game first) puts every block's states after the previous block's, so the concatenated blocks
    equal the whole; the items' gathered columns and the dense cells stay one block's size."""

    def build() -> dict[str, np.ndarray]:
        rows, pi = item_rows(c, "sr", "suspicion_ranking")
        g = c.cols("sr", ["g"])["g"].to_numpy()
        blocks = game_blocks(g if rows is None else g[rows], max(1, _STATE_ITEMS // workers()))  # per block in flight
        # every input read here, in this thread (the blocks run on workers: :mod:`.executor`)
        df = c.cols("sr", ["g", "tgt", "score", "src", "pos"])
        pr = c.cols("probes", ["g", "seat", "timestamp", "round", "pms"])
        src = _StateInputs({k: df[k].to_numpy() for k in df.columns}, {k: pr[k].to_numpy() for k in pr.columns},
                           rows, pi, death_ts(c), c.seat_array("role_code").shape[1], order_key(c, mode))
        parts = map_blocks(lambda span: _states_block(src, *span), blocks)
        return {k: np.concatenate([p.pop(k) for p in parts]) for k in _STATE_KEYS}  # each key's blocks freed in turn

    return c.memo(DYN_STATES.key(mode), build)


@dataclass(frozen=True)
class _StateInputs:
    """The columns the states are built from (read once, shared read-only by the blocks)."""

    sr: dict[str, np.ndarray]
    pr: dict[str, np.ndarray]
    rows: np.ndarray | None
    pi: np.ndarray
    dts: np.ndarray
    seats: int
    okey: np.ndarray


def _states_block(src: _StateInputs, lo: int, hi: int) -> dict[str, np.ndarray]:
    """The states of the items [lo, hi) (whole games), sorted by game, agent, ordering key, probe row."""
    rows = src.rows
    it = {k: v[lo:hi] if rows is None else v[rows[lo:hi]] for k, v in src.sr.items()}
    pi = src.pi[lo:hi]
    pr = src.pr
    seat = pr["seat"][pi]
    g, tgt, sc = it["g"], it["tgt"], it["score"]
    ok = (it["src"] < 2)  # wrapped rankings are not lists: skipped (docs/metrics.md §1.3)
    ok &= (seat >= 0) & (tgt >= 0) & (tgt != seat) & ~np.isnan(sc)
    ok[ok] = at_seats(src.dts, g[ok], tgt[ok]) > pr["timestamp"][pi[ok]]  # the target alive
    at = np.flatnonzero(ok)  # the kept items' rows
    pi_u, row = _codes(pi[at])  # coded in the item rows' dtype, the probe rows widened after
    pi_u = pi_u.astype(np.int64)
    S = src.seats
    # max if a player repeats; first listing position for ties
    V, P = _cells_reduce_many(len(pi_u), S, row, tgt[at], ((np.fmax, np.nan, np.maximum(sc[at], 0.0)),
                                                          (np.minimum, np.inf, it["pos"][at].astype(float))))
    del it, seat, ok, at, row
    tot = np.nansum(V, 1)
    keep = tot > 0
    if keep.all():  # the usual case: no gather of the dense rows
        V /= tot[:, None]
    else:
        V, P, pi_u = V[keep] / tot[keep, None], P[keep], pi_u[keep]
    mx = np.nanmax(V, 1)
    top = np.argmin(np.where(V == mx[:, None], P, np.inf), 1)
    key = src.okey[pi_u]
    gg = pr["g"][pi_u]
    ag = pr["seat"][pi_u]
    order = np.lexsort((pi_u, key, ag, gg))
    return {
        "V": V[order], "top": top[order], "g": gg[order], "agent": ag[order], "pi": pi_u[order],
        "ts": pr["timestamp"][pi_u][order], "round": pr["round"][pi_u][order],
        "pms": pr["pms"][pi_u][order],
    }


def cells_reduce(op: np.ufunc, fill: float, n: int, S: int, row: np.ndarray, col: np.ndarray,
                  vals: np.ndarray) -> np.ndarray:
    """An (n, S) array of ``fill`` with ``op.at(out, (row, col), vals)`` applied: a cell named once
    takes ``op(fill, value)`` == its value (``fmax`` from NaN, ``minimum`` from inf) by a plain
    assignment; only the cells named more than once (a player listed twice) go through ``op.at``,
    which is several times slower than assignment over millions of items."""
    return _cells_reduce_many(n, S, row, col, ((op, fill, vals),))[0]


def _cells_reduce_many(n: int, S: int, row: np.ndarray, col: np.ndarray,
                       reductions: tuple[tuple[np.ufunc, float, np.ndarray], ...]) -> list[np.ndarray]:
    """:func:`cells_reduce` for several (op, fill, values) over the same cells: the cells and the
    items of the cells named twice are found once."""
    if len(col) and (int(col.min()) < 0 or int(col.max()) >= S):  # a flat index would name another row's cell
        raise IndexError("column index out of range")
    cell = row.astype(np.int64) * S + col
    twice = np.bincount(cell, minlength=n * S)[cell] > 1
    some = bool(twice.any())
    cell_twice = cell[twice] if some else cell[:0]
    outs = []
    for op, fill, vals in reductions:
        out = np.full((n, S), fill)
        flat = out.reshape(-1)
        with np.errstate(invalid="ignore"):  # a NaN value gives NaN, without a warning
            flat[cell] = op(fill, vals)
            if some:
                flat[cell_twice] = fill
                op.at(flat, cell_twice, vals[twice])
        outs.append(out)
    return outs


def _codes(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(x, return_inverse=True)``; by runs when ``x`` is already sorted (item rows are in probe order).
    The codes are counted in int64: ``np.cumsum`` of a bool array without a dtype is several times slower."""
    if len(x) and bool((x[1:] >= x[:-1]).all()):
        new = np.r_[True, x[1:] != x[:-1]]
        return x[new], np.cumsum(new, dtype=np.int64) - 1
    u, inv = np.unique(x, return_inverse=True)
    return u, inv.reshape(-1)


_PAIR_COLS = ("g", "agent", "l1", "flip_pair", "flip", "ret", "mafia", "role")


def dynamics_pairs(c: Corpus, mode: Mode) -> pd.DataFrame:
    """Consecutive usable rankings of one agent: L1 change, flip, return, the agent's group; memoised."""

    def build() -> pd.DataFrame:
        arrays = _pair_arrays(c, mode)
        df = pd.DataFrame({k: arrays[k] for k in _PAIR_COLS})
        arrays.update({k: df[k].to_numpy() for k in _PAIR_COLS})  # the memoised arrays become views of the frame
        return df

    return c.memo(DYN_PAIRS.key(mode), build)


def _pair_arrays(c: Corpus, mode: Mode) -> dict[str, np.ndarray]:
    def build() -> dict[str, np.ndarray]:
        # an agent's consecutive rankings are one game's, and the pairs come game by game (each block's
        # suspicion states are let go of with its block)
        return by_games(c, lambda view, lo, hi: _build_pairs(view, mode), _PAIR_TABLES, seat_memo(c))

    return c.memo(DYN_PAIR_ARRAYS.key(mode), build)


# what the states and their pairs are built from, besides the seats' roles and death times
_PAIR_TABLES = {"probes": ("probe_id", "seat", "timestamp", "round", "pms", "probe_seq"),
                "sr": ("rec", "tgt", "score", "src", "pos")}


pair_arrays = _pair_arrays  # the seat cells read the pairs' arrays (no frame)


_BLOCK = 1 << 17  # state rows per block of the dense (rows, seats) passes (each row's value depends on its row only)


def _l1(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """L1 change between the normalised common parts of each row of ``a`` and the same row of ``b``
    (NaN: nothing in common, or a part summing to 0; a positive sum implies a common cell)."""
    common = ~np.isnan(a) & ~np.isnan(b)
    a, b = np.where(common, a, 0), np.where(common, b, 0)
    sa, sb = a.sum(1), b.sum(1)
    with np.errstate(invalid="ignore", divide="ignore"):
        l1 = np.abs(a / sa[:, None] - b / sb[:, None]).sum(1)
    return np.where((sa > 0) & (sb > 0), l1, np.nan)


def _l1_pairs(V: np.ndarray, same: np.ndarray) -> np.ndarray:
    """:func:`_l1` of each state row ``r`` with ``same[r]`` against row ``r - 1``, in row order: a block of
    consecutive rows at a time (on worker threads), its previous rows a slice (no gather of the pairs' rows)."""
    n = len(same)
    parts = map_blocks(lambda span: _l1(V[span[0] - 1:span[1] - 1], V[span[0]:span[1]])[same[span[0]:span[1]]],
                       [(lo, min(lo + _BLOCK, n)) for lo in range(1, n, _BLOCK)])
    return np.concatenate(parts) if parts else np.zeros(0)


def _build_pairs(c: Corpus, mode: Mode) -> dict[str, np.ndarray]:
    st = suspicion_states(c, mode)
    V, top, g, ag, ts = st["V"], st["top"], st["g"], st["agent"], st["ts"]
    n = len(g)
    same = np.zeros(n, dtype=bool)
    same[1:] = (g[1:] == g[:-1]) & (ag[1:] == ag[:-1])
    cur = np.flatnonzero(same)
    prev = cur - 1
    l1 = _l1_pairs(V, same)
    prev_top_alive = death_ts(c)[g[cur], top[prev]] > ts[cur]
    flip = prev_top_alive & (top[cur] != top[prev])
    # return: the new top was the top of some state before prev in the same sequence
    seq_id = np.cumsum(~same, dtype=np.int64) - 1
    first = first_of_key(seq_id * (int(top.max(initial=0)) + 1) + top)
    ret = flip & (first[cur] <= prev - 1)
    maf = mafia_mask(c)
    roles = c.seat_array("role_code")
    return {
        "g": g[cur], "agent": ag[cur], "l1": l1, "flip_pair": prev_top_alive, "flip": flip, "ret": ret,
        "mafia": maf[g[cur], ag[cur]], "role": roles[g[cur], ag[cur]],
    }


def _per_game_cols(d: dict[str, np.ndarray], code: np.ndarray | None, n_codes: int, m: int) -> np.ndarray:
    """(n_codes, m, 5) per-game columns (L1 sum, L1 n, flips, flip pairs, returns) of each group of pairs
    with ``code`` (disjoint groups; None: one group of every pair). One bincount a column over (group,
    game) bins: each bin adds its pairs in row order, as a bincount over the group's own rows would."""
    key = d["g"].astype(np.int64)
    if code is not None:
        key += code.astype(np.int64) * m
    l1, size = d["l1"], n_codes * m
    has = ~np.isnan(l1)
    cols = np.column_stack(
        [
            np.bincount(key[has], weights=l1[has], minlength=size), np.bincount(key[has], minlength=size),
            np.bincount(key, weights=d["flip"].astype(float), minlength=size),
            np.bincount(key, weights=d["flip_pair"].astype(float), minlength=size),
            np.bincount(key, weights=d["ret"].astype(float), minlength=size),
        ]
    ).astype(float)
    return cols.reshape(n_codes, m, 5)


def _group_stats(cols: np.ndarray, mode: Mode, mult: int = 1) -> dict[str, Any]:
    """The group's volatility, flip and return rates from its (m, 5) per-game columns."""
    cols = cols.copy()  # a group's own array, as each group's columns were built
    tot = cols.sum(0)

    def r(i: int, j: int) -> Any:
        return round_or_none(tot[i] / tot[j] if tot[j] else None)

    def ci(i: int, j: int) -> Any:
        return _ci(cluster_ci(cols, ratio_stat(i, j), mode))

    return {
        "volatility": {"point": r(0, 1), "ci": ci(0, 1), "n": int(tot[1]) * mult},
        "flip_rate": {"point": r(2, 3), "ci": ci(2, 3), "n": int(tot[3]) * mult},
        "return_rate": {"point": r(4, 2), "ci": ci(4, 2), "n": int(tot[2]) * mult},
    }


@pooled_entry
def dynamics(c: Corpus, mode: Mode, *, seats: np.ndarray | None = None) -> dict[str, Any]:
    """Dynamics per group; ``seats`` (an (m, seats) mask) keeps only those agents' ranking pairs."""
    d = _pair_arrays(c, mode)
    if seats is not None:
        at = np.flatnonzero(seats[d["g"].astype(np.int64), d["agent"].astype(np.int64)])
        d = {k: d[k][at] for k in ("g", "l1", "flip", "flip_pair", "ret", "mafia", "role")}
    by_mafia = _per_game_cols(d, d["mafia"], 2, c.m)
    out: dict[str, Any] = {
        "Mafia": _group_stats(by_mafia[1], mode, 2 if mode.is_compat else 1),
        "non-Mafia": _group_stats(by_mafia[0], mode),
    }
    if mode.is_compat:
        out["Mafia"]["_note"] = "n doubled as in the original (QUIRK); points and CIs unaffected"
    role = d["role"].astype(np.int64)
    lo = int(role.min(initial=0))
    counts = np.bincount(role - lo) if len(role) else np.zeros(0, dtype=np.int64)
    by_role = _per_game_cols(d, role - lo, len(counts), c.m)
    for code in np.flatnonzero(counts):
        name = L.CODE_NAMES.get(int(code) + lo)
        if name and name not in out:
            out[name] = _group_stats(by_role[code], mode)
    out["all"] = _group_stats(_per_game_cols(d, None, 1, c.m)[0], mode)
    return out


def edge_stream(c: Corpus, mode: Mode) -> pd.DataFrame:
    """Belief edges as a temporal-graph event table.

    Columns: game_id, source, destination, timestamp, round, public_msg_seq, edge_type
    (``suspicion`` with the normalised score as confidence; ``role:<label>`` from role
    assessments with confidence/100; ``attitude:<class>`` from social maps, directed from
    the stated feeler to the answering agent, with the item's stated confidence/100, empty
    when the answer gave none), confidence, then source_model, source_role,
    destination_model, destination_role (from the setup record). Self edges are dropped.
    """
    gid = c.games["game_id"].to_numpy()
    names = c.players.set_index(["g", "seat"])["name"]
    parts = []
    st = suspicion_states(c, mode)
    rows, cols = np.nonzero(~np.isnan(st["V"]))
    parts.append(pd.DataFrame({
        "g": st["g"][rows], "src": st["agent"][rows], "dst": cols, "timestamp": st["ts"][rows],
        "round": st["round"][rows], "public_msg_seq": st["pms"][rows], "edge_type": "suspicion",
        "confidence": st["V"][rows, cols],
    }))
    ra = items_with_probe(c, "ra", "role_assessment")
    ra = ra[(ra["tgt"] >= 0) & (ra["seat"] >= 0) & (ra["tgt"] != ra["seat"])]
    lab = (ra["role_en"] if mode.is_compat else ra["role"]).map(lambda x: "role:" + L.CODE_NAMES.get(int(x), "unusable"))
    parts.append(pd.DataFrame({
        "g": ra["g"], "src": ra["seat"], "dst": ra["tgt"], "timestamp": ra["timestamp"], "round": ra["round"],
        "public_msg_seq": ra["pms"], "edge_type": lab, "confidence": np.nan_to_num(ra["conf"].to_numpy(), nan=0.0) / 100.0,
    }))
    sm = items_with_probe(c, "sm", "social_map")
    sm = sm[(sm["tgt"] >= 0) & (sm["seat"] >= 0) & (sm["att"] >= 0)]
    parts.append(pd.DataFrame({
        "g": sm["g"], "src": sm["tgt"], "dst": sm["seat"], "timestamp": sm["timestamp"], "round": sm["round"],
        "public_msg_seq": sm["pms"], "edge_type": sm["att"].map(lambda a: "attitude:" + L.ATTITUDES[int(a)]),
        "confidence": (sm["conf"].to_numpy() / 100.0) if "conf" in sm else np.nan,
    }))
    df = pd.concat(parts, ignore_index=True)
    df = df[df["src"].to_numpy() != df["dst"].to_numpy()]
    df = df.sort_values(["g", "timestamp", "src"], kind="stable")
    out = pd.DataFrame({
        "game_id": gid[df["g"].to_numpy()],
        "source": names.reindex(pd.MultiIndex.from_arrays([df["g"], df["src"]])).to_numpy(),
        "destination": names.reindex(pd.MultiIndex.from_arrays([df["g"], df["dst"]])).to_numpy(),
        "timestamp": df["timestamp"].to_numpy(),
        "round": df["round"].to_numpy(dtype=np.int64),
        "public_msg_seq": df["public_msg_seq"].to_numpy(dtype=np.int64),
        "edge_type": df["edge_type"].to_numpy(),
        "confidence": df["confidence"].to_numpy(),
    })
    gi, si, di = (df[k].to_numpy(dtype=np.int64) for k in ("g", "src", "dst"))
    for side, idx in (("source", si), ("destination", di)):
        for col in ("model", "role"):
            out[f"{side}_{col}"] = c.seat_array_obj(col)[gi, idx]
    return out


def export_edge_stream(c: Corpus, mode: Mode, out: str | Path, *, source_model: str | None = None) -> dict[str, str]:
    """Write ``<out>.csv`` and ``<out>.parquet`` (``out`` may be a directory); ``source_model`` keeps
    only the edges whose source seat played that model."""
    out = Path(out)
    if out.suffix in (".csv", ".parquet"):
        out = out.with_suffix("")
        out.parent.mkdir(parents=True, exist_ok=True)
    elif out.is_dir() or not out.suffix:
        out.mkdir(parents=True, exist_ok=True)
        out = out / "belief_edges"
    df = edge_stream(c, mode)
    if source_model is not None:
        df = df[df["source_model"].to_numpy() == source_model]
    write_csv(df, out.with_suffix(".csv"))
    df.to_parquet(out.with_suffix(".parquet"), index=False)
    return {"csv": str(out.with_suffix(".csv")), "parquet": str(out.with_suffix(".parquet")), "rows": str(len(df))}
