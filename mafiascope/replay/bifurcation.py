"""Utterance bifurcation: many candidate replies of one seat at one turn, a diverse subset
continued as fork branches; the result is one JSON file under ``<logs>/experiments/`` (as for
attribution, experiments.py).

Many candidate replies of one seat at one turn (raised temperature; offline
bots vary through the per-sample seed), a diverse subset that covers every vote target
reached (farthest-point selection over TF-IDF vectors, the factual reply first), one
continuation per variant.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections import Counter
from pathlib import Path
from typing import Any

from ..backends.base import CompletionRequest
from ..engine.observation import context_for
from ..engine.parsing import parse_target, strip_think
from ..play.game import phases_for
from .experiments import NO_TARGET, remaining_calls
from .forks import experiments_dir, plan_fork, run_branch, write_json_atomic
from .source import ParentGame, ReplayError, fmt_key, parse_key
from .summary import game_outcome


def farthest_point(texts: list[str], targets: list[str], k: int) -> list[int]:
    """Indices: 0 (the factual reply) first, then one per uncovered target, then farthest-point fill (TF-IDF cosine)."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    n = len(texts)
    if n == 0:
        return []
    try:
        X = TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 4), sublinear_tf=True).fit_transform(texts)
        sim = (X @ X.T).toarray()
    except ValueError:  # empty vocabulary
        sim = [[1.0] * n for _ in range(n)]
    dist = [[1.0 - float(sim[i][j]) for j in range(n)] for i in range(n)]
    chosen = [0]
    mind = list(dist[0])

    def take(i: int) -> None:
        chosen.append(i)
        for j in range(n):
            mind[j] = min(mind[j], dist[i][j])

    covered = {targets[0]}
    for t in sorted(set(targets) - covered, key=lambda t: -targets.count(t)):
        if len(chosen) >= k:
            break
        cands = [i for i in range(n) if targets[i] == t and i not in chosen]
        if cands:
            take(max(cands, key=lambda i: mind[i]))
    while len(chosen) < min(k, n):
        rest = [i for i in range(n) if i not in chosen]
        best = max(rest, key=lambda i: mind[i])
        if mind[best] <= 0:
            break  # only duplicates left
        take(best)
    return chosen


async def _sample_texts(backend: Any, state: Any, seat: str, ask: Any, samples: int, seed0: int, temperature: float,
                        max_tokens: int, parallel: int, game_id: str) -> list[str]:
    """``samples`` replies of ``seat`` to the turn's instruction ('' for a failed call), each with its own seed."""
    messages = context_for(state, seat).with_instruction(ask.instruction)
    sem = asyncio.Semaphore(max(1, parallel) * 2)

    async def sample(i: int) -> str:
        req = CompletionRequest(messages, max_tokens, "act", seat, ask.kind, state.derive_seed("bifurcate", seed0, i),
                                temperature=temperature, game_id=game_id)  # fmt: skip
        async with sem:
            c = await backend.complete(req)
        return strip_think(c.text) if c.ok else ""

    return list(await asyncio.gather(*(sample(i) for i in range(samples))))


def _distinct_texts(factual: str, raw: list[str]) -> tuple[list[str], list[tuple[str, int | None]]]:
    """The factual text, then each distinct non-empty sample once: (texts, (source, sample index))."""
    pool, src = [factual], [("factual", None)]
    seen = {factual}
    for i, t in enumerate(raw):
        if t.strip() and t not in seen:
            seen.add(t)
            pool.append(t)
            src.append(("sampled", i))
    return pool, src


async def _continue_variants(variants: list[dict[str, Any]], continuations: int, parallel: int, backends: dict[str, Any],
                             on_result: Any) -> list[dict[str, Any]]:
    """Play every variant ``continuations`` times; each variant gets its continuations and ``mafia_wins``
    (its first continuation also fills the variant's own outcome fields)."""
    psem = asyncio.Semaphore(max(1, parallel))

    async def cont(v: dict[str, Any], rep: int) -> dict[str, Any]:
        idx = v["variant_idx"] if continuations == 1 else v["variant_idx"] * continuations + rep  # unique branch ids and seeds
        async with psem:
            r = await run_branch(v["plan"], idx, backends)
        o = game_outcome(r.path) if r.error is None else {}
        out = {"replica": rep, "fork_game_id": r.game_id, "path": r.path, "winner": r.winner, "rounds": r.rounds,
               "error": r.error, "messages": o.get("messages")}
        if rep == 0:
            v.update({k: out[k] for k in ("fork_game_id", "path", "winner", "rounds", "error", "messages")})
        if on_result:
            on_result({**v, **out})
        return out

    conts = await asyncio.gather(*(cont(v, r) for v in variants for r in range(continuations)))
    for vi, v in enumerate(variants):
        del v["plan"]
        mine = list(conts[vi * continuations:(vi + 1) * continuations])
        v["continuations"] = mine
        done = [c for c in mine if c["error"] is None]
        v["mafia_wins"] = {"k": sum(1 for c in done if c["winner"] == "Mafia"), "n": len(done)}
    return list(conts)


