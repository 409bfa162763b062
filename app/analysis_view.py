"""Shared pieces of the analysis pages: scope headers, reliability diagrams from F2 output, CI text."""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from mafiascope.lexicon import glossary

from . import widgets
from .text import plural


def page_intro(title: str, caption: str) -> tuple[str, ...]:
    """Title, definition caption, URL errors, and the selection's game directories (stops when empty)."""
    from . import analysis
    from .state import report_url_errors

    st.markdown(f"### {title}")
    if caption:
        st.caption(caption)
    report_url_errors()
    dirs = analysis.selection_dirs()
    if not dirs:
        st.info("No games in the selection (sidebar corpora and filters).", icon="👈")
        st.stop()
    return dirs


def games_scope(probed: int, selected: int, analysed: int | None = None) -> str:
    """What the figures are computed over: the sidebar counts every game, the probe-based metrics only probed root
    games; ``analysed``: the root games the Dashboard counts (transcript-only ones too: outcomes, votes, matchups)."""
    if analysed is not None and analysed > probed:
        s = (f"{plural(analysed, 'root game')} ({probed:,} probed, counted by the probe-based figures; "
             f"{analysed - probed:,} transcript-only, counted by outcomes, votes, matchups and the outcome and vote rows)")
        return s if analysed == selected else f"{s} (of the {selected} selected; branches are left out)"
    s = f"{plural(probed, 'probed root game')}"
    return s if probed == selected else f"{s} (of the {selected} selected; branches and unprobed games are left out)"


def metric_ci(col: Any, label: str, value: Any, ci: Any, fmt: str = "{:.3f}", help: str | None = None,
              games: int | None = None) -> None:
    """A metric tile with its 95% interval as a caption (keeps the tile readable).

    The intervals are game-level cluster bootstraps: over one game every resample is that game, so the
    "interval" collapses onto the point. ``games`` < 2 says so instead of printing a zero-width CI."""
    col.metric(label, "–" if value is None else fmt.format(value), help=help)
    if value is not None and games is not None and games < 2:
        col.caption("no 95% CI: the bootstrap resamples games and this scope has only one")
    elif isinstance(ci, (list, tuple)) and len(ci) == 2 and None not in ci:
        col.caption(f"95% CI [{fmt.format(ci[0])}, {fmt.format(ci[1])}]")


def ci_range(ci: Any, fmt: str = "{:.3f}") -> str:
    """A 95% interval as "[lo, hi]" text for tables ("–" when missing); raw lists render as unlabeled pills."""
    if isinstance(ci, (list, tuple)) and len(ci) == 2 and None not in ci:
        return f"[{fmt.format(ci[0])}, {fmt.format(ci[1])}]"
    return "–"


def ci_text(v: Any, ci: Any, fmt: str = "{:.3f}") -> str:
    if v is None:
        return "–"
    s = fmt.format(v)
    if isinstance(ci, (list, tuple)) and len(ci) == 2 and None not in ci:
        s += f" [{fmt.format(ci[0])}, {fmt.format(ci[1])}]"
    return s


def bins_frame(f2res: dict[str, Any]) -> pd.DataFrame:
    rows = []
    bins = f2res.get("bins") or {}
    for j in range(5):
        lo, hi = 20 * j, 20 * j + 19
        b = bins.get(f"{lo}-{hi}") or {}
        w = b.get("wilson95") or [None, None]
        rows.append({"lo": lo, "hi": 100 if j == 4 else hi + 1, "n": int(b.get("n", 0)), "acc": b.get("acc"),
                     "mean_conf": b.get("mean_conf"), "ci_lo": w[0] if w else None, "ci_hi": w[1] if len(w) > 1 else None,
                     "acc_boot_ci": b.get("acc_ci95")})
    df = pd.DataFrame(rows)
    for c in ("acc", "ci_lo", "ci_hi", "mean_conf"):
        df[c] = pd.to_numeric(df[c], errors="coerce")
    return df


