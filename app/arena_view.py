"""The Arena page: build a roster (or a fixed seating), estimate, launch a background run, read the leaderboards."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pandas as pd
import streamlit as st

from mafiascope.arena.ledger import Ledger
from mafiascope.arena.roster import bot_roster, parse_roster
from mafiascope.arena.run import estimate
from mafiascope.arena.schedule import N_SEATS
from mafiascope.arena.scoring import load_records, report
from mafiascope.backends.specs import credential_items
from mafiascope.config import ConfigError, parse_yaml_text
from mafiascope.lexicon import glossary
from mafiascope.logs.io import is_game_dir
from mafiascope.redaction import ENV_REF

from . import arena_jobs, jobs, keys
from . import arena_tables as T
from . import state as S
from .data import invalid_note
from .paths import ARENA_DATA_DIR, default_roots, free_paths_allowed, public_command, public_path, within_roots
from .polling import flash, live_block
from .text import code, md_escape, md_link, plural
from .widgets import dashes

RULE_CHOICES = T.RULE_NAMES


@st.cache_data(show_spinner=False, max_entries=16)
def _report(path: str, sig: tuple[int, float]) -> dict[str, Any] | None:
    recs = load_records(path)
    return report(recs) if recs else None


def _sig(path: Path) -> tuple[int, float]:
    files = list(path.glob("*/game.jsonl"))
    return len(files), max((f.stat().st_mtime for f in files), default=0.0)


MODES = {"roster": "Roster (balanced schedule)", "fixed": "Fixed seating (a backend per seat)"}


def _extra_models() -> dict[str, Any] | None:
    extra = st.text_area(
        "More models: backend-registry entries as YAML (`label: {type: openai, model: ..., api_key: \"${KEY}\"}`)",
        value="", height=90, key="ms_arena_extra",
    )
    if not extra.strip():
        return {}
    try:
        data = parse_yaml_text(extra, "Extra models") or {}
        if not isinstance(data, dict):
            raise ConfigError("Extra models: expected a mapping label -> backend entry")
    except ConfigError as exc:
        st.error(md_escape(str(exc)))
        return None
    refused = [f"{label}: {why}" for label, entry in data.items() if (why := _key_problem(entry))]
    if refused:
        st.error(md_escape("Extra models: " + "; ".join(refused)))
        return None
    return data


def _key_problem(entry: Any) -> str | None:
    """Why an extra model's key may not be used here: a literal key (it would be written into the run's roster
    file) or a ``${VAR}`` the operator's policy does not allow for that base URL."""
    if not isinstance(entry, dict):
        return None
    for field, raw in credential_items(entry):  # api_key, token and every header value
        value = str(raw or "").strip()
        if not value:
            continue
        m = ENV_REF.match(value)
        if not m:
            return f"{field}: give the name of a key the operator allows, as \"${{NAME}}\", never the key itself"
        why = keys.operator_policy().problem(m.group(1), entry.get("base_url") or entry.get("hub") or "https://api.openai.com/v1")
        if why:
            return why
    return None


def _checked(data: dict[str, Any]) -> dict[str, Any] | None:
    """The roster as data (``name``, ``models``, optional ``seating``) once it parses, else None (error shown)."""
    try:
        roster = parse_roster(data, "roster")
    except ConfigError as exc:
        st.error(md_escape(str(exc)))
        return None
    return {"name": data["name"], "models": roster.models, **({"seating": roster.seating} if roster.seating else {})}


def roster_builder() -> dict[str, Any] | None:
    st.markdown("#### 1 · Roster")
    mode = st.radio("Seating", list(MODES), format_func=MODES.get, key="ms_arena_mode", horizontal=True)
    presets = bot_roster()
    if mode == "fixed":
        return seating_builder(presets.models)
    chosen = st.multiselect("Bot presets (offline, no keys)", presets.labels, default=presets.labels, key="ms_arena_bots")
    extra = _extra_models()
    if extra is None:
        return None
    roster = _checked({"name": "app", "models": {**{k: presets.models[k] for k in chosen}, **extra}})
    if roster is not None:
        st.caption(f"{plural(len(roster['models']), 'model')}. Each game seats ten of them (a model may take several seats when "
                   "there are fewer than ten); seats play under human names and are never told which model sits where.")
    return roster


