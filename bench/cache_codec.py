"""Parquet codec of the analytics cache: size and read cost of each codec on the same tables.

A warm report decodes every column it reads from the cache (at 10,000 games ~2 s of its CPU in
``ParquetFile.read``), so the codec the cache is written with is a read-speed choice as much as a
size one. This rewrites a built cache's tables, row group by row group (the writer's layout: one
row group per parse batch), with each codec into a scratch directory, then reads every column of
every table the way the loader does (:func:`mafiascope.analytics.cache.read_columns`), in rounds
alternating the codecs, and prints each codec's size, its least read wall and CPU, and their
ratios to ``zstd`` (the codec before cache version 14).

Usage: python bench/cache_codec.py CACHE_DIR [--codecs zstd,lz4,snappy,none] [--rounds 3] [--json]

CACHE_DIR: a cache directory holding a built cache (e.g. ``/tmp/report/cache-engine_10000_from_100``
after ``bench/analytics.py --games 10000 ...``); it is only read.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mafiascope.analytics.cache import TABLES, open_table, read_columns  # noqa: E402


def _tables_dir(cache: Path) -> Path:
    found = sorted(p.parent for p in cache.rglob("manifest.json") if (p.parent / "probes.parquet").is_file())
    if not found:
        raise SystemExit(f"{cache}: no built cache (a directory with manifest.json and probes.parquet) under it")
    return found[0]


def rewrite(src: Path, dest: Path, codec: str) -> int:
    """The tables of ``src`` rewritten with ``codec`` (same schema and row groups); total bytes."""
    dest.mkdir(parents=True, exist_ok=True)
    total = 0
    for t in TABLES:
        pf = pq.ParquetFile(src / f"{t}.parquet")
        out = dest / f"{t}.parquet"
        with pq.ParquetWriter(out, pf.schema_arrow, compression=codec) as w:
            for i in range(pf.num_row_groups):
                w.write_table(pf.read_row_group(i))
        total += out.stat().st_size
    return total


def read_all(d: Path) -> tuple[float, float]:
    """Wall and CPU seconds to read every column of every table as the loader does."""
    t0, c0 = time.perf_counter(), time.process_time()
    for t in TABLES:
        pf = open_table(d / f"{t}.parquet", t)
        cols = [c for c in pf.schema_arrow.names if c != "game_id"]
        df = read_columns(pf, t, cols)
        del df
    return time.perf_counter() - t0, time.process_time() - c0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("cache", type=Path)
    ap.add_argument("--codecs", default="zstd,lz4,snappy,none")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    src = _tables_dir(a.cache)
    codecs = [c.strip() for c in a.codecs.split(",") if c.strip()]
    if "zstd" not in codecs:
        codecs.insert(0, "zstd")
    scratch = Path(tempfile.mkdtemp(prefix="mafiascope-codec-"))
    try:
        size = {c: rewrite(src, scratch / c, c) for c in codecs}
        best = {c: (float("inf"), float("inf")) for c in codecs}
        for r in range(a.rounds):
            for c in (codecs if r % 2 == 0 else codecs[::-1]):  # alternate the order between rounds
                w, cpu = read_all(scratch / c)
                best[c] = (min(best[c][0], w), min(best[c][1], cpu))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    z = best["zstd"]
    res = {c: {"bytes": size[c], "read_wall_s": round(best[c][0], 3), "read_cpu_s": round(best[c][1], 3),
               "size_vs_zstd": round(size[c] / size["zstd"], 3), "wall_vs_zstd": round(best[c][0] / z[0], 3),
               "cpu_vs_zstd": round(best[c][1] / z[1], 3)} for c in codecs}
    if a.json:
        print(json.dumps({"cache": str(src), "rounds": a.rounds, "codecs": res}))
    else:
        for c, v in res.items():
            print(f"{c:7s} {v['bytes'] / 2**20:8.1f} MB (x{v['size_vs_zstd']:.2f})  read wall {v['read_wall_s']:.3f} s "
                  f"(x{v['wall_vs_zstd']:.2f})  cpu {v['read_cpu_s']:.3f} s (x{v['cpu_vs_zstd']:.2f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
