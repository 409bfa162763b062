"""app/frame.py: a page file Streamlit runs on its own (pages/ as a v1 multipage folder) gets the
entrypoint's frame first; a page run inside a frame is left alone (public Streamlit API only)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

pytest.importorskip("streamlit")
from streamlit.testing.v1 import AppTest  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "pages" / "studies.py"


def _sidebar_drawn(at: AppTest) -> bool:
    return any(w.key == "sb_search" for w in at.sidebar.text_input)


def test_a_page_file_run_on_its_own_runs_the_entrypoint_first():
    at = AppTest.from_file(str(PAGE), default_timeout=60).run()
    assert not at.exception
    # the entrypoint's sidebar, drawn in the same script run; it then runs the page the URL names
    # (a server's /studies; AppTest has no URL path, so its default page)
    assert _sidebar_drawn(at)


def test_a_framed_page_runs_without_the_entrypoint():
    script = f"""
import sys, runpy
sys.path.insert(0, {str(ROOT)!r})
from app.frame import framed
with framed():
    runpy.run_path({str(PAGE)!r}, run_name="__main__")
"""
    at = AppTest.from_string(script, default_timeout=60).run()
    assert not at.exception
    assert not _sidebar_drawn(at)
    assert any("Studies" in m.value for m in at.markdown)


def test_the_guard_uses_no_private_streamlit_module():
    tree = ast.parse((ROOT / "app" / "frame.py").read_text(encoding="utf-8"))
    imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    imported |= {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert not [m for m in imported if m.startswith("streamlit.")], imported
