"""Warm a fresh server process before its first visitor: the first view's imports, the game index, the report.

``streamlit run streamlit_app.py`` serves the entrypoint through ``st.App`` (Streamlit's public ASGI entry
point); its lifespan hook (:func:`lifespan`) starts :func:`warm` in a thread and returns at once, so the
server listens as soon as before. While the browser loads Streamlit's shell (1.5-2 s before the websocket
opens) the thread imports pandas, pyarrow, pydantic and the app's modules, loads the game index rows kept on
disk and reads the default selection's report summary into the cache the Dashboard reads. The first script
run waits for the imports (:func:`app.boot.first_imports`), so two threads never import the same modules at
once; the data steps run only when their results are on disk (a cold corpus is read by the visitor's run,
which shows its progress), and whatever they leave undone the script run does as before.
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


def _default_dirs() -> tuple[str, ...] | None:
    """The game index of the default log roots, when every row is on disk, and the root games the Dashboard
    analyses by default (the sidebar's default corpora, invalid games left out); None if games must be read."""
    from . import analysis, data, sidebar
    from .paths import default_roots

    roots = tuple(str(r) for r in default_roots() if r.is_dir() and not data.root_problem(str(r)))
    if not data.index_stored(roots):
        return None
    full = data.game_index(roots)
    index = full[full["corpus"].isin(sidebar.default_corpora(full))] if len(full) else full
    return analysis.dirs_of(data.without_invalid(index)[0])


def warm() -> None:
    """Imports first (the script run waits for them), then the data the first Dashboard view reads."""
    try:
        _imports()
    finally:
        boot.IMPORTED.set()
    try:
        dirs = _default_dirs()
        if dirs:
            from . import analysis

            if analysis.report_stored(dirs):
                analysis.report_summary(dirs)
    except Exception:  # a warm-up is an optimisation: the visitor's run computes (and reports) the same
        log.warning("warming the first view failed", exc_info=True)


@asynccontextmanager
async def lifespan(_app: Any) -> AsyncIterator[None]:
    """``st.App`` lifespan: warm in a daemon thread; the server does not wait for it."""
    boot.IMPORTED.clear()
    threading.Thread(target=warm, name="mafiascope-warm", daemon=True).start()
    yield
