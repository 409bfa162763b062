"""The Studies page: build a study from the line-up editor's models and the bot presets, see its plan
and estimate, launch it in the background, watch progress, spend, faults and invalid games, stop
and resume it, and open its games and its report (docs/studies.md)."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st
import yaml

from mafiascope.config import ConfigError
from mafiascope.study.spec import CLASSIC_RULES, parse_study_spec
from mafiascope.engine.rules import TOURNAMENT_DEFAULTS

from . import lineup, study_jobs
from .paths import public_command

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
            st.error(str(exc))
            bad = True
            continue
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


def plan_view(data: dict[str, Any]) -> bool:
    """Validate the spec and show its plan; True when it can be launched."""
    from mafiascope.study.run import plan_study

    problems = app_problems(data)
    try:
        spec = parse_study_spec(data, "study")
    except ConfigError as exc:
        problems += str(exc).splitlines()[1:] or [str(exc)]
    if problems:
        st.error("The study spec has problems:\n\n" + "\n".join(f"- `{p.strip()}`" for p in problems))
        return False
    try:
        plan = plan_study(spec)
    except ValueError as exc:
        st.error(str(exc))
        return False
    t = plan["estimate"]["total"]
    m = st.columns(5)
    m[0].metric("Games", t["games"])
    m[1].metric("Calls (est.)", f"{t['calls']:,}", help=f"90% interval {t['calls_90']}")
    m[2].metric("Tokens (est.)", f"{t['prompt_tokens'] + t['completion_tokens']:,}")
    m[3].metric("Money (est.)", f"{t['money']:.4f}", help=f"90% interval {t['money_90']}")
    m[4].metric("Duration (est.)", f"{t['duration_s'] / 60:.1f} min", help=f"90% interval {t['duration_s_90']} s")
    rows = [{"arm": k, "games": a["games"], "calls": a["calls"], "prompt tokens": a["prompt_tokens"],
             "completion tokens": a["completion_tokens"], "money": a["money"], "money 90%": str(a["money_90"]),
             "duration s": a["duration_s"], "estimated from": a["source"]} for k, a in plan["estimate"]["arms"].items()]  # fmt: skip
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")
    st.caption(plan["estimate"]["uncertainty"])
    return True


def launch_view(name: str, data: dict[str, Any]) -> None:
    with st.expander("The study spec (YAML)"):
        st.code(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), language="yaml")
    if not plan_view(data):
        return
    if st.button("🚀 Launch study", type="primary", key="ms_study_launch"):
        try:
            d = study_jobs.study_dir(name)
        except ValueError as exc:
            st.error(str(exc))
            return
        if (d / "ledger.jsonl").is_file():
            st.error(f"A study named {name!r} exists already: resume it under Studies, or pick another name.")
            return
        job = study_jobs.save_and_launch(name, data)
        st.session_state["ms_study_pick"] = job.study_dir
        st.success(f"Started: `{public_command(job.cmd[1:])}`")


def _link(gid: str) -> str:
    return f"[{gid}](./live?game={gid})"  # the Live Game page's URL path


def status_view(directory: Path) -> None:
    from mafiascope.study.run import StudyError, load_study
    from mafiascope.study.status import study_report, study_status

    try:
        spec, _ = load_study(directory)
    except StudyError as exc:
        st.error(str(exc))
        return
    name = directory.name
    job = study_jobs.jobs().get(name)
    if not (directory / "ledger.jsonl").is_file():
        st.info("Not started yet." + (" It is starting…" if job is not None and job.running else ""))
        if job is not None:
            st.code(job.tail(6) or "(no output yet)", language="text")
        return
    s = study_status(spec, directory)
    c = s["counts"]
    done = c["finished"] + c["invalid"]
    st.progress(min(1.0, done / max(1, s["scheduled"])), text=f"{done}/{s['scheduled']} games settled")
    m = st.columns(6)
    m[0].metric("Finished", c["finished"])
    m[1].metric("Pending", c["pending"])
    m[2].metric("Running", c["running"], delta=f"{len(s['stale_running'])} held by a dead runner" if s["stale_running"] else None,
                delta_color="off")  # fmt: skip
    m[3].metric("Failed", c["failed"])
    m[4].metric("Invalid", c["invalid"])
    m[5].metric("Spend", f"{s['spend']['money']:.4f}", help=f"{s['spend']['calls']:,} calls; faults {s['faults']}")
    live = study_jobs.running(name)
    b1, b2, b3 = st.columns(3)
    if live is not None:
        if b1.button("⏹ Stop", key="ms_study_stop"):
            live.stop(grace=5.0)
            st.success("Stopped; the game in flight is replayed when you resume.")
    elif c["pending"] + c["failed"] + c["running"] > 0:
        if b1.button("▶ Resume", key="ms_study_resume", type="primary"):
            study_jobs.start(name)
            st.success("Resumed.")
    b2.button("↻ Refresh", key="ms_study_refresh")
    if live is None:
        with b3.popover("➕ Grow"):
            more = int(st.number_input("Games per arm", spec.games_per_arm, 10000, spec.games_per_arm, key="ms_study_grow_n",
                                       help="the games played are kept; the new ones are scheduled after them"))  # fmt: skip
            if st.button("Grow and run", key="ms_study_grow", disabled=more <= spec.games_per_arm):
                try:
                    study_jobs.grow(name, more)
                    st.success(f"Growing to {more} games per arm.")
                except ValueError as exc:
                    st.error(str(exc))
    if s["last_stop"]:
        st.warning(f"Last stop: {s['last_stop']}")
    if s["stale_running"]:
        st.warning(f"Held by a runner that died (replayed from scratch on resume): {', '.join(s['stale_running'])}")
    if job is not None:
        with st.expander("Runner output"):
            st.code(job.tail(8) or "(no output yet)", language="text")
    vs = s["estimate_vs_actual"]
    if vs:
        st.markdown(f"**Estimate vs actual** over {vs['games']} settled games")
        st.dataframe(pd.DataFrame([{"measure": k, "planned": vs["planned"][k], "actual": vs["actual"][k],
                                    "error": vs["error"][k]} for k in vs["planned"]]), hide_index=True, width="stretch")  # fmt: skip
    for label, rows in (("Invalid games (excluded from the report)", s["invalid"]), ("Failed games", s["failed"])):
        if rows:
            st.markdown(f"**{label}**")
            st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")
    rep = study_report(spec, directory)
    st.markdown("#### Report (finished games)")
    st.dataframe(pd.DataFrame([{k: v for k, v in {"arm": arm, **a}.items() if k not in ("game_ids", "lineup")}
                               for arm, a in rep["arms"].items()]), hide_index=True, width="stretch")  # fmt: skip
    games = [g for a in rep["arms"].values() for g in a["game_ids"]]
    if games:
        pick = st.selectbox("Open a game in Live Game", games, key="ms_study_game")
        st.markdown(f"🎲 {_link(pick)}")
    st.caption(f"Games: `{rep['games_dir']}` · `mafiascope study report {directory}` · provenance: "
               f"mafiascope {s['provenance'].get('mafiascope_version')}, commit {s['provenance']['git_commit'] or '—'}, spec {s['spec_hash'][:12]}")  # fmt: skip


def render() -> None:
    st.markdown("### 🧪 Studies")
    st.caption("Plan a study (arms x games x seeds), see its cost before it runs, run it in the background under a budget, "
               "and resume it where it stopped (docs/studies.md).")  # fmt: skip
    build, watch = st.tabs(["Plan & launch", "Studies"])
    with build:
        built = builder()
        if built is not None:
            launch_view(*built)
    with watch:
        known = [str(p) for p in study_jobs.known_studies()]
        if not known:
            st.info("No studies yet: launch one, or run `mafiascope study run SPEC --dir <runs>/studies/NAME`.")
            return
        pick = st.selectbox("Study", known, key="ms_study_pick", format_func=lambda p: Path(p).name)
        if pick:
            status_view(Path(pick))
