"""Guard for page files: pages/ is also Streamlit's legacy (v1) multipage folder.

Until the entrypoint has called ``st.navigation`` in a process, Streamlit treats ``pages/``
as a v1 multipage folder: a deep link such as ``/impersonate?game=...`` on a fresh server
(and every run under AppTest) may execute the page file directly, without the entrypoint's
sidebar. The entrypoint runs the chosen page inside :func:`framed`; each page calls
:func:`page_guard` first, and a page run outside a frame runs the entrypoint in the same
script run (so clicks and form submissions of this run are kept) and stops the outer run.
The entrypoint switches Streamlit to st.navigation mode and runs this page again, framed.
A test harness that sets a page up itself runs it inside :func:`framed` as well.
"""

from __future__ import annotations

import runpy
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import streamlit as st

ENTRY = Path(__file__).resolve().parents[1] / "streamlit_app.py"

_frames = threading.local()  # a script run executes in one thread: its page runs nested in its frame


@contextmanager
def framed() -> Iterator[None]:
    """Run a page inside this block once its frame (page config, sidebar) is drawn."""
    depth = getattr(_frames, "depth", 0)
    _frames.depth = depth + 1
    try:
        yield
    finally:
        _frames.depth = depth


def page_guard() -> None:
    if getattr(_frames, "depth", 0):
        return
    runpy.run_path(str(ENTRY), run_name="__main__")
    st.stop()
