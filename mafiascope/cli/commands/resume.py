"""`mafiascope resume` (docs/replay.md): finish games whose logs stop before game_over, in place."""

from __future__ import annotations

import argparse
from typing import Any

from ...backends.registry import run_closing
from .. import CliError, emit, say
from ..experiment_input import cli_errors
from ..options import add_json_flag, add_preflight_option
from .run import check_backends


@cli_errors
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
    todo = [c for c in cands if c.resumable][: args.limit or None]
    skipped = [c for c in cands if not c.resumable]
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
        emit(args, out, [f"would finish the pending probe calls of {c.game_id}" if c.finish_probes else
                         f"would resume {c.game_id} from {c.as_dict()['resume_point']}" for c in todo])  # fmt: skip
        return 0

    def tick(r: dict[str, Any]) -> None:
        if r.get("error"):
            say(args, f"  {r['game_id']}: error: {r['error']}")
        elif r.get("resume_point") == "probes":
            say(args, f"  {r['game_id']}: finished {r['probes_finished']} pending probe call(s): {r['winner']} in {r['rounds']} rounds")
        else:
            say(args, f"  {r['game_id']}: resumed from {r['resume_point']}: {r['winner']} in {r['rounds']} rounds")

    results = run_closing(resume_all(todo, parallel=args.parallel, on_result=tick))
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


def register(sub: argparse._SubParsersAction) -> None:
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
