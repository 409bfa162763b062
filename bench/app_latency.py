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


CHROMIUM = "/usr/bin/chromium"
_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]
# time from a click inside the page to the rerun's end (stApp back to notRunning with the new step in
# the URL) plus two animation frames (the new elements painted); measured in the browser's clock
_STEP_JS = """async ({want}) => {
  const app = document.querySelector('[data-testid="stApp"]');
  const btn = document.querySelector('.st-key-tl_next button') ||
    [...document.querySelectorAll('[data-testid="stButton"] button')].find(b => b.innerText.includes('chevron_right'));
  const t0 = performance.now();
  let ran = false;
  return await new Promise(resolve => {
    const check = () => {
      const s = app.getAttribute('data-test-script-state');
      if (s === 'running') ran = true;
      if (ran && s === 'notRunning' && location.href.includes(want)) {
        obs.disconnect();
        requestAnimationFrame(() => requestAnimationFrame(() => resolve(performance.now() - t0)));
      }
    };
    const obs = new MutationObserver(check);
    obs.observe(app, {attributes: true});
    btn.click();
  });
}"""


class _Server:
    """``streamlit run streamlit_app.py`` on a free loopback port (a fresh server process)."""

    def __init__(self, env: dict[str, str]):
        import socket
        import urllib.request

        with socket.socket() as sk:
            sk.bind(("127.0.0.1", 0))
            self.port = sk.getsockname()[1]
        self.proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", "streamlit_app.py", "--server.headless", "true",
                                      "--server.port", str(self.port), "--server.address", "127.0.0.1",
                                      "--browser.gatherUsageStats", "false"], cwd=ROOT, env={**os.environ, **env},
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.url = f"http://127.0.0.1:{self.port}"
        t0 = time.time()
        while time.time() - t0 < 120:
            try:
                if urllib.request.urlopen(self.url + "/_stcore/health", timeout=2).status == 200:
                    return
            except OSError:
                time.sleep(0.3)
        self.close()
        raise SystemExit("streamlit did not start")

    def close(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def _wait_idle(page, timeout_s: float = 900) -> None:
    page.wait_for_function("() => { const a = document.querySelector('[data-testid=\"stApp\"]');"
                           " return a && a.getAttribute('data-test-script-state') === 'notRunning'; }",
                           timeout=timeout_s * 1000)


def _dashboard_visit(browser, url: str) -> dict:
    """Open the Dashboard in a new tab: seconds to the first progress bar or tile, and to the full render."""
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    t0 = time.perf_counter()
    page.goto(url + "/dashboard")
    page.wait_for_selector('[data-testid="stProgress"], [data-testid="stMetric"]', timeout=900_000)
    first = time.perf_counter() - t0
    page.wait_for_selector('[data-testid="stMetric"]:has-text("Probe parse rate")', timeout=900_000)
    _wait_idle(page)
    full = time.perf_counter() - t0
    page.close()
    return {"first_content_s": round(first, 2), "full_render_s": round(full, 2)}


def bench_browser(n: int, synth_dir: Path | None, reps: int) -> dict:
    """In Chromium (Playwright): the Dashboard of n synthetic games in fresh server processes, cold
    (no analytics cache) and with the caches present, and the timeline's next-step click."""
    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).exists():
        raise SystemExit(f"{CHROMIUM} is not installed")
    root = synth_dir or Path(tempfile.mkdtemp(prefix="ms_synth_"))
    build_synthetic(root / "corpus", n)
    cache = Path(tempfile.mkdtemp(prefix="ms_cache_"))  # the analytics and app caches of this run only
    env = {"MAFIASCOPE_LOGS": str(root / "corpus"), "MAFIASCOPE_RUNS": str(root / "runs"), "MAFIASCOPE_CACHE_DIR": str(cache)}
    out: dict = {"games": n}
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=_ARGS)
            srv = _Server(env)
            try:
                out["dashboard_no_cache"] = _dashboard_visit(browser, srv.url)
            finally:
                srv.close()
            runs = []
            for _ in range(max(1, reps // 2)):
                srv = _Server(env)  # a fresh process each time: only the on-disk caches remain
                try:
                    runs.append(_dashboard_visit(browser, srv.url))
                finally:
                    srv.close()
            out["dashboard_fresh_process_with_cache"] = {k: _stats([r[k] for r in runs]) for k in runs[0]}
            game_dir, gid = _largest_game(_demo_roots())
            srv = _Server({**env, "MAFIASCOPE_LOGS": str(game_dir.parent)})
            try:
                page = browser.new_page(viewport={"width": 1500, "height": 2000})
                page.goto(f"{srv.url}/?game={gid}&step=5")
                page.wait_for_selector('.st-key-tl_next button', timeout=300_000)  # the first stSlider may be the sidebar's hidden one
                _wait_idle(page)
                steps = [page.evaluate(_STEP_JS, {"want": f"step={6 + i}"}) / 1000 for i in range(reps * 2)]
                page.close()
            finally:
                srv.close()
            out["timeline_step_click_to_render_s"] = {**_stats(steps), "game": gid}
            browser.close()
    finally:
        shutil.rmtree(cache, ignore_errors=True)
        if synth_dir is None:
            shutil.rmtree(root, ignore_errors=True)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    ap.add_argument("--games", type=int, default=1000, help="synthetic corpus size (default 1000)")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--synthetic-dir", type=Path, default=None, help="build/reuse the synthetic corpus here (kept)")
    ap.add_argument("--skip-dashboard", action="store_true")
    ap.add_argument("--browser", action="store_true",
                    help="also measure in Chromium: fresh-process Dashboard with and without caches, timeline step")
    ap.add_argument("--only-browser", action="store_true", help="only the Chromium measurements")
    args = ap.parse_args(argv)
    import logging

    logging.getLogger("streamlit").setLevel(logging.ERROR)
    out = {"streamlit": __import__("streamlit").__version__, "python": sys.version.split()[0], "cpus": os.cpu_count()}
    if args.browser or args.only_browser:
        out["browser"] = bench_browser(args.games, args.synthetic_dir, args.reps)
    if not args.only_browser:
        out["largest_demo_game"] = bench_game(args.reps)
    if not args.skip_dashboard and not args.only_browser:
        out["synthetic_dashboard"] = bench_dashboard(args.games, args.synthetic_dir, max(2, args.reps // 2))
    if args.json:
        print(json.dumps(out))
        return 0
    if "browser" in out:
        b = out["browser"]
        print(f"Chromium, {b['games']} synthetic games, fresh server processes:")
        print(f"  Dashboard without caches: first progress/tiles {b['dashboard_no_cache']['first_content_s']} s, "
              f"full render {b['dashboard_no_cache']['full_render_s']} s")
        w = b["dashboard_fresh_process_with_cache"]
        print(f"  Dashboard with caches present: full render median {w['full_render_s']['median']} s "
              f"(max {w['full_render_s']['max']} s, n={w['full_render_s']['n']})")
        st_ = b["timeline_step_click_to_render_s"]
        print(f"  timeline step, click to new step rendered: median {st_['median']} s, max {st_['max']} s (n={st_['n']})")
    if "largest_demo_game" in out:
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
