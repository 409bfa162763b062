"""Several versions of the package side by side on one corpus: warm load + full report, CPU and wall.

Where a change between two versions is several commits apart (a refactor with features landed between its
steps), the versions in between tell which step costs what. Each version is a directory holding the package
(``git worktree add /tmp/v COMMIT`` or a ``git archive``); each reads an analytics cache of its own (cache
formats differ between versions), ``<workdir>/cache-<corpus>-<label>`` unless ``--cache LABEL=DIR`` names one,
built by a cold load first when absent (not measured). Every round measures each version once, in a fresh
interpreter, the order rotated from round to round (the first of a round tended to pay more on a loaded
machine); the measurement is ``bench/analytics.py``'s warm one (``build_report``, every section, default mode).
Printed: every run's load + report CPU and wall per version, their medians, and each median's ratio to the
first version's. CPU is the steadier figure on a shared machine; ratios compare only within one run.

Usage: python bench/versions.py --corpus DIR --version old=/tmp/old --version new=. [--version ...]
       [--rounds 5] [--boot 1000] [--workdir DIR] [--cache LABEL=DIR] [--json]
The corpus is any folder of games, e.g. one ``bench/analytics.py --workdir W`` made (W/engine_1000_from_100).
Timed figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from analytics import _child  # noqa: E402  (bench/analytics.py: one measurement in a fresh interpreter)


def _pairs(items: list[str], what: str) -> dict[str, str]:
    out = {}
    for item in items:
        label, sep, value = item.partition("=")
        if not sep or not label or not value:
            raise SystemExit(f"{what}: expected LABEL=DIR, got {item!r}")
        out[label] = value
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", required=True, help="folder of games")
    ap.add_argument("--version", action="append", required=True, help="LABEL=DIR (the first is the reference)")
    ap.add_argument("--cache", action="append", default=[], help="LABEL=DIR: the analytics cache this version reads")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--boot", type=int, default=1000)
    ap.add_argument("--workdir")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    corpus = Path(a.corpus).resolve()
    work = Path(a.workdir) if a.workdir else Path(tempfile.mkdtemp(prefix="ms-versions-"))
    versions = [(label, Path(d).resolve()) for label, d in _pairs(a.version, "--version").items()]
    given = _pairs(a.cache, "--cache")
    caches = {label: Path(given.get(label) or work / f"cache-{corpus.name}-{label}") for label, _ in versions}
    for label, code in versions:
        if not any(caches[label].glob("*/manifest.json")):
            _child([str(corpus), str(caches[label]), str(a.boot), "load"], code)  # the cold load, not measured
    cpu: dict[str, list[float]] = {label: [] for label, _ in versions}
    wall: dict[str, list[float]] = {label: [] for label, _ in versions}
    for r in range(a.rounds):
        k = r % len(versions)
        for label, code in versions[k:] + versions[:k]:
            got = _child([str(corpus), str(caches[label]), str(a.boot), "report"], code)
            cpu[label].append(round(got["load_cpu_s"] + got["report_cpu_s"], 3))
            wall[label].append(got["load_plus_report_s"])
        if not a.json:
            print(f"round {r + 1}: " + ", ".join(f"{x} {cpu[x][-1]:.2f} s CPU" for x, _ in versions), flush=True)
    ref = versions[0][0]
    res = {label: {"cpu_runs_s": cpu[label], "wall_runs_s": wall[label],
                   "cpu_median_s": round(statistics.median(cpu[label]), 3),
                   "wall_median_s": round(statistics.median(wall[label]), 3),
                   "cpu_ratio": round(statistics.median(cpu[label]) / statistics.median(cpu[ref]), 3),
                   "wall_ratio": round(statistics.median(wall[label]) / statistics.median(wall[ref]), 3)}
           for label, _ in versions}
    out = {"corpus": str(corpus), "boot": a.boot, "rounds": a.rounds, "versions": res,
           "load_average": [round(x, 2) for x in os.getloadavg()]}
    if a.json:
        print(json.dumps(out))
    else:
        for label, v in res.items():
            print(f"{label}: CPU median {v['cpu_median_s']} s (x{v['cpu_ratio']} of {ref}), "
                  f"wall median {v['wall_median_s']} s (x{v['wall_ratio']})")
        print("load average", out["load_average"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
