"""The Studies page: build a study from the line-up editor's models and the bot presets, see its plan
and estimate, launch it in the background, watch progress, spend, faults and invalid games, stop
and resume it, and open its games and its report (docs/studies.md)."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pandas as pd
import streamlit as st
import yaml

from mafiascope.config import ConfigError
from mafiascope.study.spec import CLASSIC_RULES, parse_study_spec
from mafiascope.engine.rules import TOURNAMENT_DEFAULTS

from mafiascope.lexicon import glossary

from . import jobs, keys, lineup, study_jobs
from . import state as S
from .paths import public_command, public_path
from .polling import flash, live_block
from .text import code, md_escape, md_link, plural
from .widgets import dashes

RULES = [*CLASSIC_RULES, *TOURNAMENT_DEFAULTS]
BATTERIES = ("chained", "default", "suspicion", "none")
LANGUAGES = ("en", "ru")
MODES = {"roster": "One arm per rule set: all backends as a balanced roster",
         "each": "One arm per backend: it takes every seat"}  # fmt: skip


def build_spec(name: str, backends: dict[str, dict[str, Any]], rules: list[str], languages: list[str], probes: str,
               mode: str, games: int, seed: int, money: float, parallel: int) -> dict[str, Any]:  # fmt: skip
    """The spec (as data) the form describes: an arm per rule set x language (x backend in ``each`` mode)."""
    arms = []
    for rs, lang in itertools.product(rules, languages):
        if mode == "each":
            arms += [{"name": f"{rs}-{lang}-{b}"[:40], "lineup": b, "rules": rs, "probes": probes, "language": lang} for b in backends]
        else:
            arms.append({"name": f"{rs}-{lang}", "lineup": {"roster": list(backends)}, "rules": rs, "probes": probes, "language": lang})
    spec: dict[str, Any] = {"name": name, "seed": seed, "games_per_arm": games, "backends": backends, "arms": arms,
                            "executor": {"kind": "local", "parallel": parallel}}  # fmt: skip
    if money > 0:
        spec["budget"] = {"money": money}
    return spec


def app_problems(data: Any) -> list[str]:
    """What the app refuses beyond the spec's own checks: files named in a spec (rules or battery paths)
    would be read from the server, so the page takes only the shipped names."""
    out = []
    for i, arm in enumerate((data or {}).get("arms") or [] if isinstance(data, dict) else []):
        if isinstance(arm, dict):
            if str(arm.get("rules", "classic")) not in RULES:
                out.append(f"arms.{i}.rules: the app takes {', '.join(RULES)}")
            if str(arm.get("probes", "chained")) not in BATTERIES:
                out.append(f"arms.{i}.probes: the app takes {', '.join(BATTERIES)}")
    return out


def _models() -> dict[str, dict[str, Any]] | None:
    """Hosted models, as in the launch form's line-up editor (provider, model, key variable), plus prices."""
    n = int(st.number_input("Hosted models (OpenAI-compatible)", 0, 4, 0, key="ms_study_nmodels"))
    out: dict[str, dict[str, Any]] = {}
    bad = False
    for i in range(n):
        c = st.columns([1.2, 1.6, 1.2, 1, 1, 1])
        prov = c[0].selectbox("Provider", list(lineup.PROVIDERS), key=f"ms_study_m{i}_prov")
        base, var, model = lineup.PROVIDERS[prov]
        mname = c[1].text_input("Model", value=model, key=f"ms_study_m{i}_model")
        kvar = c[2].text_input("Key variable", value=var, key=f"ms_study_m{i}_key", help="the NAME of the environment variable holding the key")
        pp = c[3].number_input("$ / M prompt", 0.0, 1000.0, 0.15, key=f"ms_study_m{i}_pp")
        pc = c[4].number_input("$ / M completion", 0.0, 1000.0, 0.60, key=f"ms_study_m{i}_pc")
        rpm = c[5].number_input("rpm (0 = none)", 0, 100000, 0, key=f"ms_study_m{i}_rpm")
        m = lineup.ModelDef(uid=str(i), name=f"model-{i + 1}", model=mname, base_url=base, key_var=kvar)
        try:
            entry = m.spec()
        except ValueError as exc:
            st.error(md_escape(str(exc)))
            bad = True
            continue
        refused = keys.operator_policy().problem(kvar.strip(), base) if kvar.strip() else None
        if refused:  # only a key the operator allows for this base URL (its name, never its value); the plan still shows
            st.warning(md_escape(f"model-{i + 1}: Key variable: {refused}; the study would stop at its preflight."))
        out[f"model-{i + 1}"] = {**entry, **({"rpm": rpm} if rpm else {}), "price": {"prompt_per_mtok": pp, "completion_per_mtok": pc}}
    return None if bad else out


