"""Bot balance: Mafia win rates of offline bot games, per config and per preset.

    python bench/bot_balance.py [--seeds 30] [--configs classic,sport,open_table,imbalanced] [--json]

Two passes, probes and snapshots off, seeds 0..N-1:

* **configs**: each config as shipped (classic.yaml seats five presets; the ten-seat
  tournament configs are all-``balanced``) -> Mafia win rate, draws, mean rounds;
* **presets**: each config again with every town seat played by one preset and every Mafia
  seat by ``balanced`` ("preset as town"), then the reverse ("preset as Mafia"); a seat's
  preset is chosen from the role in its own system prompt, so the deal stays the seed's.

Lower "as town" = a better town preset; higher "as Mafia" = a better Mafia preset.
``--json`` prints one object.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mafiascope.backends.bot import BotBackend, list_presets  # noqa: E402
from mafiascope.backends.registry import BotSpec  # noqa: E402
from mafiascope.backends.bot.reader import read_identity  # noqa: E402
from mafiascope.config import load_game_config  # noqa: E402
from mafiascope.play.game import play_game  # noqa: E402
from mafiascope.logs.schema import MAFIA_ROLES  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
CONFIGS = {
    "classic": "configs/classic.yaml",
    "sport": "configs/tournament_sport.yaml",
    "open_table": "configs/tournament_open_table.yaml",
    "imbalanced": "configs/tournament_imbalanced.yaml",
}


class RoleRouter:
    """One backend for every seat: Mafia seats are played by one preset, town seats by another."""

    type = "bot"

    def __init__(self, town: str, mafia: str):
        self.name = f"{town}-vs-{mafia}"
        self.town, self.mafia = BotBackend("town", town), BotBackend("mafia", mafia)

    def _pick(self, messages: list[dict[str, str]]) -> BotBackend:
        system = messages[0].get("content", "") if messages and messages[0].get("role") == "system" else ""
        return self.mafia if read_identity(system).role in MAFIA_ROLES else self.town

    async def complete(self, request):  # noqa: ANN001
        return await self._pick(request.messages).complete(request)

    def describe(self) -> dict[str, Any]:
        return {"type": "bot", "name": self.name, "town": self.town.preset, "mafia": self.mafia.preset}

    async def aclose(self) -> None:
        await self.town.aclose()
        await self.mafia.aclose()


def _routed(cfg):  # noqa: ANN001
    seats = [s.model_copy(update={"backend": "router"}) for s in cfg.seats]
    return cfg.model_copy(update={"seats": seats, "backends": {"router": BotSpec(preset="balanced")}})


def play_one(task: tuple[str, int, str | None, str | None]) -> tuple[str, int]:
    """(winner, rounds) of one game: config key, seed, town preset, Mafia preset (None: as configured)."""
    key, seed, town, mafia = task
    cfg = load_game_config(ROOT / CONFIGS[key])
    backends = None
    if town is not None:
        cfg = _routed(cfg)
        backends = {"router": RoleRouter(town, mafia or "balanced")}
    with tempfile.TemporaryDirectory() as tmp:
        res = asyncio.run(play_game(cfg, logs_dir=tmp, seed=seed, game_id=f"{key}-{seed}", probes=False, snapshots=False, backends=backends))
    return (res.winner if res.winner in ("Mafia", "Villagers") else "Draw"), res.rounds


def summarise(results: list[tuple[str, int]]) -> dict[str, Any]:
    wins = {"Mafia": 0, "Villagers": 0, "Draw": 0}
    for w, _ in results:
        wins[w] += 1
    n = max(1, len(results))
    return {"mafia_win_rate": round(wins["Mafia"] / n, 3), "wins": wins,
            "mean_rounds": round(sum(r for _, r in results) / n, 2), "games": len(results)}  # fmt: skip


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=30)
    ap.add_argument("--configs", default=",".join(CONFIGS))
    ap.add_argument("--presets", default=",".join(list_presets()))
    ap.add_argument("--no-presets", action="store_true", help="skip the per-preset pass")
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    keys = [k for k in args.configs.split(",") if k]
    presets = [] if args.no_presets else [p for p in args.presets.split(",") if p]
    t0 = time.perf_counter()
    groups: list[tuple[str, str, str | None, str | None]] = [("configs", k, None, None) for k in keys]
    for p in presets:
        groups += [("as_town", k, p, "balanced") for k in keys] + [("as_mafia", k, "balanced", p) for k in keys]
    tasks = [(k, seed, town, mafia) for _, k, town, mafia in groups for seed in range(args.seeds)]
    if args.workers > 1:
        with ProcessPoolExecutor(args.workers) as ex:
            results = list(ex.map(play_one, tasks, chunksize=4))
    else:
        results = [play_one(t) for t in tasks]
    out: dict[str, Any] = {"seeds": args.seeds, "configs": {}, "as_town": {}, "as_mafia": {}}
    for i, (group, k, town, mafia) in enumerate(groups):
        r = summarise(results[i * args.seeds : (i + 1) * args.seeds])
        if group == "configs":
            out["configs"][k] = r
        else:
            p = town if group == "as_town" else mafia
            out[group].setdefault(p, {})[k] = r["mafia_win_rate"]
    out["seconds"] = round(time.perf_counter() - t0, 1)
    if args.json:
        print(json.dumps(out))
        return 0
    print(f"Mafia win rate, seeds 0-{args.seeds - 1}, probes off")
    for k, r in out["configs"].items():
        w = r["wins"]
        print(f"  {k:<11} {r['mafia_win_rate']:>5.0%}  (Mafia {w['Mafia']}, town {w['Villagers']}, draw {w['Draw']}; {r['mean_rounds']} rounds)")
    if out["as_town"]:
        print("\nMafia win rate with every town seat one preset (Mafia balanced) | every Mafia seat one preset (town balanced)")
        print(f"  {'preset':<11}" + "".join(f"{k:>12}" for k in keys) + "  |" + "".join(f"{k:>12}" for k in keys))
        for p in out["as_town"]:
            row = "".join(f"{out['as_town'][p][k]:>12.0%}" for k in keys)
            row2 = "".join(f"{out['as_mafia'][p][k]:>12.0%}" for k in keys)
            print(f"  {p:<11}{row}  |{row2}")
    print(f"\n{out['seconds']} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
