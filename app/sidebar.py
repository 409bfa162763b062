"""The shared sidebar: log directories, corpus selection, game picker with search and filters."""

from __future__ import annotations

import datetime as dt
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st

from mafiascope.lexicon import glossary

from . import state as S
from .data import (LAYER_KEY, GameLookupError, clear_index, game_index, invalid_note, layers_in, model_list, models_of, resolve_game,
                   root_problem, without_invalid)
from .paths import (ENV_FREE_PATHS, ENV_LOGS, REPO_ROOT, corpus_name, default_roots, editable_path, free_paths_allowed,
                    is_bundled_arena, parse_roots, public_path, root_labels, runs_dir)
from .text import md_escape, plural

CTX_KEY = "_ms_ctx"
BOOT_CHOICES = [0, 200, 500, 1000, 2000]  # bootstrap resamples (sb_boot; app/bridge.current_mode reads it, default 1000)


@dataclass
class Context:
    roots: list[Path]
    index: pd.DataFrame  # every game in the selected corpora
    selection: pd.DataFrame  # after search and filters (the corpus the analysis pages use)
    game: pd.Series | None  # the picked game (may be outside the filters when set by URL)


def context() -> Context:
    ctx = st.session_state.get(CTX_KEY)
    if ctx is None:  # a page run without the entrypoint (should not happen)
        ctx = Context([], pd.DataFrame(), pd.DataFrame(), None)
    return ctx


_RESCAN_EVERY_S = 1.0  # at most one extra listing a second for URLs naming unknown games (any visitor can type one)
_last_rescan = [0.0]


def _with_url_game(full: pd.DataFrame, roots: tuple[str, ...]) -> pd.DataFrame:
    """The index, listed again when a new URL names a game it does not hold: a game started a moment ago
    (a link from the launch form, another tab) would otherwise wait for the listing cache's few seconds,
    and the page showed another game."""
    raw = S.qp("game")
    if raw is None or raw == S.get("ms_game_url_seen") or (len(full) and raw in set(full["game_id"])):
        return full
    now = time.monotonic()
    if now - _last_rescan[0] < _RESCAN_EVERY_S:
        return full
    _last_rescan[0] = now
    clear_index()
    return game_index(roots)


def _fmt_game(row: pd.Series | dict[str, Any]) -> str:
    date = dt.datetime.fromtimestamp(row["ts"], dt.timezone.utc).strftime("%Y-%m-%d %H:%M") if row["ts"] else "?"
    parse = " · probed" if row["probed"] else " · transcript only"
    branch = "↳ " if row["is_branch"] else ""
    gid = str(row["game_id"])
    short = gid if len(gid) <= 26 else f"{gid[:8]}…{gid[-4:]}"
    return f"{branch}{short} · {row['winner']} · {date} · {row['players']}p R{row['rounds']}{parse}"


_LABELS: dict[int, tuple[pd.DataFrame, dict[str, str]]] = {}


def _labels(full: pd.DataFrame) -> dict[str, str]:
    """Picker labels of an index frame (the frame is kept alive with its labels, so its id stays unique)."""
    key = id(full)
    if key not in _LABELS or _LABELS[key][0] is not full:
        if len(_LABELS) > 8:
            _LABELS.clear()
        labels: dict[str, str] = {}
        seen: set[str] = set()
        for r in full.to_dict("records"):  # plain dicts: iterrows built a Series per game (half a second at 1,000)
            lab = _fmt_game(r)
            if lab in seen:  # labels must stay distinct (ids differing only in the middle)
                lab = f"{lab} · {r['game_id']}"
            seen.add(lab)
            labels[r["game_id"]] = lab
        _LABELS[key] = (full, labels)
    return _LABELS[key][1]


INVALID_KEY = "sb_invalid"
# the sidebar's three expanders: their widgets are drawn only while open (a closed one is one element, not ten: fewer
# elements for every whole-page React commit and no radio or checkbox chunk on a first view, issue 17 item 4); each
# widget keeps its value for the session when not drawn (persist_state), and the code reads the values from there
FILTERS_OPEN, ROOTS_OPEN, SETTINGS_OPEN = "sb_filters_open", "sb_roots_open", "sb_settings_open"
KEEP = "session"
BRANCH_CHOICES = ["all games", "root games only", "branches only"]


