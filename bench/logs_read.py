"""The typed read API's cost over reading the raw lines: read_game (+ typed events, + timeline) vs iter_jsonl.

For each game under the roots (default: data/demo and data/arena), best of ``--reps`` runs of

* ``raw``      -- iter_jsonl over game.jsonl and iter_probe_records (what readers did before);
* ``read``     -- read_game plus its probe records (the app's game index and load path);
* ``typed``    -- read plus ``setup`` and ``events`` validated into their models;
* ``timeline`` -- read plus ``timeline()`` (the app's game model).

Prints each as a ratio to ``raw`` (machine-independent), and the absolute totals.

Usage: python bench/logs_read.py [ROOT ...] [--reps 5] [--json]
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from collections.abc import Callable
from pathlib import Path

from mafiascope.logs import iter_jsonl, iter_probe_records, list_game_dirs, read_game

ROOT = Path(__file__).resolve().parents[1]


def _best(fn: Callable[[Path], object], dirs: list[Path], reps: int) -> float:
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        for d in dirs:
            fn(d)
        best = min(best, time.perf_counter() - t0)
    return best


def _raw(d: Path) -> object:
    return list(iter_jsonl(d / "game.jsonl")), list(iter_probe_records(d))


def _read(d: Path) -> object:
    log = read_game(d)
    return log.probe_dicts


def _typed(d: Path) -> object:
    log = read_game(d)
    return log.setup, log.events, log.probe_dicts


def _timeline(d: Path) -> object:
    return read_game(d).timeline()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("roots", nargs="*", type=Path, help="log roots (default: data/demo data/arena)")
    ap.add_argument("--reps", type=int, default=5, help="runs per variant; the best counts")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    args = ap.parse_args(argv)
    roots = args.roots or [ROOT / "data" / "demo", ROOT / "data" / "arena"]
    dirs = [d for r in roots for d in list_game_dirs(r)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        secs = {name: _best(fn, dirs, args.reps) for name, fn in
                (("raw", _raw), ("read", _read), ("typed", _typed), ("timeline", _timeline))}  # fmt: skip
    out = {"games": len(dirs), "seconds": {k: round(v, 4) for k, v in secs.items()},
           "ratio_to_raw": {k: round(v / secs["raw"], 2) for k, v in secs.items()}}  # fmt: skip
    if args.json:
        print(json.dumps(out))
    else:
        print(f"{out['games']} games, best of {args.reps}: " + ", ".join(
            f"{k} {out['seconds'][k]} s (x{out['ratio_to_raw'][k]})" for k in secs))  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
