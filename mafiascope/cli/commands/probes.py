"""``mafiascope audit``, ``mafiascope cost`` and ``mafiascope probes validate`` (the probe engine's commands)."""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .. import CliError, emit
from ..options import add_json_flag


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("audit", help="check that no acting context holds probe text or private events it may not see")
    p.add_argument("logs", help="a logs directory (games below it) or one game directory")
    add_json_flag(p, "print one JSON object: games, snapshots, messages_checked, leaks, per_game")
    p.set_defaults(func=_audit)

    p = subparsers.add_parser("cost", help="probe calls, tokens and latency per game (and the act calls they multiply)")
    p.add_argument("logs", help="a logs directory (games below it) or one game directory")
    add_json_flag(p, "print one JSON object: games, totals, per_game")
    p.set_defaults(func=_cost)

    p = subparsers.add_parser("probes", help="probe battery tools")
    sub = p.add_subparsers(dest="probes_command", metavar="SUBCOMMAND")
    v = sub.add_parser("validate", help="check a battery YAML (placeholders, when values, ids); prints OK or the errors")
    v.add_argument("file", help="battery YAML, e.g. configs/probes/chained_en.yaml")
    add_json_flag(v, 'print {"file", "ok", "errors", "probes"}')
    v.set_defaults(func=_validate)
    p.set_defaults(func=lambda args: (p.print_help(), 1)[1])


def _games(path: str) -> Path:
    from ...logs.io import list_game_dirs

    root = Path(path)
    if not root.exists():
        raise CliError(f"{path}: no such directory")
    if not list_game_dirs(root):
        raise CliError(f"{path}: no game directories (with game.jsonl) found")
    return root


def _audit(args: argparse.Namespace) -> int:
    from ...probes.audit import audit_logs

    res = audit_logs(_games(args.logs))
    emit(args, res, lambda: _audit_text(res))
    return 1 if res["leaks"] or res["doubled_games"] else 0


def _audit_text(res: dict[str, Any]) -> Iterator[str]:
    for g in res["per_game"]:
        kinds = ", ".join(f"{k}={v}" for k, v in sorted(g["by_kind"].items())) or "-"
        note = f"  ({g['note']})" if g.get("note") else ""
        yield f"{g['game_id']}: snapshots={g['snapshots']} messages={g['messages_checked']} leaks={g['leaks']} [{kinds}]{note}"
        for ex in g["examples"][:5]:
            yield f"    {ex['kind']} in {ex['seat']}'s context at r{ex['round']} seq {ex['msg_seq']}: {ex['detail'][:100]!r}"
    for d in res["doubled_games"]:
        yield (f"{d['game_id']}: {d['setup_records']} setup and {d['game_over_records']} game_over records "
               "(two writers on one game id; analytics excludes it)")  # fmt: skip
    yield (f"total: games={res['games']} messages_checked={res['messages_checked']} leaks={res['leaks']} "
           f"doubled={len(res['doubled_games'])}")  # fmt: skip


def _cost(args: argparse.Namespace) -> int:
    from ...probes.cost import cost_logs

    res = cost_logs(_games(args.logs))
    emit(args, res, lambda: _cost_text(res))
    return 0


def _cost_text(res: dict[str, Any]) -> Iterator[str]:
    est = lambda g: " (estimated)" if g["tokens_estimated"] else ""  # noqa: E731
    for g in res["per_game"]:
        mean = f"{g['mean_probe_latency_ms']:.0f}" if g["mean_probe_latency_ms"] is not None else "-"
        yield (f"{g['game_id']}: probe calls={g['probe_calls']} act calls={g['act_calls']} x{g['multiplier']} "
               f"tokens={g['probe_prompt_tokens']}+{g['probe_completion_tokens']}{est(g)} latency sum={g['probe_latency_ms']} ms "
               f"mean={mean} ms errors={g['probe_errors']}")  # fmt: skip
    t = res["totals"]
    yield (f"total: games={res['games']} probe calls={t['probe_calls']} act calls={t['act_calls']} x{t['multiplier']} "
           f"tokens={t['probe_prompt_tokens']}+{t['probe_completion_tokens']}{est(t)} latency sum={t['probe_latency_ms']} ms")  # fmt: skip
    for pid, c in sorted(t["by_probe"].items()):
        yield f"  {pid}: calls={c['calls']} tokens={c['prompt_tokens']}+{c['completion_tokens']} latency sum={c['latency_ms']} ms errors={c['errors']}"


def _validate(args: argparse.Namespace) -> int:
    from .. import one_line
    from ...probes.dsl import BatteryError, load_battery

    if not Path(args.file).is_file():
        raise CliError(f"{args.file}: file not found")
    try:
        b = load_battery(args.file)
    except BatteryError as exc:
        lines = str(exc).splitlines()
        # "<file>: invalid probe battery" then one indented line per problem; anything else (YAML syntax) is one error
        listed = lines[0].endswith(": invalid probe battery") and all(x.startswith("  ") for x in lines[1:])
        errors = [x.strip() for x in lines[1:]] if listed and lines[1:] else [one_line(str(exc))]
        emit(args, {"file": args.file, "ok": False, "errors": errors, "probes": []},
             [lines[0] if listed else errors[0], *(f"  {e}" for e in (errors if listed else []))])
        return 1
    emit(args, {"file": args.file, "ok": True, "errors": [], "probes": [p.id for p in b.active]},
         f"OK {args.file}: {len(b.active)} probes ({', '.join(p.id for p in b.active)})")
    return 0
