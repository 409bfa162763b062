"""The Dashboard's first view in a fresh server process (issue 17 item 4): it reads the report's summary
instead of the whole report, imports neither the corpus loader nor Altair, and runs its first imports
without the cyclic garbage collector. The JSON download still serves the whole report."""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("streamlit")

from .app_support import ROOT, dashboard_logs, script_says  # noqa: E402


@pytest.fixture()
def logs(tmp_path, monkeypatch):
    return dashboard_logs(tmp_path, monkeypatch)


@pytest.mark.parametrize(("env", "want"), [
    ({"MAFIASCOPE_CACHE_DIR": "/tmp/x-ms-cache", "XDG_CACHE_HOME": "/tmp/xdg"}, "/tmp/x-ms-cache"),
    ({"MAFIASCOPE_CACHE_DIR": "~/ms"}, "~/ms"),
    ({"XDG_CACHE_HOME": "/tmp/xdg"}, "/tmp/xdg/mafiascope"),
    ({"XDG_CACHE_HOME": "relative/xdg"}, "~/.cache/mafiascope"),  # a relative XDG path is ignored (spec)
    ({}, "~/.cache/mafiascope"),
])
def test_disk_memo_lives_under_the_user_cache_root(env, want, monkeypatch):
    """The app's memo sits in the one user cache root the analytics cache uses (mafiascope.cache_root)."""
    from pathlib import Path

    from app import disk_memo
    from mafiascope.analytics import cache

    for name in ("MAFIASCOPE_CACHE_DIR", "XDG_CACHE_HOME"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert disk_memo.root() == Path(want).expanduser() / "app"
    assert cache.cache_dir_for(Path("/x/corpus")).parent == Path(want).expanduser()


def test_first_imports_turn_the_collector_off_once():
    from app.boot import first_imports

    assert gc.isenabled()
    frozen = gc.get_freeze_count()
    try:
        with first_imports("no.such.module.imported"):
            assert not gc.isenabled()
        assert gc.isenabled() and gc.get_freeze_count() >= frozen
        with first_imports("no.such.module.imported", freeze=False):
            assert not gc.isenabled()
        assert gc.isenabled()
        with first_imports("json"):  # already imported: nothing changes
            assert gc.isenabled()
        with pytest.raises(RuntimeError), first_imports("no.such.module.imported"):
            raise RuntimeError("an import failed")
        assert gc.isenabled()  # turned back on after a failed import too
    finally:
        gc.unfreeze()
        gc.enable()


def test_summary_is_the_report_less_f2_agents_and_the_download_is_the_whole_report(logs):
    def script() -> None:
        import json
        import os
        import threading

        import streamlit as st

        from app import analysis as A
        from mafiascope.logs.io import list_game_dirs

        dirs = tuple(sorted(str(d) for d in list_game_dirs(st.session_state["root"])))
        full = A.report(dirs)
        summary = A.report_summary(dirs)
        st.write(f"agents {len(full['f2']['by_agent'])} -> {'by_agent' in summary['f2']}")
        st.write(f"summary {summary == A.summary_of(full)}, rest {all(summary[k] == full[k] for k in full if k != 'f2')}")
        st.write(f"download {A.report_json(dirs)() == json.dumps(full, default=str, indent=1)}")
        # as a download button runs it: in another thread, without the script run's session (the report kept in
        # memory only, so it is computed there from the choices taken when the button was drawn)
        os.environ["MAFIASCOPE_APP_DISK_CACHE"] = "0"
        try:
            out: list[str] = []
            dump = A.report_json(dirs)
            worker = threading.Thread(target=lambda: out.append(dump()))
            worker.start()
            worker.join()
        finally:
            del os.environ["MAFIASCOPE_APP_DISK_CACHE"]
        st.write(f"thread {out == [json.dumps(full, default=str, indent=1)]}")

    said = script_says(script, logs)
    assert said[0].startswith("agents ") and not said[0].startswith("agents 0 ") and said[0].endswith("-> False")
    assert said[1:] == ["summary True, rest True", "download True", "thread True"]


# one Dashboard render in a new interpreter (a fresh server process's first script run)
_FRESH = r"""
import json, logging, os, sys
sys.path.insert(0, os.getcwd())
logging.getLogger("streamlit").setLevel(logging.ERROR)
from streamlit.testing.v1 import AppTest
from app import disk_memo
read = []
real = disk_memo.load
disk_memo.load = lambda name, key: read.append(name) or real(name, key)
at = AppTest.from_file("streamlit_app.py", default_timeout=300)
at.query_params["page"] = "dashboard"
at.run()
print(json.dumps({"exceptions": [e.message for e in at.exception], "read": read,
                  "tiles": {m.label: m.value for m in at.metric},
                  "modules": [m for m in ("altair", "mafiascope.analytics.cache", "mafiascope.analytics.corpus")
                              if m in sys.modules]}))
"""


def _fresh_render() -> dict:
    r = subprocess.run([sys.executable, "-c", _FRESH], cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_fresh_process_first_view_reads_the_summary_only(logs):
    cold = _fresh_render()  # parses the games, computes and stores the results
    assert not cold["exceptions"]
    warm = _fresh_render()
    assert not warm["exceptions"] and warm["tiles"] == cold["tiles"]
    assert "report_summary" in warm["read"] and "report" not in warm["read"]  # the 1 MB of F2 rows stay on disk
    assert warm["modules"] == []  # no corpus loader, no columnar cache, no Altair
    assert any(Path(os.environ["MAFIASCOPE_CACHE_DIR"]).joinpath("app").glob("report_summary-*.pkl"))