def seating_builder(presets: dict[str, Any]) -> dict[str, Any] | None:
    """Ten seats, a backend each (a bot preset or an entry of the YAML box); every game seats exactly these."""
    extra = _extra_models()
    if extra is None or (extra and _checked({"name": "app", "models": extra}) is None):  # every entry, seated or not
        return None
    candidates = {**presets, **extra}
    labels = list(candidates)
    seating: list[str] = []
    for row in range(N_SEATS // 5):
        cols = st.columns(5)
        for c, i in zip(cols, range(row * 5, row * 5 + 5)):
            seating.append(c.selectbox(f"Seat {i + 1}", labels, index=i % len(labels), key=f"ms_arena_seat_{i}"))
    roster = _checked({"name": "app", "models": {m: candidates[m] for m in dict.fromkeys(seating)}, "seating": seating})
    if roster is not None:
        counts = ", ".join(f"{m} ×{seating.count(m)}" for m in roster["models"])
        st.caption(f"Every game seats these ten ({md_escape(counts)}). The engine deals the roles from each game's seed and "
                   "shuffles names and speaking order, so a model holds different roles across games; seats play "
                   "under human names and are never told which model sits where.")
    return roster


def launcher(roster: dict[str, Any]) -> None:
    st.markdown("#### 2 · Rules, games, cost")
    c1, c2, c3, c4 = st.columns([3, 1, 1, 1])
    rules = c1.multiselect("Rule sets", list(RULE_CHOICES), default=list(RULE_CHOICES), format_func=RULE_CHOICES.get, key="ms_arena_rules")
    games = int(c2.number_input("Games per rule set", 1, 1000, 10, key="ms_arena_games"))
    parallel = int(c3.number_input("In parallel", 1, 64, 4, key="ms_arena_parallel"))
    seed = int(c4.number_input("Seed", 0, 10**6, 0, key="ms_arena_seed"))
    if not rules:
        st.warning("Pick at least one rule set.")
        return
    est = estimate(parse_roster(roster), rules, games)
    m1, m2, m3, m4 = st.columns(4)
    m1.metric("Games", est["games"])
    m2.metric("Calls (est.)", f"{est['calls']:,}")
    m3.metric("Calls to paid backends", f"{est['paid_calls']:,}")
    m4.metric("Prompt tokens (est.)", f"{est['prompt_tokens']:,}")
    st.caption(est["note"] + ". Bot seats cost nothing." + (" Fixed seating: the paid share is the share of paid seats."
                                                            if est["mode"] == "fixed" else ""))  # fmt: skip
    name = st.text_input("Run name", value=f"run-{seed}-{games}", key="ms_arena_name")
    why = jobs.refusal(arena_jobs.arena_work(rules, games, parallel))  # the quotas (app/jobs.py), said next to the button
    st.button("🚀 Launch arena run", type="primary", key="ms_arena_launch", on_click=_launch, args=(name, roster, rules, games, parallel, seed),
              disabled=bool(why), help=why)
    if why:
        st.caption(md_escape(why))
    flash(LAUNCH_MSG)


LAUNCH_MSG = "arena_launch"


def _launch(name: str, roster: dict[str, Any], rules: list[str], games: int, parallel: int, seed: int) -> None:
    """on_click of Launch (runs before the page: the run's progress and the sidebar see the new job at once)."""
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_-]{0,40}", name or ""):
        flash(LAUNCH_MSG, "Run name: letters, digits, '-' or '_' (at most 41 characters).", "error")
        return
    try:
        job = arena_jobs.launch(name, roster, rules, games, parallel, seed)
    except ValueError as exc:  # a quota, or a name another visitor's run holds (app/jobs.py)
        flash(LAUNCH_MSG, md_escape(str(exc)), "error")
        return
    st.session_state["ms_arena_run"] = job.run_dir
    st.session_state["ms_arena_pick"] = run_label(Path(job.run_dir))  # the Leaderboards tab follows the new run
    flash(LAUNCH_MSG, f"Started arena run {name}: {code(public_command(job.cmd))}")


def progress_text(name: str, prog: dict[str, Any], job: arena_jobs.ArenaJob | None) -> str:
    """One run's progress line: "starting" until its ledger holds the schedule, then finished/scheduled and state."""
    if job is not None and job.running and not prog["scheduled"]:
        return f"{name}: starting (writing the schedule) …"
    state = "" if job is None else " · running" if job.running else " · done" if job.returncode == 0 else f" · stopped (exit code {job.returncode})"
    failed = f" · {prog['failed']} failed" if prog.get("failed") else ""
    return f"{name}: {prog['finished']}/{prog['scheduled']} games finished{failed}{state}"


def _run_rows() -> None:
    for name, job in arena_jobs.jobs().items():
        prog = arena_jobs.progress(job.run_dir)
        st.progress(min(1.0, prog["finished"] / max(1, prog["scheduled"])), text=progress_text(name, prog, job))
        if not job.running and job.returncode not in (0, None):
            st.code(job.tail(6), language="text")