def builder() -> tuple[str, dict[str, Any]] | None:
    st.markdown("#### 1 · Backends")
    bots = st.multiselect("Bot presets (offline, free)", list(lineup.BOT_PRESETS), default=list(lineup.BOT_PRESETS), key="ms_study_bots")
    models = _models()
    if models is None:
        return None
    backends = {**{f"bot-{b}": {"type": "bot", "preset": b} for b in bots}, **models}
    if not backends:
        st.warning("Pick at least one bot preset or add a model.")
        return None
    st.markdown("#### 2 · Arms, games, budget")
    c1, c2, c3 = st.columns([3, 1, 1])
    rules = c1.multiselect("Rule sets", RULES, default=["classic"], key="ms_study_rules")
    langs = c2.multiselect("Languages", list(LANGUAGES), default=["en"], key="ms_study_langs")
    probes = c3.selectbox("Probe battery", BATTERIES, key="ms_study_probes")
    mode = st.radio("Line-up", list(MODES), format_func=MODES.get, key="ms_study_mode", horizontal=True)
    c = st.columns(5)
    games = int(c[0].number_input("Games per arm", 1, 10000, 4, key="ms_study_games"))
    seed = int(c[1].number_input("Seed", 0, 10**6, 0, key="ms_study_seed"))
    money = float(c[2].number_input("Budget $ (0 = none)", 0.0, 100000.0, 0.0, key="ms_study_money"))
    parallel = int(c[3].number_input("In parallel", 1, 64, 4, key="ms_study_parallel"))
    name = c[4].text_input("Study name", value="app-study", key="ms_study_name")
    if not rules or not langs:
        st.warning("Pick at least one rule set and one language.")
        return None
    return name, build_spec(name, backends, rules, langs, probes, mode, games, seed, money, parallel)


def _interval(v: Any, fmt: str = "{:,}") -> str:
    """A 90% interval ``[lo, hi]`` as "lo–hi" text ("—" when missing)."""
    if isinstance(v, (list, tuple)) and len(v) == 2 and None not in v:
        return f"{fmt.format(v[0])}–{fmt.format(v[1])}"
    return "—"


def _source(src: str) -> str:
    """Where an arm's estimate comes from, in words (``bundled:classic|en`` -> "bundled profile: classic, en")."""
    kind, _, what = str(src or "").partition(":")
    return f"{kind} profile: {what.replace('|', ', ')}" if what else (src or "—")


def plan_view(data: dict[str, Any]) -> bool:
    """Validate the spec and show its plan; True when it can be launched."""
    from mafiascope.study.run import plan_study

    problems = app_problems(data)
    try:
        spec = parse_study_spec(data, "study")
    except ConfigError as exc:
        problems += str(exc).splitlines()[1:] or [str(exc)]
    if problems:
        st.error("The study spec has problems:\n\n" + "\n".join(f"- {md_escape(p.strip())}" for p in problems))
        return False
    try:
        plan = plan_study(spec)
    except ValueError as exc:
        st.error(md_escape(str(exc)))
        return False
    t = plan["estimate"]["total"]
    m = st.columns(5)
    m[0].metric("Games", t["games"])
    m[1].metric("Calls (est.)", f"{t['calls']:,}", help=f"90% interval {_interval(t['calls_90'])} calls")
    m[2].metric("Tokens (est.)", f"{t['prompt_tokens'] + t['completion_tokens']:,}")
    m[3].metric("Money (est.)", f"{t['money']:.4f}", help=f"90% interval {_interval(t['money_90'], '{:.4f}')}")
    m[4].metric("Duration (est.)", f"{t['duration_s'] / 60:.1f} min", help=f"90% interval {_interval(t['duration_s_90'])} s")
    rows = [{"arm": k, "games": a["games"], "calls": a["calls"], "prompt tokens": a["prompt_tokens"],
             "completion tokens": a["completion_tokens"], "money": a["money"], "money, 90% interval": _interval(a["money_90"], "{:.4f}"),
             "duration (s)": a["duration_s"], "estimated from": _source(a["source"])} for k, a in plan["estimate"]["arms"].items()]  # fmt: skip
    st.dataframe(dashes(pd.DataFrame(rows)), hide_index=True, width="stretch")
    st.caption(plan["estimate"]["uncertainty"])
    return True


