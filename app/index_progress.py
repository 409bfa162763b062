"""What the game index knows before it is complete: the corpus tiles over the games read so far and a
progress bar, shown while a large corpus is read for the first time (and on the Dashboard while the
analytics cache is built) instead of a blank page."""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from .data import INDEX_COLUMNS, IndexProgress


def pct(x: Any) -> str:
    """A share as a whole percentage ('–' when unknown)."""
    return "–" if x is None else f"{100 * x:.0f}%"


def preview_tiles(sel: pd.DataFrame) -> None:
    """What the sidebar's game index already knows (no analytics)."""
    done = sel[sel["winner"].isin(["Mafia", "Villagers"])] if len(sel) else sel
    c = st.columns(4)
    c[0].metric("Games found", f"{len(sel):,}", help="Root games of the selection (sidebar index)")
    c[1].metric("Finished", f"{len(done):,}")
    c[2].metric("Mafia wins so far", pct((done["winner"] == "Mafia").mean() if len(done) else None),
                help="From the game logs' game_over records; intervals and probe figures follow once the games are parsed")
    c[3].metric("Mean rounds (index)", f"{sel['rounds'].mean():.1f}" if len(sel) else "–")


def reporter(slot: Any) -> IndexProgress:
    """A :data:`app.data.IndexProgress` drawing into ``slot`` (an ``st.empty()`` of the main area)."""

    def tell(rows: list[dict[str, Any]], done: int, total: int) -> None:
        with slot.container():
            st.caption(f"Reading the game index: {done:,} of {total:,} new or changed games (once; later visits "
                       "read it from the cache). The figures below cover the games read so far.")
            st.progress(min(1.0, done / max(total, 1)), text=f"Indexing games: {done:,} of {total:,}")
            preview_tiles(pd.DataFrame(rows, columns=INDEX_COLUMNS))

    return tell
