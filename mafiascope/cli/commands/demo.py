"""`mafiascope demo`: regenerate the bundled demo corpus (data/demo) and the bundled arena run
(data/arena/demo-bots) deterministically (every record is identical apart from wall-clock fields)."""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
from pathlib import Path

from ...config import REPO_ROOT, load_game_config, shipped_config
from ...logs.paths import safe_rmtree

# the checkout's data/ (bundled corpora); installed from a wheel there is none: data/ in the working dir
DATA_DIR = REPO_ROOT / "data" if (REPO_ROOT / "data").is_dir() else Path("data")
from .. import CliError, emit, say
from ..options import add_json_flag

# (game id, config, seed, battery, snapshots): fixed ids keep app URLs stable across regenerations.
# Snapshots (every seat's context at every step) are kept for the games meant for the Replay page;
# ten-seat games use the suspicion battery. Together this keeps the bundled corpus small.
DEMO_GAMES = [
    ("demo-classic-02", "configs/classic.yaml", 102, None, False),
    ("demo-classic-03", "configs/classic.yaml", 103, None, False),
    ("demo-sheriff-01", "configs/classic_sheriff.yaml", 201, None, True),
    ("demo-sheriff-02", "configs/classic_sheriff.yaml", 202, None, False),
    ("demo-ru-01", "configs/classic_ru.yaml", 301, None, False),
    ("demo-ru-02", "configs/classic_ru.yaml", 302, None, False),
    ("demo-sport-01", "configs/tournament_sport.yaml", 401, "suspicion", False),
    ("demo-open-01", "configs/tournament_open_table.yaml", 501, "suspicion", False),
    ("demo-imbalanced-01", "configs/tournament_imbalanced.yaml", 601, "suspicion", False),
    # played last, so it is the newest game and the one the app opens first
    ("demo-classic-01", "configs/classic.yaml", 101, None, True),
]


# The bundled arena run the Arena page's Leaderboards tab opens on a fresh install: the offline bot
# roster (configs/roster_bots.yaml), balanced schedule, no probes, no snapshots, one game at a time.
DEMO_ARENA = {"rules": ["sport", "open_table", "imbalanced"], "games": 10, "seed": 0}


def demo_arena(out: Path, force: bool) -> dict[str, object]:
    """Play the bundled arena run into ``out`` (its directory name prefixes the game ids)."""
    from ...arena.roster import load_roster
    from ...arena.run import run_arena

    if out.exists():
        if not force:
            raise CliError(f"{out} exists; pass --force to regenerate the demo arena run")
        shutil.rmtree(out)
    return run_arena(load_roster(), DEMO_ARENA["rules"], DEMO_ARENA["games"], out, parallel=1, seed=DEMO_ARENA["seed"],
                     quiet=True)  # fmt: skip


def cmd_demo(args: argparse.Namespace) -> int:
    out = Path(args.out)
    if not args.skip_arena and Path(args.arena_out).exists() and not args.force:  # before playing anything
        raise CliError(f"{args.arena_out} exists; pass --force to regenerate the demo arena run (or --skip-arena)")
    games = [] if args.arena_only else _demo_games(args, out)
    arena = None if args.skip_arena else demo_arena(Path(args.arena_out), args.force)
    if arena is not None:
        say(args, f"arena: {arena['finished']}/{arena['scheduled']} games in {args.arena_out}")
    emit(args, {"out": str(out), "games": games, "arena": arena},
         f"{len(games)} demo games in {out}" + (f"; arena run in {args.arena_out}" if arena is not None else ""))
    return 0 if arena is None or not arena["failures"] else 1


def _demo_games(args: argparse.Namespace, out: Path) -> list[dict[str, object]]:
    from ...play.game import play_game

    games = []
    for gid, config, seed, battery, snapshots in DEMO_GAMES:
        path = shipped_config(config)
        if path is None:
            continue  # a rule set whose config is not shipped in this checkout
        target = out / gid
        if os.path.lexists(target):
            if not args.force:
                raise CliError(f"{target} exists; pass --force to regenerate the demo corpus")
            try:
                safe_rmtree(out, target)
            except ValueError as exc:  # a symlink in place of a demo game: never followed
                raise CliError(str(exc)) from None
        cfg = load_game_config(path)
        if battery:
            cfg.probes.enabled, cfg.probes.battery, cfg.probes.probes = True, battery, None
        res = asyncio.run(play_game(cfg, logs_dir=out, seed=seed, game_id=gid, snapshots=snapshots))
        games.append({"game_id": gid, "config": config, "seed": seed, "winner": res.winner, "rounds": res.rounds})
        say(args, f"{gid}: {res.winner} in {res.rounds} rounds")
    return games


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("demo", help="regenerate the demo corpus (probed games with snapshots, fixed seeds) and the demo arena run")
    p.add_argument("--out", default=str(DATA_DIR / "demo"), help="output directory (default: data/demo)")
    p.add_argument("--arena-out", default=str(DATA_DIR / "arena" / "demo-bots"),
                   help="the bundled arena run's directory (default: data/arena/demo-bots)")
    only = p.add_mutually_exclusive_group()
    only.add_argument("--arena-only", action="store_true", help="regenerate only the arena run")
    only.add_argument("--skip-arena", action="store_true", help="regenerate only the demo games")
    p.add_argument("--force", action="store_true", help="replace existing demo games / arena run")
    add_json_flag(p, 'print {"out", "games": [...], "arena": {...} | null}')
    p.set_defaults(func=cmd_demo)
