"""Issue 12 item 3 in a real browser: logs and URL parameters full of Markdown/HTML injections
(tests/injection.py) render as text on every page. Any request to a host other than loopback
(Playwright request interception) or any dialog (alert/confirm/prompt) fails the test.
Screenshots: test-output/screenshots/security_*.png."""

from __future__ import annotations

import time
from urllib.parse import urlencode, urlsplit

import pytest

from .injection import HOST, NAMES, URL_VALUES, injection_logs
from .test_browser_app import ARGS, CHROMIUM, SHOTS, _no_exception, _settle, streamlit_app

pytestmark = [pytest.mark.browser, pytest.mark.slow]

GAME = "inject-0001"
PAGES = ("live", "impersonate", "replay", "calibration", "second_order", "episodes", "dashboard", "arena")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    logs = tmp_path_factory.mktemp("inj-logs")
    injection_logs(logs, GAME)
    env = {"MAFIASCOPE_LOGS": str(logs), "MAFIASCOPE_RUNS": str(tmp_path_factory.mktemp("runs")),
           "MAFIASCOPE_CACHE_DIR": str(tmp_path_factory.mktemp("cache"))}
    with streamlit_app(env) as url:
        yield url


@pytest.fixture(scope="module")
def watched(server):
    """A browser context that blocks and records every request leaving loopback, and every dialog."""
    from playwright.sync_api import sync_playwright

    seen: dict[str, list[str]] = {"external": [], "dialogs": []}

    def route(r) -> None:
        host = urlsplit(r.request.url).hostname or ""
        if r.request.url.startswith(("data:", "blob:")) or host in ("127.0.0.1", "localhost", "::1"):
            r.continue_()
        else:
            seen["external"].append(r.request.url)
            r.abort()

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        ctx = b.new_context(viewport={"width": 1500, "height": 1800})
        ctx.route("**/*", route)
        warm = ctx.new_page()  # the first run builds the analytics caches: wait for it once, here
        warm.on("dialog", lambda d: (seen["dialogs"].append(d.message), d.dismiss()))
        warm.goto(f"{server}/live?" + urlencode({"game": GAME}))
        warm.get_by_text("Ground truth").first.wait_for(timeout=240_000)
        _settle(warm)
        warm.close()
        yield ctx, seen
        b.close()


def _visit(ctx, seen, url: str, shot: str | None = None) -> str:
    page = ctx.new_page()
    page.on("dialog", lambda d: (seen["dialogs"].append(d.message), d.dismiss()))
    page.goto(url)
    _settle(page)
    time.sleep(1.0)  # images and late fragments
    _no_exception(page)
    # nothing from the corpus became a link or an image
    hrefs = page.eval_on_selector_all("a[href]", "els => els.map(e => e.getAttribute('href'))")
    srcs = page.eval_on_selector_all("img[src]", "els => els.map(e => e.getAttribute('src'))")
    bad = [h for h in hrefs + srcs if HOST in (h or "") or (h or "").lower().startswith("javascript:")]
    assert not bad, (url, bad)
    body = page.inner_text("body")
    if shot:
        page.screenshot(path=str(SHOTS / f"security_{shot}.png"), full_page=True)
    page.close()
    return body


@pytest.mark.parametrize("path", PAGES)
def test_pages_with_an_injected_game(watched, server, path):
    ctx, seen = watched
    body = _visit(ctx, seen, f"{server}/{path}?" + urlencode({"game": GAME, "agent": NAMES[0]}), shot=path)
    assert not seen["external"], seen["external"]
    assert not seen["dialogs"], seen["dialogs"]
    if path in ("live", "impersonate"):
        assert NAMES[0] in body or NAMES[2] in body, "the injected names are shown as text"


@pytest.mark.parametrize("param", ["agent", "mode", "step", "game", "page"])
def test_injected_url_parameters(watched, server, param):
    ctx, seen = watched
    page = "calibration" if param == "mode" else "impersonate"  # the page that reads ``mode``
    for i, value in enumerate(URL_VALUES[:2]):
        params = {"game": GAME, param: value}
        body = _visit(ctx, seen, f"{server}/{page}?" + urlencode(params), shot=f"url_{param}_{i}")
        assert "URL parameter" in body, (param, value)
    assert not seen["external"], seen["external"]
    assert not seen["dialogs"], seen["dialogs"]
