"""A timeline step of the Live Game page in Chromium: click on "next step" to the new step drawn,
with the server's and the browser's CPU per step, early, mid-game and late in the game.

    python bench/app_step.py                          # this checkout, the largest demo game
    python bench/app_step.py --baseline /tmp/base     # and another checkout (e.g. `git archive main | tar -x -C /tmp/base`)
    python bench/app_step.py --json --reps 8 --game demo-classic-01

Each checkout is served by its own `streamlit run` (loopback, its own data/demo, an empty cache
directory) and driven by Playwright with Debian's Chromium; with --baseline the two servers are
measured alternately, one round of clicks each, so both see the same machine load. Per click:

* ``rendered_s``: click to the rerun's end (the page back to notRunning with the new step in the
  URL) plus two animation frames, in the browser's clock (the figure of earlier rounds);
* ``settled_s``: the same, then until the browser's main thread is idle (requestIdleCallback);
* ``server_cpu_s`` / ``browser_cpu_s``: CPU seconds of the Streamlit process and of all Chromium
  processes over the click (from /proc); on a shared machine these are the figures to trust;
* ``ws_kb``: kilobytes the server sent over the websocket for the step;
* ``react_commits`` / ``react_renders``: React commits and components re-rendered for the step (a minimal
  React devtools hook injected before the page loads counts fibers whose PerformedWork flag is set, walking
  only subtrees that did work): the browser's work does not follow what changed but the page's element count.

``--names`` also names, for each commit, who re-rendered: the components are counted under the Streamlit
element or block above them (``E:<type>:<id>``, ``B:<type>:<id>:<children>``) or under ``shell`` (the app's
frame, sidebar navigation and toolbar, above every element); printed for each app's first click, all clicks in
``--json`` (``named_commits``).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from app_waits import PAGE_WAIT_S, STEP_WAIT_S, Failures, step_click, wait_health, wait_idle  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]
TICK = os.sysconf("SC_CLK_TCK")

# a minimal React devtools hook: react-dom calls onCommitFiberRoot after each commit when it finds one. With
# window.__msReact.log set (--names), each commit also lists who re-rendered: every rendered component is counted
# under the nearest Streamlit element or block above it ("E:<type>:<id or label>", "B:<type>:<id>:<children>"),
# components above every element (the app's shell: sidebar navigation, header, toolbar) under "shell"
_REACT_HOOK = """
window.__msReact = {commits: 0, renders: 0};
const __msNode = n => { try {
  if (n.element) { const e = n.element, t = e.type, v = e[t] || {};
    return 'E:' + t + ':' + String(v.id || v.label || v.body || '').slice(-48).replace(/\\s+/g, ' '); }
  if (n.deltaBlock) { const b = n.deltaBlock;
    return 'B:' + (b.type || '') + ':' + String(b.id || '').slice(-32) + ':' + (n.children ? n.children.length : ''); }
  } catch (e) {} return null; };
window.__REACT_DEVTOOLS_GLOBAL_HOOK__ = {supportsFiber: true, renderers: new Map(), isDisabled: false,
  inject() { return 1; }, onScheduleFiberRoot() {}, onCommitFiberUnmount() {}, onPostCommitFiberRoot() {}, checkDCE() {},
  onCommitFiberRoot(id, root) {
    const rc = window.__msReact; rc.commits++;
    const who = rc.log ? {} : null, todo = [[root.current, 'shell']];
    while (todo.length) {
      let [f, own] = todo.pop();
      const did = f.flags & 1;
      if (who && did && f.memoizedProps && f.memoizedProps.node) own = __msNode(f.memoizedProps.node) || own;
      if (did && (typeof f.type === 'function' || (f.type && typeof f.type === 'object'))) {
        rc.renders++;
        if (who) who[own] = (who[own] || 0) + 1;
      }
      if (f.subtreeFlags & 1) for (let c = f.child; c; c = c.sibling) todo.push([c, own]);
    }
    if (who) rc.log.push({t: performance.now(), who});
  }};
