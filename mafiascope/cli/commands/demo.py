"""`mafiascope demo`: regenerate the bundled demo corpus (data/demo) deterministically."""

from __future__ import annotations

import argparse
import asyncio
import shutil
import sys
from pathlib import Path

from ...config import REPO_ROOT, load_game_config
from .. import CliError, print_json

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


def cmd_demo(args: argparse.Namespace) -> int:
    from ...engine.runner import play_game

    out = Path(args.out)
    games = []
    for gid, config, seed, battery, snapshots in DEMO_GAMES:
        path = REPO_ROOT / config
        if not path.is_file():
            continue  # a rule set whose config is not shipped in this checkout
        target = out / gid
        if target.exists():
            if not args.force:
                raise CliError(f"{target} exists; pass --force to regenerate the demo corpus")
            shutil.rmtree(target)
        cfg = load_game_config(path)
        if battery:
            cfg.probes.enabled, cfg.probes.battery, cfg.probes.probes = True, battery, None
        res = asyncio.run(play_game(cfg, logs_dir=out, seed=seed, game_id=gid, snapshots=snapshots))
        games.append({"game_id": gid, "config": config, "seed": seed, "winner": res.winner, "rounds": res.rounds})
        if not args.json:
            print(f"{gid}: {res.winner} in {res.rounds} rounds", file=sys.stderr)
    if args.json:
        print_json({"out": str(out), "games": games})
    else:
        print(f"{len(games)} demo games in {out}")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("demo", help="regenerate the demo corpus (probed games with snapshots, fixed seeds)")
    p.add_argument("--out", default=str(REPO_ROOT / "data" / "demo"), help="output directory (default: data/demo)")
    p.add_argument("--force", action="store_true", help="replace existing demo games")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_demo)
