"""Shared widgets: timeline, agent picker, game header, CSV/chart export."""

from __future__ import annotations

import contextlib
import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st

from mafiascope.export_text import csv_text
from mafiascope.lexicon import glossary
from mafiascope.logs.game_facts import planned_probes

from . import state as S
from .gamemodel import PHASE_ICONS, GameModel
from .fork_start import of_setup
from .paths import corpus_name
from .sidebar import context
from .text import md_escape


def short_id(gid: str) -> str:
    """A game id short enough for a label but still distinct: UUIDs -> their first 8 hex digits, readable ids
    (``demo-classic-01``) in full, long other ids as head…tail (``[:8]`` made every demo game "demo-cla")."""
    gid = str(gid)
    head = gid[:8]
    if len(gid) >= 32 and all(ch in "0123456789abcdefABCDEF-" for ch in gid):
        return head
    return gid if len(gid) <= 26 else f"{head}…{gid[-4:]}"


def _set_step(v: int) -> None:
    S.put(S.K_STEP, int(v))
    S.put("ms_follow", False)  # browsing by hand stops following a live game


def _on_slider(key: str) -> None:
    _set_step(st.session_state[key])


def _shift(d: int, n: int) -> None:
    _set_step(max(0, min(n - 1, int(S.get(S.K_STEP, 0)) + d)))


def step_caption(gm: GameModel, i: int) -> str:
    s = gm.steps[i]
    icon = PHASE_ICONS.get(s.phase, "•")
    who = f" · {s.speaker}" if s.speaker else ""
    win = f" · {gm.winner} win" if gm.winner and i == len(gm.steps) - 1 else ""
    return f"{i}/{len(gm.steps) - 1} · {s.label} · {icon} {s.phase}{who} · {len(gm.alive_at(i))} alive{win}"


def timeline(gm: GameModel) -> int:
    """Slider + previous/next + first/last; returns the current step (URL-synced)."""
    n = len(gm.steps)
    step = S.url_step([s.label for s in gm.steps], game=gm.game_id)
    if n == 0:
        st.info("This game has no steps yet (no message and no probe has been logged).")
        return 0
    # the key carries the step count: a live game that grew gets a fresh slider with the right range and value
    wkey = f"w_step:{gm.game_id}:{n}"
    # always written: after a page switch Streamlit drops a page-scoped widget's value when it mounts on the
    # new page although session_state still reads the old one, so "write only if different" left the slider at 0
    st.session_state[wkey] = step
    # one horizontal row, not five columns: every element and container on the page is re-rendered by the browser
    # on each of a step's whole-page React commits, so the same controls in fewer containers make a step cheaper
    row = st.container(horizontal=True, vertical_alignment="top", gap="small", key="tl_row")
    row.button("", icon=":material/first_page:", key="tl_first", on_click=_set_step, args=(0,), disabled=step == 0, help="First step", shortcut="Home")
    row.button("", icon=":material/chevron_left:", key="tl_prev", on_click=_shift, args=(-1, n), disabled=step == 0, help="Previous step", shortcut="Left")
    with row.container(gap=None):
        if n > 1:
            st.slider("Timeline", 0, n - 1, key=wkey, on_change=_on_slider, args=(wkey,), label_visibility="collapsed",
                      help="Drag to move through the game: one tick per message or probe step.")
        st.caption(md_escape(step_caption(gm, step)))
    row.button("", icon=":material/chevron_right:", key="tl_next", on_click=_shift, args=(1, n), disabled=step >= n - 1, help="Next step", shortcut="Right")
    row.button("", icon=":material/last_page:", key="tl_last", on_click=_set_step, args=(n - 1,), disabled=step >= n - 1, help="Last step", shortcut="End")
    return int(S.get(S.K_STEP, step))


