"""The study runner's overhead against a bare batch of the same games, and the estimate error.

    python bench/study.py [--spec configs/studies/bots_quick.yaml] [--repeats 3] [--batch 16] [--json]

Each repeat plays the spec's games twice in fresh temporary directories, alternating which
goes first: bare (the same game configs and seeds through ``play_game``, ``parallel`` at a
time, nothing else) and through ``run_study`` (preflight, ledger claims and settles under the
lock, usage and money per game, budget checks, plan, status). One warm-up game per arm comes
first, so neither side pays the imports and first-game caches. Prints the median CPU time of this process (the games run in
it, so this is what the runner adds, less disturbed by other load on the machine) and the
median wall time, the overhead ratios (study / bare - 1; goal under 5 %) and the estimate
error of the study (actual / planned - 1 for calls, tokens, money and duration).

``--batch N`` (default 16, 0: skip) does the same for the ``batch`` front end: N unprobed classic
bot games (``configs/classic.yaml``, seeds 0..N-1, ``parallel`` at a time) bare and through
``run_batch``, which builds a one-arm study and plays it through the same runner and ledger.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mafiascope.backends.registry import close_all  # noqa: E402
from mafiascope.config import load_game_config  # noqa: E402
from mafiascope.play.batch import run_batch  # noqa: E402
from mafiascope.play.game import play_game  # noqa: E402
from mafiascope.study.run import run_study  # noqa: E402
from mafiascope.study.schedule import game_config, study_schedule  # noqa: E402
from mafiascope.study.spec import load_study_spec  # noqa: E402


async def bare(spec, logs: Path, parallel: int) -> None:
    sem = asyncio.Semaphore(parallel)

    async def one(g):
        async with sem:
            await play_game(game_config(spec, g), logs_dir=logs, seed=g.seed, game_id=g.game_id)

    await asyncio.gather(*(one(g) for g in study_schedule(spec)))
    await close_all()  # as every executor does: the bots drop their per-game state


async def bare_batch(cfg, n: int, logs: Path, parallel: int) -> None:
    sem = asyncio.Semaphore(parallel)

    async def one(i: int):
        async with sem:
            await play_game(cfg, logs_dir=logs, seed=i, game_id=f"b-{i:04d}")

    await asyncio.gather(*(one(i) for i in range(n)))
    await close_all()


def batch_overhead(n: int, parallel: int, repeats: int) -> dict:
    """CPU and wall medians of n games bare and through ``run_batch`` (the runner and its ledger)."""
    cfg = load_game_config(Path(__file__).resolve().parent.parent / "configs" / "classic.yaml")
    cfg.probes.enabled, cfg.snapshots = False, False
    t = {"bare": [], "batch": []}
    c = {"bare": [], "batch": []}
    for i in range(repeats):
        with tempfile.TemporaryDirectory(prefix="bench-batch-") as tmp:
            for which in (("bare", "batch") if i % 2 == 0 else ("batch", "bare")):
                t0, c0 = time.perf_counter(), time.process_time()
                if which == "bare":
                    asyncio.run(bare_batch(cfg, n, Path(tmp) / "bare", parallel))
                else:
                    asyncio.run(run_batch(cfg, n, logs_dir=Path(tmp) / "batch", parallel=parallel, seed_base=0, game_id_prefix="b"))
                t[which].append(time.perf_counter() - t0)
                c[which].append(time.process_time() - c0)
    med = {k: statistics.median(v) for k, v in t.items()}
    cmed = {k: statistics.median(v) for k, v in c.items()}
    return {"games": n, "bare_cpu_s": round(cmed["bare"], 3), "batch_cpu_s": round(cmed["batch"], 3),
            "overhead_cpu": round(cmed["batch"] / cmed["bare"] - 1, 4), "bare_s": round(med["bare"], 3),
            "batch_s": round(med["batch"], 3), "overhead": round(med["batch"] / med["bare"] - 1, 4)}  # fmt: skip


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--spec", default=str(Path(__file__).resolve().parent.parent / "configs" / "studies" / "bots_quick.yaml"))
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--batch", type=int, default=16, help="games of the batch front-end comparison (0: skip)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    spec = load_study_spec(args.spec)
    par = spec.executor.parallel
    t_bare, t_study, c_bare, c_study, errors = [], [], [], [], []
    with tempfile.TemporaryDirectory(prefix="bench-study-warm-") as tmp:  # imports and caches, outside the timing
        for arm in spec.arms:  # the first game of each arm: a process's first ten-seat game costs about 4x the CPU
            g = next(x for x in study_schedule(spec) if x.arm == arm.name)
            asyncio.run(play_game(game_config(spec, g), logs_dir=tmp, seed=g.seed, game_id=g.game_id))
    for i in range(args.repeats):
        with tempfile.TemporaryDirectory(prefix="bench-study-") as tmp:
            order = ("bare", "study") if i % 2 == 0 else ("study", "bare")
            for which in order:
                t0, c0 = time.perf_counter(), time.process_time()
                if which == "bare":
                    asyncio.run(bare(spec, Path(tmp) / "bare", par))
                    t_bare.append(time.perf_counter() - t0)
                    c_bare.append(time.process_time() - c0)
                else:
                    s = run_study(spec, Path(tmp) / "study", quiet=True)
                    t_study.append(time.perf_counter() - t0)
                    c_study.append(time.process_time() - c0)
                    errors.append(s["estimate_vs_actual"]["error"])
    mb, ms = statistics.median(t_bare), statistics.median(t_study)
    cb, cs = statistics.median(c_bare), statistics.median(c_study)
    out = {
        "spec": args.spec, "games": spec.total_games(), "parallel": par, "repeats": args.repeats,
        "bare_cpu_s": round(cb, 3), "study_cpu_s": round(cs, 3), "overhead_cpu": round(cs / cb - 1, 4),
        "bare_s": round(mb, 3), "study_s": round(ms, 3), "overhead": round(ms / mb - 1, 4),
        "estimate_error": {k: round(statistics.median(e[k] for e in errors), 4) for k in errors[0] if errors[0][k] is not None},
    }  # fmt: skip
    if args.batch:
        out["batch"] = batch_overhead(args.batch, par, args.repeats)
    if args.json:
        print(json.dumps(out))
    else:
        print(f"{out['games']} games, parallel {par}, {args.repeats} repeats (medians): CPU bare {out['bare_cpu_s']} s, "
              f"study {out['study_cpu_s']} s -> overhead {out['overhead_cpu']:+.1%}; wall bare {out['bare_s']} s, "
              f"study {out['study_s']} s -> {out['overhead']:+.1%}")  # fmt: skip
        print("estimate error (actual / planned - 1): " + ", ".join(f"{k} {v:+.1%}" for k, v in out["estimate_error"].items()))
        if args.batch:
            b = out["batch"]
            print(f"batch front end, {b['games']} unprobed classic games: CPU bare {b['bare_cpu_s']} s, batch {b['batch_cpu_s']} s -> "
                  f"overhead {b['overhead_cpu']:+.1%}; wall bare {b['bare_s']} s, batch {b['batch_s']} s -> {b['overhead']:+.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
