"""`mafiascope run` (one game) and `mafiascope batch` (many games)."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ...backends.registry import run_closing
from ...config import ConfigError, GameConfig, load_game_config, shipped_config
from ...logs import kinds as K
from .. import CliError, emit, say
from ..options import add_fault_budget_option, add_json_flag, add_preflight_option

DEFAULT_LOGS = "logs"
CONFIG_HELP = ("game config YAML: a path, or a shipped config by name from any directory "
               "(classic, configs/classic.yaml, tournament_sport ...; default: %(default)s)")


def add_game_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("-c", "--config", default="configs/classic.yaml", help=CONFIG_HELP)
    p.add_argument("--logs", default=DEFAULT_LOGS, help="logs directory; each game writes <logs>/<game_id>/ (default: %(default)s)")
    p.add_argument("--no-probes", action="store_true", help="play without the probe battery")
    p.add_argument("--no-snapshots", action="store_true", help="do not write state.jsonl")
    p.add_argument("--probes-file", help="probe battery YAML to use instead of the config's")
    add_json_flag(p, "print one JSON object instead of text")
    add_fault_budget_option(p, "the config's fault_budget, 0.2")
    add_preflight_option(p)


def check_backends(config_or_specs: Any, args: argparse.Namespace) -> None:
    """The backend preflight (docs/backends.md) unless ``--no-preflight``; a failure is a CliError."""
    if getattr(args, "no_preflight", False):
        return
    from ...backends.preflight import PreflightError, run_preflight

    try:
        run_preflight(config_or_specs)
    except PreflightError as exc:
        raise CliError(str(exc)) from None


def fault_budget_override(args: argparse.Namespace) -> float | None:
    value = getattr(args, "fault_budget", None)
    if value is not None and not 0.0 <= value <= 1.0:
        raise CliError(f"--fault-budget {value:g}: must be a share between 0 and 1 (0.2 = 20% of the moves)")
    return value


def config_path(ref: str) -> Path:
    """``-c`` as given, or, for a relative path that is not a file here, the shipped config of that
    name (so ``-c configs/classic.yaml``, ``-c classic`` and the default work from any directory)."""
    path = Path(ref)
    if path.is_absolute() or path.is_file():
        return path
    return shipped_config(path) or path


def load_config(args: argparse.Namespace) -> GameConfig:
    try:
        cfg = load_game_config(config_path(args.config))
    except ConfigError as exc:
        raise CliError(str(exc)) from None
    if getattr(args, "probes_file", None):
        path = Path(args.probes_file)
        if not path.is_file():
            raise CliError(f"--probes-file: {path} not found")
        cfg.probes.battery = str(path.resolve())
        cfg.probes.probes = None
    budget = fault_budget_override(args)
    if budget is not None:
        cfg.fault_budget = budget
    preflight(cfg, args)
    return cfg


def preflight(cfg: GameConfig, args: argparse.Namespace) -> None:
    """Fail before any game starts (and before any directory is made) on what would fail every game:
    a probe battery that does not load, a backend whose ``${VAR}`` key or token is set nowhere, a
    backend that does not answer (the preflight call)."""
    from ...backends.base import BackendError
    from ...backends.registry import build_backends
    from ...probes.dsl import BatteryError, battery_for_config

    if cfg.probes.enabled and not getattr(args, "no_probes", False):
        try:
            battery_for_config(cfg)
        except BatteryError as exc:
            raise CliError(str(exc)) from None
    try:  # the process-wide instances the games will share (same cache key as play_game's)
        build_backends(cfg.backends, logs_dir=getattr(args, "logs", None))
    except (BackendError, ValueError) as exc:
        raise CliError(str(exc)) from None
    check_backends(cfg, args)


def _flags(args: argparse.Namespace) -> dict[str, Any]:
    return {"probes": False if args.no_probes else None, "snapshots": False if args.no_snapshots else None}


def _progress(rec: dict[str, Any]) -> None:
    kind = K.of(rec)
    if kind == K.SETUP:
        roles = ", ".join(f"{p['name']}={p['role']}" for p in rec["players"])
        print(f"game {rec['game_id']}: {roles}", file=sys.stderr)
        return
    where = f"R{rec.get('round')}" + (f".{rec['msg_seq']}" if rec.get("msg_seq") is not None else "")
    if "player" in rec:
        text = (rec.get("response") or "").replace("\n", " ")
        tail = f" -> {rec['target']}" if rec.get("target") else ""
        flag = " [fallback]" if rec.get("fault") else ""
        print(f"{where:>7} {kind:<13} {rec['player']}{tail}{flag}: {text[:90]}", file=sys.stderr)
    elif kind in (K.NIGHT_KILL, K.NIGHT_SAVE, K.DAY_ELIMINATE, K.NO_ELIMINATION, K.NIGHT_NO_KILL):
        detail = rec.get("victim") or rec.get("saved") or rec.get("eliminated") or rec.get("reason")
        print(f"{where:>7} {kind:<13} {detail}", file=sys.stderr)


def _take_human_seat(cfg: GameConfig, idx: int, inner: Any) -> Any:
    """Give config seat ``idx`` to a person at this terminal (moves read from stdin, never probed)."""
    from ...backends.registry import HumanSpec, Source, mark_source

    if not 0 <= idx < len(cfg.seats):
        raise CliError(f"--human: seat index must be 0..{len(cfg.seats) - 1}")
    you = HumanSpec(mode="stdin", label="human")
    mark_source([you], Source.OPERATOR)  # the operator's own command line: this terminal plays the seat
    cfg.backends["you"] = you
    cfg.seats[idx].backend = "you"

    def on_event(rec: dict[str, Any]) -> None:
        if K.of(rec) == K.SETUP:
            me = next(p for p in rec["players"] if p["backend"] == "you")
            mafia = [p["name"] for p in rec["players"] if p["role"] in ("Mafia", "Don") and p["name"] != me["name"]]
            partners = f"; your partners: {', '.join(mafia)}" if me["role"] in ("Mafia", "Don") else ""
            print(f"You are {me['name']}, secret role {me['role']}{partners}.", flush=True)
        elif inner is not None:
            inner(rec)

    return on_event


def cmd_run(args: argparse.Namespace) -> int:
    from ...play.game import play_game
    from ...logs.paths import UnsafePathError
    from ...logs.schema import validate_game_id

    cfg = load_config(args)
    if args.game_id:
        try:
            validate_game_id(args.game_id)
        except ValueError as exc:
            raise CliError(f"--game-id: {exc}") from None
    on_event = None if (args.json or args.quiet) else _progress
    if args.human is not None:
        on_event = _take_human_seat(cfg, args.human, on_event)
    try:
        res = run_closing(play_game(cfg, logs_dir=args.logs, seed=args.seed, game_id=args.game_id, on_event=on_event, **_flags(args)))
    except (FileExistsError, UnsafePathError) as exc:
        raise CliError(str(exc)) from None
    out = {"game_id": res.game_id, "path": res.path, "winner": res.winner, "rounds": res.rounds, "reason": res.reason,
           "faults": res.faults, "invalid": res.invalid, "invalid_reason": res.invalid_reason}  # fmt: skip
    emit(args, out, [f"winner: {res.winner} ({res.reason}) after {res.rounds} rounds; faults: {res.faults}",
                     *([f"INVALID game (left out of analytics): {res.invalid_reason}"] if res.invalid else []), res.path])
    return 1 if res.invalid else 0


def cmd_batch(args: argparse.Namespace) -> int:
    from ...play.batch import BatchExists, run_batch
    from ...logs.schema import validate_game_id

    if not 1 <= args.n <= 100000:
        raise CliError("-n must be between 1 and 100000")
    if args.dry_run:
        return _batch_dry_run(args)
    cfg = load_config(args)
    done = [0]

    def tick(res: Any) -> None:
        done[0] += 1
        say(args, f"[{done[0]}/{args.n}] {res.game_id}: {res.winner} in {res.rounds} rounds")

    if args.resume and not args.id_prefix:
        raise CliError("--resume: a batch is resumed by its --id-prefix (its ledger is <logs>/.batches/<prefix>/)")
    if args.id_prefix:
        longest = f"{args.id_prefix}-{args.n - 1:04d}"  # the ids the batch will use: <prefix>-0000 ...
        try:
            validate_game_id(args.id_prefix)
        except ValueError as exc:
            raise CliError(f"--id-prefix: {exc}") from None
        try:
            validate_game_id(longest)
        except ValueError:
            raise CliError(f"--id-prefix: too long: the game ids would be up to {len(longest)} characters "
                           f"({longest[:20]}...); game ids have at most 128") from None
        taken = [f"{args.id_prefix}-{i:04d}" for i in range(args.n) if os.path.lexists(Path(args.logs) / f"{args.id_prefix}-{i:04d}")]
        if taken and not args.resume:
            more = f" (and {len(taken) - 1} more)" if len(taken) > 1 else ""
            raise CliError(f"--id-prefix {args.id_prefix}: {Path(args.logs) / taken[0]} already holds a game{more}; "
                           "choose another prefix or --logs")  # fmt: skip
    from ...play.runner import RunnerError

    try:
        res = run_closing(run_batch(cfg, args.n, logs_dir=args.logs, parallel=args.parallel, seed_base=args.seed_base,
                                    game_id_prefix=args.id_prefix, on_result=tick, resume=args.resume, **_flags(args)))  # fmt: skip
    except (RunnerError, BatchExists) as exc:
        raise CliError(str(exc)) from None
    summary = res.summary()
    summary["logs"] = str(Path(args.logs))
    emit(args, summary, lambda: _batch_text(summary, res))
    return 1 if (res.errors and not res.results) or res.skipped or summary["invalid"] else 0


def _batch_text(summary: dict[str, Any], res: Any) -> Iterator[str]:
    yield (f"{summary['games']} games in {summary['wall_s']} s ({summary['games_per_s']} games/s); winners: {summary['winners']}; "
           f"errors: {summary['errors']}; invalid: {len(summary['invalid'])}")  # fmt: skip
    for e in res.errors:
        yield f"  game {e['index']} (seed {e['seed']}): {e['error']}"
    for e in res.skipped:
        yield f"  skipped {e['game_id']}: {e['reason']}"
    for r in res.results:
        if r.invalid:
            yield f"  invalid {r.game_id}: {r.invalid_reason}"


def _batch_dry_run(args: argparse.Namespace) -> int:
    """The estimate of the batch (no game played, no key needed): the study estimator on this config."""
    from ...study.estimate import estimate_config

    try:
        cfg = load_game_config(config_path(args.config))
    except ConfigError as exc:
        raise CliError(str(exc)) from None
    if args.probes_file:
        if not Path(args.probes_file).is_file():
            raise CliError(f"--probes-file: {args.probes_file} not found")
        cfg.probes.battery, cfg.probes.probes = str(Path(args.probes_file).resolve()), None
    try:
        est = estimate_config(cfg, args.n, probes=not args.no_probes)
    except ValueError as exc:
        raise CliError(str(exc)) from None
    emit(args, est, f"{est['games']} games: about {est['calls']:,} calls {est['calls_90']} ({est['act_calls']:,} acting, "
                    f"{est['probe_calls']:,} probe), {est['prompt_tokens']:,} prompt + {est['completion_tokens']:,} completion tokens; "
                    f"{est['paid_share']:.0%} of seats on non-bot backends [{est['source']}]")  # fmt: skip
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("run", help="play one game and write its logs",
                       description="Play one game and write <logs>/<game_id>/game.jsonl, introspection.jsonl and state.jsonl "
                                   "record by record. Progress goes to stderr; the last stdout line is the game directory.")
    add_game_options(p)
    p.add_argument("--seed", type=int, help="game seed (same seed + offline bots = same game)")
    p.add_argument("--game-id", help="directory name for the game (default: a new UUID); refused if it already holds a game.jsonl")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress lines")
    p.add_argument("--human", type=int, metavar="SEAT",
                   help="play config seat SEAT (0-based index into the config's seats) yourself in this terminal; "
                        "finish each reply with an empty line; human seats are not probed")
    p.set_defaults(func=cmd_run)

    b = sub.add_parser("batch", help="play many games concurrently")
    add_game_options(b)
    b.add_argument("-n", type=int, default=10, help="number of games (default: %(default)s)")
    b.add_argument("--parallel", type=int, default=8, help="games in flight at once (default: %(default)s)")
    b.add_argument("--seed-base", type=int, default=0, help="game i gets seed seed_base + i (default: %(default)s)")
    b.add_argument("--id-prefix", help="name games <prefix>-0000, <prefix>-0001, ... instead of random UUIDs; an id whose "
                                       "directory exists is refused (before the start) or skipped (taken meanwhile)")
    b.add_argument("--resume", action="store_true",
                   help="continue the batch named by --id-prefix from its ledger (<logs>/.batches/<prefix>/): games never "
                        "started and games of a killed run are played, finished ones kept; also joins a batch running now")
    b.add_argument("--dry-run", action="store_true",
                   help="play nothing: print the estimate (calls, tokens with a 90%% interval) from the study profiles (docs/studies.md)")
    b.set_defaults(func=cmd_batch)
