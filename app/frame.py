"""Guard for page files: pages/ is also Streamlit's legacy (v1) multipage folder.

On a fresh server, until the entrypoint has called ``st.navigation`` once, Streamlit treats
``pages/`` as a v1 multipage folder and a deep link such as ``/impersonate?game=...`` runs
the page file directly, without the entrypoint's sidebar. Each page calls :func:`page_guard`
first: in that case it switches Streamlit to st.navigation mode and reruns, and the same
URL (query parameters included) is then served through the entrypoint.
"""

from __future__ import annotations

import streamlit as st


def page_guard() -> None:
    try:
        from streamlit.runtime.pages_manager import PagesManager
    except Exception:  # pragma: no cover - private API moved
        return
    if PagesManager.uses_pages_directory:
        PagesManager.uses_pages_directory = False
        st.rerun()
