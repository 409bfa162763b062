"""Guard for page files: pages/ is also Streamlit's legacy (v1) multipage folder.

Until the entrypoint has called ``st.navigation`` in a process, Streamlit treats ``pages/``
as a v1 multipage folder: a deep link such as ``/impersonate?game=...`` on a fresh server
(and every run under AppTest) may execute the page file directly, without the entrypoint's
sidebar. Each page calls :func:`page_guard` first; in that case it runs the entrypoint in
the same script run (so clicks and form submissions of this run are kept) and stops the
outer run. The entrypoint switches Streamlit to st.navigation mode and runs this page again.
"""

from __future__ import annotations

import runpy
from pathlib import Path

import streamlit as st

ENTRY = Path(__file__).resolve().parents[1] / "streamlit_app.py"


def page_guard() -> None:
    try:
        from streamlit.runtime.pages_manager import PagesManager
    except Exception:  # pragma: no cover - private API moved
        return
    if PagesManager.uses_pages_directory:
        PagesManager.uses_pages_directory = False
        runpy.run_path(str(ENTRY), run_name="__main__")
        st.stop()
