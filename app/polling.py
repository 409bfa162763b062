"""Parts of a page that redraw themselves while a background job runs (a study, an arena run, a batch).

:func:`live_block` draws a block once; while its job runs the block is a fragment with ``run_every``, so
progress, spend and controls update without a click, and the whole page reruns once when the job ends
(the figures, game lists and the sidebar's count then include everything it wrote).
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

EVERY_S = 1.5


def live_block(draw: Callable[[], None], running: Callable[[], bool], *, every: float = EVERY_S) -> None:
    """Draw ``draw()``; while ``running()`` is true, again every ``every`` seconds (a fragment), and rerun the
    page once it turns false."""
    live = running()

    @st.fragment(run_every=every if live else None)
    def _block() -> None:
        draw()
        if live and not running():
            st.rerun(scope="app")

    _block()


def flash(key: str, message: str | None = None, kind: str = "success") -> None:
    """Keep a message for the next run (``message`` given: from a widget callback) or show and forget it."""
    box = st.session_state.setdefault("_ms_flash", {})
    if message is not None:
        box[key] = (kind, message)
        return
    if key in box:
        how, text = box.pop(key)
        getattr(st, how)(text)
