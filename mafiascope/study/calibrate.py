"""``mafiascope study calibrate``: measure the bundled estimate profiles from offline bot games.

For every rule set (classic, classic_sheriff, sport, open_table, imbalanced) and language (en,
ru) it plays ``games`` games with the chained battery, one at a time in a temporary directory,
cycling over line-ups -- the bot presets mixed over the seats, then each preset alone -- so that
the spread between line-ups is measured apart from the spread of games within one (a study's arm
plays one line-up: the first does not average out over its games, the second does), and writes
the measured profile (:func:`mafiascope.study.estimate.measure_games`, game by game) to
``mafiascope/study/defaults.json``. With
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


def lineup(i: int, presets: list[str]) -> tuple[bool, str]:
    """Game i's line-up: (True, "") the presets mixed over the seats, else (False, preset) one preset alone."""
    k = i % (len(presets) + 1)
    return (True, "") if k == 0 else (False, presets[k - 1])


def calibrate(games: int = 12, out: str | Path | None = DEFAULTS_FILE, rule_sets: tuple[str, ...] = RULE_SETS,
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
                    mixed, alone = lineup(i, presets)
                    seats = [SeatSpec(backend=presets[j % len(presets)] if mixed else alone) for j in range(rules.n_seats)]
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


def backtest(game_dirs: list[Path], prompt_per_mtok: float = 1.0, completion_per_mtok: float = 4.0) -> list[dict[str, Any]]:
    """How the plan would have priced games that were played: the games are grouped into arms as a study
    would have run them (one directory, rule set, language, battery and set of backends), each arm is
    estimated from the bundled profiles as a study of that many games (a roster of its backends, each
    at the given price per million tokens), and its planned money and 90 % interval stand beside what its
    games cost by their usage records (``study calibrate --check``; tests/test_study_calibration.py)."""
    from collections import defaultdict

    from ..logs import LogFormatError, read_game
    from ..play.usage import Price, game_usage, money
    from .estimate import estimate_study
    from .schedule import study_schedule
    from .spec import parse_study_spec

    arms: dict[tuple[Any, ...], list[Path]] = defaultdict(list)
    kinds: dict[tuple[Any, ...], dict[str, Any]] = {}
    for gdir in game_dirs:
        try:
            setup = read_game(gdir, skip_corrupt=True).raw_setup
        except LogFormatError:
            continue
        language = str((setup.get("players") or [{}])[0].get("language") or "en")
        probes = _battery_ref(setup.get("probes"), language)
        names = tuple(sorted({str(p.get("backend")) for p in setup.get("players") or []}))
        key = (str(Path(gdir).parent), str(setup.get("rule_set")), language, probes, names)
        arms[key].append(Path(gdir))
        kinds[key] = setup.get("backends") or {}
    price = {"prompt_per_mtok": prompt_per_mtok, "completion_per_mtok": completion_per_mtok}
    out = []
    for (parent, rules, language, probes, names), dirs in arms.items():
        if probes is None:
            continue  # a battery this checkout does not ship
        backends = {b: {**_entry(b, kinds[(parent, rules, language, probes, names)].get(b) or {}), "price": price} for b in names}
        try:
            spec = parse_study_spec({"name": "backtest", "games_per_arm": len(dirs), "backends": backends,
                                     "arms": [{"name": "arm", "lineup": {"roster": list(names)}, "rules": rules, "probes": probes,
                                               "language": language}]}, "backtest")  # fmt: skip
        except ValueError:
            continue  # a rule set or backend this checkout cannot plan
        est = estimate_study(spec, study_schedule(spec))["arms"]["arm"]
        prices: dict[str, Price | None] = {b: Price(**price) for b in names}
        actual = sum((money(game_usage(d)["by_backend"], prices) for d in dirs), 0.0)
        lo, hi = est["money_90"]
        out.append({"games_dir": parent, "rules": rules, "language": language, "probes": probes, "games": len(dirs),
                    "planned": est["money"], "money_90": est["money_90"], "actual": round(actual, 4),
                    "error": round(actual / est["money"] - 1, 4) if est["money"] else None, "covered": lo <= actual <= hi})  # fmt: skip
    return out


def _battery_ref(probes: Any, language: str) -> str | None:
    """The battery a game was probed with as a spec names it: none, a shipped battery's name, or None."""
    from ..probes.dsl import shipped_battery_path

    if not isinstance(probes, dict) or not probes:
        return "none"
    name = str(probes.get("name") or "")
    base = name[: -len(language) - 1] if name.endswith(f"_{language}") else name
    return base if base and shipped_battery_path(base, language) is not None else None


def _entry(name: str, described: dict[str, Any]) -> dict[str, Any]:
    """A registry entry for a backend as the game's setup describes it (only its type and preset matter here)."""
    if described.get("type", "bot") == "bot":
        return {"type": "bot", "preset": described.get("preset") or "balanced"}
    return {"type": "openai", "model": str(described.get("model") or name), "base_url": "http://127.0.0.1:9/v1"}
