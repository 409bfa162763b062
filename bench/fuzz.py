"""Fuzz every parser/loader that reads untrusted input and print ``parser: N inputs, C crashes``.

Usage: python bench/fuzz.py [--examples 500] [--only SUBSTRING] [--json]

The strategies and checks are those of tests/test_fuzz_inputs.py (tests/fuzz_targets.py): YAML-ish
text and mutations of the shipped configs, batteries, roster and rule sets through their loaders
(only the documented ValueError naming the source), random bytes through the YAML upload path,
random lines through the JSONL reader (warnings name file:line), damaged demo games through the
analytics loader (never raises), random queries and bodies to the bus hub (never a 5xx, no timer
wedged). A crash prints the shrunk input's error and the run exits 1. Nothing is written to the
checkout (temporary directories only; Hypothesis' example database is off).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.fuzz_targets import TARGETS, HubThread, bus_requests, fuzz, make_bus_check  # noqa: E402


def _one(name: str, strategy, check, n: int) -> dict:
    t0 = time.perf_counter()
    try:
        tried, crash = fuzz(strategy, check, n), None
    except Exception as exc:  # a crash: Hypothesis re-raises the shrunk failure
        tried, crash = n, f"{type(exc).__name__}: {str(exc).splitlines()[0][:300] if str(exc) else ''}"
    return {"parser": name, "inputs": tried, "crashes": 0 if crash is None else 1, "error": crash,
            "seconds": round(time.perf_counter() - t0, 2)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--examples", type=int, default=500, help="inputs per parser (default 500)")
    ap.add_argument("--only", default=None, help="run only parsers whose name contains this")
    ap.add_argument("--json", action="store_true", help="print one JSON object instead of lines")
    args = ap.parse_args()
    rows = []
    for name, (strategy, check) in TARGETS.items():
        if args.only and args.only not in name:
            continue
        rows.append(_one(name, strategy, check, args.examples))
        if not args.json:
            r = rows[-1]
            print(f"{r['parser']}: {r['inputs']} inputs, {r['crashes']} crashes ({r['seconds']} s)"
                  + (f"  <- {r['error']}" if r["error"] else ""), flush=True)
    name = "bus hub (random queries and bodies)"
    if not args.only or args.only in name:
        with HubThread() as hub:
            row = _one(name, bus_requests, make_bus_check(hub), args.examples)
            try:
                hub.poll_is_on_time()
            except AssertionError as exc:
                row.update(crashes=row["crashes"] + 1, error=str(exc))
        rows.append(row)
        if not args.json:
            print(f"{row['parser']}: {row['inputs']} inputs, {row['crashes']} crashes ({row['seconds']} s)"
                  + (f"  <- {row['error']}" if row["error"] else ""), flush=True)
    total = sum(r["inputs"] for r in rows)
    crashes = sum(r["crashes"] for r in rows)
    if args.json:
        print(json.dumps({"parsers": rows, "inputs": total, "crashes": crashes}))
    else:
        print(f"total: {total} inputs, {crashes} crashes")
    return 1 if crashes else 0


if __name__ == "__main__":
    sys.exit(main())