def run_status() -> None:
    """The runs started from this app, redrawn every couple of seconds while one runs (app/polling.py)."""
    if not arena_jobs.jobs().items():
        return
    st.markdown("#### Runs started here")
    live_block(_run_rows, lambda: any(j.running for _, j in arena_jobs.jobs().items()))


def _board_df(rows: list[dict[str, Any]]) -> pd.DataFrame:
    df = pd.DataFrame(rows, columns=["rank", "model", "score", "se", "games", "seats", "wins"])
    if not df.empty:  # the game-level cluster-bootstrap interval (score ± 1.96 SE for reports without one)
        ci = [r.get("ci95") or [None, None] for r in rows]
        df["low"] = [c[0] if c[0] is not None else s - 1.96 * (e or 0) for c, s, e in zip(ci, df["score"], df["se"])]
        df["high"] = [c[1] if c[1] is not None else s + 1.96 * (e or 0) for c, s, e in zip(ci, df["score"], df["se"])]
    return df


def _chart(df: pd.DataFrame, title: str) -> None:
    if df.empty:
        return
    import altair as alt

    from .charts import CI_COLOR

    base = alt.Chart(df).encode(y=alt.Y("model:N", sort=alt.EncodingSortField("score", order="descending"), title=None))
    x_title = "points vs side (dashed: 0 = the side's average)"
    x_axis = alt.Axis(format="+.2f")  # an all-zero column's default labels read "0.000000"
    pts = base.mark_point(filled=True, size=70).encode(x=alt.X("score:Q", title=x_title, axis=x_axis), tooltip=[
        "model", "score", "se", alt.Tooltip("low:Q", format=".3f", title="95% low"), alt.Tooltip("high:Q", format=".3f", title="95% high"),
        alt.Tooltip("games:Q", title="n (games)")])
    # an explicit grey: Vega-Lite's default rule colour is black, which vanished on the dark theme
    bars = base.mark_rule(strokeWidth=2, color=CI_COLOR).encode(x=alt.X("low:Q", title=x_title, axis=x_axis), x2="high:Q")
    zero = alt.Chart(pd.DataFrame({"x": [0]})).mark_rule(strokeDash=[4, 4], color="gray").encode(x=alt.X("x:Q", title=x_title, axis=x_axis))
    # a height per row (Step): a fixed pixel height is shared with the title and axis and squashed the rows
    st.altair_chart((bars + pts + zero).properties(title=title, height=alt.Step(28)), width="stretch")


def results(run_dir: str) -> None:
    path = Path(run_dir)
    rep = _report(str(path), _sig(path))
    if rep is None:
        st.info("No finished ten-seat games in this run yet.")
        return
    se = rep["noise"]["median_se"]
    st.markdown(f"**{plural(rep['games'], 'game')}** · rule sets: {md_escape(', '.join(RULE_CHOICES.get(r, r) for r in rep['rule_sets']))}")
    if rep.get("invalid_left_out"):
        st.caption(invalid_note(int(rep["invalid_left_out"])))
    st.info(f"What the noise is: each score below is a mean over the model's seats, with its standard error (`se`); "
            f"the typical standard error here is ±{se if se is not None else '—'}, so gaps smaller than about "
            f"{2 * se:.2f} are noise." if se else "What the noise is: too few games for standard errors yet.", icon="📏")  # fmt: skip
    st.caption(md_escape(glossary.tip("points vs side")))
    tabs = st.tabs(["Overall", *[md_escape(RULE_CHOICES.get(r, r)) for r in rep["rule_sets"]], "Mafia only", "Town only"], key="board",
                   bind="query-params")
    boards = [rep["leaderboards"]["overall"], *[rep["leaderboards"]["by_rules"][r] for r in rep["rule_sets"]],
              rep["leaderboards"]["mafia"], rep["leaderboards"]["town"]]  # fmt: skip
    for tab, board in zip(tabs, boards):
        with tab:
            problem = T.board_problem(board)
            if problem:
                st.warning(problem, icon=":material/balance:")
                continue
            df = _board_df(board)
            st.dataframe(dashes(df.drop(columns=["low", "high"], errors="ignore")), hide_index=True, width="stretch",
                         column_config={c: st.column_config.Column(help=h) for c, h in T.BOARD_HELP.items()})
            _chart(df, "score ± 1.96 SE")
    if rep["spearman"] and any(s["rho"] is not None for s in rep["spearman"]):
        st.markdown("**Rank correlation between rule sets** (Spearman): " + md_escape(", ".join(
            f"{RULE_CHOICES.get(s['a'], s['a'])} ~ {RULE_CHOICES.get(s['b'], s['b'])}: {s['rho'] if s['rho'] is not None else '—'}"
            for s in rep["spearman"])), help=glossary.tip("Spearman"))  # fmt: skip
    st.markdown("#### Pairs", help=glossary.tip("pairs ranking"))
    for kind, tab in zip(("teammates", "rivals", "mismatches"), st.tabs(["Teammates", "Rivals", "Mismatches"], key="pairs", bind="query-params")):
        with tab:
            st.caption(T.PAIR_NOTES[kind] + " Ranked = total ÷ (games + 4), which shrinks pairs seen in few games toward 0.")
            st.dataframe(T.pairs_table(kind, rep["pairs"][kind]), hide_index=True, width="stretch")
    st.markdown("#### What the rules do")
    measures = T.rule_measures_table(rep["rule_measures"])
    st.dataframe(measures, hide_index=True, width="stretch", height=38 + 35 * len(measures))  # every row, no inner scroll
    st.markdown("#### Models by side and role")
    st.dataframe(T.models_table(rep), hide_index=True, width="stretch")
    st.caption("Games won of the games played on that side or in that role (Mafia, town: the side under those rules; "
               "Don, Sheriff: the role). Hits: a Don's checks that found the Sheriff, a Sheriff's that found Mafia. "
               + T.town_side_note(rep))
    st.markdown("#### Games")
    games = sorted(p.name for p in path.iterdir() if is_game_dir(p))
    pick = st.selectbox("Open a game in Live Game", games, key="ms_arena_game", bind="query-params")
    if pick:
        st.markdown("🎲 " + md_link(f"Open {pick} in Live Game", "./live?" + urlencode({"game": pick})))  # Live Game's URL path