LAUNCH_MSG = "study_launch"


def _launch(name: str, data: dict[str, Any]) -> None:
    """on_click of Launch study (runs before the page, so the sidebar and the Studies tab see the new job)."""
    try:
        d = study_jobs.study_dir(name)
    except ValueError as exc:
        flash(LAUNCH_MSG, md_escape(str(exc)), "error")
        return
    if (d / "ledger.jsonl").is_file():
        flash(LAUNCH_MSG, f"A study named {name!r} exists already: resume it under Studies, or pick another name.", "error")
        return
    try:
        job = study_jobs.save_and_launch(name, data)
    except ValueError as exc:  # a quota (app/jobs.py)
        flash(LAUNCH_MSG, md_escape(str(exc)), "error")
        return
    st.session_state[PICK_KEY] = name
    st.session_state[TAB] = TABS[1]  # follow the new study
    flash(LAUNCH_MSG, f"Started study {name}: `{public_command(job.cmd)}`")


def launch_view(name: str, data: dict[str, Any]) -> None:
    with st.expander("The study spec (YAML)"):
        st.code(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), language="yaml")
    if not plan_view(data):
        return
    why = jobs.refusal(study_jobs.study_work(data))  # the quotas (app/jobs.py), said next to the button
    st.button("🚀 Launch study", type="primary", key="ms_study_launch", on_click=_launch, args=(name, data), disabled=bool(why),
              help=why)
    if why:
        st.caption(md_escape(why))


def _link(gid: str) -> str:
    return md_link(f"Open {gid} in Live Game", "./live?" + urlencode({"game": gid}))  # the Live Game page's URL path


def eta_seconds(status: dict[str, Any]) -> float | None:
    """Seconds until every scheduled game is settled at the pace so far (busy wall time per settled game), or None
    before the first game settles."""
    vs = status.get("estimate_vs_actual") or {}
    settled, busy = int(vs.get("games") or 0), float((vs.get("actual") or {}).get("duration_s") or 0)
    c = status["counts"]
    left = c["pending"] + c["running"]
    if not settled or not busy:
        return None
    return busy / settled * left


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.0f} min" if seconds < 5400 else f"{seconds / 3600:.1f} h"


def study_state(status: dict[str, Any], job_running: bool) -> str:
    """``running`` (a runner works on it), ``stopped`` (games left and nobody runs them) or ``done``."""
    c = status["counts"]
    if job_running or status["runners_alive"]:
        return "running"
    return "stopped" if c["pending"] + c["failed"] + c["running"] + c["cut"] > 0 else "done"


def _stop(name: str) -> None:
    live = study_jobs.running(name)
    if live is not None:
        live.stop(grace=5.0)
        flash(f"study_{name}", "Stopped; the game in flight is replayed when you resume.")


def _resume(name: str) -> None:
    try:
        study_jobs.start(name)
    except ValueError as exc:  # a quota (app/jobs.py)
        flash(f"study_{name}", md_escape(str(exc)), "error")
        return
    flash(f"study_{name}", "Resumed.")


def _grow(name: str) -> None:
    more = int(st.session_state.get("ms_study_grow_n") or 0)
    try:
        study_jobs.grow(name, more)
        flash(f"study_{name}", f"Growing to {more} games per arm.")
    except ValueError as exc:
        flash(f"study_{name}", md_escape(str(exc)), "error")


