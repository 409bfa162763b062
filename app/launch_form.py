"""The Live Game page's launch form: config, seed, seat, probes, line-up; the launch itself and the
list of games launched from this app."""

from __future__ import annotations

import time
from pathlib import Path

import pandas as pd
import streamlit as st

from mafiascope.logs import GAME_FILE

from . import jobs, keys, launcher, lineup, probe_editor
from . import state as S
from .lineup_form import SEAT, human_choice, key_checks, lineup_editor, lineup_state, pasted_key
from .paths import public_path, runs_dir
from .text import md_escape

WATCH = "— watch only —"
# the form's non-secret fields are bound to the URL under these names (?mode=launch&config=sport&seed=3&games=5 ...),
# so a link opens the form filled in; the line-up's models and keys are not
CFG, SEED, GAMES, PROBES, SNAPS, CUSTOM, LINEUP = "config", "seed", "games", "probes", "snapshots", "custom_probes", "lineup"


def launch_form() -> None:
    cfgs = launcher.configs()
    st.markdown("#### Launch a game")
    if not cfgs:
        st.warning("No game configs found in configs/*.yaml.")
        return
    c1, c2, c3 = st.columns([2, 1, 2])
    names = list(cfgs)
    cfg_name = c1.selectbox("Game config", names, index=names.index("classic") if "classic" in names else 0, key=CFG, bind="query-params",
                            help="configs/*.yaml. The shipped configs seat offline bots (no API key, deterministic per seed).")
    c2.number_input("Seed", 0, 2**31 - 1, int(st.session_state.get("lf_seed_default", 1)), key=SEED, bind="query-params",
                    help="Same config + same seed = same game with offline bots.")
    st.caption(md_escape(launcher.describe_config(cfgs[cfg_name])))
    # the game names and orders its seats by the seed: the picker shows them as the game will
    table = launcher.table_seats(cfgs[cfg_name], int(st.session_state.get(SEED, 1)))
    shown = {lab: f"{name} (seat {i + 1} at the table)" for i, (lab, name) in enumerate(table)}
    c3.selectbox("Take a seat yourself", [WATCH] + [lab for lab, _ in table], key=SEAT, bind="query-params", format_func=lambda v: shown.get(v, v),
                 help="Play one seat from this page: speak, vote and act at night. Human seats are not probed.")
    c2.number_input("Games", 1, 100, 1, key=GAMES, bind="query-params",
                    help="More than one: a batch with seeds seed, seed+1, ... played 4 at a time in one background process.")
    o1, o2, o3 = st.columns(3)
    probes_on = o1.toggle("Probe agents after every message", True, key=PROBES, bind="query-params")
    o2.toggle("Write snapshots (for Replay)", True, key=SNAPS, bind="query-params")
    custom = o3.toggle("Custom probe battery", False, key=CUSTOM, bind="query-params", disabled=not probes_on,
                       help="Edit the probes below; otherwise the config's battery is used.")
    valid = True
    if probes_on and custom:
        with st.expander("Probe battery", expanded=True):
            _, valid = probe_editor.editor()
    lineup_ok = True
    if st.toggle("Line-up: choose each seat's backend", False, key=LINEUP, bind="query-params",
                 help="Put a bot preset or an OpenAI-compatible model (OpenAI, DeepSeek, OpenRouter, vLLM, Ollama ...) "
                      "in any seat; the others keep the config's entry."):
        with st.expander("Line-up", expanded=True):
            lineup_ok = lineup_editor(cfg_name, cfgs[cfg_name])
    st.caption(f"Games are written to {md_escape(public_path(runs_dir()))} (set $MAFIASCOPE_RUNS to change).")
    why = "Fix the probe errors above first." if not valid else "Fix the line-up errors above first." if not lineup_ok else None
    why = why or jobs.refusal(launcher.launch_work(int(st.session_state.get(GAMES, 1))))  # the quotas (app/jobs.py)
    st.button("Launch game", icon=":material/rocket_launch:", type="primary", key="lf_go", disabled=bool(why),
              on_click=_do_launch, help=why or "Starts `mafiascope run` in the background.")
    if why:
        st.caption(md_escape(why))
    if st.session_state.get("lf_error"):
        st.error(md_escape(st.session_state.pop("lf_error")))
    running_list()




