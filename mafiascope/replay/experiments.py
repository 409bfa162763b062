"""Replay experiments built on forks: pivotal-utterance attribution (here) and utterance
bifurcation (bifurcation.py).

Both write one JSON file ``<logs>/experiments/<experiment_id>.json`` (read by the app's
Replay page) and log every continuation as an ordinary branch game whose setup carries
``experiment`` (the id), so the branch tree shows them.

Attribution: for each utterance R.S, the PRE arm forks at the snapshot just before it (the
speaker says it anew, drawn with the replica's seed) and the POST arm forks right after it
(the utterance is fixed); N rerolls each. Per arm: P(target eliminated in round R),
P(Mafia wins), the vote-time suspicion of chosen players (mean normalised rank over
``suspicion_ranking`` answers of round R's vote phase: 1 = most suspected, the answering
seat never ranks itself), and POST minus PRE with Fisher exact tests and Newcombe intervals.
"""

from __future__ import annotations

import math
import secrets
import time
from collections import Counter
from pathlib import Path
from typing import Any

from ..analytics.pvalues import holm, holm_family, round_p
from ..analytics.stats import wilson
from ..logs.io import iter_probe_records
from .forks import SUSPICION_PROBE, experiments_dir, plan_fork, run_fork_batch, write_json_atomic
from .source import Key, ParentGame, ReplayError, fmt_key, parse_key
from .summary import game_outcome, proportion

NO_TARGET = "(no valid vote)"


# ----------------------------------------------------------------------------- statistics


def fisher_exact(k1: int, n1: int, k2: int, n2: int) -> float | None:
    """Two-sided Fisher exact p for k1/n1 vs k2/n2 (None when an arm is empty)."""
    if n1 == 0 or n2 == 0:
        return None
    from scipy.stats import fisher_exact as fe

    return float(fe([[k1, n1 - k1], [k2, n2 - k2]], alternative="two-sided")[1])


def adjust_family(tests: list[tuple[str, dict[str, Any], str]], text: str) -> dict[str, Any]:
    """Holm over an experiment's tests, each ``(name, entry, key)``: ``entry[key]`` is its raw p. Sets
    ``entry[key + "_holm"]``, rounds both to 3 significant figures (never 0: mafiascope.analytics.pvalues) and
    returns the family (``size``, ``tests``, ``text``) the front ends print beside the adjusted p."""
    named = [(name, entry, key) for name, entry, key in tests if entry.get(key) is not None]
    for (_, entry, key), adj in zip(named, holm([entry[key] for _, entry, key in named]), strict=True):
        entry[key], entry[key + "_holm"] = round_p(entry[key]), round_p(adj)
    for _, entry, key in tests:
        entry.setdefault(key + "_holm", None)
    return holm_family(text.format(n=len(named)), [name for name, _, _ in named])


def newcombe(k1: int, n1: int, k2: int, n2: int) -> list[float] | None:
    """95% interval of p1 - p2 from the two Wilson intervals (Newcombe's hybrid score method)."""
    if n1 == 0 or n2 == 0:
        return None
    p1, p2 = k1 / n1, k2 / n2
    l1, u1 = wilson(k1, n1)
    l2, u2 = wilson(k2, n2)
    d = p1 - p2
    lo = d - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2)
    hi = d + math.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2)
    return [round(max(-1.0, lo), 4), round(min(1.0, hi), 4)]


def contrast(post: dict[str, int], pre: dict[str, int]) -> dict[str, Any]:
    k1, n1, k2, n2 = post["k"], post["n"], pre["k"], pre["n"]
    return {"post": proportion(k1, n1), "pre": proportion(k2, n2),
            "diff": round(k1 / n1 - k2 / n2, 4) if n1 and n2 else None,
            "ci95": newcombe(k1, n1, k2, n2), "fisher_p": fisher_exact(k1, n1, k2, n2)}  # fmt: skip


# ----------------------------------------------------------------------------- suspicion


def suspicion_ranks(ranking: Any, rater: str) -> dict[str, float]:
    """Normalised rank per ranked player (1 = most suspected, 0 = least), the rater excluded."""
    items = []
    for x in ranking if isinstance(ranking, list) else []:
        if isinstance(x, dict) and x.get("player") and x.get("player") != rater:
            try:
                items.append((str(x["player"]), float(x.get("score") if x.get("score") is not None else 0)))
            except (TypeError, ValueError):
                continue
    if not items:
        return {}
    items.sort(key=lambda t: -t[1])
    m = len(items)
    return {name: (1.0 if m == 1 else 1 - i / (m - 1)) for i, (name, _) in enumerate(items)}


def vote_time_suspicion(game_dir: str | Path, rnd: int, players: list[str]) -> dict[str, float | None]:
    """Mean normalised rank of each of ``players`` over round ``rnd``'s vote-phase suspicion rankings."""
    acc: dict[str, list[float]] = {p: [] for p in players}
    for r in iter_probe_records(game_dir, skip_corrupt=False):
        if r.get("probe_id") != SUSPICION_PROBE or r.get("round") != rnd or r.get("phase") != "day_vote":
            continue
        ranks = suspicion_ranks(r.get("answer_parsed"), str(r.get("player_name")))
        for p in players:
            if p in ranks:
                acc[p].append(ranks[p])
    return {p: (round(sum(v) / len(v), 4) if v else None) for p, v in acc.items()}


