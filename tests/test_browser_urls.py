"""Real browser (issue 16, item 4): every view's URL reproduces it. Each page is opened and changed
(a step, a tab, τ, an agent ...); its URL is then opened in a fresh browser context (dark theme)
and both must show the same headings, selected tabs, slider values, pickers and toggles.
Screenshots of both (light, dark) go to test-output/screenshots/urls/."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .app_support import CORPUS, ROOT, serve_app
from .test_browser_app import ARGS, CHROMIUM, _settle, _wait_url

pytestmark = [pytest.mark.browser, pytest.mark.slow]
SHOTS = ROOT / "test-output" / "screenshots" / "urls"
GAME = "0da78714-88e0-4445-b161-f2eaf029184c"
FORKABLE = "demo-classic-01"

STATE_JS = """() => {
  const q = s => Array.from(document.querySelectorAll(s));
  const main = document.querySelector('[data-testid="stMain"]') || document;
  const m = s => Array.from(main.querySelectorAll(s));
  return {
    headings: m('h1, h2, h3, h4').map(e => e.innerText.trim()).filter(Boolean),
    tabs: q('[role="tab"][aria-selected="true"]').map(e => e.innerText.trim()),
    sliders: q('input[type="range"]').map(e => (e.getAttribute('aria-label') || '') + '=' + (e.getAttribute('aria-valuetext') || e.value)),
    selects: q('[data-testid="stSelectbox"]').map(e => e.textContent.trim() + '=' + Array.from(e.querySelectorAll('input')).map(i => i.value).join('|')),
    multiselects: q('[data-testid="stMultiSelect"]').map(e => e.innerText.trim()),
    radios: q('[data-testid="stRadio"] input:checked').map(e => e.closest('label') ? e.closest('label').innerText.trim() : e.value),
    toggles: q('[data-testid="stCheckbox"] input').map(e => e.checked),
    segmented: q('[data-testid="stButtonGroup"] button[aria-checked="true"], [data-testid="stButtonGroup"] [kind$="Active"]').map(e => e.innerText.trim()),
  };
}"""


@pytest.fixture(scope="module")
def results_runs(tmp_path_factory):
    """A runs directory with an attribution of demo-classic-01 and an A/B result, so the Replay tabs draw results."""
    runs = tmp_path_factory.mktemp("runs")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    run = [sys.executable, "-m", "mafiascope"]
    subprocess.run(run + ["replay", "attribution", str(ROOT / "data" / "demo" / FORKABLE), "--utterances", "1.5,1.6", "-n", "2",
                          "--probes", "none", "--target", "Quinn", "--logs", str(runs), "--parallel", "2", "--json"],
                   check=True, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, timeout=300)  # fmt: skip
    subprocess.run(run + ["validate", "ab", "-c", "configs/classic.yaml", "--games", "2", "--logs", str(runs), "--id-prefix", "abshot",
                          "--results", str(runs), "--parallel", "2", "--json"],
                   check=True, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, timeout=300)  # fmt: skip
    return runs


@pytest.fixture(scope="module")
def server(results_runs):
    if not Path(CHROMIUM).exists():
        pytest.skip("/usr/bin/chromium is not installed")
    pytest.importorskip("playwright.sync_api")
    corpus = CORPUS
    SHOTS.mkdir(parents=True, exist_ok=True)
    with serve_app({"MAFIASCOPE_LOGS": str(corpus), "MAFIASCOPE_RUNS": str(results_runs)}) as url:
        yield url


@pytest.fixture(scope="module")
def browser(server):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


def _state(page, timeout: float = 40.0) -> dict:
    """The view's visible state once it is stable (two reads 1.5 s apart agree, the sidebar is drawn):
    the Replay page polls its jobs every 2 s, so a read can fall in the middle of a rerun."""
    last, t0 = None, time.time()
    while time.time() - t0 < timeout:
        cur = page.evaluate(STATE_JS)
        if cur == last and cur["sliders"]:
            return cur
        last = cur
        time.sleep(1.5)
    return last


def _no_exception(page) -> None:
    exc = page.locator('[data-testid="stException"]')
    assert exc.count() == 0, exc.first.inner_text()


def _tab(page, name: str) -> None:
    page.get_by_role("tab", name=name).first.click()


def _slider_right(page, label: str, times: int = 1) -> None:
    page.locator(f'input[type="range"][aria-label="{label}"]').first.focus()
    for _ in range(times):
        page.keyboard.press("ArrowRight")


def _pick(page, label: str, nth: int) -> None:
    box = page.locator('[data-testid="stSelectbox"]').filter(has_text=label).first
    box.wait_for(timeout=120_000)  # the first analysis page of a fresh server builds its caches
    box.locator('[role="combobox"], input').first.click()
    page.get_by_role("option").nth(nth).click()


CASES = [
    ("live", f"/live?game={GAME}&step=12", lambda p: p.locator('[data-testid="stButton"] button').filter(
        has=p.locator('[data-testid="stIconMaterial"]', has_text="chevron_right")).first.click(), "step=13"),
    ("impersonate", f"/impersonate?game={GAME}&step=20&agent=Bailey", lambda p: _slider_right(p, "Suspicion edges at or above", 2), "thr=8"),
    ("replay_experiments", f"/replay?game={FORKABLE}&step=12", lambda p: _tab(p, "Experiments"), "tab=Experiments"),
    ("replay_validation", f"/replay?game={FORKABLE}&step=12", lambda p: _tab(p, "Validation"), "tab=Validation"),
    ("calibration_agent", "/calibration?mode=agent", lambda p: _pick(p, "Agent (game)", 3), "agent="),
    ("second_order", "/second_order", lambda p: _slider_right(p, "Confidence threshold τ (%)", 1), "tau=55"),
    ("episodes", "/episodes", lambda p: _slider_right(p, "Merge candidates at most this many messages apart into one window", 1), "gap=3"),
    ("dashboard", "/dashboard", lambda p: _tab(p, "Belief dynamics"), "tab=Belief"),
    ("arena", "/arena", lambda p: _tab(p, "Leaderboards"), "tab=Leaderboards"),
]


@pytest.mark.parametrize("name, path, change, expect", CASES, ids=[c[0] for c in CASES])
def test_a_copied_url_reproduces_the_view(browser, server, name, path, change, expect):
    light = browser.new_context(viewport={"width": 1500, "height": 1800})
    page = light.new_page()
    page.goto(server + path)
    _settle(page)
    _no_exception(page)
    change(page)
    assert _wait_url(page, expect), (page.url, expect)
    _settle(page)
    _no_exception(page)
    seen, url = _state(page), page.url
    assert any(sel.split("=", 1)[1] for sel in seen["selects"]), seen["selects"]  # the pickers' values are compared, not only labels
    page.screenshot(path=str(SHOTS / f"{name}_light.png"), full_page=True)
    light.close()

    fresh = browser.new_context(viewport={"width": 1500, "height": 1800}, color_scheme="dark")
    again = fresh.new_page()
    again.goto(url)
    _settle(again)
    _no_exception(again)
    shown = _state(again)
    again.screenshot(path=str(SHOTS / f"{name}_dark.png"), full_page=True)
    fresh.close()
    assert shown == seen, {k: (seen[k], shown[k]) for k in seen if seen[k] != shown[k]}


def test_unknown_page_says_so(browser, server):
    page = browser.new_page()
    page.goto(server + "/nosuchpage")
    assert _wait_url(page, "/live", 120), page.url  # the app switches to Live Game (a loaded machine may take a while)
    _settle(page)
    assert "Unknown page /nosuchpage" in page.inner_text("body")
    page.screenshot(path=str(SHOTS / "unknown_page.png"), full_page=True)
    page.close()


def test_timeline_keeps_its_step_after_a_page_switch(browser, server):
    page = browser.new_page(viewport={"width": 1500, "height": 1800})
    page.goto(f"{server}/live?game={GAME}&step=11")
    _settle(page)
    timeline = page.locator('input[type="range"][aria-label="Timeline"]').first
    assert timeline.get_attribute("value") == "11"
    page.get_by_role("link", name="Impersonate").first.click()
    assert _wait_url(page, "step=11"), page.url
    _settle(page)
    assert page.locator('input[type="range"][aria-label="Timeline"]').first.get_attribute("value") == "11"
    page.close()
