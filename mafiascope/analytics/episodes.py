"""Collective suspicion-shift episode selector (new in mafiascope; not in the original).

Definition (metrics.md section 12 leaves it to us):

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

from .corpus import Corpus
from .frames import items_with_probe
from .viewer import build_step_model


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


def find_episodes(c: Corpus, *, merge_gap: int = 2) -> dict[str, Any]:
    sr = items_with_probe(c, "sr", "suspicion_ranking")
    sr = sr[(sr["tgt"] >= 0) & ~np.isnan(sr["score"].to_numpy())]
    phase = c.probes["phase"].to_numpy()
    candidates: list[dict[str, Any]] = []
    complete = 0
    pairs_total = 0
    for g in range(c.m):
        model = build_step_model(c, g)
        names = model.names
        sub = sr[sr["g"] == g]
        disc_pi = c.probes.index[(c.probes["g"] == g).to_numpy() & (phase == "day_discuss")]
        disc_keys = set(zip(c.probes.loc[disc_pi, "round"], c.probes.loc[disc_pi, "pms"]))
        scores: dict[tuple[int, int], dict[int, dict[int, float]]] = {}
        for (r, s, a), grp in sub.groupby(["round", "pms", "seat"]):
            d: dict[int, float] = {}
            for t, v in zip(grp["tgt"], grp["score"]):
                d[int(t)] = max(d.get(int(t), -np.inf), float(v))
            scores.setdefault((int(r), int(s)), {})[int(a)] = d
        steps = [st for st in model.steps if (st.round, st.seq) in disc_keys]
        for st0, st1 in zip(steps, steps[1:]):
            if st0.round != st1.round:
                continue
            pairs_total += 1
            if st0.alive != st1.alive:
                continue
            alive = {names.index(n) for n in st0.alive}
            z = []
            for st in (st0, st1):
                sc = scores.get((st.round, st.seq), {})
                z.append({a: top_suspects(sc.get(a, {}), alive, a) for a in sorted(alive)})
            if any(v is None for zz in z for v in zz.values()):
                continue
            complete += 1
            D, K, sw = shift(z[0], z[1])
            if D > 0:
                candidates.append({
                    "game_id": model.game_id, "round": st0.round,
                    "before": st0.label, "after": st1.label, "before_step": st0.idx, "after_step": st1.idx,
                    "speaker": st1.speaker, "D": float(D), "D_fraction": str(D), "K": K,
                    "switching": [names[a] for a in sw],
                    "top_before": {names[a]: names[t] for a, t in z[0].items()},
                    "top_after": {names[a]: names[t] for a, t in z[1].items()},
                    "links": {"before": st0.label, "after": st1.label},
                    "_seq": (st0.seq, st1.seq),
                })
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
