"""Bounded waits for the app benches (bench/app_latency.py, bench/app_step.py).

Every wait of these benches has a bound, and a wait that runs out is a failure the bench reports (in its text
and JSON output, and by exiting with status 1), never a hang: a timeline click that draws nothing, a server that
does not start, a page that never settles, a helper process that does not end. :class:`Failures` collects them;
:func:`step_click` is the one timed click on the Live Game timeline's "next step" button.
"""

from __future__ import annotations

import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

T = TypeVar("T")
STEP_WAIT_S = 120.0  # a timeline step that has not drawn after this long is a failure
PAGE_WAIT_S = 900.0  # a page (a cold Dashboard on a large corpus included) that has not settled after this long
START_WAIT_S = 180.0  # a streamlit server that does not answer its health check after this long
PROC_WAIT_S = 600.0  # a helper process (an offline game of the synthetic corpus, a fresh AppTest run)


class WaitTimeout(RuntimeError):
    """A bounded wait ran out; the message says what was awaited and for how long."""


@dataclass
class Failures:
    """The waits that ran out (and other failures) of one bench run, in the order they happened."""

    items: list[dict[str, str]] = field(default_factory=list)

    def attempt(self, what: str, fn: Callable[[], T], default: T | None = None) -> T | None:
        """``fn()``, or ``default`` after recording why it failed (a timeout of any kind, a failed assertion or run)."""
        try:
            return fn()
        except KeyboardInterrupt:
            raise
        except Exception as exc:  # noqa: BLE001 - a bench reports every failure and goes on with the rest
            self.add(what, f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"[:300])
            return default

    def add(self, what: str, why: str) -> None:
        self.items.append({"what": what, "why": why})
        print(f"FAILED {what}: {why}", file=sys.stderr, flush=True)

    def report(self) -> int:
        """Print the failures (stdout) and return the bench's exit status: 1 when any wait ran out, else 0."""
        for f in self.items:
            print(f"FAILED {f['what']}: {f['why']}")
        return 1 if self.items else 0


def wait_health(url: str, proc: subprocess.Popen, seconds: float = START_WAIT_S) -> None:
    """Until ``url``'s health check answers; WaitTimeout after ``seconds`` or when the server process ended."""
    t0 = time.time()
    while time.time() - t0 < seconds:
        if proc.poll() is not None:
            raise WaitTimeout(f"the streamlit server at {url} exited with code {proc.returncode} before it answered")
        try:
            if urllib.request.urlopen(url + "/_stcore/health", timeout=2).status == 200:
                return
        except OSError:
            time.sleep(0.3)
    raise WaitTimeout(f"the streamlit server at {url} did not answer its health check in {seconds:.0f} s")


def wait_procs(procs: list[subprocess.Popen], seconds: float = PROC_WAIT_S, what: str = "a helper process") -> None:
    """Until every process ended; the ones still running after ``seconds`` (together) are killed and WaitTimeout."""
    deadline = time.time() + seconds
    late = []
    for p in procs:
        try:
            p.wait(timeout=max(0.0, deadline - time.time()))
        except subprocess.TimeoutExpired:
            p.kill()
            late.append(p)
    if late:
        raise WaitTimeout(f"{len(late)} {what}(es) did not end in {seconds:.0f} s (killed)")


def wait_idle(page: Any, seconds: float = PAGE_WAIT_S) -> None:
    """Until the Streamlit page's script run is over (``data-test-script-state`` notRunning); WaitTimeout after ``seconds``."""
    try:
        page.wait_for_function("() => { const a = document.querySelector('[data-testid=\"stApp\"]');"
                               " return a && a.getAttribute('data-test-script-state') === 'notRunning'; }",
                               timeout=seconds * 1000)
    except Exception as exc:
        if type(exc).__name__ == "TimeoutError":
            raise WaitTimeout(f"the page's script run did not end in {seconds:.0f} s") from None
        raise


# click "next step" and time it to the rerun's end (stApp back to notRunning with the new step in the URL) plus two
# animation frames (``rendered``), then to the main thread's idle (``settled``); null when nothing came in wait_ms
_STEP_JS = """async ({want, wait_ms}) => {
  const app = document.querySelector('[data-testid="stApp"]');
  const btn = document.querySelector('.st-key-tl_next button') ||
    [...document.querySelectorAll('[data-testid="stButton"] button')].find(b => b.innerText.includes('chevron_right'));
  if (!app || !btn) return {missing: !app ? 'the app' : 'the next-step button'};
  const t0 = performance.now();
  let ran = false;
  return await new Promise(resolve => {
    const timer = setTimeout(() => { obs.disconnect(); resolve(null); }, wait_ms);
    const check = () => {
      const s = app.getAttribute('data-test-script-state');
      if (s === 'running') ran = true;
      if (ran && s === 'notRunning' && location.href.includes(want)) {
        obs.disconnect();
        clearTimeout(timer);
        requestAnimationFrame(() => requestAnimationFrame(() => {
          const rendered = performance.now() - t0;
          requestIdleCallback(() => resolve({rendered, settled: performance.now() - t0}), {timeout: 5000});
        }));
      }
    };
    const obs = new MutationObserver(check);
    obs.observe(app, {attributes: true});
    btn.click();
  });
}"""


def step_click(page: Any, want: str, seconds: float = STEP_WAIT_S) -> dict[str, float]:
    """Click the timeline's "next step" and return ``{"rendered": s, "settled": s}`` (browser clock) once the page
    shows ``want`` in its URL; WaitTimeout when the step has not drawn after ``seconds``."""
    r = page.evaluate(_STEP_JS, {"want": want, "wait_ms": int(seconds * 1000)})
    if r is None:
        raise WaitTimeout(f"the click to {want} drew nothing in {seconds:g} s")
    if "missing" in r:
        raise RuntimeError(f"the click to {want}: {r['missing']} is not on the page")
    return {"rendered": r["rendered"] / 1000, "settled": r["settled"] / 1000}
