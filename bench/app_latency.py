"""App latency under AppTest: a timeline step change and a page switch on the largest demo
game, and the Cross-Game Dashboard on a 1,000-game synthetic corpus.

    python bench/app_latency.py                 # figures as text
    python bench/app_latency.py --json          # one JSON object
    python bench/app_latency.py --games 200     # a smaller synthetic corpus
    python bench/app_latency.py --synthetic-dir /tmp/ms_synth   # keep/reuse the synthetic corpus
    python bench/app_latency.py --only-browser --no-timeline --baseline /tmp/base   # Chromium, this vs another checkout

In Chromium each Dashboard visit is a fresh ``streamlit run`` process; besides the wall times it
reports the server's CPU seconds for the visit, the browser's CPU seconds (/proc) to the complete
page (every element's chunk loaded), the page's element counts and the browser's phase times (HTML,
app shell, script start, sidebar picker, first content, tiles, first chart, idle), which say where
the time goes; with ``--baseline`` the visits alternate between the two checkouts under the same load.

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
sys.path.insert(0, str(Path(__file__).resolve().parent))

from app_waits import PAGE_WAIT_S, PROC_WAIT_S, STEP_WAIT_S, Failures, step_click, wait_health, wait_idle, wait_procs  # noqa: E402


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
    wait_procs(procs, what="offline game of the synthetic corpus")
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
class _Server:
    """``streamlit run streamlit_app.py`` of a checkout (this one by default) on a free loopback port
    (a fresh server process)."""

    def __init__(self, env: dict[str, str], checkout: Path = ROOT):
        import socket

        with socket.socket() as sk:
            sk.bind(("127.0.0.1", 0))
            self.port = sk.getsockname()[1]
        self.proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", "streamlit_app.py", "--server.headless", "true",
                                      "--server.port", str(self.port), "--server.address", "127.0.0.1",
                                      "--browser.gatherUsageStats", "false"], cwd=checkout,
                                     env={**os.environ, "PYTHONPATH": str(checkout), **env},
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.url = f"http://127.0.0.1:{self.port}"
        try:
            wait_health(self.url, self.proc)
        except Exception:
            self.close()
            raise
        self.start_cpu_s = self.cpu_s()

    def cpu_s(self) -> float:
        """User + system CPU seconds of the server process so far (Linux /proc; 0 elsewhere)."""
        try:
            fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return 0.0
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def close(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


# first time (ms after navigation start, in the browser's clock) each phase of a page load is seen:
# the HTML, Streamlit's app shell, the script run starting (the session is up), the sidebar's game picker,
# the first Dashboard content (progress bar or a tile), the full tile row, the first chart drawn, and the run's end
_PHASES_JS = """(() => {
  const t = {};
  const seen = (k) => { if (!(k in t)) t[k] = performance.now(); };
  let ran = false;
  const check = () => {
    const app = document.querySelector('[data-testid="stApp"]');
    if (app) seen('app_shell');
    const s = app && app.getAttribute('data-test-script-state');
    if (s === 'running') { ran = true; seen('script_running'); }
    if (document.querySelector('[data-testid="stSidebar"] [data-testid="stSelectbox"]')) seen('sidebar_picker');
    if (document.querySelector('[data-testid="stMain"] [data-testid="stProgress"], [data-testid="stMain"] [data-testid="stMetric"]')) seen('first_content');
    if ([...document.querySelectorAll('[data-testid="stMetric"]')].some(m => m.innerText.includes('Probe parse rate'))) seen('tiles');
    if (document.querySelector('[data-testid="stMain"] .vega-embed canvas, [data-testid="stMain"] .vega-embed svg')) seen('first_chart');
    if (ran && s === 'notRunning' && 'tiles' in t) seen('idle');
  };
  new MutationObserver(check).observe(document, {subtree: true, childList: true, attributes: true});
  document.addEventListener('DOMContentLoaded', () => seen('dom_ready'));
  window.__msPhases = t;
})();"""


# every element drawn (no skeleton left: each element type's JavaScript chunk loaded) and a chart on the page
_COMPLETE_JS = """() => !document.querySelector('[data-testid="stSkeleton"]')
  && !!document.querySelector('[data-testid="stMain"] .vega-embed canvas, [data-testid="stMain"] .vega-embed svg')"""

# the page's elements: how many, and of how many types (each type's first use loads its chunk)
_ELEMENTS_JS = """() => { const types = new Set(), all = document.querySelectorAll('[data-testid="stElementContainer"]');
  for (const c of all) { const e = c.querySelector('[data-testid]'); types.add(e ? e.getAttribute('data-testid') : ''); }
  return {elements: all.length, element_types: types.size, dom_nodes: document.getElementsByTagName('*').length}; }"""


def browser_cpu_s() -> dict[int, float]:
    """User + system CPU seconds so far of each Chromium process this bench started (browser, renderers, GPU and
    utility processes; Linux /proc, none elsewhere): unlike the renderer's TaskDuration, not inflated by waiting for a core."""
    tick, parent, cpu = os.sysconf("SC_CLK_TCK"), {}, {}
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            f = (d / "stat").read_text().rsplit(")", 1)[1].split()
            parent[int(d.name)] = int(f[1])
            if os.readlink(d / "exe").rsplit("/", 1)[-1] == "chromium":  # /usr/bin/chromium starts /usr/lib/chromium/chromium
                cpu[int(d.name)] = (int(f[11]) + int(f[12])) / tick
        except OSError:
            continue

    def ours(pid: int) -> bool:
        while pid > 1:
            if pid == os.getpid():
                return True
            pid = parent.get(pid, 0)
        return False

    return {pid: c for pid, c in cpu.items() if ours(pid)}


