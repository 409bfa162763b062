"""`mafiascope replay attribution|bifurcate` (docs/replay.md): the replay experiments."""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from typing import Any

from ...analytics.pvalues import format_p
from ...backends.registry import run_closing
from .. import CliError, emit, say
from ..experiment_input import branch_backends, cli_errors
from ..options import add_json_flag, add_preflight_option, add_progress_option


@cli_errors
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
    branch_backends([it[arm] for it in spec["items"] for arm in ("pre", "post")], args)
    say(args, f"attribution {spec['id']}: {len(spec['items'])} utterance(s) x 2 arms x {args.n} rerolls")
    prog = ProgressLog(args.progress)
    prog.start(spec["estimate"]["forks"], experiment_id=spec["id"])

    def tick(r: Any) -> None:
        prog.unit(game_id=r.game_id, winner=r.winner, error=r.error)
        say(args, f"  {r.game_id}: {r.error or r.winner}")

    res = run_closing(run_attribution(spec, on_result=tick))
    prog.done(res["path"])
    emit(args, res, lambda: _attribution_text(res))
    return 0


def _attribution_text(res: dict[str, Any]) -> Iterator[str]:
    yield f"experiment {res['experiment_id']} -> {res['path']}"

    def ci(x: Any) -> str:
        return f" [{x[0]:+.3f}, {x[1]:+.3f}]" if x else ""

    def p(t: dict[str, Any]) -> str:
        return f"Fisher p={format_p(t['fisher_p'])}, Holm p={format_p(t.get('fisher_p_holm'))}"

    for u in res["utterances"]:
        d = u["delta_post_minus_pre"]
        w = d["p_mafia_win"]
        line = (f"  {u['utterance']['step']} {u['utterance']['speaker']}: P(Mafia wins) {w['pre']['k']}/{w['pre']['n']} -> "
                f"{w['post']['k']}/{w['post']['n']}, POST-PRE {w['diff']}{ci(w['ci95'])} ({p(w)})")
        if "p_eliminate_target" in d:
            t = d["p_eliminate_target"]
            line += (f"; P({res['target']} out) {t['pre']['k']}/{t['pre']['n']} -> {t['post']['k']}/{t['post']['n']}, "
                     f"POST-PRE {t['diff']}{ci(t['ci95'])} ({p(t)})")
        sus = "; ".join(f"{p} {v:+.3f}{ci(d.get('suspicion_ci95', {}).get(p))}" for p, v in d["suspicion"].items() if v is not None)
        yield line + f"; suspicion delta {sus or 'n/a'}"
    if res.get("p_holm_family"):
        yield f"  Holm p: {res['p_holm_family']['text']}"


@cli_errors
def cmd_bifurcate(args: argparse.Namespace) -> int:
    from ...replay.bifurcation import run_bifurcation
    from ...replay.progress import ProgressLog

    prog = ProgressLog(None if args.dry_run else args.progress)
    prog.start(min(args.select, args.samples + 1) * args.continuations)  # at most; fewer distinct samples, fewer variants

    def tick(v: dict[str, Any]) -> None:
        prog.unit(variant_idx=v["variant_idx"], game_id=v.get("fork_game_id"), winner=v.get("winner"), error=v.get("error"))
        say(args, f"  variant {v['variant_idx']} -> {v['target']}: {v['winner']}")

    res = run_closing(run_bifurcation(args.game, args.at, args.seat, samples=args.samples, select=args.select,
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


def register(sub: argparse._SubParsersAction) -> None:
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
