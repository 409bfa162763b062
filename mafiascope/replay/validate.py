"""Instrument validation: does probing change the game (A/B), and do probes answer the same twice (repeat)?

``ab``: pairs of games on the same set-up (same config, game i of both arms has the same
seed, so the same table), one probed and one unprobed, run in a randomised interleaved
order. Reports Mafia wins per arm with Fisher's exact test and a Newcombe 95% interval of
the difference, and rounds and message counts per arm with Mann-Whitney U tests. With
offline bots the arms must agree exactly (probe calls draw from their own seed stream), so
``ab`` with bots is also a regression test of non-invasiveness.

``repeat``: at K saved states of recorded probed games, re-asks the probe battery R times
(each repeat draws with its own seed) and reports how often two answers to the same
question disagree, per probe and per phase. Two answers disagree when their headline
differs: the top suspect for ``suspicion_ranking``, the predicted action and target for
``planned_action``, else the whole parsed answer (an unparsed answer is its own value).
"""

from __future__ import annotations

import itertools
import json
import random
import shutil
import statistics
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from ..analytics.modes import Mode
from ..analytics.intervals import cluster_ci
from ..analytics.stats import ratio_stat
from ..config import GameConfig
from ..engine.phases.base import ProbeStep
from ..engine.state import GameState
from ..logs import kinds
from ..logs.io import iter_probe_records, list_game_dirs
from ..logs.schema import validate_game_id
from .experiments import adjust_family, fisher_exact, newcombe
from .source import ParentGame, ReplayError, fmt_key
from .summary import game_outcome, proportion

AB_DIR = ".ab"  # <logs>/.ab/<id prefix>/: the study ledger of a validate ab run (a re-run resumes it)


def mann_whitney(a: list[float], b: list[float]) -> float | None:
    if not a or not b:
        return None
    if len(set(a) | set(b)) == 1:
        return 1.0
    from scipy.stats import mannwhitneyu

    return float(mannwhitneyu(a, b, alternative="two-sided").pvalue)


def _describe(xs: list[float]) -> dict[str, Any]:
    return {"n": len(xs), "mean": round(statistics.fmean(xs), 3) if xs else None, "median": statistics.median(xs) if xs else None}