# ----------------------------------------------------------------------------- attribution


def remaining_calls(parent: ParentGame, key: Key, probes: str) -> dict[str, int]:
    """Calls one continuation from ``key`` costs, estimated from the parent's own continuation."""
    keys = parent.keys()
    after = set(keys[keys.index(key) + 1 :]) if key in keys else set(keys)
    acts = sum(1 for e in parent.records if e.get("player") and (e.get("round"), e.get("msg_seq")) in after)
    acts += sum(1 for e in parent.records if e.get("player") and e.get("round", 0) > max((k[0] for k in keys), default=0))
    probe_calls = 0
    if probes != "none":
        for r in parent.probe_records():
            k = (r.get("round"), r.get("public_msg_seq"))
            if k in after or (r.get("round") or 0) > max((kk[0] for kk in keys), default=0):
                if probes == "full" or r.get("probe_id") == SUSPICION_PROBE:
                    probe_calls += 1
    return {"act": acts, "probe": probe_calls}


def _replica_metrics(game_path: str, rnd: int, target: str | None, watch: list[str]) -> dict[str, Any]:
    o = game_outcome(game_path)
    return {
        "game_id": o["game_id"], "winner": o["winner"], "rounds": o["rounds"], "finished": o["finished"],
        "eliminated": o["day_eliminated"].get(str(rnd)), "votes": o["votes"].get(str(rnd)),
        "target_eliminated": (o["day_eliminated"].get(str(rnd)) == target) if target else None,
        "suspicion": vote_time_suspicion(game_path, rnd, watch),
    }  # fmt: skip


def mean_diff_ci(post: list[dict[str, Any]], pre: list[dict[str, Any]], player: str, *, boot: int = 2000,
                 seed: int = 0) -> list[float] | None:
    """95% percentile interval of mean(POST) - mean(PRE) of one player's vote-time suspicion,
    resampling the finished replicas of each arm (replicas are independent games)."""
    import numpy as np

    def vals(reps: list[dict[str, Any]]) -> np.ndarray:
        return np.array([r["suspicion"][player] for r in reps if r.get("finished") and (r.get("suspicion") or {}).get(player) is not None])

    a, b = vals(post), vals(pre)
    if len(a) < 2 or len(b) < 2:
        return None
    rng = np.random.default_rng(seed)
    d = a[rng.integers(0, len(a), (boot, len(a)))].mean(1) - b[rng.integers(0, len(b), (boot, len(b)))].mean(1)
    lo, hi = np.percentile(d, [2.5, 97.5])
    return [round(float(lo), 4), round(float(hi), 4)]


def _aggregate(reps: list[dict[str, Any]], target: str | None, watch: list[str]) -> dict[str, Any]:
    done = [r for r in reps if r.get("finished")]
    n = len(done)
    elim = Counter(r["eliminated"] or "(none)" for r in done)
    susp = {}
    for p in watch:
        vals = [r["suspicion"][p] for r in done if r["suspicion"].get(p) is not None]
        susp[p] = round(sum(vals) / len(vals), 4) if vals else None
    return {
        "n": n, "elim_dist": dict(elim.most_common()),
        "mafia_win": {"k": sum(1 for r in done if r["winner"] == "Mafia"), "n": n},
        "target_eliminated": {"k": sum(1 for r in done if r["target_eliminated"]), "n": n} if target else None,
        "mean_rounds": round(sum(r["rounds"] for r in done) / n, 3) if n else None, "mean_suspicion": susp,
    }  # fmt: skip


