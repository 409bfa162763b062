"""Games per second for 7-seat offline games (bots), with and without probes.

Usage: python bench/engine_throughput.py [--games 40] [--parallel 8] [--json]
Prints sequential and parallel throughput and their ratio, in one run on this machine,
each measured two ways:

* cold -- fresh seeds and fresh bot instances for every repeat (what a new study sees;
  the bots' prefix caches start empty), the mean of the repeats;
* warm -- the same seeds played again by the same bot instances (their caches already
  hold every context), the best of the repeats. Earlier docs reported only this figure,
  which overstates throughput about tenfold.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mafiascope.backends.registry import clear_cache  # noqa: E402
from mafiascope.config import load_game_config  # noqa: E402
from mafiascope.play.batch import run_batch  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


_SEEDS = iter(range(10_000, 10_000_000, 10_000))


def _once(cfg, n: int, parallel: int, probes: bool, seed_base: int) -> tuple[float, float, object, int]:
    with tempfile.TemporaryDirectory() as d:
        t0, c0 = time.perf_counter(), time.process_time()
        res = asyncio.run(run_batch(cfg, n, logs_dir=d, parallel=parallel, seed_base=seed_base, probes=probes, snapshots=False))
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        size = sum(f.stat().st_size for f in Path(d).rglob("*.jsonl"))
    assert not res.errors, res.errors
    return wall, cpu, res, size


def measure(cfg, n: int, parallel: int, probes: bool, warm: bool, repeats: int = 3) -> dict:
    """Cold: fresh seeds and bots per repeat, mean; warm: the same games replayed, best of the repeats."""
    runs = []
    if warm:
        base = next(_SEEDS)
        _once(cfg, n, parallel, probes, base)  # fills the bots' caches with these games
        runs = [_once(cfg, n, parallel, probes, base) for _ in range(repeats)]
        wall, cpu, res, size = min(runs, key=lambda r: r[0])
    else:
        for _ in range(repeats):
            clear_cache()  # new bot instances: empty caches
            runs.append(_once(cfg, n, parallel, probes, next(_SEEDS)))
        wall = sum(r[0] for r in runs) / repeats
        cpu = sum(r[1] for r in runs) / repeats
        res, size = runs[-1][2], sum(r[3] for r in runs) // repeats
    return {"games": n, "parallel": parallel, "probes": probes, "caches": "warm" if warm else "cold",
            "wall_s": round(wall, 3), "cpu_s": round(cpu, 3), "games_per_s": round(n / wall, 2),
            "mean_rounds": round(sum(r.rounds for r in res.results) / n, 2), "bytes_per_game": size // n}  # fmt: skip


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--games", type=int, default=40)
    ap.add_argument("--parallel", type=int, default=8)
    ap.add_argument("--config", default=str(REPO / "configs/classic.yaml"))
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    cfg = load_game_config(args.config)
    _once(cfg, 2, 1, True, 1)  # warm-up: imports, not counted
    small = max(4, args.games // 4)
    rows = [
        measure(cfg, args.games, 1, False, warm=False),
        measure(cfg, args.games, args.parallel, False, warm=False),
        measure(cfg, small, 1, True, warm=False),
        measure(cfg, small, args.parallel, True, warm=False),
        measure(cfg, args.games, 1, False, warm=True),
        measure(cfg, small, 1, True, warm=True),
    ]
    out = {
        "bench": "engine_throughput",
        "runs": rows,
        "parallel_vs_sequential_unprobed": round(rows[1]["games_per_s"] / rows[0]["games_per_s"], 2),
        "parallel_vs_sequential_probed": round(rows[3]["games_per_s"] / rows[2]["games_per_s"], 2),
        "probed_vs_unprobed_cost": round(rows[0]["games_per_s"] / rows[2]["games_per_s"], 2),
        "warm_vs_cold_unprobed": round(rows[4]["games_per_s"] / rows[0]["games_per_s"], 2),
        "warm_vs_cold_probed": round(rows[5]["games_per_s"] / rows[2]["games_per_s"], 2),
        "seconds_for_20_games_unprobed_cold": round(20 / rows[1]["games_per_s"], 2),
        "seconds_for_20_games_probed_cold": round(20 / rows[3]["games_per_s"], 2),
    }
    if args.json:
        print(json.dumps(out))
    else:
        for r in rows:
            print(f"{r['caches']} probes={'on ' if r['probes'] else 'off'} parallel={r['parallel']:>2}: {r['games_per_s']:>7} games/s "
                  f"({r['games']} games, {r['wall_s']} s wall, {r['cpu_s']} s CPU, {r['mean_rounds']} rounds, "
                  f"{r['bytes_per_game']} B/game)")  # fmt: skip
        for k, v in out.items():
            if k not in ("bench", "runs"):
                print(f"{k}: {v}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
