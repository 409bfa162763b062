"""Warm a fresh server process before its first visitor: the first view's imports and the game index rows.

``streamlit run streamlit_app.py`` serves the entrypoint through ``st.App`` (Streamlit's public ASGI entry
point); its lifespan hook (:func:`lifespan`) starts :func:`warm` in a thread and returns at once, so the
server listens as soon as before. While the browser loads Streamlit's shell (1.5-2 s before the websocket
opens) the thread imports pandas, pyarrow, pydantic and the app's modules, then puts the game index rows kept on
disk into the index's memo. The first script run waits for the imports (:func:`app.boot.first_imports`), so
two threads never import the same modules at once. Nothing here calls Streamlit (a call outside a script run
logs a "missing ScriptRunContext" warning): the report summary, the file signatures and the index frame are
left to the script run, which did them in ~0.1 s of CPU at 1,000 games (issue 17; the history of docs/benchmarks.md); a cold corpus is
read by the visitor's run, under its progress bar.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from . import boot

log = logging.getLogger(__name__)


def _imports() -> None:
    """What the entrypoint and the Dashboard import on a first run (streamlit_app.py, pages/dashboard.py)."""
    with boot.first_imports("app.sidebar", wait=False):
        from . import analysis, analysis_view, bridge, dashboard_view, entry  # noqa: F401


def warm() -> None:
    """Imports first (the script run waits for them), then the game index rows kept on disk."""
    try:
        _imports()
    finally:
        boot.IMPORTED.set()
    try:
        from . import data
        from .paths import default_roots

        data.load_stored_rows(tuple(str(r) for r in default_roots() if r.is_dir()))
    except Exception:  # a warm-up is an optimisation: the visitor's run reads (and reports) the same
        log.warning("warming the first view failed", exc_info=True)


@asynccontextmanager
async def lifespan(_app: Any) -> AsyncIterator[None]:
    """``st.App`` lifespan: warm in a daemon thread; the server does not wait for it."""
    boot.IMPORTED.clear()
    threading.Thread(target=warm, name="mafiascope-warm", daemon=True).start()
    yield