def cpu_since(before: dict[int, float]) -> float:
    """CPU seconds the bench's Chromium processes spent since ``before`` (a process that ended meanwhile is not counted)."""
    return sum(c - before.get(pid, 0.0) for pid, c in browser_cpu_s().items())


def _dashboard_visit(browser, url: str) -> dict:
    """Open the Dashboard in a new tab: seconds to the first progress bar or tile, to the full render (the
    script run done) and to the complete page (every element's chunk loaded, the chart drawn; Python's clock,
    from ``goto``), the browser's phase times (``phases_s``), to the complete page: the browser's CPU seconds
    (:func:`browser_cpu_s`) and its main thread's busy seconds (CDP ``Performance.getMetrics`` TaskDuration, which
    counts a task's waits for a core on a loaded machine), and the page's element counts."""
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    cdp = page.context.new_cdp_session(page)
    cdp.send("Performance.enable")
    page.add_init_script(_PHASES_JS)
    cpu0 = browser_cpu_s()
    t0 = time.perf_counter()
    page.goto(url + "/dashboard")
    page.wait_for_selector('[data-testid="stProgress"], [data-testid="stMetric"]', timeout=PAGE_WAIT_S * 1000)
    first = time.perf_counter() - t0
    page.wait_for_selector('[data-testid="stMetric"]:has-text("Probe parse rate")', timeout=PAGE_WAIT_S * 1000)
    wait_idle(page)
    full = time.perf_counter() - t0
    page.wait_for_function(_COMPLETE_JS, timeout=120_000)
    complete = time.perf_counter() - t0
    cpu = cpu_since(cpu0)
    metrics = {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}
    phases = page.evaluate("() => window.__msPhases || {}")
    counts = page.evaluate(_ELEMENTS_JS)
    page.close()
    return {"first_content_s": round(first, 2), "full_render_s": round(full, 2), "complete_s": round(complete, 2),
            "browser_cpu_s": round(cpu, 2), "browser_main_busy_s": round(metrics.get("TaskDuration", 0.0), 2), **counts,
            "phases_s": {k: round(v / 1000, 2) for k, v in sorted(phases.items(), key=lambda kv: kv[1])}}


def _visit_fresh(browser, env: dict[str, str], checkout: Path, settle_s: float = 0.0) -> dict:
    """One Dashboard visit in a new server process of ``checkout``, ``settle_s`` seconds after its health check
    answered, with the server's CPU seconds spent from that answer, and from the request, to the full render."""
    srv = _Server(env, checkout)
    try:
        time.sleep(settle_s)
        asked_cpu_s = srv.cpu_s()
        r = _dashboard_visit(browser, srv.url)
        r["server_startup_cpu_s"] = round(srv.start_cpu_s, 2)
        r["server_cpu_s"] = round(srv.cpu_s() - srv.start_cpu_s, 2)
        r["server_cpu_from_request_s"] = round(srv.cpu_s() - asked_cpu_s, 2)  # without what a warm-up did while settling
        return r
    finally:
        srv.close()


def _summary(runs: list[dict]) -> dict:
    out = {k: _stats([r[k] for r in runs]) for k in runs[0] if k != "phases_s"}
    phases = {k for r in runs for k in r["phases_s"]}
    out["phases_s"] = {k: _stats([r["phases_s"][k] for r in runs if k in r["phases_s"]]) for k in phases}
    out["phases_s"] = dict(sorted(out["phases_s"].items(), key=lambda kv: kv[1]["median"]))
    return out


