"""Parent and branches side by side from the fork step (Replay's branch tree, Live Game on a branch)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import altair as alt
import pandas as pd
import streamlit as st

from mafiascope.replay.compare import BranchComparison, compare_branches, step_label
from mafiascope.replay.source import ReplayError

from . import bridge
from .palette import agent_colors
from .text import md_escape, plural


@st.cache_data(max_entries=16, show_spinner="Aligning the branches with their parent ...")
def _compare(parent_dir: str, branch_dirs: tuple[str, ...], key: str) -> BranchComparison:
    return compare_branches(parent_dir, list(branch_dirs))


def load(parent_dir: str | Path, branch_dirs: list[str | Path]) -> BranchComparison:
    dirs = (str(parent_dir), *sorted(str(d) for d in branch_dirs))
    return _compare(dirs[0], dirs[1:], bridge.digest(dirs))


def suspicion_chart(c: BranchComparison, players: list[str] | None = None) -> alt.Chart | None:
    """One panel per player: the parent's line, the branches' mean (dashed) and their min-max band."""
    s = c.suspicion[c.suspicion["k"].ge(0)].dropna(subset=["suspicion"])
    if s.empty:
        return None
    names = players or sorted(s["player"].unique())
    parent = s[s["is_parent"]].assign(series="parent")[["k", "player", "suspicion", "label", "n", "series"]]
    band = c.band()
    band = band[band["player"].isin(names)]
    colours = agent_colors(names)
    domain, rng = list(colours), list(colours.values())
    base = alt.Chart().encode(x=alt.X("k:Q", title="steps after the fork", axis=alt.Axis(tickMinStep=1)))
    layers = [
        base.mark_area(opacity=0.18).encode(
            y=alt.Y("lo:Q", title="crowd suspicion", scale=alt.Scale(domain=[0, 1]), axis=alt.Axis(format="%")),
            y2="hi:Q", color=alt.Color("player:N", scale=alt.Scale(domain=domain, range=rng), legend=None),
        ).transform_filter(alt.datum.src == "band"),
        base.mark_line(strokeDash=[5, 3]).encode(
            y="mean:Q", color=alt.Color("player:N", scale=alt.Scale(domain=domain, range=rng), legend=None),
            tooltip=[alt.Tooltip("player:N"), alt.Tooltip("k:Q", title="step after fork"),
                     alt.Tooltip("mean:Q", title="branches' mean", format=".0%"), alt.Tooltip("lo:Q", format=".0%"),
                     alt.Tooltip("hi:Q", format=".0%"), alt.Tooltip("branches:Q")],
        ).transform_filter(alt.datum.src == "band"),
        base.mark_line(point=True, strokeWidth=2).encode(
            y="suspicion:Q", color=alt.Color("player:N", scale=alt.Scale(domain=domain, range=rng), legend=None),
            tooltip=[alt.Tooltip("player:N"), alt.Tooltip("label:N", title="parent step"),
                     alt.Tooltip("suspicion:Q", title="parent", format=".0%"), alt.Tooltip("n:Q", title="assessors")],
        ).transform_filter(alt.datum.src == "parent"),
    ]
    data = pd.concat([parent[parent["player"].isin(names)].assign(src="parent"), band.assign(src="band")], ignore_index=True)
    return (alt.layer(*layers, data=data)
            .properties(width=170, height=110)
            .facet(facet=alt.Facet("player:N", title=None, sort=names), columns=4)
            .resolve_scale(x="shared"))


def elimination_table(c: BranchComparison) -> pd.DataFrame:
    e = c.eliminations[~c.eliminations["before_fork"]].copy()
    e["game"] = [("parent " if p else "branch ") + g for g, p in zip(e["game_id"], e["is_parent"])]
    e = e.sort_values(["is_parent", "game_id", "k"], ascending=[False, True, True])
    return e.rename(columns={"k": "steps after fork", "label": "step"})[["game", "steps after fork", "step", "victim", "how"]]


def side_by_side(c: BranchComparison, branch: str) -> tuple[pd.DataFrame, int | None]:
    a, b = c.transcripts.get(c.parent_id, []), c.transcripts.get(branch, [])
    div = c.divergence.get(branch)
    rows = []
    for i in range(max(len(a), len(b))):
        pa = a[i] if i < len(a) else {}
        pb = b[i] if i < len(b) else {}
        mark = "▶" if div is not None and i == div else ("" if div is None or i < div else "·")  # the caption says what they mean
        rows.append({"#": i + 1, "": mark, "parent step": f"{pa.get('label', '')} {pa.get('player', '')}".strip(),
                     "parent said": pa.get("text", ""), "branch step": f"{pb.get('label', '')} {pb.get('player', '')}".strip(),
                     "branch said": pb.get("text", "")})
    return pd.DataFrame(rows), div


ROW_PX = 96  # five lines of text a row


def render(parent_dir: str | Path, branches: list[dict[str, Any]], key: str) -> None:
    """The comparison block for one fork batch (``branches``: rows with ``game_id`` and ``path``)."""
    dirs = [b["path"] for b in branches if b.get("path") and Path(b["path"]).is_dir()]
    if not dirs:
        st.caption("No branch logs to compare yet.")
        return
    try:
        c = load(parent_dir, dirs)
    except ReplayError as exc:
        st.warning(md_escape(f"Cannot align these branches with their parent: {exc}"), icon="⚠️")
        return
    wins = md_escape(", ".join(f"{g}: {o['winner'] or 'unfinished'}" for g, o in c.outcomes.items() if g == c.parent_id))
    st.caption(f"Step 0 is {step_label(c.fork_point)}, the last step the branches share with their parent. Parent's own "
               f"result — {wins}. Lines: the parent; dashed: the branches' mean; band: their range.")
    blind = [g for g, ok in c.assessed.items() if not ok]
    if blind and len(blind) == len(c.assessed):
        st.caption("The branches have no role assessments of their own after the fork (run without probes, or with a "
                   "battery without role_assessment), so their suspicion is not drawn: it would only repeat the last answers "
                   "before the fork as flat lines.")
    else:
        if blind:
            st.caption(f"{plural(len(blind), 'branch', 'branches')} without role assessments after the fork "
                       "(no probes, or no role_assessment in the battery) left out of the branches' mean and band.")
        chart = suspicion_chart(c)
        if chart is None:
            st.caption("No role assessments after the fork: nothing to draw.")
        else:
            st.altair_chart(chart, width="content")
    el = elimination_table(c)
    if not el.empty:
        st.markdown("**Eliminated after the fork**")
        st.dataframe(el, hide_index=True, width="stretch")
    ids = [g for g in c.transcripts if g != c.parent_id]
    pick = st.selectbox("Transcript beside the parent's", ids, key=f"cmp_branch_{key}", bind="query-params",
                        format_func=lambda g: f"{g} (diverges at utterance {c.divergence[g] + 1})"
                        if c.divergence.get(g) is not None else f"{g} (same words)")
    df, div = side_by_side(c, pick)
    if df.empty:
        st.caption("Neither the parent nor this branch has a public utterance after the fork step.")
        return
    if div is not None:
        st.caption(f"The first utterance that differs is #{div + 1} (marked ▶); rows after it are marked ·.")
    # several lines a row: the utterances are read side by side (one line a row cut them after a few words)
    st.dataframe(df, hide_index=True, width="stretch", height=min(640, 38 + ROW_PX * len(df)), row_height=ROW_PX,
                 # fixed widths that fit the page's column: the two texts side by side, each on several lines
                 column_config={"#": st.column_config.NumberColumn(width=36), "": st.column_config.TextColumn(width=28),
                                "parent step": st.column_config.TextColumn("parent", width=110, help="step and speaker in the parent"),
                                "branch step": st.column_config.TextColumn("branch", width=110, help="step and speaker in the branch"),
                                "parent said": st.column_config.TextColumn(width=290),
                                "branch said": st.column_config.TextColumn(width=290)})


def branch_section(index: pd.DataFrame, row: pd.Series | None) -> None:
    """Live Game on a branch: its fork batch compared with the parent (when the parent is in the corpora)."""
    if row is None or index is None or index.empty or not bool(row.get("is_branch")):
        return
    parent = index[index["game_id"] == row.get("forked_from")]
    with st.expander(f"↳ Compared with its parent {md_escape(str(row.get('forked_from')))}", expanded=False):
        if parent.empty:
            st.caption("The parent game is not in the selected corpora (sidebar), so there is nothing to align with.")
            return
        batch = index[(index["fork_batch_id"] == row.get("fork_batch_id")) & index["is_branch"]]
        render(str(parent["dir"].iat[0]), [{"game_id": g, "path": str(d)} for g, d in zip(batch["game_id"], batch["dir"])],
               key=f"live_{row.get('fork_batch_id')}")
