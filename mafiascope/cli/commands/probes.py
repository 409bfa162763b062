"""``mafiascope audit``, ``mafiascope cost`` and ``mafiascope probes validate`` (the probe engine's commands)."""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .. import CliError, emit, say
from ..options import add_json_flag, add_preflight_option


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
    a = sub.add_parser("ask", help="ask a battery of games already played; the answers go to a named probe layer of each game")
    a.add_argument("logs", help="a logs directory (games below it) or one game directory")
    a.add_argument("--battery", required=True, help="battery YAML, or a shipped name (chained, default, suspicion) in each game's language")
    a.add_argument("--layer", required=True, help="the layer's name (letters, digits, '.', '_', '-'); 'game' is the in-game answers")
    a.add_argument("--config", help="a game config whose backend --backend asks every seat (an observer model)")
    a.add_argument("--backend", help="the backend of --config that answers for every seat (default: each seat's own backend)")
    a.add_argument("--seats", action="append", help="ask only these seats (names; comma-separated or repeated)")
    a.add_argument("--plan", action="store_true", help="print the calls, tokens and money and ask nothing")
    a.add_argument("--price", help="PROMPT,COMPLETION per million tokens (for the money in the plan and the budget)")
    a.add_argument("--batch", action="store_true", help="send the calls through the OpenAI-compatible Batch API (one batch per chain position)")
    a.add_argument("--batch-discount", type=float, default=0.5, help="the batch price as a share of --price (default: %(default)s)")
    a.add_argument("--poll-s", type=float, default=30.0, help="seconds between polls of a pending batch (default: %(default)s)")
    a.add_argument("--budget-money", type=float, help="refuse to start when the plan's money exceeds this")
    a.add_argument("--budget-calls", type=int, help="refuse to start when the plan's calls exceed this")
    a.add_argument("--fault-budget", type=float, default=0.05,
                   help="a game's layer is invalid when more than this share of its calls failed (default: %(default)s)")
    a.add_argument("--parallel", type=int, default=4, help="games asked at once (default: %(default)s)")
    add_preflight_option(a)
    a.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    add_json_flag(a, 'print {"plan", "games": [{game_id, scheduled, answered, failed, pending, invalid}], "refused", ...}')
    a.set_defaults(func=_ask)
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


# ---------------------------------------------------------------------- probes ask (docs/probes.md, "Asking after the fact")


def _ask_request(args: argparse.Namespace) -> Any:
    from ...config import ConfigError, load_game_config
    from ...logs.layers import LayerError, check_layer_name
    from ...probes.ask import AskRequest, Price
    from .run import config_path

    try:
        check_layer_name(args.layer)
    except LayerError as exc:
        raise CliError(f"--layer: {exc}") from None
    if args.layer == "game":
        raise CliError("--layer game: that is the game's own probe answers (introspection.jsonl); choose another name")
    if bool(args.config) != bool(args.backend):
        raise CliError("--config and --backend go together: the backend of the config that answers for every seat")
    cfg = None
    if args.config:
        try:
            cfg = load_game_config(config_path(args.config))
        except (ConfigError, OSError) as exc:
            raise CliError(str(exc)) from None
        if args.backend not in cfg.backends:
            raise CliError(f"--backend {args.backend!r}: not a backend of {args.config}; allowed: {sorted(cfg.backends)}")
    price = None
    if args.price:
        try:
            a, b = (float(x) for x in args.price.split(","))
            if a < 0 or b < 0:
                raise ValueError
        except ValueError:
            raise CliError(f"--price {args.price!r}: give PROMPT,COMPLETION in money per million tokens, e.g. 0.15,0.60") from None
        price = Price(a, b)
    if not 0.0 <= args.fault_budget <= 1.0:
        raise CliError(f"--fault-budget {args.fault_budget:g}: a share between 0 and 1")
    if not 0.0 < args.batch_discount <= 1.0:
        raise CliError(f"--batch-discount {args.batch_discount:g}: a share in (0, 1]")
    if args.parallel < 1 or args.poll_s <= 0:
        raise CliError("--parallel must be >= 1 and --poll-s > 0")
    seats = {x.strip() for v in args.seats or [] for x in v.split(",") if x.strip()} or None
    return AskRequest(Path(args.logs), args.battery, args.layer, cfg, args.backend, seats, args.fault_budget, price, args.batch,
                      args.batch_discount, args.parallel)