def _opened(label: str, key: str) -> Any | None:
    """A collapsed sidebar expander, or None while it is closed (opening it reruns the page, which then draws it)."""
    box = st.expander(label, key=key, on_change="rerun")
    return None if box.open is False else box


def _filter_widgets(index: pd.DataFrame) -> None:
    langs = sorted(index["language"].dropna().unique()) if len(index) else []
    models = models_of(index["models"]) if len(index) else []
    winners = sorted(index["winner"].dropna().unique()) if len(index) else []
    st.multiselect("Language", langs, key="sb_lang", persist_state=KEEP)
    st.multiselect("Model", models, key="sb_model", persist_state=KEEP)
    st.multiselect("Winner", winners, key="sb_winner", persist_state=KEEP)
    st.radio("Branches", BRANCH_CHOICES, key="sb_branch", horizontal=True, persist_state=KEEP)
    st.checkbox("Include invalid games", key=INVALID_KEY, persist_state=KEEP,
                help=glossary.tip("invalid game"))
    layers = layers_in(tuple(index["dir"].astype(str))) if len(index) else []
    if layers or st.session_state.get(LAYER_KEY) not in (None, "game"):
        st.selectbox("Probe layer", ["game", *layers], key=LAYER_KEY, persist_state=KEEP,
                     help="Which probe answers the analyses read: the games' own ('game', asked while they were played) or a "
                          "layer asked after the fact from the same contexts (`mafiascope probes ask --layer NAME`).")


