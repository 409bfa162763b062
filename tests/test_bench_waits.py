"""The app benches never wait without a bound, and a wait that runs out is reported as a failure (issue 35 item 8:
bench/app_latency.py hung for over 7 minutes on a timeline step that never came)."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCHES = [ROOT / "bench" / "app_latency.py", ROOT / "bench" / "app_step.py", ROOT / "bench" / "app_waits.py"]
sys.path.insert(0, str(ROOT / "bench"))


def _calls(path: Path):
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call):
            yield node


@pytest.mark.parametrize("path", BENCHES, ids=lambda p: p.name)
def test_every_wait_in_the_app_benches_has_a_bound(path):
    unbounded = []
    for call in _calls(path):
        f = call.func
        name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
        kws = {k.arg for k in call.keywords}
        if name in ("wait_for_function", "wait_for_selector", "wait_for_url") and "timeout" not in kws:
            unbounded.append(f"line {call.lineno}: {name} without timeout=")
        if name in ("wait", "communicate") and "timeout" not in kws and not call.args:
            unbounded.append(f"line {call.lineno}: .{name}() without a timeout")
        if name == "run" and isinstance(f, ast.Attribute) and getattr(f.value, "id", "") == "subprocess" and "timeout" not in kws:
            unbounded.append(f"line {call.lineno}: subprocess.run without timeout=")
        if name == "urlopen" and "timeout" not in kws:
            unbounded.append(f"line {call.lineno}: urlopen without timeout=")
    # every promise the benches evaluate in the page settles by itself after a while (setTimeout), or it could hang
    for js in re.findall(r'"""(.*?)"""', path.read_text(encoding="utf-8"), flags=re.S):
        if "new Promise" in js and "setTimeout" not in js:
            unbounded.append(f"a page script waits on a promise without a setTimeout: {js.strip()[:60]!r}")
    assert not unbounded, unbounded


def test_failures_are_reported_and_make_the_exit_status():
    from app_waits import Failures, WaitTimeout

    fails = Failures()
    assert fails.attempt("fine", lambda: 3) == 3 and fails.report() == 0

    def stuck() -> None:
        raise WaitTimeout("the click to step=7 drew nothing in 2 s")

    assert fails.attempt("timeline click to step 7", stuck, default="gone") == "gone"
    assert fails.items == [{"what": "timeline click to step 7", "why": "WaitTimeout: the click to step=7 drew nothing in 2 s"}]
    assert fails.report() == 1


def test_a_server_that_never_answers_is_a_failure_within_the_bound():
    from app_waits import WaitTimeout, wait_health

    quiet = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        t0 = time.time()
        with pytest.raises(WaitTimeout, match="did not answer"):
            wait_health("http://127.0.0.1:9", quiet, seconds=1.5)
        assert time.time() - t0 < 10
    finally:
        quiet.kill()
        quiet.wait(10)


@pytest.mark.browser
@pytest.mark.slow
def test_a_timeline_click_that_draws_nothing_fails_within_the_bound():
    """A page with the app's markers whose "next step" button does nothing: the bench's click gives up after the
    bound and says so, instead of waiting forever."""
    from app_waits import WaitTimeout, step_click

    chromium = "/usr/bin/chromium"
    if not Path(chromium).exists():
        pytest.skip("/usr/bin/chromium is not installed")
    sync_playwright = pytest.importorskip("playwright.sync_api").sync_playwright
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page()
        page.set_content('<div data-testid="stApp" data-test-script-state="notRunning">'
                         '<div class="st-key-tl_next"><button>next</button></div></div>')
        t0 = time.time()
        with pytest.raises(WaitTimeout, match="drew nothing in 2 s"):
            step_click(page, "step=6", seconds=2)
        assert time.time() - t0 < 15
        browser.close()
