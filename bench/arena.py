"""Time an offline arena: the bot roster, all three ten-seat rule sets, probes off.

    python bench/arena.py [--games 100] [--parallel 8] [--json]

``--games`` is per rule set (100 -> 300 games). Prints games per second for the run and
the time `arena report` needs to read the logs and compute every leaderboard.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mafiascope.arena.roster import load_roster  # noqa: E402
from mafiascope.arena.run import run_arena  # noqa: E402
from mafiascope.arena.scoring import load_records, report  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=100, help="games per rule set")
    ap.add_argument("--parallel", type=int, default=8)
    ap.add_argument("--rules", default="sport,open,imbalanced")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        run = Path(tmp) / "arena"
        t0 = time.perf_counter()
        s = run_arena(load_roster(), args.rules, args.games, run, parallel=args.parallel, quiet=True)
        t_run = time.perf_counter() - t0
        t1 = time.perf_counter()
        rep = report(load_records(run))
        t_report = time.perf_counter() - t1
    out = {
        "games": s["finished"], "failed": s["failed"], "parallel": args.parallel, "rules": args.rules,
        "run_seconds": round(t_run, 2), "games_per_second": round(s["finished"] / t_run, 2),
        "report_seconds": round(t_report, 2),
        "mafia_win_rate": {m["rules"]: m["mafia_win_rate"] for m in rep["rule_measures"]},
        "mean_rounds": {m["rules"]: m["mean_rounds"] for m in rep["rule_measures"]},
    }  # fmt: skip
    if args.json:
        print(json.dumps(out))
    else:
        for k, v in out.items():
            print(f"{k:>16}: {v}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