def reliability_block(f2res: dict[str, Any], title: str, key: str) -> None:
    df = bins_frame(f2res)
    c1, c2, c3 = st.columns(3)
    games = f2res.get("m")
    metric_ci(c1, "ECE", f2res.get("ece"), f2res.get("ece_ci95"), help=glossary.tip("ECE", "95% CI"), games=games)
    metric_ci(c2, "Brier", f2res.get("brier"), f2res.get("brier_ci95"), help=glossary.tip("Brier", "95% CI"), games=games)
    c3.metric("Guesses", f"{f2res.get('n', 0):,}")
    if df["n"].sum() == 0:
        st.info("No committed role guesses with a confidence in this selection. They come from the role_assessment "
                "answers of town-side observers; transcript-only games and batteries without role_assessment (the "
                "suspicion-only ten-seat configs) contribute none. Widen the selection in the sidebar.")
        return
    from . import charts  # Altair: imported by the pages that draw a reliability diagram, not by the Dashboard

    ch = charts.reliability(df, title=title, height=400)
    # a reliability diagram is read against its diagonal: keep it near square instead of a 6:1 strip
    left, right = st.columns([3, 2])
    left.altair_chart(ch, width="stretch", key=f"rel_{key}")
    right.caption(glossary.plain("reliability diagram") + " Whiskers: Wilson 95% intervals; vermillion = overconfident "
                  "(accuracy below the bin's mid confidence); faded = fewer than 10 guesses.")
    with right.expander("Bins table and export"):
        show = df.assign(bin=df["lo"].astype(str) + "–" + (df["hi"] - (df["hi"] < 100)).astype(str)).drop(columns=["lo", "hi"])
        show = show[["bin", *[c for c in show.columns if c != "bin"]]]
        st.dataframe(widgets.shown(show, words={"ci_lo": "Wilson 95% low", "ci_hi": "Wilson 95% high"}), hide_index=True,
                     width="stretch")
        widgets.download_csv(show, f"calibration_{key}", key=f"dl_rel_{key}")
        widgets.download_chart(ch, f"reliability_{key}", key=f"ex_rel_{key}")


def no_episodes_reason(res: dict[str, Any], games: int) -> str:
    """Why the Suspicion Episodes page has no candidate, and what to try (instead of a bare "none")."""
    comp, complete, pos = int(res.get("comparisons") or 0), int(res.get("complete") or 0), int(res.get("d_positive") or 0)
    where = f"the {plural(games, 'selected game')}"
    if not comp:
        why = (f"{where} have no pair of consecutive discussion steps with suspicion_ranking answers (transcript-only "
               "games, or a battery without suspicion_ranking)")
    elif not complete:
        why = (f"none of the {plural(comp, 'comparison')} in {where} is complete (every living agent must name one unique top "
               "suspect at both steps, with the same living roster)")
    elif not pos:
        why = f"all {complete} complete comparisons in {where} have D = 0: no agent switched its top suspect"
    else:
        why = f"{plural(pos, 'comparison')} in {where} {'has' if pos == 1 else 'have'} D > 0 but none became a candidate"
    return (f"No collective suspicion shift: {why}. Add games with suspicion_ranking probes to the selection "
            "(sidebar: Corpora, Search games, Filters).")


def with_cell_colours(mat: pd.DataFrame, value: str) -> pd.DataFrame:
    """A heatmap table with each cell's ``fill`` (light to dark orange by ``value``) and the ``ink`` readable on it."""
    from .palette import HEAT_HIGH, HEAT_LOW, ink_on, lerp_hex  # the palette module imports Altair (analytics.figures)

    top = float(mat[value].max()) if len(mat) else 0.0
    fills = [lerp_hex(HEAT_LOW, HEAT_HIGH, float(v) / top if top else 0.0) for v in mat[value]]
    return mat.assign(fill=fills, ink=[ink_on(f) for f in fills])