def plan_attribution(game: str | Path, utterances: list[str], n: int, *, target: str | None = None, probes: str = "suspicion",
                     logs: str | Path | None = None, parallel: int = 1, batch_seed: int | None = None,
                     watch: list[str] | None = None) -> dict[str, Any]:  # fmt: skip
    """Validate an attribution request; returns the plans and a cost estimate (no work done)."""
    parent = ParentGame.load(game, logs)
    if not utterances:
        raise ReplayError("--utterances: give at least one step, e.g. 1.7,1.8")
    names = [p.get("name") for p in parent.setup.get("players") or []]
    if target and target not in names:
        raise ReplayError(f"--target {target}: no seat of that name (seats: {', '.join(names)})")
    exp_id = "attr-" + secrets.token_hex(4)
    items = []
    seed = batch_seed if batch_seed is not None else secrets.randbits(31)
    for text in utterances:
        key = parse_key(text)
        ev = parent.utterance(key)
        if ev is None:
            raise ReplayError(f"game {parent.game_id}: no utterance at step {fmt_key(key)}")
        pre_key = parent.previous_key(key)
        if pre_key is None:
            raise ReplayError(f"game {parent.game_id}: no snapshot before {fmt_key(key)} (PRE arm impossible)")
        extra = {"experiment": exp_id, "utterance": list(key)}
        pre = plan_fork(parent, pre_key, n, logs=logs, probes=probes, parallel=parallel, batch_seed=seed,
                        setup_extra={**extra, "arm": "pre"})  # fmt: skip
        post = plan_fork(parent, key, n, logs=logs, probes=probes, parallel=parallel, batch_seed=seed,
                         setup_extra={**extra, "arm": "post"})  # fmt: skip
        items.append({"key": key, "event": ev, "pre": pre, "post": post})
    per = [(remaining_calls(parent, i["pre"].base_key, probes), remaining_calls(parent, key, probes)) for i in items]
    est = {"act": sum(n * (a["act"] + b["act"]) for a, b in per), "probe": sum(n * (a["probe"] + b["probe"]) for a, b in per)}
    est["forks"] = 2 * n * len(items)
    watch_list = list(watch or ([target] if target else []))
    for i in items:
        sp = i["event"].get("player")
        if sp and sp not in watch_list:
            watch_list.append(sp)
    return {"id": exp_id, "parent": parent, "items": items, "n": n, "target": target, "probes": probes, "estimate": est,
            "watch": watch_list, "batch_seed": seed}  # fmt: skip


async def run_attribution(spec: dict[str, Any], on_result: Any = None) -> dict[str, Any]:
    parent: ParentGame = spec["parent"]
    target, watch = spec["target"], spec["watch"]
    out_items = []
    logs_dir = spec["items"][0]["post"].logs_dir
    for it in spec["items"]:
        rnd = it["key"][0]
        arms = {}
        for arm in ("pre", "post"):
            rec = await run_fork_batch(it[arm], on_result=on_result)
            reps = [_replica_metrics(b["path"], rnd, target, watch) | {"error": b["error"]} if not b["error"]
                    else {"game_id": b["game_id"], "error": b["error"], "finished": False} for b in rec["branches"]]  # fmt: skip
            arms[arm] = {"fork_batch_id": rec["fork_batch_id"], "fork_point": rec["fork_point"], "replicas": reps,
                         "aggregate": _aggregate(reps, target, watch)}  # fmt: skip
        a, b = arms["post"]["aggregate"], arms["pre"]["aggregate"]
        delta: dict[str, Any] = {"p_mafia_win": contrast(a["mafia_win"], b["mafia_win"])}
        if target:
            delta["p_eliminate_target"] = contrast(a["target_eliminated"], b["target_eliminated"])
        delta["suspicion"] = {p: (round(a["mean_suspicion"][p] - b["mean_suspicion"][p], 4)
                                  if a["mean_suspicion"].get(p) is not None and b["mean_suspicion"].get(p) is not None else None)
                              for p in watch}  # fmt: skip
        delta["suspicion_ci95"] = {p: mean_diff_ci(arms["post"]["replicas"], arms["pre"]["replicas"], p,
                                                   seed=spec["batch_seed"]) for p in watch}
        delta["mean_rounds"] = round(a["mean_rounds"] - b["mean_rounds"], 3) if a["mean_rounds"] is not None and b["mean_rounds"] is not None else None
        ev = it["event"]
        out_items.append({"utterance": {"step": fmt_key(it["key"]), "round": it["key"][0], "msg_seq": it["key"][1], "kind": ev.get("kind"),
                                        "speaker": ev.get("player"), "text": ev.get("response")},
                          "pre": arms["pre"], "post": arms["post"], "delta_post_minus_pre": delta})  # fmt: skip
    factual = game_outcome(parent.dir)
    tests = [(f"{u['utterance']['step']} {what}", u["delta_post_minus_pre"][key], "fisher_p") for u in out_items
             for key, what in (("p_mafia_win", "P(Mafia wins)"), ("p_eliminate_target", f"P({target} out)"))
             if key in u["delta_post_minus_pre"]]  # fmt: skip
    family = adjust_family(tests, "Holm over the experiment's {n} Fisher tests (P(Mafia wins), and the target's "
                                  "elimination when named, for every message)")  # fmt: skip
    result = {
        "kind": "attribution", "experiment_id": spec["id"], "parent_game_id": parent.game_id, "parent_dir": str(parent.dir.resolve()),
        "created": time.time(), "n_per_arm": spec["n"], "target": target, "probes": spec["probes"], "watch": watch,
        "batch_seed": spec["batch_seed"], "estimate": spec["estimate"],
        "factual": {"winner": factual["winner"], "rounds": factual["rounds"], "day_eliminated": factual["day_eliminated"]},
        "utterances": out_items, "p_holm_family": family,
        "notes": f"POST minus PRE; Fisher exact two-sided, Holm-adjusted over the experiment's {family['size']} tests; "
                 "Newcombe 95% intervals.",
    }  # fmt: skip
    write_json_atomic(experiments_dir(logs_dir) / f"{spec['id']}.json", result, root=logs_dir)
    result["path"] = str(experiments_dir(logs_dir) / f"{spec['id']}.json")
    return result

