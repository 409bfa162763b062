"""Long work is live in a real browser (issue 35 items 1 and 2): a study's progress, an arena run's progress and the
sidebar's game count update by themselves, without a click or a reload, and the controls follow the job."""

from __future__ import annotations

import re
import time

import pytest

from .test_browser_app import ARGS, CHROMIUM, _no_exception, _settle, streamlit_app

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """The app over the bundled corpora (data/), with a fresh runs directory and cache."""
    tmp = tmp_path_factory.mktemp("jobs")
    with streamlit_app({"MAFIASCOPE_LOGS": "", "MAFIASCOPE_RUNS": str(tmp / "runs"),
                        "MAFIASCOPE_CACHE_DIR": str(tmp / "cache")}) as url:
        yield url


@pytest.fixture(scope="module")
def browser(server):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


def wait_text(page, pattern: str, timeout: float) -> str:
    """The page's text once ``pattern`` (a regex) occurs in it; fails after ``timeout`` seconds."""
    t0 = time.time()
    while time.time() - t0 < timeout:
        body = page.inner_text("body")
        if re.search(pattern, body):
            return body
        time.sleep(0.5)
    pytest.fail(f"no {pattern!r} after {timeout:.0f} s; the page says:\n{page.inner_text('body')[:3000]}")


def sidebar_count(page) -> int:
    text = page.locator('[data-testid="stSidebar"]').inner_text()
    return int(re.search(r"(\d[\d,]*) of [\d,]+ games?", text).group(1).replace(",", ""))


def test_study_progress_and_controls_update_by_themselves(browser, server):
    page = browser.new_page(viewport={"width": 1400, "height": 1600})
    page.goto(f"{server}/studies")
    _settle(page)
    for label, value in (("Games per arm", "4"), ("In parallel", "1")):
        box = page.get_by_label(label)
        box.fill(value)
        box.press("Enter")
        _settle(page)
    page.get_by_label("Study name").fill("live-study")
    page.get_by_label("Study name").press("Enter")
    _settle(page)
    page.get_by_role("button", name="Launch study").click()
    # no click from here on: the Studies tab follows the new study and its progress redraws itself
    wait_text(page, r"\d+/4 games settled · running", 90)
    body = wait_text(page, r"4/4 games settled · done", 180)
    assert "Not started" not in body
    assert page.get_by_role("button", name="Done").count() == 1 and page.get_by_role("button", name="Stop").count() == 0
    assert "study=live-study" in page.url and "tab=Studies" in page.url
    _no_exception(page)
    page.close()


def test_sidebar_count_follows_a_batch_launched_in_the_session(browser, server):
    page = browser.new_page(viewport={"width": 1400, "height": 1200})
    page.goto(f"{server}/live?mode=launch&games=40")
    _settle(page)
    before = sidebar_count(page)
    page.get_by_role("button", name="Launch game").click()
    wait_text(page, r"updating while a job runs", 60)
    t0 = time.time()
    while time.time() - t0 < 240 and sidebar_count(page) < before + 40:
        time.sleep(0.5)
    assert sidebar_count(page) == before + 40
    wait_text(page, r"^(?![\s\S]*updating while a job runs)", 30)  # the job ended: the page reran once, without the note
    _no_exception(page)
    page.close()


def test_arena_run_progress_updates_by_itself(browser, server):
    page = browser.new_page(viewport={"width": 1400, "height": 1600})
    page.goto(f"{server}/arena")
    _settle(page)
    box = page.get_by_label("Games per rule set")
    box.fill("3")
    box.press("Enter")
    _settle(page)
    page.get_by_label("Run name").fill("live-run")
    page.get_by_label("Run name").press("Enter")
    _settle(page)
    page.get_by_role("button", name="Launch arena run").click()
    body = wait_text(page, r"live-run: 9/9 games finished · done", 180)
    assert "0/0" not in body
    _no_exception(page)
    page.close()