RUN_PARAM = "run"  # the URL parameter naming the picked run by its label (run_label: never a server path)


def render() -> None:
    st.markdown("### 🏟️ Arena")
    st.caption("Ten-seat tournaments across a roster of models under the sport, open-table and imbalanced rules; "
               "scores are computed from the recorded events only (docs/arena.md).")  # fmt: skip
    build, read = st.tabs(["Build & launch", "Leaderboards"], key="tab", bind="query-params")
    with build:
        roster = roster_builder()
        if roster is not None:
            launcher(roster)
        run_status()
    with read:
        paths = {run_label(p): str(p) for p in arena_jobs.known_runs()}
        current = st.session_state.get("ms_arena_run")
        if current and current not in paths.values():
            paths = {run_label(Path(current)): current, **paths}
        runs = list(paths)
        typed = st.text_input("…or a run / logs directory", value="", key="ms_arena_path",
                              help="A directory under the app's log roots (or anywhere, when MAFIASCOPE_ALLOW_FREE_PATHS=1).")
        if typed and not free_paths_allowed() and not within_roots(Path(typed), [*default_roots(), ARENA_DATA_DIR]):
            st.error(md_escape(f"{typed[:120]}: not under a log root this app is configured to read (see docs/app.md, "
                               "Deploying publicly)."))
            typed = ""
        options = ([typed] if typed else []) + runs
        if not options:
            st.info("No arena runs yet: launch one, or run `mafiascope arena run` and type its --logs directory.")
            return
        if not typed:  # ?run=<label> reproduces the pick (app/state.url_choice); a typed directory is not a link
            S.url_choice(RUN_PARAM, options, "ms_arena_pick")
        pick = st.selectbox("Run", options, key="ms_arena_pick")
        S.sync_url(**{RUN_PARAM: pick if pick in paths else None})
        S.report_url_errors()
        run_dir = paths.get(pick, pick) if pick else pick  # a label names a known run; a typed path is itself
        if run_dir and Path(run_dir).is_dir():
            job = next((j for _, j in arena_jobs.jobs().items() if Path(j.run_dir) == Path(run_dir)), None)
            live_block(lambda: run_view(run_dir, job), lambda: job is not None and job.running)
        elif run_dir:
            st.error(md_escape(f"{run_dir}: not a directory"))



def run_view(run_dir: str, job: arena_jobs.ArenaJob | None) -> None:
    """A run's seating, progress and leaderboards (live while its process started here runs)."""
    prog = arena_jobs.progress(run_dir)
    plan = Ledger(run_dir).plan() or {}
    if plan.get("mode") == "fixed":
        st.caption("Fixed seating: " + md_escape(", ".join(f"{i + 1}. {m}" for i, m in enumerate(plan.get("seating") or []))))
    if prog["scheduled"] or (job is not None and job.running):
        st.progress(min(1.0, prog["finished"] / max(1, prog["scheduled"])), text=progress_text(Path(run_dir).name, prog, job))
    results(run_dir)


def run_label(run_dir: Path) -> str:
    """How the run picker (and its URL parameter) names a run (never the server's absolute path)."""
    return public_path(run_dir, [arena_jobs.arena_root()])
