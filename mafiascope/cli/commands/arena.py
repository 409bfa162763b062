"""``mafiascope arena``: run ten-seat tournaments across a roster and read the leaderboards.

    mafiascope arena run --roster configs/roster_bots.yaml --rules sport,open,imbalanced --games 40 \\
        [--seating seating.yaml] [--parallel K] [--logs DIR] [--executor local|ray --address ADDR] [--seed N] [--json]
    mafiascope arena report RUN_DIR|LOGS [--json]
    mafiascope arena estimate --roster R [--seating S] --rules ... --games N [--json]

Fixed seating (``--seating FILE`` or a ``seating:`` list in the roster): every game seats the
same ten roster labels and the engine deals the roles; otherwise the balanced schedule.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .. import CliError, emit
from ..options import add_fault_budget_option, add_json_flag, add_preflight_option
from .run import check_backends, fault_budget_override


SEATING_HELP = ("fixed seating: a YAML list of ten roster labels, one per seat (or a mapping with a 'seating:' list); "
                "every game seats them and the engine deals the roles (default: the roster's 'seating:', else the balanced schedule)")


def register(sub: Any) -> None:
    p = sub.add_parser("arena", help="ten-seat tournaments across a roster of models; leaderboards")
    asub = p.add_subparsers(dest="arena_command", metavar="ARENA_COMMAND")

    r = asub.add_parser("run", help="play (or resume) a batch of ten-seat games across a roster")
    r.add_argument("--roster", default=None, help="roster YAML (default: configs/roster_bots.yaml, the offline bot presets)")
    r.add_argument("--seating", default=None, help=SEATING_HELP)
    r.add_argument("--rules", default="sport,open,imbalanced", help="comma-separated rule sets: sport, open (open_table), imbalanced, or YAML paths")
    r.add_argument("--games", type=int, default=40, help="games per rule set (default 40)")
    r.add_argument("--parallel", type=int, default=4, help="games in flight at once (default 4)")
    r.add_argument("--logs", default=None, help="run directory: games, ledger.jsonl (default logs/arena/<roster name>)")
    r.add_argument("--executor", choices=("local", "ray"), default="local",
                   help="local: asyncio in this process (default); ray: one task per game on a Ray cluster")
    r.add_argument("--address", default=None, help="Ray cluster address (default: start a local Ray instance)")
    r.add_argument("--seed", type=int, default=0, help="schedule seed (default 0)")
    r.add_argument("--language", choices=("en", "ru"), default="en", help="language of the prompts and the host (default en)")
    r.add_argument("--probes", action="store_true", help="run the probe battery in every game (off by default)")
    r.add_argument("--snapshots", action="store_true", help="write state.jsonl snapshots (for Live Game stepping)")
    r.add_argument("--limit", type=int, default=None, help="stop after this many new games (resume later)")
    add_json_flag(r, "print one JSON summary object")
    add_fault_budget_option(r)
    add_preflight_option(r)
    r.set_defaults(func=_run)

    e = asub.add_parser("estimate", help="calls and tokens a run would cost")
    e.add_argument("--roster", default=None, help="roster YAML (default: configs/roster_bots.yaml)")
    e.add_argument("--seating", default=None, help=SEATING_HELP)
    e.add_argument("--rules", default="sport,open,imbalanced", help="comma-separated rule sets, as for arena run")
    e.add_argument("--games", type=int, default=40, help="games per rule set (default 40)")
    e.add_argument("--probes", action="store_true", help="include the probe battery's calls and tokens (as arena run --probes)")
    add_json_flag(e, "print the estimate as one JSON object")
    e.set_defaults(func=_estimate)

    rep = asub.add_parser("report", help="leaderboards, pairs and rule-set measures from recorded games")
    rep.add_argument("path", help="an arena run directory or any logs directory")
    add_json_flag(rep, "print the whole report as one JSON object (docs/arena.md)")
    rep.add_argument("--top", type=int, default=5, help="rows per pair list in the text report")
    rep.add_argument("--include-invalid", action="store_true",
                     help="also score games over their fault budget (game_over.invalid; left out by default)")
    rep.set_defaults(func=_report)
    p.set_defaults(func=lambda a: (p.print_help(), 1)[1])


def _roster(path: str | None, seating: str | None = None) -> Any:
    from ...arena.roster import load_roster, load_seating
    from ...config import ConfigError

    try:
        roster = load_roster(path)
        return load_seating(seating, roster) if seating else roster
    except ConfigError as exc:
        raise CliError(str(exc)) from None


def _run(args: argparse.Namespace) -> int:
    from ...arena.run import ArenaError, run_arena

    roster = _roster(args.roster, args.seating)
    if args.games < 1:
        raise CliError("--games must be at least 1")
    run_dir = Path(args.logs) if args.logs else Path("logs") / "arena" / roster.name
    budget = fault_budget_override(args)
    check_backends(roster.backend_specs(), args)
    try:
        summary = run_arena(roster, args.rules, args.games, run_dir, parallel=args.parallel, executor=args.executor,
                            address=args.address, seed=args.seed, probes=args.probes, snapshots=args.snapshots,
                            language=args.language, quiet=args.json, limit=args.limit, fault_budget=budget)  # fmt: skip
    except ArenaError as exc:
        raise CliError(str(exc)) from None
    emit(args, summary, lambda: _run_text(summary, run_dir))
    return 0 if not summary["failures"] and not summary["invalid"] else 1


def _run_text(summary: dict[str, Any], run_dir: Path) -> Iterator[str]:
    yield (f"{summary['finished']}/{summary['scheduled']} games finished in {run_dir} "
           f"({summary['played_now']} now, {summary['seconds']} s); report: mafiascope arena report {run_dir}")  # fmt: skip
    for f in summary["failures"]:
        yield f"  failed {f['game_id']}: {f['error']}"
    if summary["invalid"]:
        yield (f"  {len(summary['invalid'])} invalid game(s) (over the fault budget, left out of the leaderboards): "
               + ", ".join(summary["invalid"]))  # fmt: skip


def _estimate(args: argparse.Namespace) -> int:
    from ...arena.run import ArenaError, estimate, parse_rule_list

    try:
        est = estimate(_roster(args.roster, args.seating), parse_rule_list(args.rules), args.games, probes=args.probes)
    except ArenaError as exc:
        raise CliError(str(exc)) from None
    emit(args, est, f"{est['games']} games ({est['mode']} seating): about {est['calls']} calls ({est['paid_calls']} to paid "
                    f"backends), {est['prompt_tokens']:,} prompt + {est['completion_tokens']:,} completion tokens ({est['note']})")  # fmt: skip
    return 0


def _fmt(x: Any) -> str:
    return "-" if x is None else f"{x:+.3f}" if isinstance(x, float) else str(x)


def _report(args: argparse.Namespace) -> int:
    from ...arena.scoring import load_records, report

    path = Path(args.path)
    if not path.exists():
        raise CliError(f"{path}: no such run or logs directory")
    recs = load_records(path)
    if not recs:
        raise CliError(f"{path}: no finished ten-seat games found")
    rep = report(recs, include_invalid=args.include_invalid)
    emit(args, rep, lambda: _report_text(rep, args.top))
    return 0


def _report_text(rep: dict[str, Any], top: int) -> Iterator[str]:
    left_out = f" ({rep['invalid_left_out']} invalid games left out; --include-invalid scores them)" if rep["invalid_left_out"] else ""
    yield f"{rep['games']} games{left_out}; rule sets: {', '.join(rep['rule_sets'])}"
    yield ("\nOverall (points vs side, mean ± SE):")
    for r in rep["leaderboards"]["overall"]:
        yield f"  {r['rank']:>2}. {r['model']:<28} {_fmt(r['score'])} ± {r['se'] or 0:.3f}  ({r['games']} games, {r['seats']} seats)"
    for rs, board in rep["leaderboards"]["by_rules"].items():
        yield f"\n{rs}: " + ", ".join(f"{r['model']} {_fmt(r['score'])}" for r in board)
    if rep["spearman"]:
        yield ("\nRank correlation between rule sets: " + ", ".join(
            f"{s['a']}~{s['b']} {s['rho']}" if s["rho"] is not None else f"{s['a']}~{s['b']} n/a ({s['why_none']})"
            for s in rep["spearman"]))
    else:
        yield ("\nRank correlation between rule sets: n/a (needs games under at least two rule sets)")
    yield ("\nRule sets:")
    for m in rep["rule_measures"]:
        yield (f"  {m['rules']:<11} Mafia won {m['mafia_wins']}/{m['games']} ({m['mafia_win_rate']}, CI {m['mafia_win_ci']}); "
               f"town ballots on Mafia {m['town_ballots_on_mafia']}; day turns/game {m['day_turns_per_game']}; "
               f"first vote removed town {m['first_vote_removed_town']}/{m['first_votes']} (town won {m['town_wins_after_wrong_first_vote']}); "
               f"shots missed {m['night_shots_missed']}/{m['night_shots']}; mean rounds {m['mean_rounds']}")  # fmt: skip
    for kind in ("teammates", "mismatches", "rivals"):
        rows = rep["pairs"][kind][:top]
        yield f"\nTop {kind} (ranked = total / (games + 4)): " + "; ".join(f"{r['a']} & {r['b']} {r['ranked']} ({r['games']} g)" for r in rows)
    yield f"\nNoise: {rep['noise']['note']} (median SE {rep['noise']['median_se']})"