def parse_badge(gm: GameModel) -> str:
    if gm.probes_total == 0:
        if planned_probes(gm.setup):  # probed, but no answer is in yet (a game that just started) or none could be asked
            return ":blue-badge[probed · no answers yet]" if not gm.winner else ":gray-badge[probed · no probe answers]"
        return ":gray-badge[transcript only]"
    r = gm.probes_ok / gm.probes_total
    color = "green" if r >= 0.9 else "orange" if r >= 0.7 else "red"
    return f":{color}-badge[probes parsed {gm.probes_ok}/{gm.probes_total} ({r:.0%})]"


HELP = {
    "Live Game": """
**Timeline**: one step per message or probe round; drag the slider, use ◀ ▶, or the keys ← → Home End.
The URL always holds the view (game, step): copy it to share.

**Ground truth**: seats on a fixed ellipse; colour *and* shape give the true role (▲ Mafia, ◆ Don, ✚ Doctor,
■ Sheriff, ● Villager); faded = dead; ringed = speaking now. Dashed lines join Mafia partners. The ring
"hid N%" on a living Mafioso = share of informed town players *not* naming it Mafia (dashed below 50%).

**Metrics strip**: per-agent first-order accuracy, crowd Mafia recall (solid) with each Mafioso's deception
success (dashed), per-agent second-order consistency. Click a point to jump there.

**Each agent's view**: what each agent guesses (shape/colour = guessed role, opacity = confidence) and whom
it suspects (edges at or above the threshold). Hover nodes and edges for the agent's own words; click a node
to see the game through that agent's eyes (Impersonate).

""" + glossary.tip("F1", "crowd recall", "deception", "second-order consistency", "transcript only"),
    "Impersonate": """
The game as one agent saw it: the transcript it could see (others' night actions hidden, Mafia allies' shown as
their ACTION line), what it believed (guessed roles, suspicions, plans), and two ego panels: **how I think they
see me** (its social_map) vs **how they actually see me** (the others' role guesses about it). Mismatches are
ringed in amber; Mafia-Mafia pairs do not count.

""" + glossary.tip("match score"),
}


def share_link() -> None:
    """A popover with this view's URL (the query is written at the end of the run, so it is read lazily)."""
    with st.popover("Share this view", icon=":material/link:"):
        st.caption("The URL holds the page, game, step, agent and mode: anyone with the same logs sees this view.")
        try:
            base = str(st.context.url or "").split("?")[0]
        except Exception:
            base = ""
        from urllib.parse import urlencode

        slot = st.empty()
        st.session_state["_ms_share_slot"] = (slot, base, urlencode)


def take_share_slot() -> Any:
    """The share popover's slot of this full run, for a fragment that writes the URL into it on each of its own
    reruns (``finish(..., share=...)``); None without one."""
    return st.session_state.pop("_ms_share_slot", None)


def fill_share_link(item: Any = None) -> None:
    item = item if item is not None else st.session_state.pop("_ms_share_slot", None)
    if item is None:
        return
    slot, base, urlencode = item
    slot.code(base + ("?" + urlencode(st.query_params.to_dict()) if st.query_params else ""), language=None)


def game_header(gm: GameModel, *, title: str) -> None:
    row = context().game
    # one horizontal row, not three columns: the browser re-renders every block of the page on each of a timeline
    # step's whole-page React commits (see widgets.timeline), and this row is one block where the columns were four
    head = st.container(horizontal=True, gap="small", key="ms_head_row")
    if title in HELP:
        with head.popover("How to read this page", icon=":material/help:"):
            st.markdown(HELP[title])
    with head:
        share_link()
    corpus = f" · {corpus_name(str(row['corpus']))}" if row is not None else ""
    winner = f"**{md_escape(gm.winner)}** win" if gm.winner else ":orange[in progress]"
    st.markdown(f"### {title}\n{md_escape(gm.game_id)} · {winner} · {len(gm.players)} players{md_escape(corpus)} &nbsp; {parse_badge(gm)}")
    if gm.setup.get("forked_from"):
        st.caption(f"↳ branch of {md_escape(gm.setup.get('forked_from'))}: {md_escape(of_setup(gm.setup).text)}")
    if row is not None and bool(row.get("invalid", False)):
        st.warning("Invalid game (over its fault budget; left out of analytics by default): "
                   + md_escape(str(row.get("invalid_reason") or "")), icon=":material/report:")


