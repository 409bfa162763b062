"""Corpus search page: one box over utterances, probe reasons and plans of the selected games."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlencode

import pandas as pd
import streamlit as st

from mafiascope.analytics.search import SOURCES, SearchIndex, build_index_for
from mafiascope.logs import step_label

from . import analysis as A
from . import bridge
from . import state as S
from . import widgets as W
from .text import plural

MAX_QUERY = 200
ROW_PX = 78  # four lines of text a row
LIMIT = 500
SOURCE_LABELS = {"utterance": "What seats said", "reason": "Probe reasons", "plan": "Plans"}


@st.cache_resource(max_entries=4, show_spinner="Indexing the selected games for search ...")
def _index(_dirs: tuple[str, ...], key: str) -> SearchIndex:
    return build_index_for([Path(d) for d in _dirs])


def _link(page: str, **params: str | None) -> str:
    return f"{page}?{urlencode({k: v for k, v in params.items() if v})}"


def _url_sources() -> list[str]:
    raw = S.qp("in")
    if not raw:
        return list(SOURCES)
    picked = [s for s in raw.split(",") if s in SOURCES]
    if not picked:
        S.add_url_error(f"URL parameter in={S.quoted(raw)}: use any of {', '.join(SOURCES)} separated by commas")
        return list(SOURCES)
    return picked


def render() -> None:
    st.markdown("### Search")
    st.caption("Every term must occur (case-insensitive) in what a seat said, a reason it gave a probe, or a plan it "
               "stated; the selected games only (sidebar). Results open Live Game or Impersonate at that step.")
    q0 = (S.qp("q") or "")[:MAX_QUERY]
    query = st.text_input("Search the corpus", value=q0, max_chars=MAX_QUERY, key="search_q",
                          placeholder="e.g. Logan keeps accusing")
    sources = st.multiselect("In", list(SOURCES), default=_url_sources(), format_func=SOURCE_LABELS.get, key="search_in")
    S.report_url_errors()
    dirs = A.selection_dirs()
    S.sync_url(q=query.strip() or None, **{"in": ",".join(sources) if sources and set(sources) != set(SOURCES) else None})
    if not dirs:
        st.info("No games in the selection (sidebar corpora and filters).", icon="👈")
        return
    if not query.strip():
        st.info(f"Type a word or phrase to search {plural(len(dirs), 'game')}.", icon="🔎")
        return
    if not sources:
        st.info("Pick at least one kind of text to search in.")
        return
    index = _index(dirs, bridge.digest(dirs))
    hits, total = index.search(query, sources=sources, limit=LIMIT)
    shown = f"the first {len(hits)}" if total > len(hits) else "all"
    st.caption(f"{total} match{'es' if total != 1 else ''} in {plural(len(dirs), 'game')}; {shown} shown, in game and step order.")
    if not hits:
        st.info("No match. Every term must occur in one text; try fewer or shorter terms.", icon="🔎")
        return
    rows = []
    for h in hits:
        step = step_label(h.round, h.msg_seq)
        rows.append({"game": W.short_id(h.game_id), "step": step, "speaker": h.player,
                     "live": _link("live", game=h.game_id, step=step),
                     "impersonate": _link("impersonate", game=h.game_id, step=step, agent=h.player),
                     "text": h.text, "source": SOURCE_LABELS[h.source] + (f" · {h.probe_id}" if h.probe_id else ""),
                     "about": h.about or ""})
    df = pd.DataFrame(rows)
    # the links next to the step and the text wrapped over several lines, in widths that fit the page (a row of one
    # line cut every hit's text, and the links sat past the table's right edge)
    st.dataframe(df, hide_index=True, width="stretch", height=min(640, 38 + ROW_PX * len(df)), row_height=ROW_PX, key="search_table",
                 column_config={
                     "game": st.column_config.TextColumn(width=80), "step": st.column_config.TextColumn(width=50),
                     "speaker": st.column_config.TextColumn(width=75),
                     "live": st.column_config.LinkColumn("Live Game", display_text="open ↗", width=80),
                     "impersonate": st.column_config.LinkColumn("Impersonate", display_text="open ↗", width=95,
                                                                help="The game through the speaker's eyes at that step."),
                     "text": st.column_config.TextColumn("text", width=330),
                     "source": st.column_config.TextColumn("source", width=170, help="What the text is, and for a reason or "
                                                           "a plan the probe whose answer gave it."),
                     "about": st.column_config.TextColumn("about", width=70, help="The player the reason or plan is about.")})
    W.download_csv(df.drop(columns=["live", "impersonate"]), "search_results", key="dl_search")
