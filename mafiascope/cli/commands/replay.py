"""`mafiascope fork`, `mafiascope replay ...`, `mafiascope validate ...`, `mafiascope resume` (docs/replay.md)."""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Iterator
from typing import Any

from .. import CliError, emit, say
from ..options import add_json_flag, add_preflight_option, add_progress_option
from .run import CONFIG_HELP, check_backends


def _err(fn: Any) -> Any:
    """Run ``fn`` turning replay errors, backend configuration errors (a ``${VAR}`` key set
    nowhere) and unsafe paths (a symlink where a result goes) into CliError (one clear line, exit 2)."""
    from ...backends.base import BackendError
    from ...backends.preflight import PreflightError
    from ...logs.paths import UnsafePathError
    from ...replay.source import ReplayError

    def wrapped(args: argparse.Namespace) -> int:
        try:
            return fn(args)
        except (ReplayError, BackendError, UnsafePathError, PreflightError) as exc:
            raise CliError(str(exc)) from None

    return wrapped


def _backends(plans: list[Any], args: argparse.Namespace) -> dict[str, Any]:
    """Build the branches' backends and preflight them before anything starts, so that a key set
    nowhere or a backend that does not answer is an error before the first branch directory or
    batch record is written (instances are shared per process)."""
    from ...backends.registry import build_backends

    out: dict[str, Any] = {}
    for plan in plans:
        out = build_backends(plan.cfg.backends, logs_dir=plan.logs_dir)
    check_backends([plan.cfg for plan in plans], args)
    return out