def compile_checkout(checkout: Path) -> None:
    """Byte-compile a checkout's packages, as a deployed server's first start leaves them: with
    PYTHONDONTWRITEBYTECODE set (as in this machine's shells) every fresh process would otherwise compile
    the app and the package from source, about 0.4 s of CPU that no deploy pays twice."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", *(str(checkout / d) for d in ("app", "pages", "mafiascope"))],
                   check=True, stdout=subprocess.DEVNULL, timeout=PROC_WAIT_S)


def bench_browser(n: int, synth_dir: Path | None, reps: int, baseline: Path | None = None, timeline: bool = True,
                  bytecode: bool = False, settle_s: float = 0.0, fails: Failures | None = None,
                  step_wait_s: float = STEP_WAIT_S) -> dict:
    """In Chromium (Playwright): the Dashboard of n synthetic games in fresh server processes, cold
    (no analytics cache) and with the caches present, and the timeline's next-step click. With
    ``baseline`` (another checkout, e.g. ``git archive main | tar -x -C DIR``) the Dashboard visits
    alternate between the two checkouts in the same run, each with its own cache directory. A visit or a
    click whose wait runs out is recorded in ``fails`` and left out of the figures (app_waits.py)."""
    from playwright.sync_api import sync_playwright

    fails = fails if fails is not None else Failures()
    if not Path(CHROMIUM).exists():
        raise SystemExit(f"{CHROMIUM} is not installed")
    root = synth_dir or Path(tempfile.mkdtemp(prefix="ms_synth_"))
    build_synthetic(root / "corpus", n)
    checkouts = {"this": ROOT, **({"baseline": baseline.resolve()} if baseline else {})}
    if bytecode:
        for checkout in checkouts.values():
            compile_checkout(checkout)
    caches = {name: Path(tempfile.mkdtemp(prefix=f"ms_cache_{name}_")) for name in checkouts}  # this run's caches only
    envs = {name: {"MAFIASCOPE_LOGS": str(root / "corpus"), "MAFIASCOPE_RUNS": str(root / "runs"),
                   "MAFIASCOPE_CACHE_DIR": str(caches[name])} for name in checkouts}
    out: dict = {"games": n, "checkouts": {k: str(v) for k, v in checkouts.items()}, "settle_s": settle_s,
                 "load_average_start": os.getloadavg()}
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=_ARGS)
            for name, checkout in checkouts.items():
                first = fails.attempt(f"[{name}] Dashboard visit without caches",
                                      lambda checkout=checkout, name=name: _visit_fresh(browser, envs[name], checkout, settle_s))
                out.setdefault(name, {})["dashboard_no_cache"] = first
            runs: dict[str, list[dict]] = {name: [] for name in checkouts}
            for k in range(max(1, reps // 2)):
                for name, checkout in checkouts.items():  # alternating, so both see the same machine load
                    r = fails.attempt(f"[{name}] Dashboard visit {k + 1} with caches",
                                      lambda checkout=checkout, name=name: _visit_fresh(browser, envs[name], checkout, settle_s))
                    if r is not None:
                        runs[name].append(r)
            for name in checkouts:
                out[name]["dashboard_fresh_process_with_cache"] = _summary(runs[name]) if runs[name] else None
            if timeline:
                steps = fails.attempt("timeline steps", lambda: _timeline_steps(browser, envs["this"], reps * 2, step_wait_s, fails))
                if steps:
                    out["timeline_step_click_to_render_s"] = {**_stats([x for x in steps if x is not None]), "game": _largest_game(_demo_roots())[1]}
            browser.close()
        out["load_average_end"] = os.getloadavg()
    finally:
        for c in caches.values():
            shutil.rmtree(c, ignore_errors=True)
        if synth_dir is None:
            shutil.rmtree(root, ignore_errors=True)
    return out


def _timeline_steps(browser, env: dict[str, str], clicks: int, step_wait_s: float, fails: Failures) -> list[float]:
    """Seconds from a click on "next step" to the new step drawn, on the largest demo game; a click that draws nothing
    within ``step_wait_s`` is a failure and ends the series (the page may be stuck)."""
    game_dir, gid = _largest_game(_demo_roots())
    srv = _Server({**env, "MAFIASCOPE_LOGS": str(game_dir.parent)})
    steps: list[float] = []
    try:
        page = browser.new_page(viewport={"width": 1500, "height": 2000})
        page.goto(f"{srv.url}/?game={gid}&step=5")
        page.wait_for_selector('.st-key-tl_next button', timeout=PAGE_WAIT_S * 1000)  # the first stSlider may be the sidebar's hidden one
        wait_idle(page)
        for i in range(clicks):
            r = fails.attempt(f"timeline click to step {6 + i}", lambda i=i: step_click(page, f"step={6 + i}", step_wait_s))
            if r is None:
                break
            steps.append(r["rendered"])
        page.close()
    finally:
        srv.close()
    return steps


# one fresh-process Dashboard render under AppTest (run as `python -c` in the checkout): the process CPU of
# the script run; with "first" it stops at the first progress bar drawn (a cold start's first content)
_FRESH_JS = r"""
import json, logging, os, sys, time
sys.path.insert(0, os.getcwd())
logging.getLogger("streamlit").setLevel(logging.ERROR)
import streamlit as st
from streamlit.testing.v1 import AppTest
at = AppTest.from_file(os.path.join(os.getcwd(), "streamlit_app.py"), default_timeout=1800)
at.query_params["page"] = "dashboard"
c0, w0 = time.process_time(), time.perf_counter()
if sys.argv[1] == "first":
    def first(*a, **k):
        print(json.dumps({"cpu_s": round(time.process_time() - c0, 2), "wall_s": round(time.perf_counter() - w0, 2)}), flush=True)
        os._exit(0)
    st.progress = first
