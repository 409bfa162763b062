"""Collective suspicion-shift episode selector (new in mafiascope; not in the original).

Definition (docs/metrics.md §12):

* Discussion steps: (round, public_msg_seq) whose probes have phase ``day_discuss``.
  Consecutive discussion steps of one round form a comparison.
* At a step, agent i's ranking is *complete* when its ``suspicion_ranking`` answer at that
  very step (repaired parse, not carried forward; a list wrapped in an object such as
  ``{"thoughts": ..., "ranking": [...]}`` is accepted) gives a numeric score to every other
  living player; it has a *unique maximum* when exactly one other living player has the
  highest score. z_i,t is that player (agent i's top suspect).
* A pair (t, t+1) is *eligible* when the living roster is the same at both steps and
  every living agent's ranking is complete with a unique maximum at both.
* q_t(j) = share of the living agents C whose top suspect is j;
  D = total-variation distance = 1/2 sum_j |q_t(j) - q_t+1(j)|;
  K = number of agents whose top suspect changed.
* Candidates are eligible pairs with D > 0; each carries game id, both step keys, the
  speaker of the later step, D, K, the switching agents and links (step keys) to the
  before/after steps. Candidates of one game and round whose steps are at most
  ``merge_gap`` messages apart merge into a discussion window.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np

from .corpus import Cached, Corpus
from ..logs.steps import ROUND_END, step_label
from .dynamics import cells_reduce
from .frames import item_arrays
from .executor import by_games
from .step_keys import step_codes
from .viewer import step_table

EPISODE_COMPARISONS = Cached("episode_comparisons")


def top_suspects(scores: dict[int, float], alive: set[int], me: int) -> int | None:
    others = alive - {me}
    if not others or any(o not in scores for o in others):
        return None
    mx = max(scores[o] for o in others)
    tops = [o for o in others if scores[o] == mx]
    return tops[0] if len(tops) == 1 else None


def shift(z_before: dict[Any, Any], z_after: dict[Any, Any]) -> tuple[Fraction, int, list[Any]]:
    """(D, K, switching agents) for two top-suspect assignments over the same agents."""
    agents = list(z_before)
    n = len(agents)
    qa: dict[Any, int] = {}
    qb: dict[Any, int] = {}
    for a in agents:
        qa[z_before[a]] = qa.get(z_before[a], 0) + 1
        qb[z_after[a]] = qb.get(z_after[a], 0) + 1
    tv = sum(abs(qa.get(j, 0) - qb.get(j, 0)) for j in set(qa) | set(qb))
    D = Fraction(tv, 2 * n) if n else Fraction(0)
    switching = [a for a in agents if z_before[a] != z_after[a]]
    return D, len(switching), switching


def _ranking_tops(c: Corpus, st: dict[str, np.ndarray], rows: np.ndarray) -> np.ndarray:
    """(len(rows), seats) top suspect of each living agent at steps ``rows`` (-1: incomplete or tied; -2: dead).

    An agent's scores at a step: its ``suspicion_ranking`` items at exactly that step (every
    record, repaired parse, wrapped lists included), the highest score per named player.
    Items and (step, agent) queries meet by one int64 code per (game, round, message number, seat)
    in step order: the queries are sorted already, each probe row finds its query by binary search
    and its items follow it (through a table of every probe row's query: no per-item codes).
    """
    S = st["alive"].shape[1]
    alive = st["alive"][rows]
    Z = np.full((len(rows), S), -2, dtype=np.int64)
    sr = item_arrays(c, "sr", "suspicion_ranking", ("g", "tgt", "score"))
    seat = c.cols("probes", ["seat"])["seat"].to_numpy()
    at = np.flatnonzero((sr["tgt"] >= 0) & ~np.isnan(sr["score"]) & ((seat >= 0) & (seat < S))[sr["pi"]])
    pi_at = sr["pi"][at]
    pi, first = _distinct(pi_at)  # the kept items' probe rows, each one's first kept item
    si, ag = np.nonzero(alive)
    q = [st["g"][rows][si], st["round"][rows][si], st["seq"][rows][si]]
    p_hit, p_query = _probe_queries(c, q, ag, sr["g"][at[first]], pi, S)
    query_of = np.full(len(seat), -1, dtype=np.int32 if len(si) < 2**31 else np.int64)  # each probe row's query, -1: none
    query_of[pi[p_hit]] = p_query[p_hit]
    k = query_of[pi_at]  # each kept item's query
    del query_of, pi_at
    hit = np.flatnonzero(k >= 0)
    k, hit = k[hit], at[hit]  # the matching items' queries and rows
    V = cells_reduce(np.fmax, np.nan, len(si), S, k, sr["tgt"][hit], sr["score"][hit])  # NaN: no ranking
    others = alive[si] & (np.arange(S)[None, :] != ag[:, None])
    complete = others.any(1) & (~others | ~np.isnan(V)).all(1)
    vo = np.where(others & ~np.isnan(V), V, -np.inf)
    mx = vo.max(1) if S else np.zeros(len(si))
    tops = others & (V == mx[:, None])
    unique = complete & (tops.sum(1) == 1)
    Z[si, ag] = np.where(unique, np.argmax(tops, 1), -1)
    return Z


# what :func:`_ranking_tops` reads besides the step table
_RANK_TABLES = {"probes": ("seat", "round", "pms", "probe_id"), "sr": ("rec", "tgt", "score")}


def _tops_by_games(c: Corpus, st: dict[str, np.ndarray], rows: np.ndarray) -> np.ndarray:
    """:func:`_ranking_tops` of the step rows ``rows`` (sorted, as the step table is in game order), a block of
    games at a time on a large corpus (each block's steps' tops from its own games' rankings)."""

    def block(view: Corpus, lo: int, hi: int) -> dict[str, np.ndarray]:
        a, b = np.searchsorted(st["g"], (lo, hi))
        r0, r1 = np.searchsorted(rows, (a, b))
        sub = {"g": st["g"][a:b] - lo, "round": st["round"][a:b], "seq": st["seq"][a:b], "alive": st["alive"][a:b]}
        return {"Z": _ranking_tops(view, sub, rows[r0:r1] - a)}

    return by_games(c, block, _RANK_TABLES, game_keys=())["Z"]  # type: ignore[index]


def _distinct(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(sorted distinct values of ``x``, each one's first position): by runs when ``x`` is sorted."""
    if len(x) and bool((x[1:] >= x[:-1]).all()):
        first = np.flatnonzero(np.r_[True, x[1:] != x[:-1]])
        return x[first], first
    u, first = np.unique(x, return_index=True)
    return u, first


def _probe_queries(c: Corpus, q: list[np.ndarray], ag: np.ndarray, g: np.ndarray, pi: np.ndarray, S: int
                   ) -> tuple[np.ndarray, np.ndarray]:
    """For the probe rows ``pi`` (their items' game ``g``): whether a query (step ``q`` = game, round,
    message number; agent ``ag``) matches the probe's step and seat, and which (the first of equal ones)."""
    pr = c.cols("probes", ["seat", "round", "pms"])
    it = [g, pr["round"].to_numpy()[pi], pr["pms"].to_numpy()[pi]]
    rnds, seqs = [q[1], it[1]], [x[x != ROUND_END] for x in (q[2], it[2])]
    lo = (min(int(x.min(initial=0)) for x in rnds), min(0, *(int(x.min(initial=0)) for x in seqs)))
    span = (max(int(x.max(initial=0)) for x in rnds) - lo[0] + 1, max(int(x.max(initial=0)) for x in seqs) - lo[1] + 2)
    del seqs
    if float(c.m + 1) * span[0] * span[1] * max(S, 1) >= 2.0**62:  # pragma: no cover - absurd round / message numbers
        raise ValueError("step codes do not fit an int64")
    q_code = step_codes(*q, lo, span) * S + ag
    p_code = step_codes(*it, lo, span) * S + pr["seat"].to_numpy()[pi]
    del it
    order = None if bool((q_code[1:] >= q_code[:-1]).all()) else np.argsort(q_code, kind="stable")
    qs = q_code if order is None else q_code[order]
    pos = np.searchsorted(qs, p_code)
    pos_c = np.minimum(pos, max(len(qs) - 1, 0))
    p_hit = (pos < len(qs)) & (qs[pos_c] == p_code) if len(qs) else np.zeros(len(p_code), dtype=bool)
    return p_hit, (pos_c if order is None else order[pos_c])


def _comparisons(c: Corpus) -> dict[str, Any]:
    """Discussion steps, their consecutive pairs (i0, i1), the eligible ones and the top suspects Z; memoised."""

    def build() -> dict[str, Any]:
        st = step_table(c)
        disc = np.flatnonzero(st["disc"])
        g, alive = st["g"][disc], st["alive"][disc]
        rnd = st["round"][disc]
        i0 = np.flatnonzero((g[1:] == g[:-1]) & (rnd[1:] == rnd[:-1]))
        i1 = i0 + 1
        Z = _tops_by_games(c, st, disc)
        ok = (Z != -1).all(1)  # every living agent has a complete ranking with a unique maximum
        eligible = (alive[i0] == alive[i1]).all(1) & ok[i0] & ok[i1]
        return {"st": st, "disc": disc, "g": g, "round": rnd, "seq": st["seq"][disc], "alive": alive, "Z": Z,
                "i0": i0, "i1": i1, "eligible": eligible}

    return c.memo(EPISODE_COMPARISONS.key(), build)


def episode_seat_counts(c: Corpus) -> tuple[np.ndarray, np.ndarray]:
    """(m, seats) arrays: per living agent, the complete comparisons it took part in and those in
    which its top suspect switched (the per-model switching rate of docs/report_schema.md)."""
    e = _comparisons(c)
    i0, i1 = e["i0"][e["eligible"]], e["i1"][e["eligible"]]
    live = e["alive"][i0]
    S = live.shape[1]
    slots = np.zeros((c.m, S))
    switches = np.zeros((c.m, S))
    gg = np.repeat(e["g"][i0][:, None], S, 1)
    np.add.at(slots, (gg[live], np.nonzero(live)[1]), 1.0)
    sw = live & (e["Z"][i0] != e["Z"][i1])
    np.add.at(switches, (gg[sw], np.nonzero(sw)[1]), 1.0)
    return slots, switches


def _total_variation(e: dict[str, Any]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The eligible comparisons (i0, i1), twice the total variation between their top-suspect
    distributions, and their living agents."""
    alive, Z, eligible = e["alive"], e["Z"], e["eligible"]
    i0, i1 = e["i0"][eligible], e["i1"][eligible]
    z0, z1 = Z[i0], Z[i1]
    live = alive[i0]
    tv = np.zeros(len(i0), dtype=np.int64)
    for j in range(alive.shape[1]):
        tv += np.abs(((z0 == j) & live).sum(1) - ((z1 == j) & live).sum(1))
    return i0, i1, tv, live.sum(1)


def episode_counts(c: Corpus, *, merge_gap: int = 2) -> dict[str, int]:
    """:func:`find_episodes`' counts (comparisons, complete, d_positive, windows) without building
    each candidate's record: a candidate opens a window unless the one before it is of the same
    game and round and ended at most ``merge_gap`` messages before it starts."""
    e = _comparisons(c)
    i0, i1, tv, _ = _total_variation(e)
    a, b = i0[tv > 0], i1[tv > 0]
    gid = c.games["game_id"].to_numpy().astype(str)[e["g"][a]]  # compared as the records compare them
    rnd, seq = e["round"], e["seq"].astype(np.int64)
    opens = np.ones(len(a), dtype=bool)
    opens[1:] = (gid[1:] != gid[:-1]) | (rnd[a][1:] != rnd[a][:-1]) | (seq[a][1:] - seq[b][:-1] > merge_gap)
    return {"comparisons": len(e["eligible"]), "complete": int(e["eligible"].sum()), "d_positive": len(a),
            "windows": int(opens.sum())}


def find_episodes(c: Corpus, *, merge_gap: int = 2) -> dict[str, Any]:
    e = _comparisons(c)
    st, disc, g, rnd, seq, alive, Z = e["st"], e["disc"], e["g"], e["round"], e["seq"], e["alive"], e["Z"]
    eligible = e["eligible"]
    i0, i1, tv, n = _total_variation(e)
    candidates: list[dict[str, Any]] = []
    names_of: dict[int, list[str]] = {}
    gids = c.games["game_id"].to_numpy()
    models = c.seat_array_obj("model")
    for a, b, t, nn in zip(i0[tv > 0].tolist(), i1[tv > 0].tolist(), tv[tv > 0].tolist(), n[tv > 0].tolist()):
        gg = int(g[a])
        names = names_of.get(gg) or names_of.setdefault(gg, c.seat_names(gg))
        agents = np.flatnonzero(alive[a]).tolist()
        za, zb = Z[a].tolist(), Z[b].tolist()
        D = Fraction(t, 2 * nn)
        before, after = step_label(int(rnd[a]), int(seq[a])), step_label(int(rnd[b]), int(seq[b]))
        spk = int(st["speaker"][disc[b]])
        candidates.append({
            "game_id": str(gids[gg]), "round": int(rnd[a]),
            "before": before, "after": after, "before_step": int(st["idx"][disc[a]]), "after_step": int(st["idx"][disc[b]]),
            "speaker": names[spk] if spk >= 0 else None, "D": float(D), "D_fraction": str(D),
            "K": sum(za[x] != zb[x] for x in agents),
            "switching": [names[x] for x in agents if za[x] != zb[x]],
            "switching_models": [str(models[gg, x]) for x in agents if za[x] != zb[x]],
            "top_before": {names[x]: names[za[x]] for x in agents},
            "top_after": {names[x]: names[zb[x]] for x in agents},
            "links": {"before": before, "after": after},
            "_seq": (int(seq[a]), int(seq[b])),
        })
    pairs_total = len(eligible)
    complete = int(eligible.sum())
    windows: list[dict[str, Any]] = []
    for cand in candidates:
        w = windows[-1] if windows else None
        if w and w["game_id"] == cand["game_id"] and w["round"] == cand["round"] and cand["_seq"][0] - w["_end"] <= merge_gap:
            w["candidates"].append(cand["after"])
            w["end"], w["_end"] = cand["after"], cand["_seq"][1]
            w["max_D"] = max(w["max_D"], cand["D"])
        else:
            windows.append({"game_id": cand["game_id"], "round": cand["round"], "start": cand["before"],
                            "end": cand["after"], "_end": cand["_seq"][1], "candidates": [cand["after"]], "max_D": cand["D"]})
    for x in candidates:
        x.pop("_seq")
    for w in windows:
        w.pop("_end")
    return {
        "comparisons": pairs_total,
        "complete": complete,
        "d_positive": len(candidates),
        "candidates": candidates,
        "windows": windows,
        "merge_gap": merge_gap,
    }
