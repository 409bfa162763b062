"""F5 probe accounting (docs/metrics.md §10), outcomes (win rates with Wilson
intervals, game length), personality attribution error and plan-action consistency."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .corpus import Corpus
from .frames import items_with_probe
from .load import K_NONE, TRAITS
from .modes import Mode
from .stats import round_or_none, wilson


def parse_accounting(c: Corpus, mode: Mode) -> dict[str, Any]:
    p = c.probes
    raw_ok = (p["stored_kind"].to_numpy() != K_NONE)
    rep_ok = (p["eff_kind"].to_numpy() != K_NONE)
    by_raw, by_rep = {}, {}
    for pid, sub in p.groupby("probe_id", sort=False):
        by_raw[pid] = [int((sub["stored_kind"] != K_NONE).sum()), len(sub)]
        by_rep[pid] = [int((sub["eff_kind"] != K_NONE).sum()), len(sub)]
    tok = p["tokens_prompt"].to_numpy() + p["tokens_completion"].to_numpy()
    return {
        "calls": int(len(p)),
        "parsed": int(rep_ok.sum()),
        "parsed_raw": int(raw_ok.sum()),
        "parsed_repaired": int(rep_ok.sum()),
        "repair_recovered": int((rep_ok & ~raw_ok).sum()),
        "repaired_at_record_time": int(p["repaired"].to_numpy().sum()),
        "transport_errors": int((~rep_ok & p["transport"].to_numpy()).sum()),
        "parse_rate": round_or_none(rep_ok.mean() if len(p) else None),
        "repair_rate": round_or_none((rep_ok & ~raw_ok).sum() / max(1, (~raw_ok).sum())),
        "by_probe_raw": by_raw,
        "by_probe_repaired": by_rep,
        "calls_per_game": round_or_none(len(p) / c.m if c.m else None),
        "tokens_logged": int(np.nansum(tok)) if np.isfinite(tok).any() else None,
    }


def probe_cost(c: Corpus) -> dict[str, Any]:
    p = c.probes
    calls = int(c.games["game_calls"].sum())
    n = len(p)
    chars = p["q_chars"].sum() + p["a_chars"].sum()
    return {
        "n_games": c.m,
        "n_probes": n,
        "probes_per_game": round_or_none(n / c.m if c.m else None),
        "game_llm_calls": calls,
        "game_llm_calls_per_game": round_or_none(calls / c.m if c.m else None),
        "call_multiplier": round_or_none((n + calls) / calls if calls else None),
        "mean_latency_ms": round_or_none(np.nanmean(p["latency_ms"].to_numpy()) if n and p["latency_ms"].notna().any() else None),
        "prompt_chars_per_probe": round_or_none(p["q_chars"].mean() if n else None),
        "answer_chars_per_probe": round_or_none(p["a_chars"].mean() if n else None),
        "est_tokens_per_probe": round_or_none(chars / n / 3 if n else None),
        "tokens_note": "estimate = characters / 3",
    }


def outcomes(c: Corpus) -> dict[str, Any]:
    g = c.games
    done = g[g["completed"].astype(bool)]
    n = len(done)
    mw = int((done["winner"] == "Mafia").sum())
    tw = int((done["winner"] == "Villagers").sum())
    return {
        "games": int(len(g)),
        "completed": n,
        "mafia_wins": mw,
        "town_wins": tw,
        "draws": int(n - mw - tw),
        "mafia_win_rate": round_or_none(mw / n if n else None),
        "mafia_win_rate_wilson95": [round_or_none(x) for x in wilson(mw, n)],
        "town_win_rate": round_or_none(tw / n if n else None),
        "town_win_rate_wilson95": [round_or_none(x) for x in wilson(tw, n)],
        "game_length_rounds": {
            "mean": round_or_none(done["last_round"].mean() if n else None),
            "min": int(done["last_round"].min()) if n else None,
            "max": int(done["last_round"].max()) if n else None,
        },
    }


def personality_error(c: Corpus) -> dict[str, Any]:
    """MAE of personality_profile estimates vs the target's generating Big-Five vector,
    per trait and by round, against a constant-50 baseline."""
    it = items_with_probe(c, "pp", "personality_profile")
    it = it[(it["tgt"] >= 0) & (it["tgt"] != it["seat"])]
    if not len(it):
        return {"n": 0}
    g, t = it["g"].to_numpy(), it["tgt"].to_numpy()
    out: dict[str, Any] = {"n": int(len(it)), "mae": {}, "baseline50_mae": {}, "by_round": {}}
    errs = {}
    for k in TRAITS:
        truth = c.seat_array(k)[g, t]
        est = it[k].to_numpy()
        ok = ~np.isnan(truth) & ~np.isnan(est)
        errs[k] = (np.where(ok, np.abs(est - truth), np.nan), np.where(ok, np.abs(50 - truth), np.nan))
        out["mae"][k] = round_or_none(np.nanmean(errs[k][0]) if ok.any() else None)
        out["baseline50_mae"][k] = round_or_none(np.nanmean(errs[k][1]) if ok.any() else None)
    rnd = it["round"].to_numpy()
    for r in sorted(set(rnd.tolist())):
        sel = rnd == r
        out["by_round"][str(r)] = {
            "mae": round_or_none(np.nanmean(np.concatenate([errs[k][0][sel] for k in TRAITS]))),
            "baseline50_mae": round_or_none(np.nanmean(np.concatenate([errs[k][1][sel] for k in TRAITS]))),
        }
    return out


ACTION_KIND = {"vote": "day_vote", "kill": "night_mafia", "protect": "night_doctor", "save": "night_doctor",
               "check": "night_sheriff", "investigate": "night_sheriff"}


def plan_action_consistency(c: Corpus) -> dict[str, Any]:
    """planned_action target vs the target of the seat's next action of that kind in the same round.

    Needs actions with a logged target (our logs, or imported original logs whose vote
    replies were re-parsed); original night actions carry no target and are not scored.
    """
    pa = items_with_probe(c, "pa")
    ev = c.events
    if not len(pa) or "target" not in ev:
        return {"n": 0, "k": 0, "rate": None}
    kind = pa["action"].astype(str).str.strip().str.lower().map(ACTION_KIND)
    plans = pd.DataFrame({"o": np.arange(len(pa)), "g": pa["g"].to_numpy(), "player": pa["seat"].to_numpy(),
                          "kind": kind.to_numpy(dtype=object), "round": pa["round"].to_numpy(),
                          "t_plan": pa["timestamp"].to_numpy(), "tgt": pa["tgt"].to_numpy()})
    plans = plans[kind.notna().to_numpy() & (plans["tgt"].to_numpy() >= 0)]
    acts = ev[ev["target"].to_numpy() >= 0]
    acts = pd.DataFrame({"a": np.arange(len(acts)), "g": acts["g"].to_numpy(), "player": acts["player"].to_numpy(),
                         "kind": acts["kind"].to_numpy(dtype=object), "round": acts["round"].to_numpy(),
                         "ts": acts["ts"].to_numpy(), "target": acts["target"].to_numpy()})
    # each plan against the seat's first later action of that kind in the same round (log order)
    j = plans.merge(acts, on=["g", "player", "kind", "round"])
    j = j[j["ts"].to_numpy() > j["t_plan"].to_numpy()].sort_values(["o", "a"]).drop_duplicates("o")
    hit = (j["target"].to_numpy() == j["tgt"].to_numpy()).astype(int)
    by: dict[str, list[int]] = {}
    for kd, h in zip(j["kind"].tolist(), hit.tolist()):
        e = by.setdefault(kd, [0, 0])
        e[0] += h
        e[1] += 1
    k, n = int(hit.sum()), len(j)
    return {"n": n, "k": k, "rate": round_or_none(k / n if n else None), "by_action": by}
