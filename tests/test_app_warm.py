"""A fresh server process warms the Dashboard's first view before its first visitor (app/warm.py): the same
tiles afterwards, the index rows already in memory; a cold corpus is left to the visitor's run (its progress)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys

import pytest

pytest.importorskip("streamlit")

from .app_support import ROOT, dashboard_logs  # noqa: E402


@pytest.fixture()
def logs(tmp_path, monkeypatch):
    return dashboard_logs(tmp_path, monkeypatch)


# a new interpreter (a fresh server process): optionally the warm-up, then one Dashboard render under AppTest;
# which disk_memo entries the render read, its tiles, and what the warm-up left in memory
_FRESH = r"""
import json, logging, os, sys
sys.path.insert(0, os.getcwd())
logging.getLogger("streamlit").setLevel(logging.ERROR)
from streamlit.testing.v1 import AppTest
from app import boot, data, disk_memo, warm
out = {}
if sys.argv[1] == "warm":
    warm.warm()
    out["imported"] = boot.IMPORTED.is_set() and "app.dashboard_view" in sys.modules and "pandas" in sys.modules
    out["index_rows"] = len(data._ROW_MEMO)
read = []
real = disk_memo.load
disk_memo.load = lambda name, key: read.append(name) or real(name, key)
at = AppTest.from_file("streamlit_app.py", default_timeout=300)
at.query_params["page"] = "dashboard"
at.run()
out.update({"exceptions": [e.message for e in at.exception], "read": read, "tiles": {m.label: m.value for m in at.metric}})
print(json.dumps(out))
"""


def _fresh(mode: str) -> dict:
    r = subprocess.run([sys.executable, "-c", _FRESH, mode], cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_warm_up_reads_what_the_first_view_reads(logs):
    cold_warm = _fresh("warm")  # nothing on disk yet: the warm-up imports only; the render parses and stores
    assert cold_warm["imported"] and cold_warm["index_rows"] == 0 and not cold_warm["exceptions"]
    plain = _fresh("plain")
    assert not plain["exceptions"] and {"index", "report_summary"} <= set(plain["read"])
    warmed = _fresh("warm")
    assert warmed["imported"] and warmed["index_rows"] > 0
    assert not warmed["exceptions"] and warmed["tiles"] == plain["tiles"] == cold_warm["tiles"]
    assert "index" not in warmed["read"] and "report_summary" in warmed["read"]  # the warm-up read the rows only


def test_first_imports_wait_for_a_warm_up_in_progress(monkeypatch):
    """The script run does not import alongside the warm-up thread: it waits for the warm-up's imports."""
    from app import boot

    order: list[str] = []
    boot.IMPORTED.clear()
    try:
        import threading

        def finish() -> None:
            order.append("warm-up imports done")
            boot.IMPORTED.set()

        threading.Timer(0.2, finish).start()
        with boot.first_imports("app.boot"):  # already imported: the block only waits
            order.append("script imports")
    finally:
        boot.IMPORTED.set()
    assert order == ["warm-up imports done", "script imports"]


def test_lifespan_returns_before_the_warm_up_ends(monkeypatch):
    """The server listens at once: the lifespan starts the warm-up in a thread and does not wait for it."""
    import threading

    from app import warm

    release = threading.Event()
    monkeypatch.setattr(warm, "warm", lambda: release.wait(10))

    async def enter() -> bool:
        async with warm.lifespan(None):
            return not release.is_set()

    try:
        assert asyncio.run(enter())
    finally:
        release.set()
        warm.boot.IMPORTED.set()


def test_the_entrypoint_serves_a_streamlit_app_when_imported():
    """``streamlit run streamlit_app.py`` finds ``app = st.App(...)`` (module level, imported by uvicorn); run as
    a script (``__main__``: a script run, AppTest, a page's guard) the file frames the pages instead."""
    code = ("import json, sys, streamlit_app as m, streamlit as st; "
            "print(json.dumps([isinstance(m.app, st.App), m.app.script_path.name]))")
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    assert json.loads(r.stdout.strip().splitlines()[-1]) == [True, "streamlit_app.py"]