def _shortfall(found: int, select: int, distinct: int, raw: list[str]) -> str | None:
    """Why fewer than ``select`` variants were found (None when enough were)."""
    if found >= select:
        return None
    empty = sum(1 for t in raw if not t.strip())
    return (f"{found} of {select} variants: only {distinct} distinct texts (the factual one and "
            f"{distinct - 1} distinct non-empty samples of {len(raw)}; {empty} samples were empty or failed, "
            f"{len(raw) - empty - (distinct - 1)} repeated an earlier text)")


async def run_bifurcation(game: str | Path, at: str, seat: str | None, *, samples: int = 100, select: int = 20,
                          temperature: float = 1.2, probes: str = "none", logs: str | Path | None = None,
                          parallel: int = 4, batch_seed: int | None = None, on_result: Any = None,
                          dry_run: bool = False, continuations: int = 1, preflight: bool = True) -> dict[str, Any]:  # fmt: skip
    """Sample replacement utterances, select up to ``select`` far apart, continue each ``continuations`` times.

    Each variant's first continuation fills its ``fork_game_id``/``winner``/``rounds``; all of them are in
    ``continuations`` with ``mafia_wins``. ``shortfall`` says why fewer variants than ``select`` were found."""
    from ..backends.preflight import require
    from ..backends.registry import build_backends

    if not 1 <= samples <= 2000:
        raise ReplayError("--samples must be between 1 and 2000")
    if not 1 <= select <= 200:
        raise ReplayError("--select must be between 1 and 200")
    if not 1 <= continuations <= 100:
        raise ReplayError("--continuations must be between 1 and 100")
    parent = ParentGame.load(game, logs)
    key = parse_key(at)
    ev = parent.utterance(key)
    if ev is None:
        raise ReplayError(f"game {parent.game_id}: no utterance at step {fmt_key(key)}")
    # validation (speaker, snapshot before, dead seat ...) is the replacement fork's
    probe_plan = plan_fork(parent, key, 1, logs=logs, probes=probes, replace_text=ev.get("response") or "-", seat=seat)
    seat = probe_plan.intervention.seat
    state = probe_plan.base_state
    ask = phases_for(state).next(state)
    est = {"samples": samples, "continuations": min(select, samples + 1) * continuations,
           "act_per_continuation": remaining_calls(parent, key, probes)["act"]}
    exp_id = "bif-" + secrets.token_hex(4)
    if dry_run:
        return {"kind": "bifurcation", "dry_run": True, "estimate": est, "parent_game_id": parent.game_id, "step": fmt_key(key), "seat": seat}
    backends = build_backends(probe_plan.cfg.backends, logs_dir=probe_plan.logs_dir)
    if preflight:
        await require(probe_plan.cfg)
    seed0 = batch_seed if batch_seed is not None else secrets.randbits(31)
    raw = await _sample_texts(backends[state.seat(seat).backend], state, seat, ask, samples, seed0, temperature,
                              probe_plan.cfg.max_tokens, parallel, parent.game_id)  # fmt: skip

    def target_of(text: str) -> str:
        if not ask.action:
            return "-"
        pt = parse_target(text, ask.action, ask.candidates, markers=phases_for(state).markers)
        return pt.target if pt.valid and pt.target else NO_TARGET

    pool, src = _distinct_texts(ev.get("response") or "", raw)
    targets = [target_of(t) for t in pool]
    idx = farthest_point(pool, targets, select)
    batch_id = secrets.token_hex(5)
    variants = []
    for vi, j in enumerate(idx):
        plan = plan_fork(parent, key, 1, logs=logs, probes=probes, replace_text=pool[j], seat=seat, batch_seed=seed0)
        plan.batch_id, plan.write_batch_file = batch_id, False
        plan.intervention.extra = {"variant_idx": vi, "source": src[j][0], "sample_idx": src[j][1], "temperature": temperature,
                                   "experiment": exp_id}  # fmt: skip
        plan.setup_extra = {"experiment": exp_id}
        variants.append({"variant_idx": vi, "source": src[j][0], "sample_idx": src[j][1], "text": pool[j], "target": targets[j], "plan": plan})
    conts = await _continue_variants(variants, continuations, parallel, backends, on_result)
    shortfall = _shortfall(len(variants), select, len(pool), raw)
    logs_dir = probe_plan.logs_dir
    result = {
        "kind": "bifurcation", "experiment_id": exp_id, "fork_batch_id": batch_id, "parent_game_id": parent.game_id,
        "parent_dir": str(parent.dir.resolve()), "step": fmt_key(key), "seat": seat, "decision_kind": ask.kind,
        "created": time.time(), "samples": samples, "n_unique_texts": len(pool) - 1, "temperature": temperature,
        "select": select, "probes": probes, "batch_seed": seed0,
        "target_dist_samples": dict(Counter(target_of(t) for t in raw if t.strip()).most_common()),
        "targets_selected": dict(Counter(v["target"] for v in variants).most_common()),
        "winners": dict(Counter(c["winner"] or "error" for c in conts).most_common()),
        "continuations_per_variant": continuations, "shortfall": shortfall,
        "variants": variants,
    }  # fmt: skip
    path = experiments_dir(logs_dir) / f"{exp_id}.json"
    write_json_atomic(path, result, root=logs_dir)
    result["path"] = str(path)
    return result