"""


def _cpu(pids: list[int]) -> float:
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])  # utime + stime
    return total / TICK


def _descendants(root: int) -> list[int]:
    kids: dict[int, list[int]] = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                ppid = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            kids.setdefault(ppid, []).append(int(d.name))
    out, todo = [], [root]
    while todo:
        for c in kids.get(todo.pop(), []):
            out.append(c)
            todo.append(c)
    return out


def _chromium_pids(exclude: set[int]) -> list[int]:
    pids = []
    for pid in _descendants(os.getpid()):
        if pid in exclude:
            continue
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if b"chrom" in cmd.split(b"\0")[0]:
            pids.append(pid)
    return pids


class Server:
    """``streamlit run streamlit_app.py`` of the checkout ``root`` on a free loopback port."""

    def __init__(self, root: Path, cache: Path):
        with socket.socket() as sk:
            sk.bind(("127.0.0.1", 0))
            self.port = sk.getsockname()[1]
        env = {**os.environ, "PYTHONPATH": str(root), "MAFIASCOPE_LOGS": str(root / "data" / "demo"),
               "MAFIASCOPE_RUNS": str(cache / "runs"), "MAFIASCOPE_CACHE_DIR": str(cache)}
        self.proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", "streamlit_app.py", "--server.headless", "true",
                                      "--server.port", str(self.port), "--server.address", "127.0.0.1",
                                      "--browser.gatherUsageStats", "false"], cwd=root, env=env,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.url = f"http://127.0.0.1:{self.port}"
        try:
            wait_health(self.url, self.proc)
        except Exception:
            self.close()
            raise

    def close(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def _open(browser, srv: Server, game: str, step: int):
    ctx = browser.new_context(viewport={"width": 1500, "height": 2000})
    ctx.add_init_script(_REACT_HOOK)
    page = ctx.new_page()
    sent: list[int] = []
    page.on("websocket", lambda ws: ws.on("framereceived", lambda f: sent.append(len(f))))
    page.goto(f"{srv.url}/?game={game}&step={step}")
    page.wait_for_selector(".st-key-tl_next button", timeout=PAGE_WAIT_S * 1000)
    wait_idle(page)
    time.sleep(1.0)  # the first draw's charts
    return page, sent


def _named(log: list[dict], top: int = 14) -> list[dict]:
    """Each commit of a step: its renders, how many elements and blocks re-rendered, and who rendered most."""
    return [{"renders": sum(c["who"].values()), "nodes": len(c["who"]) - ("shell" in c["who"]),
             "top": sorted(c["who"].items(), key=lambda kv: -kv[1])[:top]} for c in log]


def _clicks(browser, srv: Server, game: str, start: int, reps: int, named: list | None = None, fails: Failures | None = None,
            step_wait_s: float = STEP_WAIT_S) -> list[dict]:
    """``reps`` clicks on "next step" from ``start``; with ``named`` (a list) each click's commits are appended to it. A
    click that draws nothing in ``step_wait_s`` is recorded in ``fails`` and ends the visit (app_waits.py)."""
    fails = fails if fails is not None else Failures()
    page, sent = _open(browser, srv, game, start)
    out = []
    try:
        for i in range(reps):
            sent.clear()
            c_srv, c_br = _cpu([srv.proc.pid]), _cpu(_chromium_pids({srv.proc.pid}))
            page.evaluate("(n) => { window.__msReact = {commits: 0, renders: 0, log: n ? [] : undefined}; }", named is not None)
            wait_idle(page)  # a click while a run is under way may be dropped by Streamlit
            r = fails.attempt(f"{srv.url}: click to step {start + i + 1}", lambda i=i: step_click(page, f"step={start + i + 1}", step_wait_s))
            if r is None:
                break  # the page may be stuck: the visit ends here
            time.sleep(0.2)  # the step's last websocket frames are counted
            react = page.evaluate("() => window.__msReact")
            if named is not None:
                named.append({"step": start + i + 1, "commits": _named(react.pop("log"))})
            out.append({"rendered_s": r["rendered"], "settled_s": r["settled"],
                        "server_cpu_s": _cpu([srv.proc.pid]) - c_srv,
                        "browser_cpu_s": _cpu(_chromium_pids({srv.proc.pid})) - c_br, "ws_kb": sum(sent) / 1024,
                        **{f"react_{k}": v for k, v in react.items() if k != "log"}})
    finally:
        page.context.close()
    return out


def _steps_of(game_dir: Path) -> int:
    sys.path.insert(0, str(ROOT))
    from mafiascope.logs import read_game

    return len(read_game(game_dir).timeline().steps)


def _summary(rows: list[dict]) -> dict:
    if not rows:
        return {"n": 0}
    return {k: {"median": round(statistics.median(r[k] for r in rows), 3), "max": round(max(r[k] for r in rows), 3)}
            for k in rows[0]} | {"n": len(rows)}


def run(roots: dict[str, Path], game: str, reps: int, rounds: int, names: bool = False, fails: Failures | None = None,
        step_wait_s: float = STEP_WAIT_S) -> dict:
    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).exists():
        raise SystemExit(f"{CHROMIUM} is not installed")
    n = _steps_of(ROOT / "data" / "demo" / game)
    starts = {"early": 5, "mid": n // 2, "late": max(5, n - reps - 2)}
    fails = fails if fails is not None else Failures()
    caches = {name: Path(tempfile.mkdtemp(prefix=f"ms_step_{name}_")) for name in roots}
    servers: dict[str, Server] = {}
    rows: dict[str, dict[str, list[dict]]] = {name: {w: [] for w in starts} for name in roots}
    named: dict[str, list[dict]] = {name: [] for name in roots}
    try:
        servers = {name: Server(root, caches[name]) for name, root in roots.items()}
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            for name, srv in servers.items():  # warm-up: the first visit reads the game and scores it
                fails.attempt(f"[{name}] warm-up visit", lambda srv=srv: _open(browser, srv, game, 5)[0].context.close())
            for _ in range(rounds):
                for where, s0 in starts.items():
                    for name, srv in servers.items():
                        rows[name][where] += fails.attempt(
                            f"[{name}] visit at step {s0}",
                            lambda srv=srv, s0=s0, name=name: _clicks(browser, srv, game, s0, reps, named[name] if names else None,
                                                                    fails, step_wait_s), [])
            browser.close()
    finally:
        for srv in servers.values():
            srv.close()
        for c in caches.values():
            shutil.rmtree(c, ignore_errors=True)
    return {"game": game, "steps": n, "starts": starts, "load_average": os.getloadavg(), "failures": fails.items,
            "apps": {name: {"root": str(roots[name]), **{w: _summary(r) for w, r in rows[name].items()},
                            "all": _summary([x for r in rows[name].values() for x in r]),
                            **({"named_commits": named[name]} if names else {})} for name in roots}}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    ap.add_argument("--game", default="demo-ru-01", help="a game of data/demo (default: the largest, demo-ru-01)")
    ap.add_argument("--reps", type=int, default=4, help="clicks per visit (default 4)")
    ap.add_argument("--rounds", type=int, default=2, help="visits per place in the game (default 2)")
    ap.add_argument("--baseline", type=Path, default=None, help="another checkout to measure alternately (e.g. main)")
    ap.add_argument("--names", action="store_true",
                    help="also name who re-rendered in each React commit (printed for each app's first click)")
    ap.add_argument("--step-wait", type=float, default=STEP_WAIT_S,
                    help=f"seconds a click may take to draw its step before it counts as a failure (default {STEP_WAIT_S:.0f})")
    args = ap.parse_args(argv)
    roots = {"this": ROOT} | ({"baseline": args.baseline.resolve()} if args.baseline else {})
    load0 = os.getloadavg()
    fails = Failures()
    out = {"load_average_before": load0, **run(roots, args.game, args.reps, args.rounds, args.names, fails, args.step_wait)}
    if args.json:
        print(json.dumps(out))
        return 1 if fails.items else 0
    print(f"{out['game']} ({out['steps']} steps), clicks at steps {out['starts']}; load average "
          f"{load0[0]:.1f} before, {out['load_average'][0]:.1f} after")
    for name, a in out["apps"].items():
        print(f"{name} ({a['root']}):")
        for where in (*out["starts"], "all"):
            s = a[where]
            if not s["n"]:
                print(f"  {where:5s} n= 0  (no click drew its step: see the failures below)")
                continue
            print(f"  {where:5s} n={s['n']:2d}  rendered {s['rendered_s']['median']:.3f} s (max {s['rendered_s']['max']:.3f})"
                  f"  settled {s['settled_s']['median']:.3f} s  server CPU {s['server_cpu_s']['median']:.3f} s"
                  f"  browser CPU {s['browser_cpu_s']['median']:.3f} s  websocket {s['ws_kb']['median']:.0f} KB"
                  f"  React {s['react_commits']['median']:.0f} commits, {s['react_renders']['median']:.0f} renders")
        for k, c in enumerate(a.get("named_commits", [{}])[0].get("commits", [])):
            print(f"    commit {k}: {c['renders']} renders, {c['nodes']} elements and blocks: "
                  + "; ".join(f"{n} {who}" for who, n in c["top"]))
    if "baseline" in out["apps"] and out["apps"]["this"]["all"]["n"] and out["apps"]["baseline"]["all"]["n"]:
        t, b = out["apps"]["this"]["all"], out["apps"]["baseline"]["all"]
        print("baseline/this (medians): " + ", ".join(
            f"{k} {b[k]['median'] / max(t[k]['median'], 1e-9):.1f}x" for k in ("rendered_s", "settled_s", "server_cpu_s", "browser_cpu_s")))
    return fails.report()


if __name__ == "__main__":
    sys.exit(main())
