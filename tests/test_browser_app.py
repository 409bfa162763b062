"""Real-browser test of the Streamlit app (Playwright + Debian's Chromium).

Starts ``streamlit run streamlit_app.py`` on a free port, opens every page, moves the
timeline, clicks a node of the ground-truth graph to enter impersonate mode, and saves
screenshots under test-output/screenshots/.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import time
from pathlib import Path

import pytest

from .app_support import CORPUS, ROOT, serve_app

CHROMIUM = "/usr/bin/chromium"
SHOTS = ROOT / "test-output" / "screenshots"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]
GAME = "0da78714-88e0-4445-b161-f2eaf029184c"

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@contextlib.contextmanager
def streamlit_app(env_extra: dict[str, str]):
    """``streamlit run streamlit_app.py`` on a free loopback port with ``env_extra``; yields its URL."""
    if not Path(CHROMIUM).exists():
        pytest.skip("/usr/bin/chromium is not installed")
    pytest.importorskip("playwright.sync_api")
    SHOTS.mkdir(parents=True, exist_ok=True)
    with serve_app(env_extra) as url:
        yield url


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    corpus = CORPUS
    with streamlit_app({"MAFIASCOPE_LOGS": str(corpus), "MAFIASCOPE_RUNS": str(tmp_path_factory.mktemp("runs"))}) as url:
        yield url


@pytest.fixture(scope="module")
def browser(server):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


RUN_STATE_JS = """() => { const a = document.querySelector('[data-testid="stApp"]');
  return a ? a.getAttribute('data-test-script-state') : null; }"""


def _settle(page, timeout: float = 60.0, quiet: float = 1.0) -> None:
    """Wait until Streamlit has finished running the script and no new run followed for ``quiet`` seconds, then
    let the charts draw. The app root's ``data-test-script-state`` says whether a run is going on; the status
    widget alone is not enough: on a loaded machine it has not appeared yet when a page's first run begins, and
    a click on a fragment's button during the page's full run is dropped by Streamlit."""
    page.wait_for_selector('[data-testid="stApp"]', timeout=timeout * 1000)
    t0, since = time.time(), None
    while time.time() - t0 < timeout:
        idle = page.evaluate(RUN_STATE_JS) == "notRunning" and not page.locator('[data-testid="stStatusWidget"]').count()
        if not idle:
            since = None
        elif since is None:
            since = time.time()
        elif time.time() - since >= quiet:
            break
        time.sleep(0.2)
    time.sleep(1.0)


def _wait_url(page, fragment: str, timeout: float = 30.0) -> bool:
    try:
        page.wait_for_function(f"() => window.location.href.includes({fragment!r})", timeout=timeout * 1000)
        return True
    except Exception:
        return False


def _no_exception(page) -> None:
    assert page.locator('[data-testid="stException"]').count() == 0, page.locator('[data-testid="stException"]').first.inner_text()


def _open(browser, url: str, width: int = 1400, height: int = 900):
    """A new page at ``url`` once Streamlit has finished the run, with no exception shown."""
    page = browser.new_page(viewport={"width": width, "height": height})
    page.goto(url)
    _settle(page)
    _no_exception(page)
    return page


def _shot(page, name: str) -> Path:
    out = SHOTS / f"{name}.png"
    page.screenshot(path=str(out), full_page=True)
    return out


@pytest.mark.parametrize(
    "path, name, needle",
    [
        ("", "01_live_game_default", "Ground truth"),
        ("calibration", "03_calibration", "Calibration"),
        ("second_order", "04_second_order", "Second-order"),
        ("episodes", "05_episodes", "Suspicion episodes"),
        ("dashboard", "06_dashboard", "Cross-game dashboard"),
        ("arena", "07_arena", "Arena"),
        ("replay", "08_replay", "Replay"),
        ("?mode=launch", "09_launch", "Launch a game"),
    ],
)
def test_pages_open(browser, server, path, name, needle):
    page = browser.new_page(viewport={"width": 1500, "height": 1800})
    page.goto(f"{server}/{path}")
    _settle(page)
    # the very first page of a fresh checkout also builds the analytics caches: wait for its content
    t0 = time.time()
    page.get_by_text(needle).first.wait_for(timeout=120_000)
    if time.time() - t0 > 1:
        _settle(page)
    print(f"{name}: content after {time.time() - t0:.1f} s more")
    _no_exception(page)
    assert needle in page.inner_text("body")
    _shot(page, name)
    page.close()


def test_timeline_and_impersonate_by_click(browser, server):
    page = _open(browser, f"{server}/?game={GAME}&step=10", 1500, 2000)
    assert "step=10" in page.url
    # move the timeline with the "next" button
    page.locator('[data-testid="stButton"] button').filter(has=page.locator('[data-testid="stIconMaterial"]', has_text="chevron_right")).first.click()
    assert _wait_url(page, "step=11"), page.url
    _settle(page)
    # move it with the keyboard: the arrow-key shortcut (focus on the page body)
    page.evaluate("document.activeElement && document.activeElement.blur()")
    page.keyboard.press("ArrowRight")
    assert _wait_url(page, "step=12"), page.url
    _settle(page)
    # and on the focused slider (one step, not two)
    page.get_by_role("slider").first.focus()
    page.keyboard.press("ArrowRight")
    assert _wait_url(page, "step=13"), page.url
    _settle(page)
    assert "step=13" in page.url and "step=14" not in page.url
    page.keyboard.press("ArrowLeft")
    assert _wait_url(page, "step=12"), page.url
    _settle(page)
    _shot(page, "02_live_game_step12")
    # click the top node (seat 1) of the ground-truth graph -> Impersonate that agent
    chart = page.locator('[data-testid="stVegaLiteChart"]').first
    chart.scroll_into_view_if_needed()
    box = chart.bounding_box()
    canvas = chart.locator("canvas, svg").first.bounding_box() or box
    x = canvas["x"] + canvas["width"] / 2
    y = canvas["y"] + canvas["height"] * (1.3 - 0.92) / 2.62
    page.mouse.click(x, y)
    clicked = _wait_url(page, "impersonate")
    _settle(page)
    if not clicked:  # fall back to the URL so the rest of the test still checks the page
        page.goto(f"{server}/impersonate?game={GAME}&step=12&agent=Finley")
        _settle(page)
    _no_exception(page)
    body = page.inner_text("body")
    assert "How I think they see me" in body and "could see" in body
    assert "agent=" in page.url
    _shot(page, "10_impersonate")
    assert clicked, "clicking a graph node did not open Impersonate"
    page.close()


def test_agents_graph_node_click_opens_impersonate(browser, server):
    """The agents' graphs are the panels of one chart: a click on a node of the first panel (the first seat's own
    node, at the top of its ellipse) opens Impersonate for that seat at the step."""
    from app import graph

    page = browser.new_page(viewport={"width": 1500, "height": 2000})
    page.goto(f"{server}/?game={GAME}&step=20")
    _settle(page)
    chart = page.locator(f'.st-key-ag_{GAME} [data-testid="stVegaLiteChart"]')
    chart.scroll_into_view_if_needed()
    box = chart.locator("canvas").first.bounding_box()
    spec = graph.belief_panels([graph.BeliefPanel(head="")] * 7, truth=True)
    (x0, x1), (y0, y1) = spec["layer"][0]["encoding"]["x"]["scale"]["domain"], spec["layer"][0]["encoding"]["y"]["scale"]["domain"]
    pad = 5  # Vega-Lite's default padding around the plot
    seat0 = graph.ellipse_positions(["a", "b"])["a"]
    x = box["x"] + pad + (seat0[0] - x0) / (x1 - x0) * (box["width"] - 2 * pad)
    y = box["y"] + pad + (y1 - seat0[1]) / (y1 - y0) * (box["height"] - 2 * pad)
    page.mouse.click(x, y)
    page.wait_for_function("() => window.location.href.includes('impersonate')", timeout=60000)
    _settle(page)
    _no_exception(page)
    assert "agent=" in page.url and "step=20" in page.url, page.url
    assert "How I think they see me" in page.inner_text("body")
    page.close()


def test_metrics_strip_click_moves_timeline(browser, server):
    page = browser.new_page(viewport={"width": 1500, "height": 2000})
    page.goto(f"{server}/?game={GAME}&step=30")
    _settle(page)
    charts = page.locator('[data-testid="stVegaLiteChart"]')
    # the first chart after the ground truth is the 1st-order accuracy strip (nearest-point selection)
    strip = charts.nth(1)
    strip.scroll_into_view_if_needed()
    box = (strip.locator("canvas, svg").first.bounding_box() or strip.bounding_box())
    page.mouse.click(box["x"] + box["width"] * 0.3, box["y"] + box["height"] * 0.3)
    moved = page.wait_for_function("() => !window.location.href.includes('step=30')", timeout=30000)
    _settle(page)
    assert moved and "step=" in page.url
    # the three panels are one chart (app/strip_chart.py): a click in the last panel picks a point there too
    before = page.url
    box = strip.locator("canvas, svg").first.bounding_box()
    page.mouse.click(box["x"] + box["width"] * 0.86, box["y"] + box["height"] * 0.3)
    page.wait_for_function("(u) => window.location.href !== u", arg=before, timeout=30000)
    _settle(page)
    assert "step=" in page.url and page.url != before
    _no_exception(page)
    page.close()


def test_bad_url_shows_message(browser, server):
    page = _open(browser, f"{server}/?game=..%2F..%2Fetc&step=abc")
    assert "invalid game id" in page.inner_text("body")
    _shot(page, "11_bad_url")
    page.close()


def test_dashboard_report_download(browser, server):
    """The full-report button serialises the report on click (deferred callable) and the file is the report."""
    page = _open(browser, f"{server}/dashboard")
    with page.expect_download(timeout=30000) as dl:
        page.get_by_text("Full report (JSON)").click()
    rep = json.loads(Path(dl.value.path()).read_text(encoding="utf-8"))
    assert dl.value.suggested_filename == "mafiascope_report.json"
    assert rep["n_games"] >= 1 and "f2" in rep and "f4" in rep
    assert "by_agent" in rep["f2"]  # the whole report, not the summary the page draws from
    page.close()


def test_arena_leaderboards_of_the_bundled_run(browser, server):
    """A fresh install opens the bundled offline arena run: table, chart with one row per model."""
    page = browser.new_page(viewport={"width": 1500, "height": 1800})
    page.goto(f"{server}/arena")
    _settle(page)
    page.get_by_role("tab", name="Leaderboards").click()
    page.get_by_text("What the noise is").first.wait_for(timeout=60_000)
    _settle(page)
    _no_exception(page)
    body = page.inner_text("body")
    assert "bot-gullible" in body and "30 games" in body
    _shot(page, "15_arena_leaderboards")
    page.close()


def test_dark_theme_readable(browser, server):
    ctx = browser.new_context(color_scheme="dark", viewport={"width": 1500, "height": 1800})
    page = ctx.new_page()
    page.goto(f"{server}/impersonate?game={GAME}&step=20&agent=Bailey")
    _settle(page)
    _no_exception(page)
    _shot(page, "12_impersonate_dark")
    ctx.close()


def test_copy_screenshot_for_docs(server, browser):
    """docs/screenshots/live_game.png: the Live Game page at an interesting step."""
    page = _open(browser, f"{server}/?game={GAME}&step=20", 1500, 1500)
    out = _shot(page, "00_live_game_readme")
    dest = ROOT / "docs" / "screenshots"
    dest.mkdir(parents=True, exist_ok=True)
    if os.environ.get("MAFIASCOPE_UPDATE_DOC_SCREENSHOT"):
        shutil.copy(out, dest / "live_game.png")
    page.close()


def test_play_a_human_seat_live(browser, server):
    """Launch a game with a human seat, answer the first move, watch the log grow, stop the game."""
    page = browser.new_page(viewport={"width": 1500, "height": 1800})
    page.goto(f"{server}/live?mode=launch")
    _settle(page)
    page.get_by_role("combobox", name="Take a seat yourself").click()
    page.get_by_role("option", name="(seat 1 at the table)").click()  # the first to speak: the engine waits on it at once
    page.get_by_role("button", name="Launch game").click()
    # the engine waits for this seat's intro without writing to the log: the page must notice the open move itself
    # (it once stayed on "Waiting for your turn" until a manual reload)
    page.get_by_text("Your move as").wait_for(timeout=20000)
    _settle(page)
    _no_exception(page)
    _shot(page, "13_human_move")
    page.get_by_label("Your reply").fill("Hello, I am the quiet one today, but I keep notes on every vote.")
    page.get_by_role("button", name="Send").click()
    # the engine takes the reply, the bots continue, the live fragment refreshes the page
    page.get_by_text("I keep notes on every vote").first.wait_for(timeout=60000)
    _settle(page)
    _no_exception(page)
    assert "Spoiler-free" in page.inner_text("body")  # there are messages now (the first seat spoke first)
    _shot(page, "14_human_after_send")
    page.goto(f"{server}/live?mode=launch")
    _settle(page)
    stop = page.get_by_role("button", name="Stop")
    if stop.count():
        stop.first.click()
        _settle(page)
    page.close()
