"""`mafiascope validate ab|repeat` (docs/replay.md): instrument validation; results under ``<logs>/experiments/``."""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from typing import Any

from ...analytics.pvalues import format_p
from ...backends.registry import run_closing
from .. import CliError, emit, say
from ..experiment_input import cli_errors
from ..options import add_json_flag, add_preflight_option, add_progress_option
from .run import CONFIG_HELP


def _save_result(logs: str, prefix: str, res: dict[str, Any]) -> str:
    """Write an experiment/validation result under <logs>/experiments/ (the app lists them)."""
    import secrets
    import time

    from ...replay.forks import experiments_dir, write_json_atomic

    path = experiments_dir(logs) / f"{prefix}-{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(2)}.json"
    write_json_atomic(path, {**res, "created": time.time()}, root=logs)
    return str(path)


@cli_errors
def cmd_validate_ab(args: argparse.Namespace) -> int:
    from .run import load_config
    from ...replay.validate import run_ab

    from ...replay.progress import ProgressLog

    cfg = load_config(args)
    prog = ProgressLog(args.progress)
    prog.start(2 * args.games)
    res = run_closing(run_ab(cfg, args.games, logs=args.logs, seed_base=args.seed_base, parallel=args.parallel, order_seed=args.order_seed,
                             id_prefix=args.id_prefix, on_result=lambda arm, o: prog.unit(arm=arm, winner=o.get("winner"))))  # fmt: skip
    res["path"] = _save_result(args.results or args.logs, "validate-ab", res)
    prog.done(res["path"])
    emit(args, res, lambda: _ab_text(res, args.games))
    return 0


def _ab_text(res: dict[str, Any], games: int) -> Iterator[str]:
    m = res["mafia_wins"]
    yield (f"Mafia wins: probed {m['probed']['k']}/{m['probed']['n']}, unprobed {m['unprobed']['k']}/{m['unprobed']['n']}; "
           f"diff {m['diff']} 95% CI {m['ci95']}; Fisher p={format_p(m['fisher_p'])}, Holm p={format_p(m.get('fisher_p_holm'))}")  # fmt: skip
    for what in ("rounds", "messages"):
        r = res[what]
        yield f"{what}: probed mean {r['probed']['mean']}, unprobed mean {r['unprobed']['mean']}; Mann-Whitney p={format_p(r['mann_whitney_p'])}, Holm p={format_p(r.get('mann_whitney_p_holm'))}"
    yield f"identical pairs (same winner and length): {res['identical_pairs']}/{games}; errors {len(res['errors'])}"
    if res.get("p_holm_family"):
        yield f"Holm p: {res['p_holm_family']['text']}"


@cli_errors
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

    res = run_closing(run_repeat(args.logs, args.states, args.repeats, seed=args.seed, preflight=not args.no_preflight,
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


def register(sub: argparse._SubParsersAction) -> None:
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
