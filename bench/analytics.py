"""Analytics benchmark: cold load, warm load and full report with peak memory.

Corpora: (a) the shared en_demo (5 games); (b) a synthetic corpus of N probed games made
by replicating the en_demo games under new game ids (game_id rewritten in every record;
probe timestamps shifted by a per-copy offset so copies are distinct files). The engine
(mafiascope.engine.runner) is not used yet: replication gives realistic answer sizes and
probe counts without LLM calls.

Usage: python bench/analytics.py [--games 1000] [--boot 1000] [--json] [--workdir DIR]
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
EN = ROOT.parent / "shared" / "corpus" / "mafiascope_en_demo"


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

    t0 = time.perf_counter()
    c = load_corpus(path, cache_dir=cache)
    t_load = time.perf_counter() - t0
    res = {"load_s": round(t_load, 3), "games": c.m}
    if what == "report":
        t1 = time.perf_counter()
        build_report(c, Mode(boot=boot), transcripts=False)
        res["report_s"] = round(time.perf_counter() - t1, 3)
        res["load_plus_report_s"] = round(time.perf_counter() - t0, 3)
    res["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    return res


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--games", type=int, default=1000)
    ap.add_argument("--boot", type=int, default=1000)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--workdir")
    ap.add_argument("--child", nargs=4, metavar=("PATH", "CACHE", "BOOT", "WHAT"))
    a = ap.parse_args()
    if a.child:
        print(json.dumps(child(a.child[0], a.child[1], int(a.child[2]), a.child[3])))
        return 0
    work = Path(a.workdir) if a.workdir else Path(tempfile.mkdtemp(prefix="ms-bench-"))
    results = {}
    for name, path in (("en_demo", EN), (f"synthetic_{a.games}", None)):
        if path is None:
            path = make_synthetic(work / "synthetic", a.games)
        cache = work / f"cache-{name}"
        shutil.rmtree(cache, ignore_errors=True)
        cold = _child([str(path), str(cache), str(a.boot), "load"])
        warm = _child([str(path), str(cache), str(a.boot), "report"])
        results[name] = {"games": cold["games"], "cold_load_s": cold["load_s"], "warm_load_s": warm["load_s"],
                         "warm_report_s": warm["report_s"], "warm_load_plus_report_s": warm["load_plus_report_s"],
                         "peak_rss_mb": warm["peak_rss_mb"], "cold_peak_rss_mb": cold["peak_rss_mb"]}
    results["targets"] = {"synthetic_warm_full_report_s": 3.0, "synthetic_peak_mb": 1024, "en_demo_warm_s": 0.2}
    results["cpu_count"] = os.cpu_count()
    if a.json:
        print(json.dumps(results))
    else:
        for k, v in results.items():
            print(k, v)
    return 0


if __name__ == "__main__":
    sys.exit(main())