async def run_ab(cfg: GameConfig, games: int, *, logs: str | Path, seed_base: int = 0, parallel: int = 4, order_seed: int = 0,
                 on_result: Any = None, id_prefix: str = "ab") -> dict[str, Any]:  # fmt: skip
    """``id_prefix``: games are ``<prefix>-probed-NNNN``; a distinct prefix per run keeps game ids unique in a corpus.

    The 2 x ``games`` games are a two-arm study on the one runner, its ledger in
    ``<logs>/.ab/<prefix>/``: running the same command again resumes it (a killed run's games are
    replayed, finished ones kept) and reports every game. Invalid games (over the fault budget)
    are listed under ``invalid`` per arm and left out of every figure."""
    if not 1 <= games <= 10000:
        raise ReplayError("--games must be between 1 and 10000")
    try:
        validate_game_id(f"{id_prefix}-unprobed-0000")
    except ValueError as exc:
        raise ReplayError(f"--id-prefix {id_prefix!r}: {exc}") from None
    from ..play.runner import Job, RunnerError, config_fingerprint, run_games_async, spec_hash

    pairs_order = [(arm, i) for i in range(games) for arm in ("probed", "unprobed")]
    random.Random(order_seed).shuffle(pairs_order)  # randomised, interleaved
    logs = Path(logs)
    jobs = [Job(f"{id_prefix}-{arm}-{i:04d}", seed_base + i, arm, i, logs_dir=logs / arm, fields={"pair": i, "order": pos})
            for pos, (arm, i) in enumerate(pairs_order)]  # fmt: skip
    cfgs = {}
    for arm in ("probed", "unprobed"):
        cfgs[arm] = cfg.model_copy(deep=True)
        cfgs[arm].probes.enabled = arm == "probed"
    fp = {"kind": "validate_ab", "config": config_fingerprint(cfg), "games": games, "seed_base": seed_base, "order_seed": order_seed,
          "prefix": id_prefix}  # fmt: skip
    header = {"name": f"validate-ab-{id_prefix}", "spec_hash": spec_hash(fp), "games": len(jobs), "front_end": "validate_ab"}

    def settled(job: Job, state: str, res: Any, spend: float) -> None:
        if on_result and state in ("finished", "invalid"):
            try:
                on_result(job.arm, game_outcome(Path(job.logs_dir or logs) / job.game_id))
            except Exception:  # progress only: the outcome is read again below
                pass

    t0 = time.time()
    try:  # the one study runner (batch, arena run, study run, fork batches use it too); its ledger: <logs>/.ab/<prefix>/
        outcome = await run_games_async(logs / AB_DIR / id_prefix, header, jobs, lambda job: cfgs[job.arm], games_dir=logs,
                                        parallel=max(1, parallel), on_settle=settled)  # fmt: skip
    except RunnerError as exc:
        raise ReplayError(f"--logs {logs}: {exc}") from None
    results: dict[str, list[dict[str, Any]]] = {"probed": [], "unprobed": []}
    invalid: dict[str, list[str]] = {"probed": [], "unprobed": []}
    errors = []
    for row in outcome.rows.values():
        arm, st = row["arm"], row.get("state")
        if st == "invalid":  # over the fault budget: counted, left out of every figure below
            invalid[arm].append(row["game_id"])
            continue
        try:
            if st == "failed":
                raise RuntimeError(row.get("error"))
            if st != "finished":
                continue
            o = game_outcome(logs / arm / row["game_id"])
            results[arm].append({"pair": row["pair"], "order": row["order"], "game_id": row["game_id"], "winner": o["winner"],
                                 "rounds": o["rounds"], "messages": o["messages"]})  # fmt: skip
        except Exception as exc:
            errors.append({"arm": arm, "pair": row["pair"], "error": str(exc) if st == "failed" else f"{type(exc).__name__}: {exc}"})
    P, U = (sorted(results[a], key=lambda r: r["pair"]) for a in ("probed", "unprobed"))
    kp, ku = sum(r["winner"] == "Mafia" for r in P), sum(r["winner"] == "Mafia" for r in U)
    pairs = {r["pair"]: r for r in U}
    same = sum(1 for r in P if r["pair"] in pairs and (r["winner"], r["rounds"]) == (pairs[r["pair"]]["winner"], pairs[r["pair"]]["rounds"]))
    res = {
        "kind": "validate_ab", "games_per_arm": games, "seed_base": seed_base, "order_seed": order_seed, "logs": str(logs),
        "wall_s": round(time.time() - t0, 2),
        "mafia_wins": {"probed": proportion(kp, len(P)), "unprobed": proportion(ku, len(U)),
                       "diff": round(kp / len(P) - ku / len(U), 4) if P and U else None,
                       "ci95": newcombe(kp, len(P), ku, len(U)), "fisher_p": fisher_exact(kp, len(P), ku, len(U))},
        "rounds": {"probed": _describe([r["rounds"] for r in P]), "unprobed": _describe([r["rounds"] for r in U]),
                   "mann_whitney_p": mann_whitney([r["rounds"] for r in P], [r["rounds"] for r in U])},
        "messages": {"probed": _describe([r["messages"] for r in P]), "unprobed": _describe([r["messages"] for r in U]),
                     "mann_whitney_p": mann_whitney([r["messages"] for r in P], [r["messages"] for r in U])},
        "identical_pairs": same, "errors": errors, "games": {"probed": P, "unprobed": U},
        "invalid": {arm: sorted(ids) for arm, ids in invalid.items()},
    }  # fmt: skip
    res["p_holm_family"] = adjust_family([("Mafia wins (Fisher)", res["mafia_wins"], "fisher_p"),
                                          ("rounds (Mann-Whitney)", res["rounds"], "mann_whitney_p"),
                                          ("messages (Mann-Whitney)", res["messages"], "mann_whitney_p")],
                                         "Holm over the A/B test's {n} tests (Mafia wins, rounds, messages)")  # fmt: skip
    return res


# ----------------------------------------------------------------------------- repeatability


UNPARSED = "\0unparsed:"  # headline of an answer that did not parse (no parsed headline starts with NUL)
REPEAT_BOOT = 2000  # state-level bootstrap resamples of the disagreement intervals


def headline(probe_id: str, rec: dict[str, Any]) -> str:
    v = rec.get("answer_parsed")
    if not rec.get("answer_parse_ok") or v is None:
        return UNPARSED + str(rec.get("answer_raw"))[:200]
    if probe_id == "suspicion_ranking" and isinstance(v, list):
        items = [x for x in v if isinstance(x, dict) and x.get("player")]
        if items:
            return str(max(items, key=lambda x: float(x.get("score") or 0))["player"])
    if probe_id == "planned_action" and isinstance(v, dict):
        return f"{v.get('action')}:{v.get('target')}"
    return json.dumps(v, sort_keys=True, ensure_ascii=False)


def pick_states(logs: Path, k: int, seed: int) -> list[tuple[ParentGame, dict[str, Any], list[str]]]:
    """``k`` saved steps (at random, ``seed``) of the games under ``logs`` where seats were probed: (game, snapshot,
    the probed seats); ReplayError when there is none."""
    pool = []
    for d in list_game_dirs(logs):
        try:
            g = ParentGame(d)
        except ReplayError:
            continue
        by_key: dict[tuple[int, int], list[str]] = defaultdict(list)
        for r in g.probe_records():
            if not r.get("inherited"):
                by_key[(r.get("round"), r.get("public_msg_seq"))].append(str(r.get("player_name")))
        for s in g.snapshots:
            key = (int(s["round"]), int(s["msg_seq"]))
            if key in by_key and not s.get("inherited"):
                pool.append((g, s, sorted(set(by_key[key]))))
    if not pool:
        raise ReplayError(f"{logs}: no probed game with snapshots found")
    rng = random.Random(seed)
    return rng.sample(pool, min(k, len(pool)))


