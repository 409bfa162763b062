"""``mafiascope study calibrate``: measure the bundled estimate profiles from offline bot games.

For every rule set (classic, classic_sheriff, sport, open_table, imbalanced) and language (en,
ru) it plays ``games`` games of the bot presets (rotated over the seats) with the chained
battery, one at a time in a temporary directory, and writes the measured profile
(:func:`mafiascope.study.estimate.measure_games`) to ``mafiascope/study/defaults.json``. With
``rule_sets`` (``--rules``) only those profiles are measured and the others in the file are kept,
so the cheap classic profiles can take more games than the ten-seat ones.

Seconds are CPU time of this process per game (``seconds_basis: cpu``): offline bot games are
CPU-bound, and on a machine shared with other work the wall time measures the neighbours, not
the game. The estimate's duration is therefore the time on an idle core; a loaded machine takes
longer (docs/benchmarks.md gives both on the shipped example).
"""

from __future__ import annotations

import asyncio
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from ..arena.schedule import game_seed
from ..config import GameConfig, ProbesConfig, SeatSpec
from ..provenance import provenance
from .estimate import DEFAULTS_FILE, measure_games
from .spec import arm_rules

RULE_SETS = ("classic", "classic_sheriff", "sport", "open_table", "imbalanced")
LANGUAGES = ("en", "ru")


async def _play(cfgs: list[tuple[GameConfig, int, str]], logs: Path) -> dict[str, float]:
    """Play the games one at a time; returns each game's CPU seconds (this process's, while it alone ran)."""
    from ..play.game import play_game

    cpu: dict[str, float] = {}
    for cfg, seed, gid in cfgs:
        c0 = time.process_time()
        await play_game(cfg, logs_dir=logs, seed=seed, game_id=gid)
        cpu[gid] = time.process_time() - c0
    return cpu


def calibrate(games: int = 8, out: str | Path | None = DEFAULTS_FILE, rule_sets: tuple[str, ...] = RULE_SETS,
              languages: tuple[str, ...] = LANGUAGES, seed: int = 0) -> dict[str, Any]:  # fmt: skip
    from ..backends.bot.presets import list_presets

    presets = list_presets()
    profiles: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="mafiascope-calibrate-") as tmp:
        for rs in rule_sets:
            rules = arm_rules(rs)
            for lang in languages:
                key = f"{rules.name}|{lang}"
                cfgs = []
                for i in range(games):
                    seats = [SeatSpec(backend=presets[(i + j) % len(presets)]) for j in range(rules.n_seats)]
                    cfg = GameConfig(name=f"calibrate-{rs}-{lang}", rules=rules, language=lang, seats=seats,
                                     backends={p: {"type": "bot", "preset": p} for p in presets},
                                     probes=ProbesConfig(battery="chained"), snapshots=False)  # fmt: skip
                    cfgs.append((cfg, game_seed(seed, f"{key}-{i}"), f"cal-{rs}-{lang}-{i:03d}"))
                logs = Path(tmp) / key.replace("|", "-")
                cpu = asyncio.run(_play(cfgs, logs))
                prof = measure_games(sorted(p for p in logs.iterdir() if p.is_dir()), cpu_seconds=cpu)
                profiles[key] = {"rules": rules.name, "family": rules.family, "language": lang, "battery": "chained", **prof}
    data = {"profiles": profiles, "made_by": "mafiascope study calibrate", "provenance": provenance({"seed": seed})}
    if out is not None and Path(out).is_file():  # keep the profiles not measured now
        old = json.loads(Path(out).read_text(encoding="utf-8")).get("profiles") or {}
        data["profiles"] = {**old, **profiles}
    if out is not None:
        Path(out).write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return data
