"""Analytics benchmark: cold load, warm load and full report with peak memory.

Corpora: (a) en_demo (5 LLM games, bundled in data/corpus); (b) ``engine``: N probed games of our own
engine with the offline bots, made once with
``mafiascope batch -c configs/classic.yaml -n N --parallel 8 --logs <workdir>/engine_N --no-snapshots``
(kept in the work directory and reused); (c) ``copies``: N copies of the en_demo games under
new game ids (game_id rewritten in every record), the earlier synthetic corpus, for LLM-sized
answers. ``--corpus`` picks (b), (c) or both.

Each measurement runs in a fresh interpreter: "cold" = no Parquet cache yet, "warm" = cache
built. Wall and CPU seconds are both reported (the CPU figure is the steadier one on a
shared machine). The report is ``build_report(corpus, Mode(boot=B), transcripts=False)``.

Usage: python bench/analytics.py [--games 1000] [--boot 1000] [--corpus engine|copies|both]
       [--json] [--workdir DIR]
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
EN = ROOT / "data" / "corpus" / "mafiascope_en_demo"  # the bundled copy of the original en_demo corpus


def make_engine(dest: Path, n: int) -> tuple[Path, float | None]:
    """N probed bot games of our engine in ``dest`` (generated once); (path, generation seconds)."""
    if dest.is_dir() and sum(1 for d in dest.iterdir() if (d / "introspection.jsonl").is_file()) >= n:
        return dest, None
    shutil.rmtree(dest, ignore_errors=True)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "mafiascope", "batch", "-c", str(ROOT / "configs" / "classic.yaml"),
                    "-n", str(n), "--parallel", "8", "--logs", str(dest), "--no-snapshots", "--json"],
                   cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    return dest, round(time.perf_counter() - t0, 1)


def make_synthetic(dest: Path, n: int) -> Path:
    dest.mkdir(parents=True, exist_ok=True)
    srcs = sorted(d for d in EN.iterdir() if d.is_dir())
    texts = {d: {f: (d / f).read_text(encoding="utf-8") for f in ("game.jsonl", "introspection.jsonl")} for d in srcs}
    for i in range(n):
        src = srcs[i % len(srcs)]
        gid = f"synth-{i:05d}"
        gd = dest / gid
        if (gd / "introspection.jsonl").is_file():
            continue
        gd.mkdir(exist_ok=True)
        for f, t in texts[src].items():
            (gd / f).write_text(t.replace(src.name, gid), encoding="utf-8")
    return dest


def _child(args: list[str]) -> dict:
    """Run one measurement in a fresh interpreter (peak RSS is per process)."""
    out = subprocess.run([sys.executable, __file__, "--child", *args], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def child(path: str, cache: str, boot: int, what: str) -> dict:
    import resource

    from mafiascope.analytics.corpus import load_corpus
    from mafiascope.analytics.modes import Mode
    from mafiascope.analytics.report import build_report

    t0, c0 = time.perf_counter(), time.process_time()
    c = load_corpus(path, cache_dir=cache)
    t_load = time.perf_counter() - t0
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)  # the parser's worker processes (cold load)
    res = {"load_s": round(t_load, 3), "load_cpu_s": round(time.process_time() - c0, 3),
           "load_workers_cpu_s": round(kids.ru_utime + kids.ru_stime, 3), "games": c.m}
    if what == "report":
        t1, c1 = time.perf_counter(), time.process_time()
        build_report(c, Mode(boot=boot), transcripts=False)
        res["report_s"] = round(time.perf_counter() - t1, 3)
        res["report_cpu_s"] = round(time.process_time() - c1, 3)
        res["load_plus_report_s"] = round(time.perf_counter() - t0, 3)
    res["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    return res


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--games", type=int, default=1000)
    ap.add_argument("--boot", type=int, default=1000)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--workdir")
    ap.add_argument("--corpus", choices=("engine", "copies", "both"), default="engine")
    ap.add_argument("--child", nargs=4, metavar=("PATH", "CACHE", "BOOT", "WHAT"))
    a = ap.parse_args()
    if a.child:
        print(json.dumps(child(a.child[0], a.child[1], int(a.child[2]), a.child[3])))
        return 0
    work = Path(a.workdir) if a.workdir else Path(tempfile.mkdtemp(prefix="ms-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    corpora: list[tuple[str, Path | None]] = [("en_demo", EN)]
    if a.corpus in ("engine", "both"):
        corpora.append((f"engine_{a.games}", None))
    if a.corpus in ("copies", "both"):
        corpora.append((f"copies_{a.games}", None))
    results: dict = {}
    for name, path in corpora:
        gen_s = None
        if name.startswith("engine"):
            path, gen_s = make_engine(work / name, a.games)
        elif name.startswith("copies"):
            path = make_synthetic(work / name, a.games)
        cache = work / f"cache-{name}"
        shutil.rmtree(cache, ignore_errors=True)
        cold = _child([str(path), str(cache), str(a.boot), "load"])
        warm = _child([str(path), str(cache), str(a.boot), "report"])
        results[name] = {"games": cold["games"], "cold_load_s": cold["load_s"], "cold_load_cpu_s": cold["load_cpu_s"],
                         "cold_load_workers_cpu_s": cold["load_workers_cpu_s"], "warm_load_s": warm["load_s"],
                         "warm_load_cpu_s": warm["load_cpu_s"], "warm_report_s": warm["report_s"],
                         "warm_report_cpu_s": warm["report_cpu_s"], "warm_load_plus_report_s": warm["load_plus_report_s"],
                         "peak_rss_mb": warm["peak_rss_mb"], "cold_peak_rss_mb": cold["peak_rss_mb"]}
        if gen_s is not None:
            results[name]["generation_s"] = gen_s
    results["targets"] = {"n_games_warm_full_report_s": 3.0, "n_games_peak_mb": 1024, "en_demo_warm_s": 0.2}
    results["cpu_count"] = os.cpu_count()
    if a.json:
        print(json.dumps(results))
    else:
        for k, v in results.items():
            print(k, v)
    return 0


if __name__ == "__main__":
    sys.exit(main())