async def run_repeat(logs: str | Path, states: int, repeats: int, *, seed: int = 0, on_state: Any = None,
                     preflight: bool = True) -> dict[str, Any]:  # fmt: skip
    from ..backends.preflight import require
    from ..backends.registry import build_backends
    from ..probes import build_probe_hook

    if not 1 <= states <= 1000:
        raise ReplayError("--states must be between 1 and 1000")
    if not 2 <= repeats <= 100:
        raise ReplayError("--repeats must be between 2 and 100")
    chosen = pick_states(Path(logs), states, seed)
    if preflight:
        await require([g.config() for g, _, _ in chosen])
    tmp = Path(tempfile.mkdtemp(prefix="mafiascope-repeat-"))
    points = []
    per_state: list[dict[tuple[str, str], list[int]]] = []  # per state: (bucket, name) -> [disagreements, pairs, unparsed]
    try:
        for si, (g, snap, seats) in enumerate(chosen):
            cfg = g.config()
            cfg.probes.enabled = True
            backends = build_backends(cfg.backends)
            base = GameState.model_validate(snap["state"])
            key = (int(snap["round"]), int(snap["msg_seq"]))
            ev = g.utterance(key)
            answers: dict[tuple[str, str], list[str]] = defaultdict(list)
            for r in range(repeats):
                st = base.clone()
                st.seed = base.derive_seed("repeat", seed, r)
                out = tmp / f"{si}-{r}"
                hook, _ = build_probe_hook(cfg, state=st, out_dir=out, backends=backends)
                if hook is None:
                    raise ReplayError(f"game {g.game_id}: probes are off in its configuration")
                if snap.get("probe_memory") and hasattr(hook, "restore"):
                    hook.restore(snap["probe_memory"])
                step = ProbeStep(key[0], key[1], str(snap.get("phase")), seats,
                                 speaker=ev.get("player") if ev and kinds.of(ev) in kinds.UTTERANCE_KINDS else None,
                                 step_index=int(snap.get("step_index") or 0))  # fmt: skip
                fut = hook.on_step(st, step)
                if fut is not None:
                    await fut
                await hook.drain()
                for rec in iter_probe_records(out, skip_corrupt=False):
                    answers[(str(rec.get("player_name")), str(rec.get("probe_id")))].append(headline(str(rec.get("probe_id")), rec))
            phase = str(snap.get("phase"))
            here: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0, 0])
            for (_, pid), hs in answers.items():
                for a, b in itertools.combinations(hs, 2):
                    unparsed = a.startswith(UNPARSED) or b.startswith(UNPARSED)  # not an (dis)agreement: counted apart
                    for cell in (here[("probe", pid)], here[("phase", phase)], here[("all", "")]):
                        cell[2 if unparsed else 1] += 1
                        cell[0] += int(not unparsed and a != b)
            per_state.append(here)
            tot = here[("all", "")]
            points.append({"game_id": g.game_id, "step": fmt_key(key), "phase": phase, "seats": len(seats),
                           "pairs": tot[1], "disagreements": tot[0], "unparsed_pairs": tot[2]})  # fmt: skip
            if on_state:
                on_state(points[-1])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    def entry(bucket: str, name: str) -> dict[str, Any]:
        rows = np.array([st.get((bucket, name), [0, 0, 0]) for st in per_state], dtype=float).reshape(-1, 3)
        d, n, u = (int(x) for x in rows.sum(0))
        ci = cluster_ci(rows[:, :2], ratio_stat(0, 1), Mode(boot=REPEAT_BOOT, seed=seed)).value() if len(rows) else None
        return {"disagreements": d, "pairs": n, "unparsed_pairs": u, "k": d, "n": n, "p": (d / n) if n else None,
                "ci95": [round(ci[0], 4), round(ci[1], 4)] if ci else None}

    def table(bucket: str) -> dict[str, Any]:
        return {name: entry(bucket, name) for name in sorted({nm for st in per_state for b, nm in st if b == bucket})}

    return {"kind": "validate_repeat", "logs": str(logs), "states": len(points), "repeats": repeats, "seed": seed,
            "overall": entry("all", ""), "per_probe": table("probe"), "per_phase": table("phase"), "points": points,
            "notes": "pairs = answer pairs where both parsed (agreement is only defined for them); unparsed_pairs "
                     "counted apart; ci95: bootstrap over states (pairs of one state are not independent)"}  # fmt: skip