def dashes(df: pd.DataFrame, decimals: int = 3) -> pd.DataFrame:
    """``df`` for display with a missing cell shown as ``—`` (st.dataframe draws None/NaN as the word "None").

    A column with gaps becomes text (a float rounded to ``decimals``); columns without gaps are kept as they are."""
    out = df.copy()
    for c in out.columns:
        miss = out[c].isna()
        if miss.any():
            out[c] = ["—" if m else (f"{v:.{decimals}f}" if isinstance(v, float) else str(v)) for v, m in zip(out[c], miss)]
    return out


# how the tables' machine column names read on screen (the CSV downloads keep the machine names)
COLUMN_WORDS = {"game_id": "game", "ci_lo": "95% low", "ci_hi": "95% high", "mean_conf": "mean confidence",
                "acc": "accuracy", "acc_boot_ci": "accuracy, bootstrap 95% CI", "ECE_lo": "ECE 95% low",
                "ECE_hi": "ECE 95% high", "Brier_lo": "Brier 95% low", "Brier_hi": "Brier 95% high",
                "mafia_wins": "Mafia wins", "town_wins": "town wins", "median_rounds": "median rounds",
                "predictor_role": "predictor's role", "about_role": "counterpart's role",
                "their_guess": "counterpart's guess", "their_guess_conf": "counterpart's confidence"}


def _interval_text(v: Any) -> Any:
    """A two-number list (an interval) as "lo–hi" text; anything else unchanged."""
    if isinstance(v, (list, tuple)) and len(v) == 2 and all(isinstance(x, (int, float)) for x in v):
        return f"{v[0]:.3g}–{v[1]:.3g}"
    return v


def shown(df: pd.DataFrame, decimals: int = 3, words: dict[str, str] | None = None) -> pd.DataFrame:
    """``df`` as a table on screen: columns named in words (:data:`COLUMN_WORDS`, ``words``; any other snake_case name
    with spaces), intervals stored as lists as "lo–hi" text, a missing cell as "—" (:func:`dashes`)."""
    out = df.copy()
    for c in out.columns:
        if out[c].dtype == object:
            out[c] = [_interval_text(v) for v in out[c]]
    names = {**COLUMN_WORDS, **(words or {})}
    out = out.rename(columns={c: names.get(str(c), str(c).replace("_", " ")) for c in out.columns})
    return dashes(out, decimals)


def download_csv(df: pd.DataFrame, name: str, key: str, label: str = "⬇ CSV") -> None:
    st.download_button(label, lambda: csv_text(df).encode("utf-8"), file_name=f"{name}.csv", mime="text/csv",
                       key=key, help="Download this table as CSV", on_click="ignore")


def download_chart(chart: Any, name: str, key: str) -> None:
    """Charts export as Vega-Lite JSON, standalone HTML, SVG and PNG (the same renderer as `mafiascope report`),
    each built only when clicked. ``chart`` is an Altair chart, or a function that builds one (the Dashboard draws
    its charts from stored Vega-Lite dicts: Altair is imported and the chart built only on a click)."""
    import functools
    import importlib.util

    built = functools.cache(chart if callable(chart) else lambda: chart)

    def _html() -> str:
        buf = io.StringIO()
        built().save(buf, format="html")
        return buf.getvalue()

    def _svg() -> str:
        from mafiascope.analytics.figures import chart_svg

        return chart_svg(built())

    def _png() -> bytes:
        from mafiascope.analytics.figures import chart_png

        return chart_png(built())

    # one wrapping row of content-wide buttons: fixed columns cut the labels in a half-width column ("⬇ Ve…")
    row = st.container(horizontal=True, gap="small", key=f"{key}_row")
    row.download_button("⬇ Vega-Lite JSON", lambda: built().to_json(), file_name=f"{name}.vl.json", mime="application/json",
                        key=key + "_json", on_click="ignore")
    row.download_button("⬇ HTML", _html, file_name=f"{name}.html", mime="text/html", key=key + "_html", on_click="ignore")
    if importlib.util.find_spec("vl_convert") is None:  # the SVG/PNG renderer (found, not imported)
        return
    row.download_button("⬇ SVG", _svg, file_name=f"{name}.svg", mime="image/svg+xml", key=key + "_svg", on_click="ignore")
    row.download_button("⬇ PNG", _png, file_name=f"{name}.png", mime="image/png", key=key + "_png", on_click="ignore")