def _do_launch() -> None:
    """on_click of the launch button (runs before the script, so it may update the sidebar's widgets)."""
    ss = st.session_state
    cfgs = launcher.configs()
    cfg = cfgs.get(ss.get(CFG))
    if cfg is None:
        ss["lf_error"] = "Pick a game config."
        return
    logs = runs_dir()
    probes_on = bool(ss.get(PROBES, True))
    gid = launcher.new_game_id()
    probes_file = None
    if probes_on and ss.get(CUSTOM) and probe_editor.KEY in ss:
        probes_file = logs / ".launch" / f"{gid}.probes.yaml"
        probes_file.parent.mkdir(parents=True, exist_ok=True)
        probes_file.write_text(probe_editor.to_yaml(ss[probe_editor.KEY]), encoding="utf-8")
    derived = None
    if ss.get(LINEUP):
        data, models, choices, skip = lineup_state(str(ss.get(CFG)), cfg)
        avail, policy = key_checks(models)
        block = lineup.blocking(lineup.problems(data, choices, models, skip=skip, available=avail, policy=policy))
        if block:
            ss["lf_error"] = "Fix the line-up first: " + "; ".join(p.text for p in block)
            return
        if any(c != lineup.CONFIG for i, c in choices.items() if i != skip):
            derived = lineup.derive(data, choices, models, skip=skip)
            used = {c for i, c in choices.items() if i != skip}
            for m in models:  # the pasted keys of the models in use go to the game's environment, nowhere else
                if m.choice in used and m.key_var.startswith(lineup.SESSION_PREFIX):
                    keys.set_session_key(m.uid, pasted_key(m.uid), m.base_url)
    try:
        item = launcher.launch(cfg, seed=int(ss.get(SEED, 1)), probes=probes_on, snapshots=bool(ss.get(SNAPS, True)),
                               probes_file=probes_file, logs=logs, game_id=gid, human_seat=human_choice(),
                               games=int(ss.get(GAMES, 1)), lineup=derived)
    except Exception as exc:
        ss["lf_error"] = f"Could not start the game: {exc}"
        return
    # wait (briefly) for the setup record so the game is in the index on the next run
    deadline = time.time() + 8
    gfile = Path(item.logs) / item.game_id / GAME_FILE

    def _has_setup() -> bool:
        try:
            with open(gfile, "rb") as fh:
                return b"\n" in fh.read(1 << 16)
        except OSError:
            return False

    while time.time() < deadline and not _has_setup():
        if not item.running:
            break
        time.sleep(0.1)
    if not item.running and item.returncode not in (0, None):
        ss["lf_error"] = f"The game process exited with code {item.returncode}:\n{item.tail(20)}"
        return
    _ensure_runs_root(logs)
    from .data import clear_index

    clear_index()
    S.put(S.K_GAME, item.game_id)
    S.put("ms_follow", True)
    S.put("ms_follow_game", item.game_id)
    S.put(S.K_STEP, 10**9)
    S.set_mode(("inspect", "launch"), "inspect")
    ss["lg_mode"] = "inspect"
    ss["lf_seed_default"] = int(ss.get(SEED, 1)) + 1


def _ensure_runs_root(logs: Path) -> None:
    roots = st.session_state.get("sb_roots")
    if roots is None:
        return  # the default roots already include the runs directory
    lab = public_path(logs)
    if isinstance(roots, list):  # the operator's roots (a pick list): the runs directory is one of them
        if lab not in roots:
            st.session_state["sb_roots"] = [*roots, lab]
        return
    lines = roots.splitlines()
    if lab not in lines and str(logs) not in lines:
        st.session_state["sb_roots"] = (roots + "\n" + lab).strip()


def running_list() -> None:
    items = launcher.registry().all()
    if not items:
        return
    st.markdown("#### Launched in this app")
    rows = [{"game": i.prefix + "-*" if i.prefix else i.game_id, "status": "running" if i.running else f"exited ({i.returncode})",
             "finished": f"{i.finished()}/{i.games}", "human seat": i.human_seat or "",
             "started": time.strftime("%H:%M:%S", time.localtime(i.started))} for i in items]
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")
    for i in items:
        if i.running:
            c1, c2 = st.columns([3, 1])
            c1.caption(f"{md_escape(i.game_id)} is running" + (f" (you play {md_escape(i.human_seat)})" if i.human_seat else ""))
            c2.button("Stop", key=f"stop_{i.game_id}", icon=":material/stop_circle:", on_click=i.stop,
                      help="Terminate this game's process; its logs stay readable up to the last record.")
    for i in items[:3]:
        if i.returncode not in (None, 0):
            with st.expander(f"Output of {md_escape(i.game_id)} (exit code {i.returncode})"):
                st.code(i.tail(40) or "(no output)", language="text")
