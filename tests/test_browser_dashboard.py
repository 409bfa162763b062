"""Real browser: the Dashboard's first view has no data grid (issue 17 item 4); its F1 table and downloads appear
when their expander is opened, and close with it."""

from __future__ import annotations

import pytest

from .test_browser_app import _no_exception, _open, _settle, browser, server  # noqa: F401 - fixtures

pytestmark = [pytest.mark.browser, pytest.mark.slow]

GRID = '[data-testid="stMain"] [data-testid="stDataFrame"]'


def test_f1_table_is_drawn_when_its_expander_opens(browser, server):  # noqa: F811
    page = _open(browser, f"{server}/dashboard", 1400, 1000)
    page.locator('[data-testid="stMain"] .vega-embed').first.wait_for(timeout=60_000)
    assert page.locator(GRID).count() == 0
    assert page.get_by_role("button", name="⬇ CSV").count() == 0
    page.get_by_text("Table and downloads").click()
    page.locator(GRID).first.wait_for(timeout=60_000)
    _settle(page)
    _no_exception(page)
    assert page.get_by_role("button", name="⬇ CSV").count() == 1
    assert page.get_by_role("button", name="⬇ Vega-Lite JSON").count() == 1
    page.get_by_text("Table and downloads").click()  # closed again: the grid goes
    page.locator(GRID).first.wait_for(state="detached", timeout=60_000)
    page.close()
