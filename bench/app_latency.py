"""App latency under AppTest: a timeline step change and a page switch on the largest demo
game, and the Cross-Game Dashboard on a 1,000-game synthetic corpus.

    python bench/app_latency.py                 # figures as text
    python bench/app_latency.py --json          # one JSON object
    python bench/app_latency.py --games 200     # a smaller synthetic corpus
    python bench/app_latency.py --synthetic-dir /tmp/ms_synth   # keep/reuse the synthetic corpus

The synthetic corpus is built from a few offline games (`mafiascope run`, no snapshots),
each copied under new game ids until there are N games. Timings are wall-clock seconds of
``AppTest.run()`` (script run + every cached call it makes); "cold" includes the first
read of the logs and the analytics computations, "warm" is a rerun that hits the caches.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def _largest_game(roots: list[Path]) -> tuple[Path, str]:
    from mafiascope.logs.io import list_game_dirs

    best, size = None, -1
    for r in roots:
        for d in list_game_dirs(r):
            s = sum((d / f).stat().st_size for f in ("game.jsonl", "introspection.jsonl") if (d / f).exists())
            if s > size:
                best, size = d, s
    if best is None:
        raise SystemExit("no demo game found (data/demo or data/corpus)")
    return best, best.name


def _demo_roots() -> list[Path]:
    roots = [ROOT / "data" / "demo", ROOT / "data" / "corpus"]
    return [r for r in roots if r.is_dir()]


def _app(**params: str):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "streamlit_app.py"), default_timeout=1800)
    for k, v in params.items():
        at.query_params[k] = v
    return at


def bench_game(reps: int) -> dict:
    game_dir, gid = _largest_game(_demo_roots())
    os.environ["MAFIASCOPE_LOGS"] = str(game_dir.parent)
    at = _app(game=gid, step="5")
    cold = _timed(at.run)
    assert not at.exception, [e.message for e in at.exception]
    warm = _timed(at.run)
    steps = []
    for _ in range(reps):
        steps.append(_timed(lambda: at.button(key="tl_next").click().run()))
    slider = []
    for i in range(reps):
        slider.append(_timed(lambda: next(s for s in at.slider if str(s.key).startswith("w_step:")).set_value(10 + i).run()))
    switches = []
    for _ in range(reps):
        switches.append(_timed(lambda: at.switch_page("pages/impersonate.py").run()))
        switches.append(_timed(lambda: at.switch_page("pages/live.py").run()))
    assert not at.exception, [e.message for e in at.exception]
    size = sum((game_dir / f).stat().st_size for f in ("game.jsonl", "introspection.jsonl") if (game_dir / f).exists())
    return {
        "game": gid, "bytes": size, "cold_first_run_s": round(cold, 3), "warm_rerun_s": round(warm, 3),
        "step_next_button_s": _stats(steps), "step_slider_s": _stats(slider), "page_switch_s": _stats(switches),
    }


def _stats(xs: list[float]) -> dict:
    return {"median": round(statistics.median(xs), 3), "max": round(max(xs), 3), "n": len(xs)}


def build_synthetic(dest: Path, n: int, base_games: int = 8) -> Path:
    """n games: base_games offline games (no snapshots) copied under new ids."""
    dest.mkdir(parents=True, exist_ok=True)
    have = sorted(p for p in dest.iterdir() if (p / "game.jsonl").is_file())
    if len(have) >= n:
        return dest
    src = dest.parent / (dest.name + "_base")
    src.mkdir(parents=True, exist_ok=True)
    procs = []
    for seed in range(base_games):
        gid = f"base{seed:02d}"
        if not (src / gid / "game.jsonl").is_file():
            procs.append(subprocess.Popen([sys.executable, "-m", "mafiascope", "run", "-c", str(ROOT / "configs" / "classic.yaml"),
                                           "--seed", str(seed + 1), "--logs", str(src), "--game-id", gid, "--no-snapshots", "-q"],
                                          cwd=ROOT, stdout=subprocess.DEVNULL))
    for p in procs:
        p.wait()
    bases = sorted(p for p in src.iterdir() if (p / "game.jsonl").is_file())
    for i in range(len(have), n):
        b = bases[i % len(bases)]
        gid = f"synth{i:04d}"
        out = dest / gid
        out.mkdir(exist_ok=True)
        for f in ("game.jsonl", "introspection.jsonl"):
            if (b / f).exists():
                data = (b / f).read_bytes().replace(f'"game_id": "{b.name}"'.encode(), f'"game_id": "{gid}"'.encode())
                (out / f).write_bytes(data)
    return dest


def bench_dashboard(n: int, synth_dir: Path | None, reps: int) -> dict:
    keep = synth_dir is not None
    root = synth_dir or Path(tempfile.mkdtemp(prefix="ms_synth_"))
    t_build = _timed(lambda: build_synthetic(root / "corpus", n))
    os.environ["MAFIASCOPE_LOGS"] = str(root / "corpus")
    os.environ["MAFIASCOPE_RUNS"] = str(root / "runs")
    try:
        at = _app(page="dashboard")
        cold = _timed(at.run)
        assert not at.exception, [e.message for e in at.exception]
        warm = [_timed(at.run) for _ in range(reps)]
        to_cal = _timed(lambda: at.switch_page("pages/calibration.py").run())
        back = [_timed(lambda: at.switch_page("pages/dashboard.py").run()) for _ in range(reps)]
        live = _timed(lambda: at.switch_page("pages/live.py").run())
        assert not at.exception, [e.message for e in at.exception]
        games = [m.value for m in at.metric if m.label == "Games"]
        search = bench_search(root / "corpus", reps)
        return {
            "search": search,
            "games": n, "build_corpus_s": round(t_build, 1), "dashboard_cold_s": round(cold, 2),
            "dashboard_warm_rerun_s": _stats(warm), "switch_to_calibration_cold_s": round(to_cal, 2),
            "switch_back_to_dashboard_s": _stats(back), "switch_to_live_game_s": round(live, 2),
        }
    finally:
        if not keep:
            shutil.rmtree(root, ignore_errors=True)


def bench_search(corpus: Path, reps: int) -> dict:
    """Corpus search (utterances, probe reasons, plans): index build cold/warm and warm queries."""
    from mafiascope.analytics.search import build_index

    cold = _timed(lambda: build_index(corpus))
    holder: dict = {}
    warm_build = _timed(lambda: holder.setdefault("ix", build_index(corpus)))
    ix = holder["ix"]
    queries = ["accusing me", "mafia", "vote", "quiet", "no strong information", "zzz-no-such-text"]
    times = [_timed(lambda q=q: ix.search(q)) for _ in range(max(1, reps)) for q in queries]
    return {"rows": len(ix), "distinct_texts": len(ix.texts), "index_cold_s": round(cold, 2),
            "index_warm_load_s": round(warm_build, 2), "query_warm_s": _stats(times)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    ap.add_argument("--games", type=int, default=1000, help="synthetic corpus size (default 1000)")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--synthetic-dir", type=Path, default=None, help="build/reuse the synthetic corpus here (kept)")
    ap.add_argument("--skip-dashboard", action="store_true")
    args = ap.parse_args(argv)
    import logging

    logging.getLogger("streamlit").setLevel(logging.ERROR)
    out = {"streamlit": __import__("streamlit").__version__, "python": sys.version.split()[0], "cpus": os.cpu_count()}
    out["largest_demo_game"] = bench_game(args.reps)
    if not args.skip_dashboard:
        out["synthetic_dashboard"] = bench_dashboard(args.games, args.synthetic_dir, max(2, args.reps // 2))
    if args.json:
        print(json.dumps(out))
    else:
        g = out["largest_demo_game"]
        print(f"largest demo game {g['game']} ({g['bytes'] / 1e6:.1f} MB): first run {g['cold_first_run_s']} s, "
              f"rerun {g['warm_rerun_s']} s")
        print(f"  timeline step (next button): median {g['step_next_button_s']['median']} s, max {g['step_next_button_s']['max']} s")
        print(f"  timeline step (slider):      median {g['step_slider_s']['median']} s, max {g['step_slider_s']['max']} s")
        print(f"  page switch Live <-> Impersonate: median {g['page_switch_s']['median']} s, max {g['page_switch_s']['max']} s")
        if "synthetic_dashboard" in out:
            d = out["synthetic_dashboard"]
            print(f"dashboard on {d['games']} synthetic games (corpus built in {d['build_corpus_s']} s): cold {d['dashboard_cold_s']} s, "
                  f"warm rerun median {d['dashboard_warm_rerun_s']['median']} s")
            q = d["search"]
            print(f"  search index ({q['rows']} rows, {q['distinct_texts']} distinct texts): cold {q['index_cold_s']} s, "
                  f"warm load {q['index_warm_load_s']} s; warm query median {q['query_warm_s']['median']} s, max {q['query_warm_s']['max']} s")
            print(f"  switch to Calibration {d['switch_to_calibration_cold_s']} s, back to Dashboard median "
                  f"{d['switch_back_to_dashboard_s']['median']} s, to Live Game {d['switch_to_live_game_s']} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