def _controls(name: str, state: str, spec: Any) -> None:
    """Stop while it runs; Resume once stopped; Done when every game is settled; Grow when no runner runs it."""
    row = st.container(horizontal=True, gap="small")
    with row:
        _state_button(name, state)
        if state != "running" and (study_jobs.studies_root() / name / study_jobs.SPEC_FILE).is_file():
            with st.popover("➕ Grow"):
                more = int(st.number_input("Games per arm", spec.games_per_arm, 10000, spec.games_per_arm, key="ms_study_grow_n",
                                           help="the games played are kept; the new ones are scheduled after them"))  # fmt: skip
                st.button("Grow and run", key="ms_study_grow", disabled=more <= spec.games_per_arm, on_click=_grow, args=(name,))
    flash(f"study_{name}")


def _resume_refusal(name: str) -> str | None:
    """Why Resume is disabled (the quotas), or None."""
    try:
        work = study_jobs.study_work(study_jobs.spec_of(study_jobs.study_dir(name)))
    except ValueError:  # a spec that no longer loads: the runner says so when it starts
        return None
    return jobs.refusal(work)


def _state_button(name: str, state: str) -> None:
    if state == "running":
        st.button("⏹ Stop", key="ms_study_stop", on_click=_stop, args=(name,),
                  disabled=study_jobs.running(name) is None,
                  help="Terminate the study's runner; the game in flight is replayed on resume."
                  if study_jobs.running(name) is not None else "This study's runner was started outside this app.")
    elif state == "stopped":
        why = _resume_refusal(name)
        st.button("▶ Resume", key="ms_study_resume", type="primary", on_click=_resume, args=(name,), disabled=bool(why),
                  help=why or "Start the runner again: it continues from the ledger (pending, failed and interrupted games).")
        if why:
            st.caption(md_escape(why))
    else:
        st.button("✓ Done", key="ms_study_done", disabled=True, help="Every scheduled game is settled.")


