"""Log bytes per probed 7-seat bot game, by file and by field, and the probe writer's client CPU.

Plays N probed games of ``configs/classic.yaml`` (7 offline bots, the default chained battery,
snapshots on) with fixed seeds, in process, and prints:

* bytes per game of game.jsonl, introspection.jsonl, state.jsonl and all three together (mean, min, max);
* the share of introspection.jsonl and state.jsonl bytes by stored field (top-level keys; for
  state.jsonl also probe_memory), so the next byte to save is visible;
* the probe writer's client CPU per probe call: context capture (``ProbeEngine._capture``),
  question rendering and the record (parse, normalise, encode, write: ``ProbeEngine._write``),
  measured with ``time.process_time`` around those methods (the bots' own answering is excluded).

Usage: python bench/log_size.py [--games 5] [--seed 1] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from statistics import mean
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mafiascope.config import load_game_config  # noqa: E402
from mafiascope.play.game import play_game  # noqa: E402
from mafiascope.logs.io import GAME_FILE, PROBE_FILE, STATE_FILE  # noqa: E402
from mafiascope.probes import scheduler  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
FILES = (GAME_FILE, PROBE_FILE, STATE_FILE)


class _CpuMeter:
    """Wraps ProbeEngine methods and sums their process CPU (the bench only; nothing is changed)."""

    def __init__(self) -> None:
        self.cpu = Counter[str]()
        self.calls = 0

    def wrap(self, name: str) -> None:
        orig = getattr(scheduler.ProbeEngine, name)
        meter = self

        def timed(self: Any, *a: Any, **kw: Any) -> Any:
            c0 = time.process_time()
            try:
                return orig(self, *a, **kw)
            finally:
                meter.cpu[name] += time.process_time() - c0
                if name == "_write":
                    meter.calls += 1

        setattr(scheduler.ProbeEngine, name, timed)

    def wrap_render(self) -> None:
        orig = scheduler.render
        meter = self

        def timed(*a: Any, **kw: Any) -> Any:
            c0 = time.process_time()
            try:
                return orig(*a, **kw)
            finally:
                meter.cpu["render"] += time.process_time() - c0

        scheduler.render = timed  # type: ignore[assignment]


def _field_bytes(path: Path, into: Counter[str], nested: str | None = None) -> None:
    for line in path.read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        for k, v in rec.items():
            if nested and k == nested and isinstance(v, dict):
                for k2, v2 in v.items():
                    into[f"{k}.{k2}"] += len(json.dumps(v2, ensure_ascii=False)) + len(k2) + 6
                continue
            into[k] += len(json.dumps(v, ensure_ascii=False)) + len(k) + 6


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--games", type=int, default=5)
    ap.add_argument("--seed", type=int, default=1, help="first seed (games use seed, seed+1, ...)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    meter = _CpuMeter()
    for name in ("_capture", "_write"):
        meter.wrap(name)
    meter.wrap_render()
    cfg = load_game_config(REPO / "configs" / "classic.yaml")
    sizes: dict[str, list[int]] = {f: [] for f in FILES}
    probe_fields: Counter[str] = Counter()
    state_fields: Counter[str] = Counter()
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.games):
            res = asyncio.run(play_game(cfg, logs_dir=tmp, seed=args.seed + i, game_id=f"g{i}"))
            gdir = Path(res.path)
            for f in FILES:
                sizes[f].append((gdir / f).stat().st_size if (gdir / f).is_file() else 0)
            _field_bytes(gdir / PROBE_FILE, probe_fields)
            _field_bytes(gdir / STATE_FILE, state_fields, nested="probe_memory")
    totals = [sum(x) for x in zip(*sizes.values())]
    out: dict[str, Any] = {
        "games": args.games,
        "seeds": [args.seed, args.seed + args.games - 1],
        "bytes_per_game": {f: round(mean(v)) for f, v in sizes.items()} | {"total": round(mean(totals))},
        "bytes_min_max_total": [min(totals), max(totals)],
        "probe_calls_per_game": round(meter.calls / args.games),
        "cpu_ms_per_probe_call": {k: round(v * 1000 / max(meter.calls, 1), 3) for k, v in meter.cpu.items()}
        | {"total": round(sum(meter.cpu.values()) * 1000 / max(meter.calls, 1), 3)},
        "introspection_share": _shares(probe_fields),
        "state_share": _shares(state_fields),
    }
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    print(f"{args.games} probed 7-seat bot games (configs/classic.yaml, seeds {args.seed}..{args.seed + args.games - 1})")
    for f, v in out["bytes_per_game"].items():
        print(f"  {f:22s} {v / 1e6:8.3f} MB per game")
    print(f"  total min / max         {min(totals) / 1e6:.3f} / {max(totals) / 1e6:.3f} MB;"
          f" {out['probe_calls_per_game']} probe calls per game")
    print("client CPU per probe call (ms): " + ", ".join(f"{k} {v}" for k, v in out["cpu_ms_per_probe_call"].items()))
    for name, share in (("introspection.jsonl", out["introspection_share"]), ("state.jsonl", out["state_share"])):
        print(f"{name} bytes by field: " + ", ".join(f"{k} {v}%" for k, v in list(share.items())[:10]))
    return 0


def _shares(c: Counter[str]) -> dict[str, float]:
    total = sum(c.values()) or 1
    return {k: round(v * 100 / total, 1) for k, v in c.most_common()}


if __name__ == "__main__":
    raise SystemExit(main())
