"""Belief dynamics (docs/metrics.md §8): suspicion volatility, top-suspect flip rate
(death-forced flips excluded) and return rate, per group; plus the belief edge stream as
a temporal-graph event table.

Vectorised: each usable ``suspicion_ranking`` answer becomes a dense row over seats (NaN =
not listed); consecutive rows of one agent form the pairs.
compat: round-end probes first in their round; the Mafia group's n is doubled (QUIRK).
default: round-end probes last; n counted once.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from . import labels as L
from .corpus import Corpus
from .f1 import _ci
from .frames import death_ts, first_of_key, items_with_probe, mafia_mask, order_key
from .modes import Mode
from .stats import batched_cis, cluster_ci, ratio_stat, round_or_none


def suspicion_states(c: Corpus, mode: Mode) -> dict[str, np.ndarray]:
    """Usable suspicion vectors sorted per agent by the ordering key."""

    def build() -> dict[str, np.ndarray]:
        it = items_with_probe(c, "sr", "suspicion_ranking")
        g = it["g"].to_numpy()
        seat = it["seat"].to_numpy()
        tgt = it["tgt"].to_numpy()
        sc = it["score"].to_numpy()
        ok = (it["src"].to_numpy() < 2)  # wrapped rankings are not lists: skipped (docs/metrics.md §1.3)
        ok &= (seat >= 0) & (tgt >= 0) & (tgt != seat) & ~np.isnan(sc)
        ok[ok] = death_ts(c)[g[ok], tgt[ok]] > it["timestamp"].to_numpy()[ok]
        at = np.flatnonzero(ok)  # the kept items' rows (arrays, not a filtered copy of the frame)
        pi_u, row = np.unique(it["pi"].to_numpy()[at], return_inverse=True)
        S = c.seat_array("role_code").shape[1]
        V = np.full((len(pi_u), S), np.nan)
        P = np.full((len(pi_u), S), np.inf)
        t = tgt[at]
        s = np.maximum(sc[at], 0.0)
        # max if a player repeats; first listing position for ties
        np.fmax.at(V, (row, t), s)
        np.minimum.at(P, (row, t), it["pos"].to_numpy()[at].astype(float))
        tot = np.nansum(V, 1)
        keep = tot > 0
        V, P, pi_u = V[keep] / tot[keep, None], P[keep], pi_u[keep]
        mx = np.nanmax(V, 1)
        top = np.argmin(np.where(V == mx[:, None], P, np.inf), 1)
        pr = c.probes
        key = order_key(c, mode)[pi_u]
        gg = pr["g"].to_numpy()[pi_u]
        ag = pr["seat"].to_numpy()[pi_u]
        order = np.lexsort((pi_u, key, ag, gg))
        return {
            "V": V[order], "top": top[order], "g": gg[order], "agent": ag[order], "pi": pi_u[order],
            "ts": pr["timestamp"].to_numpy()[pi_u][order], "round": pr["round"].to_numpy()[pi_u][order],
            "pms": pr["pms"].to_numpy()[pi_u][order],
        }

    return c.memo(("dyn_states", mode), build)


def dynamics_pairs(c: Corpus, mode: Mode) -> pd.DataFrame:
    st = suspicion_states(c, mode)
    V, top, g, ag, ts = st["V"], st["top"], st["g"], st["agent"], st["ts"]
    n = len(g)
    same = np.zeros(n, dtype=bool)
    same[1:] = (g[1:] == g[:-1]) & (ag[1:] == ag[:-1])
    cur = np.flatnonzero(same)
    prev = cur - 1
    a, b = V[prev], V[cur]
    common = ~np.isnan(a) & ~np.isnan(b)
    sa = np.where(common, a, 0).sum(1)
    sb = np.where(common, b, 0).sum(1)
    has_l1 = common.any(1) & (sa > 0) & (sb > 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        l1 = np.abs(np.where(common, a, 0) / sa[:, None] - np.where(common, b, 0) / sb[:, None]).sum(1)
    l1 = np.where(has_l1, l1, np.nan)
    prev_top_alive = death_ts(c)[g[cur], top[prev]] > ts[cur]
    flip = prev_top_alive & (top[cur] != top[prev])
    # return: the new top was the top of some state before prev in the same sequence
    seq_id = np.cumsum(~same) - 1
    first = first_of_key(seq_id.astype(np.int64) * (int(top.max(initial=0)) + 1) + top)
    ret = flip & (first[cur] <= prev - 1)
    maf = mafia_mask(c)
    roles = c.seat_array("role_code")
    return pd.DataFrame(
        {
            "g": g[cur], "agent": ag[cur], "l1": l1, "flip_pair": prev_top_alive, "flip": flip, "ret": ret,
            "mafia": maf[g[cur], ag[cur]], "role": roles[g[cur], ag[cur]],
        }
    )


def _group_stats(df: pd.DataFrame, m: int, mode: Mode, mult: int = 1) -> dict[str, Any]:
    g = df["g"].to_numpy()
    l1 = df["l1"].to_numpy()
    has = ~np.isnan(l1)
    cols = np.column_stack(
        [
            np.bincount(g[has], weights=l1[has], minlength=m), np.bincount(g[has], minlength=m),
            np.bincount(g, weights=df["flip"].to_numpy().astype(float), minlength=m),
            np.bincount(g, weights=df["flip_pair"].to_numpy().astype(float), minlength=m),
            np.bincount(g, weights=df["ret"].to_numpy().astype(float), minlength=m),
        ]
    ).astype(float)
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


@batched_cis
def dynamics(c: Corpus, mode: Mode, *, seats: np.ndarray | None = None) -> dict[str, Any]:
    """Dynamics per group; ``seats`` (an (m, seats) mask) keeps only those agents' ranking pairs."""
    df = dynamics_pairs(c, mode)
    if seats is not None:
        df = df[seats[df["g"].to_numpy(dtype=np.int64), df["agent"].to_numpy(dtype=np.int64)]]
    out: dict[str, Any] = {
        "Mafia": _group_stats(df[df["mafia"]], c.m, mode, 2 if mode.is_compat else 1),
        "non-Mafia": _group_stats(df[~df["mafia"]], c.m, mode),
    }
    if mode.is_compat:
        out["Mafia"]["_note"] = "n doubled as in the original (QUIRK); points and CIs unaffected"
    for code in sorted(set(df["role"].tolist())):
        name = L.CODE_NAMES.get(int(code))
        if name and name not in out:
            out[name] = _group_stats(df[df["role"] == code], c.m, mode)
    out["all"] = _group_stats(df, c.m, mode)
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
    df.to_csv(out.with_suffix(".csv"), index=False)
    df.to_parquet(out.with_suffix(".parquet"), index=False)
    return {"csv": str(out.with_suffix(".csv")), "parquet": str(out.with_suffix(".parquet")), "rows": str(len(df))}
