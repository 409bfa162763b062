"""Outcome summaries of fork batches and the branch tree of a game.

A summary is computed from the branches' own logs (not from in-memory results), so it can
be recomputed at any time: winner distribution with Wilson 95% intervals, who was
eliminated in each round (day votes and night kills separately), and game length.
"""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from ..analytics.stats import wilson
from ..logs import kinds, read_game
from ..logs.io import list_game_dirs

SIDES = ("Mafia", "Villagers", "Draw")


def game_outcome(game_dir: str | Path) -> dict[str, Any]:
    """Winner, rounds, eliminations and message counts of one game (own part and total)."""
    log = read_game(game_dir)
    setup = log.raw_setup
    out: dict[str, Any] = {"game_id": Path(game_dir).name, "path": str(game_dir), "winner": None, "rounds": None,
                           "reason": None, "finished": False, "day_eliminated": {}, "night_killed": {},
                           "messages": 0, "own_messages": 0, "votes": {}}  # fmt: skip
    out["game_id"] = setup.get("game_id", out["game_id"])
    for rec in log.records:
        kind = kinds.of(rec)
        rnd = rec.get("round")
        if kind in kinds.UTTERANCE_KINDS:
            out["messages"] += 1
            if not rec.get("inherited"):
                out["own_messages"] += 1
        elif kind == kinds.DAY_ELIMINATE:
            out["day_eliminated"][str(rnd)] = rec.get("eliminated")
        elif kind == kinds.NIGHT_KILL:
            out["night_killed"][str(rnd)] = rec.get("victim")
        elif kind == kinds.VOTE_TALLY:
            out["votes"][str(rnd)] = rec.get("votes") or {}
        elif kind == kinds.GAME_OVER:
            out.update(winner=rec.get("winner"), rounds=rnd, reason=rec.get("reason"), finished=True)
    for k in ("forked_from", "fork_point", "fork_batch_id", "replica_idx", "intervention", "resume_of"):
        out[k] = setup.get(k)
    out["roles"] = {p.get("name"): p.get("role") for p in setup.get("players") or []}
    return out


def proportion(k: int, n: int) -> dict[str, Any]:
    lo, hi = wilson(k, n)
    return {"k": k, "n": n, "p": (k / n) if n else None, "ci95": [round(lo, 4), round(hi, 4)]}


def summarize(outcomes: list[dict[str, Any]]) -> dict[str, Any]:
    """Aggregate outcomes of one batch (failed or unfinished branches are counted apart)."""
    done = [o for o in outcomes if o.get("finished")]
    n = len(done)
    winners = Counter(o["winner"] for o in done)
    elim: dict[str, Counter] = defaultdict(Counter)
    kills: dict[str, Counter] = defaultdict(Counter)
    for o in done:
        for r, name in o["day_eliminated"].items():
            elim[r][name] += 1
        for r, name in o["night_killed"].items():
            kills[r][name] += 1
    rounds = [o["rounds"] for o in done if o.get("rounds") is not None]
    msgs = [o["messages"] for o in done]

    def dist(c: Counter) -> dict[str, Any]:
        return {name: proportion(k, n) for name, k in c.most_common()}

    def describe(xs: list[int]) -> dict[str, Any]:
        if not xs:
            return {"n": 0}
        return {"n": len(xs), "mean": round(statistics.fmean(xs), 3), "median": statistics.median(xs), "min": min(xs),
                "max": max(xs), "hist": dict(sorted(Counter(xs).items()))}  # fmt: skip

    return {
        "n": len(outcomes),
        "finished": n,
        "unfinished": len(outcomes) - n,
        "winner": {side: proportion(winners.get(side, 0), n) for side in SIDES},
        "day_eliminated": {r: dist(c) for r, c in sorted(elim.items(), key=lambda kv: int(kv[0]))},
        "night_killed": {r: dist(c) for r, c in sorted(kills.items(), key=lambda kv: int(kv[0]))},
        "rounds": describe(rounds),
        "messages": describe(msgs),
    }


def batch_outcomes(logs: str | Path, batch_id: str) -> list[dict[str, Any]]:
    out = []
    for d in list_game_dirs(logs):
        try:
            o = game_outcome(d)
        except Exception:
            continue
        if o.get("fork_batch_id") == batch_id:
            out.append(o)
    return sorted(out, key=lambda o: o.get("replica_idx") or 0)


def branch_tree(logs: str | Path, root_game_id: str) -> dict[str, Any]:
    """The forks of ``root_game_id`` (any depth) grouped by batch: {game_id, batches: [...]}."""
    children: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for d in list_game_dirs(logs):
        try:
            o = game_outcome(d)
        except Exception:
            continue
        if o.get("forked_from"):
            children[str(o["forked_from"])].append(o)

    def node(gid: str, depth: int) -> dict[str, Any]:
        batches: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for o in children.get(gid, []):
            batches[str(o.get("fork_batch_id"))].append(o)
        out = []
        for bid, kids in batches.items():
            kids.sort(key=lambda o: o.get("replica_idx") or 0)
            out.append({
                "fork_batch_id": bid, "fork_point": kids[0].get("fork_point"), "intervention": kids[0].get("intervention"),
                "summary": summarize(kids),
                "branches": [{**{k: o.get(k) for k in ("game_id", "winner", "rounds", "replica_idx", "finished", "path")},
                              **(node(o["game_id"], depth + 1) if depth < 20 else {})} for o in kids],
            })  # fmt: skip
        out.sort(key=lambda b: tuple(b["fork_point"] or [0, 0]))
        return {"batches": out}

    return {"game_id": root_game_id, **node(root_game_id, 0)}
