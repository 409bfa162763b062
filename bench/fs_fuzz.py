"""Filesystem fuzz: the Hypothesis property checks of tests/fs_properties.py (docs/security.md,
"Filesystem") with more inputs than the test suite runs.

Hostile ids (``..``, absolute paths, ``a/../..``, unicode, NUL, very long names ...) and symlinks
are fed to resume, fork, import and arena resume, each in a fresh scratch directory; every input
checks that nothing outside the logs root changed. Prints one line per operation,
``fs-ids[resume]: N inputs, 0 escapes``, and the inputs per second.

Usage: python bench/fs_fuzz.py [--resume 1000] [--fork 200] [--import 1000] [--arena 100] [--json]
Needs the test-only requirements (requirements-dev.txt: hypothesis, pytest).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from tests import fs_properties as fp  # noqa: E402


def run(name: str, n: int, finished: Path, body, *strategies) -> dict[str, object]:
    tally = fp.Tally(name)

    @settings(max_examples=n, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(st.tuples(*strategies))
    def prop(drawn):
        with tempfile.TemporaryDirectory(prefix="fs-fuzz-") as d:
            body(fp.Layout(Path(d), finished), *drawn, tally)

    t0 = time.perf_counter()
    prop()
    wall = time.perf_counter() - t0
    print(f"{tally.line()} ({tally.inputs / wall:.1f} inputs/s)", flush=True)
    return {"operation": name, "inputs": tally.inputs, "escapes": tally.escapes, "inputs_per_s": round(tally.inputs / wall, 2)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--resume", type=int, default=1000, help="inputs for resume")
    ap.add_argument("--fork", type=int, default=200, help="inputs for fork")
    ap.add_argument("--import", dest="imp", type=int, default=1000, help="inputs for import")
    ap.add_argument("--arena", type=int, default=100, help="inputs for arena resume")
    ap.add_argument("--json", action="store_true", help="print one JSON list at the end")
    args = ap.parse_args()

    from mafiascope.arena.run import run_arena
    from tests.test_arena_run import ROSTER, scripted_factory
    from tests.test_replay_forks import play_bot
    from tests.test_replay_resume import crash_copy

    with tempfile.TemporaryDirectory(prefix="fs-fuzz-templates-") as d:
        base = Path(d)
        finished = play_bot(base / "finished", gid="g")
        crash_copy(finished, base / "crashed", keep_snapshots=6)
        run_arena(ROSTER, "sport", 2, base / "run", quiet=True, backend_factory=scripted_factory, limit=1)
        out = [
            run("resume", args.resume, finished,
                lambda lay, raw, same, link, t: fp.resume_property(lay, base / "crashed", raw, same, link, t),
                fp.HOSTILE, st.booleans(), st.booleans()),
            run("fork", args.fork, finished, lambda lay, raw, link, t: fp.fork_property(lay, finished, raw, link, t),
                st.one_of(fp.HOSTILE, st.from_regex(r"[a-z0-9]{4,8}", fullmatch=True)), st.booleans()),
            run("import", args.imp, finished, lambda lay, raw, link, t: fp.import_property(lay, raw, link, t),
                fp.HOSTILE, st.booleans()),
            run("arena", args.arena, finished, lambda lay, raws, link, t: fp.arena_property(lay, base / "run", raws, link, t),
                st.lists(fp.HOSTILE, min_size=1, max_size=4), st.booleans()),
        ]  # fmt: skip
    if args.json:
        print(json.dumps(out))
    return 0 if all(o["escapes"] == 0 for o in out) else 1


if __name__ == "__main__":
    sys.exit(main())
