"""mafiascope.dataframes on N games against reading the same games with ``read_game``, in one run.

Corpus: ``--unique K`` probed bot games of our engine (``mafiascope batch``, made once in the work
directory and reused: ``bench/analytics.py``'s ``make_engine``), copied under new ids up to
``--games N`` (``make_copies``: ``game.jsonl`` rewritten, the probe log hard-linked).

Each measurement runs in a fresh interpreter, wall and CPU seconds:

* ``cold``: the analytics cache deleted first; ``load`` (the parse into the cache) then the five frames;
* ``warm``: the cache built; ``load`` then each frame (``games_df``, ``seats_df``, ``votes_df``,
  ``probes_df``, ``beliefs_df``), with row counts and peak memory;
* ``read_game``: what a notebook did before -- ``read_game(path)`` and its typed probe records
  (``log.probes``) for each of ``--sample`` games (default 100), and the per-game figure times N.

The ratio printed is the read_game estimate for N games over the warm load plus all five frames.
Usage: python bench/dataframes.py [--games 1000] [--unique 100] [--sample 100] [--workdir DIR] [--json]
Timed figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

FRAMES = ("games_df", "seats_df", "votes_df", "probes_df", "beliefs_df")


def child(path: str, cache: str, what: str, sample: int) -> dict:
    import resource

    res: dict = {}
    if what == "read_game":
        from mafiascope.logs import read_game

        dirs = sorted(d for d in Path(path).iterdir() if (d / "game.jsonl").is_file())[:sample]
        t0, c0 = time.perf_counter(), time.process_time()
        records = sum(len(read_game(d).probes) for d in dirs)
        res = {"games": len(dirs), "probe_records": records, "wall_s": round(time.perf_counter() - t0, 3),
               "cpu_s": round(time.process_time() - c0, 3)}
    else:
        from mafiascope import dataframes as D

        t0, c0 = time.perf_counter(), time.process_time()
        c = D.load(path, cache_dir=cache)
        kids = resource.getrusage(resource.RUSAGE_CHILDREN)
        res = {"games": c.m, "load_wall_s": round(time.perf_counter() - t0, 3), "load_cpu_s": round(time.process_time() - c0, 3),
               "load_workers_cpu_s": round(kids.ru_utime + kids.ru_stime, 3)}
        for name in FRAMES:
            t1, c1 = time.perf_counter(), time.process_time()
            df = getattr(D, name)(c)
            res[name] = {"rows": len(df), "wall_s": round(time.perf_counter() - t1, 3), "cpu_s": round(time.process_time() - c1, 3)}
        res["total_wall_s"] = round(time.perf_counter() - t0, 3)
        res["total_cpu_s"] = round(time.process_time() - c0, 3)
    res["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    return res


def _child(args: list[str]) -> dict:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, __file__, "--child", *args], capture_output=True, text=True, check=True,
                         env=env, cwd=str(ROOT))
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--games", type=int, default=1000)
    ap.add_argument("--unique", type=int, default=100, help="real engine games to play (the rest are copies)")
    ap.add_argument("--sample", type=int, default=100, help="games read with read_game")
    ap.add_argument("--workdir")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--child", nargs=4, metavar=("PATH", "CACHE", "WHAT", "SAMPLE"))
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(args.child[0], args.child[1], args.child[2], int(args.child[3]))))
        return 0
    from analytics import _game_dirs, make_copies, make_engine

    work = Path(args.workdir or tempfile.mkdtemp(prefix="mafiascope-df-bench-"))
    engine, _ = make_engine(work / f"engine_{args.unique}", min(args.unique, args.games))
    corpus = make_copies(_game_dirs(engine), work / f"corpus_{args.games}", args.games, probes=True)
    cache = work / "cache"
    shutil.rmtree(cache, ignore_errors=True)
    cold = _child([str(corpus), str(cache), "frames", "0"])
    warm = _child([str(corpus), str(cache), "frames", "0"])
    base = _child([str(corpus), str(cache), "read_game", str(args.sample)])
    per_game = base["cpu_s"] / max(base["games"], 1)
    out = {"games": args.games, "cold": cold, "warm": warm, "read_game": base,
           "read_game_cpu_s_estimate_for_all": round(per_game * args.games, 1),
           "ratio_read_game_over_warm_frames_cpu": round(per_game * args.games / max(warm["total_cpu_s"], 1e-9), 1)}
    if args.json:
        print(json.dumps(out, indent=1))
        return 0
    print(f"{args.games} games ({args.unique} played, the rest copies), work dir {work}")
    for label, r in (("cold", cold), ("warm", warm)):
        frames = ", ".join(f"{n} {r[n]['rows']:,} rows {r[n]['cpu_s']:.2f} s" for n in FRAMES)
        print(f"  {label}: load {r['load_wall_s']:.2f} s wall ({r['load_cpu_s']:.2f} s CPU + {r['load_workers_cpu_s']:.2f} s "
              f"in workers); {frames}; total {r['total_wall_s']:.2f} s wall, {r['total_cpu_s']:.2f} s CPU, "
              f"peak {r['peak_rss_mb']:.0f} MB")
    print(f"  read_game + probes: {base['games']} games in {base['cpu_s']:.2f} s CPU ({1000 * per_game:.0f} ms a game; "
          f"{out['read_game_cpu_s_estimate_for_all']:.0f} s for {args.games}), peak {base['peak_rss_mb']:.0f} MB")
    print(f"  ratio (read_game for all / warm load + five frames, CPU): {out['ratio_read_game_over_warm_frames_cpu']}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