def _progress(spec: Any, directory: Path) -> None:
    """Progress, counts, spend, faults, ETA and the controls: redrawn every couple of seconds while the study runs."""
    from mafiascope.study.status import study_status

    name = directory.name
    job = study_jobs.jobs().get(name)
    running = job is not None and job.running
    if not (directory / "ledger.jsonl").is_file():
        if running:
            st.info("Starting: the runner is writing the schedule …", icon=":material/hourglass_top:")
        elif job is not None:
            st.error(f"The study's runner exited (code {job.returncode}) before it wrote its schedule.")
        else:
            st.info("Not started: no ledger yet.")
            _controls(name, "stopped", spec)
        if job is not None:
            st.code(job.tail(6) or "(no output yet)", language="text")
        return
    s = study_status(spec, directory)
    c = s["counts"]
    state = study_state(s, running)
    stale = len(s["stale_running"])
    settled = c["finished"] + c["invalid"]
    eta = eta_seconds(s) if state == "running" else None
    text = f"{settled}/{s['scheduled']} games settled · " + {"running": "running", "stopped": "stopped", "done": "done"}[state]
    if eta is not None:
        text += f" · about {_duration(eta)} left"
    st.progress(min(1.0, settled / max(1, s["scheduled"])), text=text)
    m = st.columns(8)
    m[0].metric("Finished", c["finished"])
    m[1].metric("Pending", c["pending"] + stale, help=f"includes {stale} interrupted when the runner stopped (replayed on resume)"
                if stale else "scheduled, not started yet")
    m[2].metric("Running", c["running"] - stale, help="games a live runner is playing now")
    m[3].metric("Failed", c["failed"], help="games that raised an error; they are retried on resume")
    m[4].metric("Invalid", c["invalid"], help=glossary.tip("invalid game"))
    m[5].metric("Cut", c["cut"], help="stopped by the budget's hard cap: counted, left out of the report, replayed by a resume with more budget")
    m[6].metric("Spend", f"{s['spend']['money']:.4f}", help=f"{s['spend']['calls']:,} calls so far, every attempt counted")
    m[7].metric("Faults", f"{s['faults']:,}", help="moves that fell back because a backend failed (settled games)")
    _controls(name, state, spec)
    if s["last_stop"]:
        st.warning("Last stop: " + md_escape(s["last_stop"]))  # ledger text: shown as text, never as Markdown
    if s["stale_running"]:
        st.warning("Held by a runner that died (replayed from scratch on resume): " + md_escape(", ".join(s["stale_running"])))
    for problem in s.get("ledger_problems", [])[:5]:
        st.warning(md_escape(problem.replace(str(directory), public_path(directory))))
    if job is not None:
        with st.expander("Runner output"):
            st.code(job.tail(8) or "(no output yet)", language="text")
    vs = s["estimate_vs_actual"]
    if vs:
        st.markdown(f"**Estimate vs actual** over {plural(vs['games'], 'settled game')}")
        st.dataframe(dashes(pd.DataFrame([{"measure": MEASURES.get(k, k), "planned": _num(vs["planned"][k]), "actual": _num(vs["actual"][k]),
                                           "error": f"{vs['error'][k]:+.0%}" if vs["error"][k] is not None else None}
                                          for k in vs["planned"]])), hide_index=True, width="stretch")  # fmt: skip
        st.caption("error = actual ÷ planned − 1 (— when nothing was planned, e.g. money for free bots)")
    pr = s["probes"]
    if pr["total"]["scheduled"]:
        st.markdown("**Probe calls** per arm and model")
        st.dataframe(dashes(pd.DataFrame([
            {"arm": arm, "model": b, "scheduled": c["scheduled"], "answered": c["answered"], "failed": c["failed"],
             "skipped": c["skipped"], "answered share": f"{c['answered_share']:.1%}" if c["answered_share"] is not None else None,
             "mean delay (s)": c["mean_delay_s"]}
            for arm, per in pr["by_arm_backend"].items() for b, c in per.items() if c["scheduled"]])), hide_index=True, width="stretch")
        st.caption("A probe answered late is still a measurement (its context is the step's); failed and skipped calls are lost, "
                   "and a game that lost more than its probe-loss budget is invalid.")  # fmt: skip
    for label, rows in (("Invalid games (excluded from the report)", s["invalid"]), ("Failed games", s["failed"])):
        if rows:
            st.markdown(f"**{label}**")
            st.dataframe(dashes(pd.DataFrame(rows).rename(columns={"game_id": "game"})), hide_index=True, width="stretch")
    _report(spec, directory, s)


def _num(v: Any) -> str:
    """A count with thousands separators, money and seconds with at most 4 decimals."""
    if v is None:
        return "—"
    return f"{v:,.0f}" if float(v).is_integer() or abs(v) >= 1000 else f"{v:,.4f}".rstrip("0").rstrip(".")


MEASURES = {"calls": "calls", "prompt_tokens": "prompt tokens", "completion_tokens": "completion tokens", "money": "money",
            "duration_s": "duration (s)"}


def report_table(rep: dict[str, Any]) -> pd.DataFrame:
    """The per-arm report as the page shows it: a few columns of words (fifteen ran past the page's edge), intervals
    as text, "—" for no data."""
    rows = []
    for arm, a in rep["arms"].items():
        rate, ci = a.get("mafia_win_rate"), a.get("mafia_win_ci95")
        left_out = ", ".join(f"{a[k]} {k}" for k in ("invalid", "cut", "failed") if a.get(k))
        rows.append({"arm": arm, "set-up": f"{a['rules']} · {a['language']} · {a['probes']}",
                     "games": f"{a['finished']}/{a['scheduled']} finished" + (f" ({left_out})" if left_out else ""),
                     "Mafia wins [95% CI]": None if rate is None else f"{a['mafia_wins']}/{a['finished']} = {rate:.0%}"
                     + (f" [{_interval(ci, '{:.0%}')}]" if ci else ""),
                     "mean rounds": a.get("mean_rounds"), "faults": a["faults"], "money": a["money"]})  # fmt: skip
    return dashes(pd.DataFrame(rows), 2)


