"""Fault matrix: many probed seven-seat games against a dev server that injects faults.

Every seat is an ``openai`` backend pointed at the loopback dev server (offline bots behind
real HTTP, through the real openai SDK). The server answers 10% of calls with 429 +
Retry-After, 5% with 500, hangs on 3% past the client timeout and sends a garbage body on
5% (defaults). The run checks that every game completes, that no utterance carries error
text, and that every injected fault shows up in the records: absorbed faults in the
per-backend ``stats`` of ``game_over.backends`` (each game gets its own backend instances
here, so the counters are per game) and unrecoverable ones as logged fallbacks. Games whose
fallbacks exceed the fault budget (``game_over.invalid``, default 20% of the moves) are
counted as ``invalid_games``: at the default fault rates with retries few or none should be.

    python bench/fault_matrix.py            # 50 games, human-readable
    python bench/fault_matrix.py --json     # one JSON object
    python bench/fault_matrix.py --games 5 --parallel 5

Results are recorded in docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from mafiascope.backends.devserver import DevServer  # noqa: E402
from mafiascope.backends.registry import build_backend  # noqa: E402
from mafiascope.config import load_game_config  # noqa: E402
from mafiascope.play.game import play_game  # noqa: E402
from mafiascope.logs.io import iter_probe_records, read_jsonl  # noqa: E402

ERROR_TEXT = re.compile(r"^\s*ERROR\b|Traceback|\bHTTP [45]\d\d\b|timed out|Connection error|APIConnectionError|"
                        r"RateLimitError|backend '[^']+'", re.IGNORECASE)


def scan_game(game_dir: Path) -> dict[str, Any]:
    """What the records of one game say about faults."""
    rows = read_jsonl(game_dir / "game.jsonl", skip_corrupt=True)
    over = next((r for r in rows if r.get("kind") == "game_over"), None)
    fallbacks: dict[str, int] = {}
    error_texts = []
    for r in rows:
        if r.get("fault"):
            fb = str((r["fault"] or {}).get("fallback", "?"))
            fallbacks[fb] = fallbacks.get(fb, 0) + 1
        text = r.get("response")
        if isinstance(text, str) and ERROR_TEXT.search(text):
            error_texts.append(text[:120])
    probe_failed = 0
    probe_rows = 0
    if (game_dir / "introspection.jsonl").exists():
        for r in iter_probe_records(game_dir):
            probe_rows += 1
            if r.get("error") or r.get("fault") or r.get("ok") is False:
                probe_failed += 1
            ans = r.get("answer_raw")
            if isinstance(ans, str) and ERROR_TEXT.search(ans):
                error_texts.append(ans[:120])
    absorbed = failed = calls = retries = 0
    types: dict[str, int] = {}
    for d in ((over or {}).get("backends") or {}).values():
        st = d.get("stats") or {}
        for k, v in (st.get("fault_types") or {}).items():
            types[k] = types.get(k, 0) + v
        absorbed += st.get("faults", 0)
        failed += st.get("failed", 0)
        calls += st.get("calls", 0)
        retries += st.get("retries", 0)
    return {"completed": over is not None, "winner": (over or {}).get("winner"), "fallbacks": fallbacks,
            "invalid": bool((over or {}).get("invalid")), "moves": int((over or {}).get("moves") or 0),
            "moves_fell_back": int((over or {}).get("moves_fell_back") or 0),
            "error_texts": error_texts, "faults_recorded": absorbed, "fault_types": types, "calls_failed": failed, "calls": calls,
            "retries": retries, "probe_rows": probe_rows, "probe_failures": probe_failed}


async def run_matrix(*, games: int = 50, parallel: int = 10, p_429: float = 0.10, p_500: float = 0.05,
                     p_hang: float = 0.03, p_garbage: float = 0.05, retry_after: float = 0.05, timeout: float = 1.0,
                     max_retries: int = 2, seed: int = 7, probes: bool = True, logs_dir: str | None = None,
                     config: str | Path = ROOT / "configs" / "devserver.yaml") -> dict[str, Any]:
    cfg = load_game_config(config)
    out_root = Path(logs_dir or tempfile.mkdtemp(prefix="fault_matrix_"))
    crashes: list[str] = []
    scans: list[dict[str, Any]] = []
    t0 = time.perf_counter()
    async with DevServer(p_429=p_429, p_500=p_500, p_hang=p_hang, p_garbage=p_garbage, retry_after=retry_after,
                         seed=seed) as srv:
        specs = {name: spec.model_copy(update={"base_url": srv.base_url, "timeout": timeout, "max_retries": max_retries,
                                               "backoff_base": 0.05, "backoff_max": 0.5})
                 for name, spec in cfg.backends.items()}
        gate = asyncio.Semaphore(parallel)

        async def one(i: int) -> None:
            async with gate:
                backends = {n: build_backend(n, s) for n, s in specs.items()}  # fresh: per-game counters
                try:
                    res = await play_game(cfg, logs_dir=out_root, seed=seed * 1000 + i, game_id=f"fm-{seed}-{i:03d}",
                                          probes=probes, backends=backends)
                    scans.append(scan_game(Path(res.path)))
                except Exception as exc:  # a crash is what this bench exists to catch
                    crashes.append(f"game {i}: {type(exc).__name__}: {exc}")
                finally:
                    for b in backends.values():
                        await b.aclose()

        await asyncio.gather(*[one(i) for i in range(games)])
        injected = dict(srv.stats.faults)
        requests = srv.stats.requests
    wall = time.perf_counter() - t0
    fallbacks: dict[str, int] = {}
    for s in scans:
        for k, v in s["fallbacks"].items():
            fallbacks[k] = fallbacks.get(k, 0) + v
    recorded = sum(s["faults_recorded"] for s in scans)
    types: dict[str, int] = {}
    for s in scans:
        for k, v in s["fault_types"].items():
            types[k] = types.get(k, 0) + v
    injected_total = sum(injected.values())
    return {
        "games": games,
        "completed": sum(1 for s in scans if s["completed"]),
        "crashes": len(crashes),
        "crash_details": crashes[:5],
        "error_text_utterances": sum(len(s["error_texts"]) for s in scans),
        "error_text_examples": [t for s in scans for t in s["error_texts"]][:5],
        "requests": requests,
        "calls": sum(s["calls"] for s in scans),
        "faults_injected": injected,
        "faults_injected_total": injected_total,
        "faults_recorded": recorded,
        "faults_recorded_by_type": types,
        "every_fault_recorded": recorded >= injected_total,
        "retries": sum(s["retries"] for s in scans),
        "calls_failed_after_retries": sum(s["calls_failed"] for s in scans),
        "fallbacks": fallbacks,
        "fallbacks_total": sum(fallbacks.values()),
        "invalid_games": sum(1 for s in scans if s["invalid"]),
        "moves": sum(s["moves"] for s in scans),
        "moves_fell_back": sum(s["moves_fell_back"] for s in scans),
        "probe_rows": sum(s["probe_rows"] for s in scans),
        "probe_failures": sum(s["probe_failures"] for s in scans),
        "winners": {w: sum(1 for s in scans if s["winner"] == w) for w in sorted({str(s["winner"]) for s in scans})},
        "settings": {"p_429": p_429, "p_500": p_500, "p_hang": p_hang, "p_garbage": p_garbage,
                     "retry_after_s": retry_after, "timeout_s": timeout, "max_retries": max_retries,
                     "parallel": parallel, "seed": seed, "probes": probes},
        "wall_s": round(wall, 2),
        "logs_dir": str(out_root),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--games", type=int, default=50)
    ap.add_argument("--parallel", type=int, default=10)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--timeout", type=float, default=1.0, help="client timeout per attempt (hangs exceed it)")
    ap.add_argument("--no-probes", action="store_true")
    ap.add_argument("--logs-dir", default=None)
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    args = ap.parse_args(argv)
    res = asyncio.run(run_matrix(games=args.games, parallel=args.parallel, seed=args.seed, timeout=args.timeout,
                                 probes=not args.no_probes, logs_dir=args.logs_dir))
    if args.json:
        print(json.dumps(res))
    else:
        for k, v in res.items():
            print(f"{k:28s} {v}")
    ok = res["completed"] == res["games"] and res["crashes"] == 0 and res["error_text_utterances"] == 0 \
        and res["every_fault_recorded"]
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