def _pairs(values: list[str] | None, flag: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for v in values or []:
        if "=" not in v:
            raise CliError(f"{flag} {v!r}: expected SEAT=VALUE")
        k, val = v.split("=", 1)
        if not k.strip() or not val.strip():
            raise CliError(f"{flag} {v!r}: expected SEAT=VALUE")
        out[k.strip()] = val.strip()
    return out


def _save_result(logs: str, prefix: str, res: dict[str, Any]) -> str:
    """Write an experiment/validation result under <logs>/experiments/ (the app lists them)."""
    import secrets
    import time

    from ...replay.forks import experiments_dir, write_json_atomic

    path = experiments_dir(logs) / f"{prefix}-{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(2)}.json"
    write_json_atomic(path, {**res, "created": time.time()}, root=logs)
    return str(path)


# ----------------------------------------------------------------------------- fork


@_err
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
        pairs = _pairs([args.override_night], "--override-night")
        night = next(iter(pairs.items()))
    plan = plan_fork(
        parent, args.at, args.n, logs=args.logs, parallel=args.parallel, probes=args.probes,
        backend_overrides=_pairs(args.backend_override, "--backend-override"), replace_text=args.replace_utterance,
        seat=args.seat, override_night=night, keep_seed=args.keep_seed, batch_seed=args.batch_seed, batch_id=args.batch_id,
    )  # fmt: skip
    backends = _backends([plan], args)
    say(args, f"fork batch {plan.batch_id}: {plan.n} branch(es) of {parent.game_id} from step {fmt_key(plan.base_key)} -> {plan.logs_dir}")

    def tick(r: Any) -> None:
        say(args, f"  [{r.replica_idx}] {r.game_id}: " + (f"error: {r.error}" if r.error else f"{r.winner} in {r.rounds} rounds"))

    record = asyncio.run(run_fork_batch(plan, on_result=tick, backends=backends))
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


# ----------------------------------------------------------------------------- experiments


@_err
def cmd_attribution(args: argparse.Namespace) -> int:
    from ...replay.experiments import plan_attribution, run_attribution
    from ...replay.progress import ProgressLog

    utts = [u.strip() for u in (args.utterances or "").split(",") if u.strip()]
    spec = plan_attribution(args.game, utts, args.n, target=args.target, probes=args.probes, logs=args.logs,
                            parallel=args.parallel, batch_seed=args.batch_seed,
                            watch=[w.strip() for w in args.suspicion_of.split(",") if w.strip()] if args.suspicion_of else None)  # fmt: skip
    names = [p.get("name") for p in spec["parent"].setup.get("players") or []]
    unknown = [w for w in spec["watch"] if w not in names]
    if unknown:
        raise CliError(f"--suspicion-of {', '.join(unknown)}: no seat of that name (seats: {', '.join(n for n in names if n)})")
    if args.dry_run:
        out = {"experiment": "attribution", "dry_run": True, "parent_game_id": spec["parent"].game_id, "n_per_arm": args.n,
               "utterances": [f"{k[0]}.{k[1]}" for k in (i["key"] for i in spec["items"])], "estimate": spec["estimate"]}  # fmt: skip
        e = spec["estimate"]
        emit(args, out, f"{e['forks']} forks; about {e['act']} seat calls and {e['probe']} probe calls (from the parent's own continuation)")
        return 0
    _backends([it[arm] for it in spec["items"] for arm in ("pre", "post")], args)
    say(args, f"attribution {spec['id']}: {len(spec['items'])} utterance(s) x 2 arms x {args.n} rerolls")
    prog = ProgressLog(args.progress)
    prog.start(spec["estimate"]["forks"], experiment_id=spec["id"])

    def tick(r: Any) -> None:
        prog.unit(game_id=r.game_id, winner=r.winner, error=r.error)
        say(args, f"  {r.game_id}: {r.error or r.winner}")

    res = asyncio.run(run_attribution(spec, on_result=tick))
    prog.done(res["path"])
    emit(args, res, lambda: _attribution_text(res))
    return 0


def _attribution_text(res: dict[str, Any]) -> Iterator[str]:
    yield f"experiment {res['experiment_id']} -> {res['path']}"

    def ci(x: Any) -> str:
        return f" [{x[0]:+.3f}, {x[1]:+.3f}]" if x else ""

    for u in res["utterances"]:
        d = u["delta_post_minus_pre"]
        w = d["p_mafia_win"]
        line = (f"  {u['utterance']['step']} {u['utterance']['speaker']}: P(Mafia wins) {w['pre']['k']}/{w['pre']['n']} -> "
                f"{w['post']['k']}/{w['post']['n']}, POST-PRE {w['diff']}{ci(w['ci95'])} (Fisher p={w['fisher_p']})")
        if "p_eliminate_target" in d:
            t = d["p_eliminate_target"]
            line += (f"; P({res['target']} out) {t['pre']['k']}/{t['pre']['n']} -> {t['post']['k']}/{t['post']['n']}, "
                     f"POST-PRE {t['diff']}{ci(t['ci95'])} (Fisher p={t['fisher_p']})")
        sus = "; ".join(f"{p} {v:+.3f}{ci(d.get('suspicion_ci95', {}).get(p))}" for p, v in d["suspicion"].items() if v is not None)
        yield line + f"; suspicion delta {sus or 'n/a'}"


@_err
def cmd_bifurcate(args: argparse.Namespace) -> int:
    from ...replay.bifurcation import run_bifurcation
    from ...replay.progress import ProgressLog

    prog = ProgressLog(None if args.dry_run else args.progress)
    prog.start(min(args.select, args.samples + 1) * args.continuations)  # at most; fewer distinct samples, fewer variants

    def tick(v: dict[str, Any]) -> None:
        prog.unit(variant_idx=v["variant_idx"], game_id=v.get("fork_game_id"), winner=v.get("winner"), error=v.get("error"))
        say(args, f"  variant {v['variant_idx']} -> {v['target']}: {v['winner']}")

    res = asyncio.run(run_bifurcation(args.game, args.at, args.seat, samples=args.samples, select=args.select,
                                      temperature=args.temperature, probes=args.probes, logs=args.logs, parallel=args.parallel,
                                      batch_seed=args.batch_seed, dry_run=args.dry_run, continuations=args.continuations,
                                      preflight=not args.no_preflight, on_result=tick))  # fmt: skip
    prog.done(res.get("path"))
    emit(args, res, lambda: _bifurcation_text(res))
    return 0


def _bifurcation_text(res: dict[str, Any]) -> Iterator[str]:
    if res.get("dry_run"):
        e = res["estimate"]
        yield (f"{e['samples']} samples, {e['continuations']} continuations; about {e['act_per_continuation']} seat calls per "
               f"continuation (from the parent's own continuation)")  # fmt: skip
        return
    yield (f"experiment {res['experiment_id']} -> {res['path']}: {len(res['variants'])} variants x "
           f"{res['continuations_per_variant']} continuation(s); winners {res['winners']}")
    if res.get("shortfall"):
        yield f"  fewer variants than asked: {res['shortfall']}"
    for v in res["variants"]:
        mw = v["mafia_wins"]
        yield (f"  [{v['variant_idx']:>2}] {v['source']:<8} {str(v['target']):<16} {str(v['winner']):<10} {v['rounds']}  "
               f"Mafia won {mw['k']}/{mw['n']}  {v['text'][:60]!r}")


@_err
def cmd_validate_ab(args: argparse.Namespace) -> int:
    from .run import load_config
    from ...replay.validate import run_ab

    from ...replay.progress import ProgressLog

    cfg = load_config(args)
    prog = ProgressLog(args.progress)
    prog.start(2 * args.games)
    res = asyncio.run(run_ab(cfg, args.games, logs=args.logs, seed_base=args.seed_base, parallel=args.parallel, order_seed=args.order_seed,
                             id_prefix=args.id_prefix, on_result=lambda arm, o: prog.unit(arm=arm, winner=o.get("winner"))))  # fmt: skip
    res["path"] = _save_result(args.results or args.logs, "validate-ab", res)
    prog.done(res["path"])
    emit(args, res, lambda: _ab_text(res, args.games))
    return 0


def _ab_text(res: dict[str, Any], games: int) -> Iterator[str]:
    m = res["mafia_wins"]
    yield (f"Mafia wins: probed {m['probed']['k']}/{m['probed']['n']}, unprobed {m['unprobed']['k']}/{m['unprobed']['n']}; "
           f"diff {m['diff']} 95% CI {m['ci95']}; Fisher p={m['fisher_p']}")  # fmt: skip
    for what in ("rounds", "messages"):
        r = res[what]
        yield f"{what}: probed mean {r['probed']['mean']}, unprobed mean {r['unprobed']['mean']}; Mann-Whitney p={r['mann_whitney_p']}"
    yield f"identical pairs (same winner and length): {res['identical_pairs']}/{games}; errors {len(res['errors'])}"


@_err
def cmd_validate_repeat(args: argparse.Namespace) -> int:
    from pathlib import Path

    from ...replay.progress import ProgressLog
    from ...replay.validate import run_repeat

    if not Path(args.logs).is_dir():
        raise CliError(f"{args.logs}: no such logs directory")
    prog = ProgressLog(args.progress)
    prog.start(args.states)  # at most: fewer if LOGS holds fewer saved states

    def tick(p: dict[str, Any]) -> None:
        prog.unit(game_id=p["game_id"], step=p["step"], disagreements=p["disagreements"], pairs=p["pairs"])
        say(args, f"  {p['game_id']} {p['step']}: {p['disagreements']}/{p['pairs']}")

    res = asyncio.run(run_repeat(args.logs, args.states, args.repeats, seed=args.seed, preflight=not args.no_preflight,
                                 on_state=tick))  # fmt: skip
    res["path"] = _save_result(args.results or args.logs, "validate-repeat", res)
    prog.done(res["path"])
    emit(args, res, lambda: _repeat_text(res))
    return 0


def _repeat_text(res: dict[str, Any]) -> Iterator[str]:
    o = res["overall"]
    ci = f" [95% CI {o['ci95'][0] * 100:.1f}-{o['ci95'][1] * 100:.1f}%, clustered by state]" if o.get("ci95") else ""
    yield (f"{o['disagreements']} disagreements in {o['pairs']} parsed answer pairs ({(o['p'] or 0) * 100:.1f}%){ci}; "
           f"{o['unparsed_pairs']} pairs with an unparsed answer counted apart; {res['states']} states x {res['repeats']} repeats")
    for bucket in ("per_probe", "per_phase"):
        for name, v in res[bucket].items():
            p = "  n/a" if v["p"] is None else f"{v['p'] * 100:5.1f}%"
            yield f"  {bucket[4:]:<6} {name:<22} {v['disagreements']:>5}/{v['pairs']:<5} {p}  unparsed pairs {v['unparsed_pairs']}"


# ----------------------------------------------------------------------------- resume


@_err
def cmd_resume(args: argparse.Namespace) -> int:
    from pathlib import Path

    from ...replay.resume import find_unfinished, repair_staging, resume_all

    root = Path(args.logs)
    if not root.is_dir():
        raise CliError(f"{root}: no such logs directory")
    notes = repair_staging(root)
    for n in notes:
        say(args, "repaired " + n)
    cands = find_unfinished(root, min_idle=args.min_idle)
    todo = [c for c in cands if c.point is not None][: args.limit or None]
    skipped = [c for c in cands if c.point is None]
    if args.drop_empty and not args.dry_run:
        from ...logs.paths import safe_rmtree

        for c in [c for c in skipped if c.empty]:
            safe_rmtree(root, c.game_dir)
            say(args, f"removed {c.game_dir} (never started)")
        skipped = [c for c in skipped if not c.empty]
    for c in skipped:
        say(args, f"skip {c.game_id}: {c.reason}")
    if not args.dry_run and todo:
        check_backends(_resumable_configs(todo), args)
    if args.dry_run:
        out = {"to_resume": [c.as_dict() for c in todo], "skipped": [c.as_dict() for c in skipped], "repaired": notes}
        emit(args, out, [f"would resume {c.game_id} from {c.as_dict()['resume_point']}" for c in todo])
        return 0

    def tick(r: dict[str, Any]) -> None:
        say(args, f"  {r['game_id']}: " + (f"error: {r['error']}" if r.get("error") else f"resumed from {r['resume_point']}: {r['winner']} in {r['rounds']} rounds"))

    results = asyncio.run(resume_all(todo, parallel=args.parallel, on_result=tick))
    failed = [r for r in results if r.get("error")]
    out = {"resumed": [r for r in results if not r.get("error")], "failed": failed, "skipped": [c.as_dict() for c in skipped],
           "repaired": notes}  # fmt: skip
    emit(args, out, f"resumed {len(out['resumed'])} game(s), {len(failed)} failed, {len(skipped)} skipped")
    return 1 if failed else 0


def _resumable_configs(todo: list[Any]) -> list[Any]:
    """The configs of the games to resume (one whose config cannot be rebuilt fails on its own later)."""
    from ...replay.source import ParentGame, ReplayError

    out = []
    for c in todo:
        try:
            out.append(ParentGame(c.game_dir, need_snapshots=False).config())
        except (ReplayError, OSError, ValueError):
            continue
    return out


# ----------------------------------------------------------------------------- register


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

    r = sub.add_parser("resume", help="finish games whose logs stop before game_over (after a crash), in place")
    r.add_argument("logs", help="logs directory to scan (game dirs and one level of sub-directories)")
    r.add_argument("--parallel", type=int, default=4, help="games resumed at once (default: %(default)s)")
    r.add_argument("--min-idle", type=float, default=60.0,
                   help="skip games written to in the last SEC seconds, they may still be running (default: %(default)s)")  # fmt: skip
    r.add_argument("--limit", type=int, help="resume at most this many games")
    r.add_argument("--dry-run", action="store_true", help="list what would be resumed")
    r.add_argument("--drop-empty", action="store_true", help="delete game directories whose log has no complete setup record")
    add_json_flag(r)
    add_preflight_option(r)
    r.set_defaults(func=cmd_resume)

    rp = sub.add_parser("replay", help="replay experiments: pivotal-utterance attribution, utterance bifurcation")
    rsub = rp.add_subparsers(dest="replay_command", metavar="EXPERIMENT")
    a = rsub.add_parser("attribution", help="PRE/POST rerolls around candidate utterances")
    a.add_argument("game", help="game directory or id")
    a.add_argument("--utterances", required=True, help="comma-separated steps, e.g. 1.7,1.8,1.9")
    a.add_argument("-n", type=int, default=5, help="rerolls per arm, 1..200 (default: %(default)s)")
    a.add_argument("--target", help="player whose elimination in the utterance's round is counted")
    a.add_argument("--suspicion-of", help="players whose vote-time suspicion is reported (default: target and speakers)")
    a.add_argument("--probes", choices=["full", "suspicion", "none"], default="suspicion", help="battery of the forks (default: %(default)s)")
    a.add_argument("--parallel", type=int, default=4, help="forks in flight (default: %(default)s)")
    a.add_argument("--batch-seed", type=int, help="seed of the rerolls' seeds (default: random, recorded)")
    a.add_argument("--logs", help="where games are looked up and forks written (default: next to the parent)")
    a.add_argument("--dry-run", action="store_true", help="estimate the calls and stop")
    add_progress_option(a, "finished fork")
    add_json_flag(a)
    add_preflight_option(a)
    a.set_defaults(func=cmd_attribution)
    b = rsub.add_parser("bifurcate", help="sample alternative utterances of one turn, pick a diverse set, continue each")
    b.add_argument("game", help="game directory or id")
    b.add_argument("--at", required=True, help="step R.S of the seat's utterance")
    b.add_argument("--seat", help="its speaker (checked against the log)")
    b.add_argument("--samples", type=int, default=100, help="candidate utterances to sample (default: %(default)s)")
    b.add_argument("--select", type=int, default=20, help="variants continued, the factual one included (default: %(default)s)")
    b.add_argument("--continuations", type=int, default=1, metavar="K",
                   help="continue each variant K times, from different seeds (default: %(default)s)")
    b.add_argument("--temperature", type=float, default=1.2, help="sampling temperature for model backends (default: %(default)s)")
    b.add_argument("--probes", choices=["full", "suspicion", "none"], default="none", help="battery of the continuations (default: %(default)s)")
    b.add_argument("--parallel", type=int, default=4, help="continuations in flight (default: %(default)s)")
    b.add_argument("--batch-seed", type=int, help="seed of the samples and continuations (default: random, recorded)")
    b.add_argument("--logs", help="where games are looked up and forks written (default: next to the parent)")
    b.add_argument("--dry-run", action="store_true", help="estimate the calls and stop")
    add_progress_option(b, "finished continuation")
    add_json_flag(b)
    add_preflight_option(b)
    b.set_defaults(func=cmd_bifurcate)
    rp.set_defaults(func=lambda args: (rp.print_help(), 1)[1])

    v = sub.add_parser("validate", help="instrument validation: probed vs unprobed A/B, probe repeatability")
    vsub = v.add_subparsers(dest="validate_command", metavar="CHECK")
    ab = vsub.add_parser("ab", help="randomised interleaved probed vs unprobed games on the same set-up")
    ab.add_argument("-c", "--config", default="configs/classic.yaml", help=CONFIG_HELP)
    ab.add_argument("--games", type=int, default=20, help="games per arm; game i of both arms shares a seed (default: %(default)s)")
    ab.add_argument("--logs", default="logs/validate_ab", help="where the games are written (default: %(default)s)")
    ab.add_argument("--seed-base", type=int, default=0, help="pair i plays with seed seed_base + i (default: %(default)s)")
    ab.add_argument("--order-seed", type=int, default=0, help="seed of the randomised run order (default: %(default)s)")
    ab.add_argument("--parallel", type=int, default=4, help="games in flight (default: %(default)s)")
    ab.add_argument("--id-prefix", default="ab", help="game ids are PREFIX-probed-NNNN / PREFIX-unprobed-NNNN (default: %(default)s)")
    ab.add_argument("--results", metavar="DIR", help="write the result JSON under DIR/experiments/ (default: --logs)")
    add_progress_option(ab, "finished game")
    add_json_flag(ab)
    add_preflight_option(ab)
    ab.set_defaults(func=cmd_validate_ab, probes_file=None)
    rep = vsub.add_parser("repeat", help="re-ask the probe battery at saved states and count disagreements")
    rep.add_argument("logs", help="logs directory with probed, snapshotted games")
    rep.add_argument("--states", type=int, default=9, help="saved states drawn at random (default: %(default)s)")
    rep.add_argument("--repeats", type=int, default=5, help="repeats per state (default: %(default)s)")
    rep.add_argument("--seed", type=int, default=0, help="seed of the state draw and of the repeats (default: %(default)s)")
    rep.add_argument("--results", metavar="DIR", help="write the result JSON under DIR/experiments/ (default: LOGS)")
    add_progress_option(rep, "re-asked state")
    add_json_flag(rep)
    add_preflight_option(rep)
    rep.set_defaults(func=cmd_validate_repeat)
    v.set_defaults(func=lambda args: (v.print_help(), 1)[1])
