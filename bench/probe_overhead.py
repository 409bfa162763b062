"""Probing overhead with the shipped defaults: probed vs unprobed time of the same game.

Each game runs as its own ``mafiascope run`` process against a loopback dev server process
(``mafiascope dev-server --latency-ms``), exactly as a user runs it, so the figures include
the client's CPU (SDK, parsing, writing) and the server answers from another process.

Line-ups (7-seat classic, English, chained battery, shipped backend defaults: no caps set):

* ``one-model`` -- one backend entry for all seven seats (the usual study);
* ``per-seat``  -- seven backend entries (one per seat);
* ``one-model-rpm`` -- one entry with an ``rpm`` limit that the unprobed game alone does
  not hit (``--rpm``, default 240: the unprobed game starts at most ~120 calls a minute
  at 500 ms per call).

* ``one-model-rpm-skip`` -- the same with ``probes.max_lag_s: 5``: the explicit option that skips
  probe calls lagging more than 5 s behind (the shipped default before probes were queued).

For each: the moves' span (setup to the last move, from game.jsonl) unprobed and probed and
their ratio (the game's pace: probes must not slow the moves), the probe calls scheduled and the
share answered (every call is answered unless skipping is asked for), the drain after the last
move (last move to game_over: the probes answered late), the whole run's wall time, client CPU
seconds (user+sys of the run process) and act latency (mean, from game.jsonl).

Usage: python bench/probe_overhead.py [--latency-ms 500] [--seed 3] [--rpm 240]
                                       [--cases one-model,per-seat,one-model-rpm,one-model-rpm-skip] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PRESETS = ["balanced", "cautious", "aggressive", "gullible", "analyst", "balanced", "cautious"]


def _config(path: Path, base_url: str, case: str, rpm: float) -> Path:
    import yaml

    if case.startswith("one-model"):
        spec: dict[str, Any] = {"type": "openai", "base_url": base_url, "model": "bot-balanced"}
        if "-rpm" in case:
            spec["rpm"] = rpm
        backends = {"m": spec}
        seats = [{"backend": "m"} for _ in PRESETS]
    else:
        backends = {f"b{i}": {"type": "openai", "base_url": base_url, "model": f"bot-{p}"} for i, p in enumerate(PRESETS)}
        seats = [{"backend": f"b{i}"} for i in range(len(PRESETS))]
    cfg = {
        "name": f"bench-{case}",
        "language": "en",
        "rules": {"name": "classic", "roles": {"Mafia": 2, "Doctor": 1, "Villager": 4}, "intro_round": True, "max_rounds": 10},
        "seats": seats,
        "backends": backends,
        "probes": {"enabled": True, "battery": str(ROOT / "configs/probes/chained_en.yaml"),
                   **({"max_lag_s": 5.0} if case.endswith("-skip") else {})},
        "snapshots": True,
    }
    path.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    return path


def _run_game(cfg: Path, logs: Path, seed: int, probed: bool) -> dict[str, Any]:
    cmd = [sys.executable, "-m", "mafiascope", "run", "-c", str(cfg), "--seed", str(seed), "--logs", str(logs), "--json"]
    if not probed:
        cmd.append("--no-probes")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=900,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    try:  # exit 1 with the result: an invalid game (e.g. over its probe-loss budget when calls are skipped)
        res = json.loads(out.stdout)
    except ValueError:
        raise SystemExit(f"game failed ({out.returncode}): {out.stderr[-2000:]}") from None
    gdir = Path(res["path"])
    if gdir.is_file():
        gdir = gdir.parent
    game_over: dict[str, Any] = {}
    setup_ts = last_move_ts = None
    for line in (gdir / "game.jsonl").read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        if rec.get("kind") == "setup":
            setup_ts = rec["ts"]
        elif rec.get("kind") == "game_over":
            game_over = rec
        elif "player" in rec and "response" in rec:  # a move (an utterance record)
            last_move_ts = rec["ts"]
    act = (game_over.get("cost") or {}).get("act") or {}
    pc = (game_over.get("cost") or {}).get("probes") or {}
    scheduled = pc.get("scheduled", pc.get("calls")) or 0
    return {
        "wall_s": round(wall, 2),
        "moves_span_s": round(last_move_ts - setup_ts, 2),
        "drain_s": round(game_over["ts"] - last_move_ts, 2),
        "cpu_s": round((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), 2),
        "rounds": res.get("rounds"),
        "act_latency_ms": round(act["latency_ms"] / act["calls"]) if act.get("calls") else None,
        "probes_scheduled": scheduled,
        "probes_answered": pc.get("answered"),
        "probes_skipped": pc.get("skipped"),
        "answered_share": round(pc["answered"] / scheduled, 4) if scheduled and pc.get("answered") is not None else None,
        "probe_delay_ms": pc.get("delay_ms"),
        "invalid_reason": res.get("invalid_reason"),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--latency-ms", type=float, default=500.0)
    ap.add_argument("--seed", type=int, default=3)
    ap.add_argument("--rpm", type=float, default=240.0)
    ap.add_argument("--cases", default="one-model,per-seat,one-model-rpm,one-model-rpm-skip")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()

    server = subprocess.Popen([sys.executable, "-m", "mafiascope", "dev-server", "--port", "0", "--latency-ms",
                               str(args.latency_ms), "--json"], cwd=ROOT, stdout=subprocess.PIPE, text=True,
                              env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        assert server.stdout is not None
        base_url = json.loads(server.stdout.readline())["base_url"]
        if not base_url.rstrip("/").endswith("/v1"):
            base_url = base_url.rstrip("/") + "/v1"
        results: dict[str, Any] = {}
        with tempfile.TemporaryDirectory(prefix="msc-bench-") as tmp:
            for case in args.cases.split(","):
                cfg = _config(Path(tmp) / f"{case}.yaml", base_url, case, args.rpm)
                un = _run_game(cfg, Path(tmp) / case / "un", args.seed, probed=False)
                pr = _run_game(cfg, Path(tmp) / case / "pr", args.seed, probed=True)
                results[case] = {"unprobed": un, "probed": pr, "moves_ratio": round(pr["moves_span_s"] / un["moves_span_s"], 2),
                                 "wall_ratio": round(pr["wall_s"] / un["wall_s"], 2)}  # fmt: skip
                if not args.json:
                    r = results[case]
                    print(f"{case:18s} moves {un['moves_span_s']:6.1f} -> {pr['moves_span_s']:6.1f} s ({r['moves_ratio']:.2f}x; act "
                          f"{un['act_latency_ms']} -> {pr['act_latency_ms']} ms)  answered {pr['probes_answered']}/"
                          f"{pr['probes_scheduled']} ({(pr['answered_share'] or 0):.1%}), skipped {pr['probes_skipped'] or 0}; "
                          f"drain {pr['drain_s']:.1f} s; wall {un['wall_s']:.1f} -> {pr['wall_s']:.1f} s ({r['wall_ratio']:.2f}x); "
                          f"cpu {un['cpu_s']:.1f} -> {pr['cpu_s']:.1f} s"
                          + (f"; invalid: {pr['invalid_reason']}" if pr["invalid_reason"] else ""), flush=True)  # fmt: skip
        if args.json:
            print(json.dumps({"latency_ms": args.latency_ms, "seed": args.seed, "rpm": args.rpm, "cases": results}))
    finally:
        server.terminate()
        server.wait(timeout=10)


if __name__ == "__main__":
    main()