def _filters(index: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """The search box and the Filters expander; the filtered index and how many invalid games it left out."""
    st.text_input("Search games", key="sb_search", placeholder="id, player, model, winner ...",
                  help="Case-insensitive substring over game id, player names, models and winner.")
    if (box := _opened("Filters", FILTERS_OPEN)) is not None:
        with box:
            _filter_widgets(index)
    return apply_filters(index)


def apply_filters(index: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """``index`` narrowed by the session's search and filters (drawn this run, or kept while their expander is
    closed), and how many invalid games (over their fault budget) that left out."""
    df = index
    ss = st.session_state
    q = ss.get("sb_search") or ""
    f_lang, f_model, f_win = (ss.get(k) or [] for k in ("sb_lang", "sb_model", "sb_winner"))
    f_branch, f_invalid = ss.get("sb_branch", BRANCH_CHOICES[0]), bool(ss.get(INVALID_KEY, False))
    if q:
        ql = q.lower()
        hay = (df["game_id"] + " " + df["player_names"] + " " + df["models"] + " " + df["winner"]).str.lower()
        df = df[hay.str.contains(ql, regex=False)]
    if f_lang:
        df = df[df["language"].isin(f_lang)]
    if f_model:
        df = df[df["models"].apply(lambda s: any(m in model_list(s) for m in f_model))]
    if f_win:
        df = df[df["winner"].isin(f_win)]
    if f_branch == "root games only":
        df = df[~df["is_branch"]]
    elif f_branch == "branches only":
        df = df[df["is_branch"]]
    return without_invalid(df, include=f_invalid)


CORPORA_SEEN = "sb_corpora_seen"  # every corpus the picker has offered this session
# the picker's chips wrap their names instead of cutting them at a fixed width ("study pilot-…")
CHIPS_WRAP_CSS = ("<style>.st-key-sb_corpora [data-tag] {max-width: 100%; height: auto}"
                  ".st-key-sb_corpora [data-tag] > span {max-width: none; white-space: normal; overflow: visible;"
                  " text-overflow: clip; overflow-wrap: anywhere}</style>")


def corpora_help(picked: list[str]) -> str:
    """The picker's help: what it does, and the picked corpora by their full names (a chip may still wrap)."""
    names = ", ".join(corpus_name(c) for c in picked) or "none"
    return ("Which folders of games make up the corpus the analysis pages use. A study, arena run or batch started "
            "meanwhile joins the selection. The bundled arena run (data/arena: ten-seat bot games, no probes) is off by "
            f"default; the Arena page reads it and its game links open here anyway. Selected: {names}.")


def picked_corpora(corpora: list[str]) -> list[str]:
    """The corpora the session uses: its pick, plus every corpus that appeared since the pick was made (a study,
    arena run or batch started meanwhile: its games count at once), except bundled arena runs (opt in)."""
    ss = st.session_state
    seen = set(ss.get(CORPORA_SEEN) or [])
    cur = ss.get("sb_corpora")
    if cur is None:
        return [c for c in corpora if not is_bundled_arena(c)]
    return [c for c in corpora if c in cur or (c not in seen and not is_bundled_arena(c))]


def _count_text(n_sel: int, n_index: int, n_invalid: int) -> str:
    return f"{n_sel} of {plural(n_index, 'game')}" + (f" · {invalid_note(n_invalid)}" if n_invalid else "")


LIVE_COUNT_EVERY_S = 2.0


def _game_count(roots: tuple[str, ...], text: str) -> None:
    """The sidebar's game count; while a job started from this app runs (a game, batch, study, arena run, fork),
    a fragment lists the roots again every couple of seconds and counts the new games, and reruns the page once
    when the last job ends (its games then open everywhere: picker, pages, analyses)."""
    from .jobs import running

    if not running():
        st.caption(text)
        return

    @st.fragment(run_every=LIVE_COUNT_EVERY_S)
    def _live() -> None:
        if not running():
            st.rerun(scope="app")
        full = game_index(roots)
        corpora = list(dict.fromkeys(full["corpus"])) if len(full) else []
        index = full[full["corpus"].isin(picked_corpora(corpora))] if len(full) else full
        selection, n_invalid = apply_filters(index)
        st.caption(_count_text(len(selection), len(index), n_invalid) + " · updating while a job runs")

    _live()


def starting(game_id: str) -> bool:
    """Whether ``game_id`` was launched from this app and its process still runs (its log may not be indexed yet)."""
    from .launcher import registry

    item = registry().get(game_id)
    if item is None:  # a batch is registered by its first game id
        item = next((i for i in registry().all() if i.game_id == game_id), None)
    return item is not None and item.running


def _on_pick() -> None:
    S.put(S.K_GAME, st.session_state.get("sb_game"))


def _roots() -> list[Path]:
    """The log roots to read: the operator's (a pick list), or typed ones when free paths are allowed."""
    configured = default_roots()
    box, ss = _opened("Log directories", ROOTS_OPEN), st.session_state
    if free_paths_allowed():
        typed = "\n".join(editable_path(p) for p in configured)
        if box is not None:
            with box:
                st.text_area(
                    "Log roots (one per line)", value=None if "sb_roots" in ss else typed, key="sb_roots", height=110,
                    persist_state=KEEP,
                    help=f"Directories holding game folders (game.jsonl, introspection.jsonl, state.jsonl). "
                         f"Defaults: ${ENV_LOGS}, data/demo, other corpora under data/, and your runs/ directory. "
                         f"Relative paths are resolved against the repository root (`{ENV_FREE_PATHS}` is on: any directory).",
                )
        text = ss.get("sb_roots")
        return [(r if r.is_absolute() else REPO_ROOT / r) for r in parse_roots(typed if text is None else text)]
    labels = {label: p for p, label in root_labels().items()}  # the configured roots, named as public_path names them
    cur = ss.get("sb_roots")
    if cur is not None:  # keep only roots still configured (a stale value would be an API error)
        ss["sb_roots"] = [p for p in cur if p in labels] if isinstance(cur, list) else list(labels)
    if box is not None:
        with box:
            st.multiselect(
                "Log roots", list(labels), default=None if cur is not None else list(labels), key="sb_roots",
                persist_state=KEEP,
                help=f"The directories this app is configured to read: `{ENV_LOGS}`, the corpora under data/ and the "
                     f"runs directory. Set `{ENV_FREE_PATHS}=1` on a private machine to type any directory (docs/app.md).")
    picked = ss.get("sb_roots")
    return [labels[p] for p in (list(labels) if picked is None else picked) if p in labels]


def _settings() -> None:
    """The analysis settings (app/bridge.current_mode and app/live_view read their keys, with these defaults)."""
    st.radio("Metric mode", ["default", "compat"], key="sb_metric_mode", horizontal=True, persist_state=KEEP,
             help=glossary.tip("compat") + " The default's corrections: labels normalised, round-end probes last, alive "
                  "filters (docs/metrics.md §13).")
    st.radio("Ground-truth graph renderer", ["Vega (default)", "vis.js (streamlit-agraph)"], key="sb_renderer",
             persist_state=KEEP,
             help="vis.js can be dragged and zoomed but shows no deception rings or reason tooltips, and only one "
                  "such graph fits on a page (streamlit-agraph has no key argument).")
    # a radio like the two above, not a select slider: every page's first view then loads no slider chunk
    st.radio("Bootstrap resamples", BOOT_CHOICES, index=BOOT_CHOICES.index(1000), key="sb_boot", horizontal=True,
             persist_state=KEEP,
             help=glossary.tip("bootstrap resamples"))


class _Slot:
    """A main-area placeholder made on first use (no element at all when the index needs no progress)."""

    def __init__(self) -> None:
        self.box: Any = None

    def tell(self, rows: list[dict[str, Any]], done: int, total: int) -> None:
        from .index_progress import reporter

        if self.box is None:
            self.box = st.empty()
        reporter(self.box)(rows, done, total)

    def clear(self) -> None:
        if self.box is not None:
            self.box.empty()


def render() -> Context:
    with st.sidebar:
        roots = _roots()
        existing = [r for r in roots if r.is_dir()]
        missing = [public_path(r) for r in roots if not r.is_dir() and r.resolve() != runs_dir().resolve()]
        if missing and len(missing) < len(roots):
            st.caption("Not found (skipped): " + md_escape(", ".join(missing)))
        unreadable = {r: why for r in existing if (why := root_problem(str(r)))}
        for r, why in unreadable.items():
            st.warning(md_escape(f"Log root {public_path(r)} cannot be read: {why}. Skipped."), icon=":material/folder_off:")
        existing = [r for r in existing if r not in unreadable]
    # outside the sidebar: a first read of a large corpus shows its progress and the tiles of the games read so
    # far in the page's place, before the sidebar's pickers (which need the whole index)
    slot = _Slot()
    full = _with_url_game(game_index(tuple(str(r) for r in existing), progress=slot.tell), tuple(str(r) for r in existing))
    slot.clear()
    with st.sidebar:
        corpora = list(dict.fromkeys(full["corpus"])) if len(full) else []
        picked, ss = picked_corpora(corpora), st.session_state
        if ss.get("sb_corpora") is not None:
            ss["sb_corpora"] = picked
        ss[CORPORA_SEEN] = sorted(set(ss.get(CORPORA_SEEN) or []) | set(corpora))
        st.html(CHIPS_WRAP_CSS)
        picked = st.multiselect("Corpora", corpora, default=None if "sb_corpora" in ss else picked, key="sb_corpora",
                                format_func=corpus_name, help=corpora_help(picked))
        index = full[full["corpus"].isin(picked)] if len(full) else full
        selection, n_invalid = _filters(index)
        _game_count(tuple(str(r) for r in existing), _count_text(len(selection), len(index), n_invalid))

        if (box := _opened("Analysis settings", SETTINGS_OPEN)) is not None:
            with box:
                _settings()
        game_row = None
        url_game = S.fresh_url_value("game")
        if url_game is not None:
            try:
                game_row = resolve_game(full, url_game)
                S.put(S.K_GAME, game_row["game_id"])
            except GameLookupError as exc:
                S.add_url_error(f"URL parameter game={S.quoted(url_game)}: {exc}.")
        cur = S.get(S.K_GAME)
        options = list(selection["game_id"])
        if cur is not None and cur not in options and cur in set(full["game_id"]):
            options = [cur] + options  # keep a URL-chosen game visible even when filtered out
        if cur is not None and cur not in set(full["game_id"]) and starting(cur):
            # a game launched here that has not written its setup yet: keep it picked (load_game_or_stop
            # waits for it); falling back to the first game showed one game while the URL named another
            S.put("ms_starting", cur)
        elif cur not in options:
            cur = options[0] if options else None
            S.put(S.K_GAME, cur)
        labels = _labels(full)
        if S.get("ms_starting") == cur and cur not in set(full["game_id"]):
            st.caption(f"Waiting for {cur} to start …")
        elif options:
            st.session_state["sb_game"] = cur
            st.selectbox("Game", options, key="sb_game", format_func=lambda g: labels.get(g, g), on_change=_on_pick,
                         help="↳ marks branch (forked) games: " + glossary.plain("branch") + " 'transcript only': "
                              + glossary.plain("transcript only") + " The probe parse rate of the picked game is shown next "
                              "to its title.")
            game_row = full[full["game_id"] == cur].iloc[0]
        else:
            if not existing:
                st.warning("None of the log directories exists or can be read (see Log directories above).")
            else:
                st.info("No games match. Clear the search or filters.")
    ctx = Context(existing, index, selection, game_row)
    st.session_state[CTX_KEY] = ctx
    return ctx