at.run()
print(json.dumps({"cpu_s": round(time.process_time() - c0, 2), "wall_s": round(time.perf_counter() - w0, 2),
                  "altair_imported": "altair" in sys.modules, "exceptions": [e.message[:200] for e in at.exception]}))
"""


def _fresh_run(checkout: Path, env: dict[str, str], mode: str) -> dict:
    r = subprocess.run([sys.executable, "-c", _FRESH_JS, mode], cwd=checkout, env={**os.environ, "PYTHONPATH": str(checkout), **env},
                       capture_output=True, text=True, timeout=FRESH_RUN_S)
    if r.returncode != 0 or not r.stdout.strip():
        raise RuntimeError(f"the fresh process exited with code {r.returncode}: {(r.stderr or '').strip().splitlines()[-1:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


FRESH_RUN_S = 3600  # a fresh process's Dashboard run (a cold 1,000-game corpus included) that has not ended is a failure


def bench_fresh_cpu(n: int, synth_dir: Path | None, reps: int, baseline: Path | None = None, fails: Failures | None = None) -> dict:
    """Process CPU of a fresh process's Dashboard render under AppTest, caches present (each checkout's cache
    built by a first, discarded run), and of a cold start to its first progress bar; checkouts alternate."""
    root = synth_dir or Path(tempfile.mkdtemp(prefix="ms_synth_"))
    build_synthetic(root / "corpus", n)
    checkouts = {"this": ROOT, **({"baseline": baseline.resolve()} if baseline else {})}
    base_env = {"MAFIASCOPE_LOGS": str(root / "corpus"), "MAFIASCOPE_RUNS": str(root / "runs")}
    caches = {name: Path(tempfile.mkdtemp(prefix=f"ms_cache_{name}_")) for name in checkouts}
    fails = fails if fails is not None else Failures()
    out: dict = {name: {"warm": [], "cold_first_progress": []} for name in checkouts}

    def run(name: str, what: str, checkout: Path, cache: Path, mode: str, into: list | None) -> None:
        r = fails.attempt(f"[{name}] fresh-process Dashboard {what}", lambda: _fresh_run(checkout, {**base_env, "MAFIASCOPE_CACHE_DIR": str(cache)}, mode))
        if r is not None and into is not None:
            into.append(r)

    try:
        for name, checkout in checkouts.items():
            run(name, "building its caches", checkout, caches[name], "full", None)
        for _ in range(max(1, reps)):
            for name, checkout in checkouts.items():
                run(name, "with caches", checkout, caches[name], "full", out[name]["warm"])
                empty = Path(tempfile.mkdtemp(prefix="ms_cold_"))
                try:
                    run(name, "cold, to its first progress bar", checkout, empty, "first", out[name]["cold_first_progress"])
                finally:
                    shutil.rmtree(empty, ignore_errors=True)
        out["load_average"] = round(os.getloadavg()[0], 1)
    finally:
        for c in caches.values():
            shutil.rmtree(c, ignore_errors=True)
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
    ap.add_argument("--baseline", type=Path, default=None,
                    help="another checkout (e.g. `git archive main | tar -x -C DIR`) whose Dashboard is measured in "
                         "Chromium in the same run, visits alternating with this checkout's")
    ap.add_argument("--no-timeline", action="store_true", help="skip the Chromium timeline-step measurement")
    ap.add_argument("--bytecode", action="store_true",
                    help="byte-compile each checkout's app, pages and package first (writes __pycache__ there), as a "
                         "deployed server has them; without it a shell with PYTHONDONTWRITEBYTECODE compiles them in every process")
    ap.add_argument("--settle", type=float, default=0.0,
                    help="seconds each fresh server process stays up after its health check before the Dashboard is "
                         "requested (default 0: at once; a server that started before its first visitor has warmed its "
                         "first view, app/warm.py)")
    ap.add_argument("--fresh-cpu", action="store_true",
                    help="only the process CPU of fresh-process Dashboard renders under AppTest (caches present, and a "
                         "cold start to its first progress bar), alternating with --baseline when given")
    ap.add_argument("--step-wait", type=float, default=STEP_WAIT_S,
                    help=f"seconds a timeline click may take to draw its step before it counts as a failure (default {STEP_WAIT_S:.0f})")
    args = ap.parse_args(argv)
    import logging

    logging.getLogger("streamlit").setLevel(logging.ERROR)
    out = {"streamlit": __import__("streamlit").__version__, "python": sys.version.split()[0], "cpus": os.cpu_count()}
    fails = Failures()
    if args.fresh_cpu:
        out["fresh_cpu"] = f = bench_fresh_cpu(args.games, args.synthetic_dir, args.reps, args.baseline, fails)
        out["failures"] = fails.items
        if args.json:
            print(json.dumps(out))
            return 1 if fails.items else 0
        for name in ("this", "baseline"):
            if name in f:
                print(f"[{name}] fresh-process Dashboard, caches present: process CPU "
                      + ", ".join(str(r["cpu_s"]) for r in f[name]["warm"]) + " s; cold start to the first progress bar: "
                      + ", ".join(str(r["cpu_s"]) for r in f[name]["cold_first_progress"]) + f" s (load average {f['load_average']})")
        return fails.report()
    if args.browser or args.only_browser:
        out["browser"] = fails.attempt("Chromium measurements", lambda: bench_browser(
            args.games, args.synthetic_dir, args.reps, args.baseline, not args.no_timeline, args.bytecode, args.settle, fails,
            args.step_wait))
    if not args.only_browser:
        out["largest_demo_game"] = fails.attempt("largest demo game under AppTest", lambda: bench_game(args.reps))
    if not args.skip_dashboard and not args.only_browser:
        out["synthetic_dashboard"] = fails.attempt("synthetic Dashboard under AppTest",
                                                   lambda: bench_dashboard(args.games, args.synthetic_dir, max(2, args.reps // 2)))
    out = {k: v for k, v in out.items() if v is not None}
    out["failures"] = fails.items
    if args.json:
        print(json.dumps(out))
        return 1 if fails.items else 0
    if "browser" in out:
        b = out["browser"]
        print(f"Chromium, {b['games']} synthetic games, fresh server processes (load average at start "
              f"{'/'.join(f'{x:.1f}' for x in b['load_average_start'])}, at end {'/'.join(f'{x:.1f}' for x in b.get('load_average_end', ()))}):")
        for name in b["checkouts"]:
            nc, w = b[name]["dashboard_no_cache"], b[name]["dashboard_fresh_process_with_cache"]
            if not nc or not w:
                print(f"  [{name}] Dashboard: see the failures below")
                continue
            print(f"  [{name}] Dashboard without caches: first progress/tiles {nc['first_content_s']} s, "
                  f"full render {nc['full_render_s']} s (server CPU {nc['server_cpu_s']} s); phases "
                  + ", ".join(f"{k} {v}" for k, v in nc["phases_s"].items()))
            print(f"  [{name}] Dashboard with caches present: full render median {w['full_render_s']['median']} s "
                  f"(max {w['full_render_s']['max']} s, n={w['full_render_s']['n']}), server CPU median "
                  f"{w['server_cpu_s']['median']} s, browser CPU median {w['browser_cpu_s']['median']} s "
                  f"(main thread busy {w['browser_main_busy_s']['median']} s), "
                  f"complete page median {w['complete_s']['median']} s, {w['elements']['median']} elements of "
                  f"{w['element_types']['median']} types; phases (median) "
                  + ", ".join(f"{k} {v['median']}" for k, v in w["phases_s"].items()))
        if "timeline_step_click_to_render_s" in b:
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
    return fails.report()


if __name__ == "__main__":
    sys.exit(main())