def agent_picker(gm: GameModel, *, label: str = "Agent", key: str = "w_agent", allow_none: bool = False) -> str | None:
    names = gm.names
    cur = S.url_agent(names, allow_none=allow_none)
    opts = ([None] if allow_none else []) + names
    if cur not in opts:
        cur = opts[0] if opts else None
    st.session_state[key] = cur

    def _fmt(n: str | None) -> str:
        if n is None:
            return "— nobody —"
        return f"{n} ({gm.roles.get(n, '?')})"

    def _cb() -> None:
        S.put(S.K_AGENT, st.session_state[key])

    st.selectbox(label, opts, key=key, format_func=_fmt, on_change=_cb)
    return S.get(S.K_AGENT)


def wait_for_start(game_id: str) -> None:
    """A launched game that is not in the index yet: say so, poll until it is (or its process ended), stop."""
    from .data import game_index
    from .sidebar import starting

    st.info(f"Game {game_id} is starting: waiting for its first record …", icon=":material/hourglass_top:")

    @st.fragment(run_every=1.0)
    def _poll() -> None:
        roots = tuple(str(r) for r in context().roots)
        if game_id in set(game_index(roots)["game_id"]) or not starting(game_id):
            st.rerun(scope="app")

    _poll()
    st.stop()


def load_game_or_stop() -> GameModel:
    """The sidebar's game as a model, or a clear message and st.stop()."""
    from .gamemodel import load_model

    st.session_state["_ms_err_slot"] = st.container()
    S.report_url_errors(st.session_state["_ms_err_slot"])
    row = context().game
    if row is None and S.get("ms_starting") is not None and S.get("ms_starting") == S.get(S.K_GAME):
        wait_for_start(S.get(S.K_GAME))
    if row is None:
        st.info("Pick a game in the sidebar (or launch one on the Live Game page).", icon="👈")
        st.stop()
    try:
        return load_model(row["dir"])
    except Exception as exc:
        st.error(md_escape(f"Could not read game {row['game_id']}: {exc}"))
        st.stop()


def finish(gm: GameModel | None, *, step: int | None = None, agent: str | None = None, mode: str | None = None,
           share: Any = None) -> None:
    """End of a page run (or of a fragment's run: ``share`` from :func:`take_share_slot`): show late URL errors at
    the top, write the view into the URL and the share link."""
    S.report_url_errors(st.session_state.get("_ms_err_slot"))
    S.sync_url(game=gm.game_id if gm else None, step=step, agent=agent, mode=mode)
    fill_share_link(share)


def mode_control(choices: tuple[str, ...], default: str, *, key: str, labels: dict[str, str]) -> str:
    """A segmented control bound to the URL's ``mode`` parameter."""
    mode = S.url_mode(choices, default)
    st.session_state[key] = mode

    def _cb() -> None:
        v = st.session_state.get(key)
        if v in choices:
            S.set_mode(choices, v)

    st.segmented_control("View", list(choices), key=key, label_visibility="collapsed", format_func=labels.get, on_change=_cb)
    return S.url_mode(choices, default)


MALFORMED = (KeyError, IndexError, TypeError, ValueError, AttributeError)  # what a record of the wrong shape raises


@contextlib.contextmanager
def untrusted_record(what: str) -> Iterator[None]:
    """Draw one record read from a file others may have written (an experiment or validation result in a shared
    logs root): a record of the wrong shape is one warning naming it, not a traceback for every visitor of the page."""
    try:
        yield
    except MALFORMED as exc:
        st.warning(md_escape(f"{what}: left out, it is not a result this app wrote ({type(exc).__name__})"), icon="⚠️")
