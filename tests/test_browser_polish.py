"""Real browser, the views of the polish pass: the sidebar's corpus chips show long corpus names whole (wrapped, not cut
at a fixed width), the Arena's run pick survives a reload from its URL, and the Replay page's branch comparison draws with
the branches' night kills. Screenshots: test-output/screenshots/polish/."""

from __future__ import annotations

import shutil

import pytest

from .app_support import ROOT, serve_app
from .test_browser_app import ARGS, CHROMIUM, _no_exception, _settle

pytestmark = [pytest.mark.slow]
SHOTS = ROOT / "test-output" / "screenshots" / "polish"
LONG = "deepseek-v3-vs-gpt-4o-mini-pilot-held-out-games"  # a corpus folder name longer than a chip's default width
CUT_CHIPS_JS = """() => Array.from(document.querySelectorAll('.st-key-sb_corpora [data-tag] > span'))
  .filter(s => s.offsetParent !== null && (s.scrollWidth > s.clientWidth + 1 || s.scrollHeight > s.clientHeight + 1))
  .map(s => s.innerText)"""


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    if not shutil.which(CHROMIUM) and not __import__("os").path.exists(CHROMIUM):
        pytest.skip("/usr/bin/chromium is not installed")
    pytest.importorskip("playwright.sync_api")
    from mafiascope.arena.roster import load_roster
    from mafiascope.arena.run import run_arena

    root = tmp_path_factory.mktemp("polish")
    logs = root / "logs" / LONG
    for gid in ("demo-classic-01", "demo-classic-02"):
        shutil.copytree(ROOT / "data" / "demo" / gid, logs / gid)
    import subprocess
    import sys

    subprocess.run([sys.executable, "-m", "mafiascope", "fork", str(logs / "demo-classic-01"), "--at", "1.5", "-n", "2",
                    "--logs", str(logs), "--json"], check=True, cwd=ROOT, stdout=subprocess.DEVNULL, timeout=300)  # fmt: skip
    runs = root / "runs"
    for name in ("first", "second"):
        run_arena(load_roster(), "imbalanced", 1, runs / "arena" / name, quiet=True)
    SHOTS.mkdir(parents=True, exist_ok=True)
    with serve_app({"MAFIASCOPE_LOGS": str(root / "logs"), "MAFIASCOPE_RUNS": str(runs), "MAFIASCOPE_PUBLIC": "0"}) as url:
        from playwright.sync_api import sync_playwright

        with sync_playwright() as p:
            b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            yield url, b
            b.close()


@pytest.mark.browser
def test_long_corpus_names_are_not_cut_in_the_sidebar(served):
    url, browser = served
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(f"{url}/live?game=demo-classic-01")
    page.wait_for_selector('.st-key-sb_corpora [data-tag]', timeout=120_000)
    _settle(page)
    _no_exception(page)
    page.locator('[data-testid="stSidebar"]').screenshot(path=str(SHOTS / "sidebar_chips.png"))
    chips = page.locator('.st-key-sb_corpora [data-tag]').all_inner_texts()
    cut = page.evaluate(CUT_CHIPS_JS)
    page.close()
    assert any(LONG in c.replace("\n", "") for c in chips), chips
    assert cut == [], cut


@pytest.mark.browser
def test_the_arena_run_pick_survives_a_reload(served):
    url, browser = served
    page = browser.new_page(viewport={"width": 1500, "height": 1400})
    page.goto(f"{url}/arena?tab=Leaderboards&run=arena/first")
    page.get_by_text("Run", exact=True).first.wait_for(timeout=120_000)
    _settle(page)
    _no_exception(page)
    page.screenshot(path=str(SHOTS / "arena_run_from_url.png"), full_page=True)
    main = page.inner_text('[data-testid="stMain"]')
    assert "first: 1/1 games finished" in main and "second:" not in main, main[:600]  # not the newest run, the linked one
    assert "run=arena%2Ffirst" in page.url or "run=arena/first" in page.url, page.url
    page.close()


def test_the_corpus_pickers_help_names_every_picked_corpus_in_full(tmp_path, monkeypatch):
    """AppTest (no browser): the help under the picker's "?" lists the picked corpora by their full names (the chips'
    wrapping is a style only a browser shows: the test above)."""
    from .app_support import new_app, use_logs

    logs = tmp_path / "logs" / LONG
    shutil.copytree(ROOT / "data" / "demo" / "demo-classic-01", logs / "demo-classic-01")
    use_logs(monkeypatch, tmp_path / "logs", tmp_path)
    at = new_app(page="live", game="demo-classic-01").run()
    assert not at.exception
    box = at.sidebar.multiselect(key="sb_corpora")
    assert f"Selected: {LONG}" in box.help or f", {LONG}" in box.help, box.help


@pytest.mark.browser
def test_the_branch_comparison_with_its_night_kills_draws(served):
    url, browser = served
    page = browser.new_page(viewport={"width": 1500, "height": 2400})
    page.goto(f"{url}/replay?game=demo-classic-01&step=12")
    page.get_by_text("↳").first.wait_for(timeout=120_000)
    _settle(page)
    page.get_by_text("↳").first.click()
    page.get_by_text("Compared with the parent").first.wait_for(timeout=120_000)
    _settle(page)
    _no_exception(page)
    page.screenshot(path=str(SHOTS / "replay_branch_compare.png"), full_page=True)
    shown = page.get_by_text("Eliminated after the fork").count()
    page.close()
    assert shown  # the table's cells are drawn on a canvas: their words ("Night 2") are checked in test_branch_compare.py