def _report(spec: Any, directory: Path, s: dict[str, Any]) -> None:
    from mafiascope.study.status import study_report

    rep = study_report(spec, directory)
    st.markdown("#### Report (finished games)")
    st.dataframe(report_table(rep), hide_index=True, width="stretch",
                 column_config={"Mafia wins [95% CI]": st.column_config.TextColumn(help=glossary.tip("Wilson")),
                                "games": st.column_config.TextColumn(help="Finished games of those scheduled; invalid, "
                                                                     "cut and failed games are left out of the report.")})
    if st.toggle("Per model, per arm", key="ms_study_models", help="each arm's figures split by the model of each seat, "
                 "with 95% intervals (game-level bootstrap); computed from the finished games when asked"):  # fmt: skip
        from mafiascope.analytics.metric import FRAGILE_NOTE
        from mafiascope.analytics.metrics import better
        from mafiascope.study.status import headline

        st.dataframe(dashes(models_table(rep, directory)), hide_index=True, width="stretch")
        st.caption(md_escape("Better: " + "; ".join(f"{label} {better(k)}" for k, label, _ in headline())
                             + f". {FRAGILE_NOTE}."))
    games = [g for a in rep["arms"].values() for g in a["game_ids"]]
    if games:
        pick = st.selectbox("Open a game in Live Game", games, key="ms_study_game")
        st.markdown(f"🎲 {_link(pick)}")
    st.caption(f"Games: {code(public_path(Path(rep['games_dir'])))} · {code('mafiascope study report ' + public_path(directory))} · "
               f"provenance: mafiascope {s['provenance'].get('mafiascope_version')}, commit {s['provenance']['git_commit'] or '—'}, "
               f"spec {s['spec_hash'][:12]}")  # fmt: skip


@st.cache_data(show_spinner="Computing per-model figures …", max_entries=16)
def _arm_models(games_dir: str, game_ids: tuple[str, ...]) -> dict[str, Any]:
    from mafiascope.study.status import arm_models

    return arm_models(games_dir, list(game_ids))


def models_table(rep: dict[str, Any], directory: Path) -> pd.DataFrame:
    """One row per (arm, model): seats, games and the report's per-model figures (point [95% interval])."""
    from mafiascope.study.status import figure, headline

    rows = []
    for arm, a in rep["arms"].items():
        for model, m in _arm_models(str(directory / "games"), tuple(a["game_ids"])).items():
            rows.append({"arm": arm, "model": model, "seats": m["seats"], "games": m["games"],
                         **{label: figure(m["metrics"][k], fmt) if m["metrics"].get(k, {}).get("point") is not None else None
                            for k, label, fmt in headline()}})  # fmt: skip
    return pd.DataFrame(rows)


def status_view(directory: Path) -> None:
    """A study's status; live (app/polling.py) while its runner started here runs."""
    from mafiascope.study.run import StudyError, load_study

    try:
        spec, _ = load_study(directory)
    except StudyError as exc:
        st.error(md_escape(str(exc)))
        return
    name = directory.name
    live_block(lambda: _progress(spec, directory), lambda: study_jobs.running(name) is not None)


TAB, PICK = "tab", "study"  # URL parameters (?tab=Studies&study=NAME)
PICK_KEY = "ms_study_pick"
TABS = ["Plan & launch", "Studies"]


def render() -> None:
    st.markdown("### 🧪 Studies")
    st.caption("Plan a study (arms x games x seeds), see its cost before it runs, run it in the background under a budget, "
               "and resume it where it stopped (docs/studies.md).")  # fmt: skip
    flash(LAUNCH_MSG)
    build, watch = st.tabs(TABS, key=TAB, bind="query-params")
    if build.open is not False:
        with build:
            built = builder()
            if built is not None:
                launch_view(*built)
    if watch.open is not False:
        with watch:
            known = [p.name for p in study_jobs.known_studies()]
            if not known:
                st.info("No studies yet: launch one, or run `mafiascope study run SPEC --dir <runs>/studies/NAME`.")
                return
            S.url_choice(PICK, known, PICK_KEY)
            pick = st.selectbox("Study", known, key=PICK_KEY)
            S.sync_url(**{PICK: pick})
            S.report_url_errors()
            if pick:
                status_view(study_jobs.study_dir(pick))
