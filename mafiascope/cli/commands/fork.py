"""`mafiascope fork` (docs/replay.md): continue a recorded game from a saved step; list its fork points or branch tree."""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from typing import Any

from ...backends.registry import run_closing
from .. import CliError, emit, say
from ..experiment_input import branch_backends, cli_errors, seat_pairs
from ..options import add_json_flag, add_preflight_option


@cli_errors
def cmd_fork(args: argparse.Namespace) -> int:
    from ...replay.forks import plan_fork, run_fork_batch
    from ...replay.source import ParentGame, fmt_key
    from ...replay.summary import branch_tree

    parent = ParentGame.load(args.game, args.logs or "logs", need_snapshots=not args.tree)
    if args.list:
        points = [fp.as_dict() for fp in parent.fork_points()]
        def points_text() -> Iterator[str]:
            yield f"game {parent.game_id}: {len(points)} fork points" + (" (last state.jsonl line torn)" if parent.torn_state else "")
            for p in points:
                who = f"{p['kind']} by {p['speaker']}" if p["speaker"] else p["phase"]
                nxt = p["next_stage"] + (f" ({', '.join(p['remaining'][:3])}{'...' if len(p['remaining']) > 3 else ''})" if p["remaining"] else "")
                yield f"  {p['step']:>6}  {who:<32} next: {nxt:<40} alive {p['alive']}"

        emit(args, {"game_id": parent.game_id, "path": str(parent.dir), "finished": parent.finished, "fork_points": points}, points_text)
        return 0
    if args.tree:
        tree = branch_tree(args.logs or parent.dir.parent, parent.game_id)
        emit(args, tree, lambda: _tree_lines(tree, 0))
        return 0
    if not args.at:
        raise CliError("--at R.S is required (or --list to see the fork points)")
    night = None
    if args.override_night:
        pairs = seat_pairs([args.override_night], "--override-night")
        night = next(iter(pairs.items()))
    plan = plan_fork(
        parent, args.at, args.n, logs=args.logs, parallel=args.parallel, probes=args.probes,
        backend_overrides=seat_pairs(args.backend_override, "--backend-override"), replace_text=args.replace_utterance,
        seat=args.seat, override_night=night, keep_seed=args.keep_seed, batch_seed=args.batch_seed, batch_id=args.batch_id,
    )  # fmt: skip
    backends = branch_backends([plan], args)
    say(args, f"fork batch {plan.batch_id}: {plan.n} branch(es) of {parent.game_id} from step {fmt_key(plan.base_key)} -> {plan.logs_dir}")

    def tick(r: Any) -> None:
        say(args, f"  [{r.replica_idx}] {r.game_id}: " + (f"error: {r.error}" if r.error else f"{r.winner} in {r.rounds} rounds"))

    record = run_closing(run_fork_batch(plan, on_result=tick, backends=backends))
    def text() -> Iterator[str]:
        s = record["summary"]
        wins = ", ".join(f"{k} {v['k']}/{v['n']} [{v['ci95'][0]:.2f}, {v['ci95'][1]:.2f}]" for k, v in s["winner"].items() if v["n"])
        yield (f"batch {record['fork_batch_id']}: {s['finished']}/{s['n']} finished; winners: {wins or '-'}; "
               f"rounds mean {s['rounds'].get('mean', '-')}; failed {record['failed']}")  # fmt: skip
        for r, dist in s["day_eliminated"].items():
            yield f"  round {r} eliminated: " + ", ".join(f"{n} {v['k']}/{v['n']}" for n, v in dist.items())

    emit(args, record, text)
    return 1 if record["failed"] == record["n"] else 0


def _tree_lines(node: dict[str, Any], depth: int) -> Iterator[str]:
    pad = "  " * depth
    if depth == 0:
        yield node["game_id"]
    for b in node.get("batches", []):
        s = b["summary"]
        wins = ", ".join(f"{k} {v['k']}/{v['n']}" for k, v in s["winner"].items() if v["k"])
        iv = (b.get("intervention") or {}).get("type", "resample")
        yield f"{pad}  ⑂ batch {b['fork_batch_id']} at {b['fork_point']} ({iv}): {wins or '-'}"
        for br in b["branches"]:
            yield f"{pad}    {br['game_id']}: {br['winner']} in {br['rounds']} rounds"
            yield from _tree_lines(br, depth + 2)


def register(sub: argparse._SubParsersAction) -> None:
    f = sub.add_parser("fork", help="continue a recorded game N times from a saved step (counterfactual replay)")
    f.add_argument("game", help="game directory or game id (looked up under --logs)")
    f.add_argument("--at", help="step ROUND.SEQ to fork from (1.8; 1.-1 = round end; 'start'); see --list")
    f.add_argument("-n", type=int, default=1, help="number of branches, 1..200 (default: %(default)s)")
    f.add_argument("--parallel", type=int, default=1, help="branches in flight at once (default: %(default)s)")
    f.add_argument("--probes", choices=["full", "suspicion", "none"], default="full",
                   help="probe battery of the branches: the parent's (full), suspicion_ranking only, or none")  # fmt: skip
    f.add_argument("--backend-override", action="append", metavar="SEAT=BACKEND",
                   help="seat plays with another backend: a backend name of the parent, bot or bot:PRESET; SEAT '*' = all")  # fmt: skip
    f.add_argument("--replace-utterance", metavar="TEXT", help="the seat's message at --at becomes TEXT")
    f.add_argument("--seat", help="speaker of the replaced utterance (checked against the log)")
    f.add_argument("--override-night", metavar="SEAT=TARGET", help="the seat's night action at/after --at targets TARGET")
    f.add_argument("--keep-seed", action="store_true", help="keep the parent's seed: offline bots replay the parent exactly")
    f.add_argument("--batch-seed", type=int, help="seed of the replicas' seeds (default: random, recorded)")
    f.add_argument("--batch-id", help="id of the batch (default: random); the app passes one to follow its progress")
    f.add_argument("--logs", help="where branches are written (default: next to the parent) and games are looked up")
    f.add_argument("--list", action="store_true", help="print the fork points of the game and exit")
    f.add_argument("--tree", action="store_true", help="print the branch tree of the game with outcomes and exit")
    add_json_flag(f)
    add_preflight_option(f)
    f.set_defaults(func=cmd_fork)