def _ask(args: argparse.Namespace) -> int:
    from ...backends.registry import run_closing
    from ...probes.ask import AskError, LayerError, budget_check, plan_ask, prepare, run_ask

    req = _ask_request(args)
    if not Path(args.logs).is_dir():
        raise CliError(f"{args.logs}: no such logs directory")
    try:
        games = prepare(req)
    except (AskError, LayerError) as exc:
        raise CliError(str(exc)) from None
    if not games:
        raise CliError(f"{args.logs}: no game directories (with game.jsonl) found")
    plan = plan_ask(games, req)
    for r in plan["refused"]:
        say(args, f"refused {r['reason']}")
    if args.plan:
        emit(args, {"plan": plan}, lambda: _plan_text(plan))
        return 0
    why = budget_check(plan, args.budget_money, args.budget_calls)
    if why:
        raise CliError(why)
    todo = [g for g in games if g.refusal is None and g.pending]
    if todo and not args.no_preflight:
        from .run import check_backends

        specs: dict[str, Any] = {}
        for g in todo:
            names = [req.backend] if req.observer else g.game.seat_backends()
            for n in names:
                if n in g.cfg.backends:
                    specs.setdefault(n, g.cfg.backends[n])
        check_backends(specs, args)
    say(args, "\n".join(_plan_text(plan)))
    bar = None
    if not args.quiet and todo:
        import sys

        from tqdm import tqdm

        bar = tqdm(total=plan["calls"], unit="call", file=sys.stderr, dynamic_ncols=True, desc=f"layer {req.layer}")
    try:
        res = run_closing(run_ask(games, req, on_record=(lambda rec: bar.update(1)) if bar is not None else None,
                                  poll_s=args.poll_s, say=lambda m: say(args, m), budget_money=args.budget_money))  # fmt: skip
    except AskError as exc:
        raise CliError(str(exc)) from None
    finally:
        if bar is not None:
            bar.close()
    out = {"layer": req.layer, "plan": plan, **res}
    emit(args, out, lambda: _ask_text(out))
    return 1 if res["failed_games"] else 0


def _plan_text(plan: dict[str, Any]) -> Iterator[str]:
    money = f", money {plan['money']:.4f}" if plan.get("money") is not None else ""
    batch = f" in {plan['batches']} batch(es), one per chain position" if plan.get("batch") else ""
    yield (f"layer {plan['layer']}: {plan['calls']} calls to ask{batch} over {plan['games_to_ask']} of {plan['games']} games "
           f"({plan['calls_answered_before']} answered before); ~{plan['prompt_tokens']:,} prompt + "
           f"~{plan['completion_tokens']:,} completion tokens{money}")  # fmt: skip
    yield f"  tokens: prompt from {plan['prompt_basis']}; completion from {plan['completion_basis']}"
    if plan["refused"]:
        yield f"  refused {len(plan['refused'])} game(s) (listed above)"


def _ask_text(out: dict[str, Any]) -> Iterator[str]:
    for g in out["games"]:
        flag = f"  INVALID: {g['invalid_reason']}" if g.get("invalid") else ""
        yield f"{g['game_id']}: {g['answered']}/{g['scheduled']} answered, {g['failed']} failed, {g['pending']} pending{flag}"
    for g in out["failed_games"]:
        yield f"{g['game_id']}: error: {g['error']}"
    if out.get("stopped"):
        yield f"stopped: {out['stopped']}"
    yield (f"layer {out['layer']}: {out['asked']} calls asked now over {len(out['games'])} games; "
           f"read it with --probe-layer {out['layer']} (analyze, compare, report) or the app's sidebar")  # fmt: skip
