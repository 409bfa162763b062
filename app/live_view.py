"""Live Game page building blocks: launch form, live tail, human seat, inspector."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st

from mafiascope.backends.keys import KeyPolicy, origin
from mafiascope.logs import GAME_FILE

from . import charts, graph, keys, launcher, lineup, probe_editor
from . import state as S
from .data import file_sig
from .gamemodel import (PROBE_ROLE, PROBE_SOCIAL, PROBE_SUSPICION, GameModel, assessment, battery_has, personality_guesses,
                        probe_gap, suspicion)
from .paths import label_root, runs_dir
from .text import md_escape, plural
from .transcript import render as render_transcript


# ----------------------------------------------------------------------------- launch


def launch_form() -> None:
    cfgs = launcher.configs()
    st.markdown("#### Launch a game")
    if not cfgs:
        st.warning("No game configs found in configs/*.yaml.")
        return
    c1, c2, c3 = st.columns([2, 1, 2])
    names = list(cfgs)
    cfg_name = c1.selectbox("Game config", names, index=names.index("classic") if "classic" in names else 0, key="lf_cfg",
                            help="configs/*.yaml. The shipped configs seat offline bots (no API key, deterministic per seed).")
    c2.number_input("Seed", 0, 2**31 - 1, int(st.session_state.get("lf_seed_default", 1)), key="lf_seed",
                    help="Same config + same seed = same game with offline bots.")
    st.caption(md_escape(launcher.describe_config(cfgs[cfg_name])))
    # the game names and orders its seats by the seed: the picker shows them as the game will
    table = launcher.table_seats(cfgs[cfg_name], int(st.session_state.get("lf_seed", 1)))
    shown = {lab: f"{name} (seat {i + 1} at the table)" for i, (lab, name) in enumerate(table)}
    c3.selectbox("Take a seat yourself", [WATCH] + [lab for lab, _ in table], key="lf_human", format_func=lambda v: shown.get(v, v),
                 help="Play one seat from this page: speak, vote and act at night. Human seats are not probed.")
    c2.number_input("Games", 1, 100, 1, key="lf_games",
                    help="More than one: a batch with seeds seed, seed+1, ... played 4 at a time in one background process.")
    o1, o2, o3 = st.columns(3)
    probes_on = o1.toggle("Probe agents after every message", True, key="lf_probes")
    o2.toggle("Write snapshots (for Replay)", True, key="lf_snaps")
    custom = o3.toggle("Custom probe battery", False, key="lf_custom", disabled=not probes_on,
                       help="Edit the probes below; otherwise the config's battery is used.")
    valid = True
    if probes_on and custom:
        with st.expander("Probe battery", expanded=True):
            _, valid = probe_editor.editor()
    lineup_ok = True
    if st.toggle("Line-up: choose each seat's backend", False, key="lf_lineup",
                 help="Put a bot preset or an OpenAI-compatible model (OpenAI, DeepSeek, OpenRouter, vLLM, Ollama ...) "
                      "in any seat; the others keep the config's entry."):
        with st.expander("Line-up", expanded=True):
            lineup_ok = lineup_editor(cfg_name, cfgs[cfg_name])
    st.caption(f"Games are written to {md_escape(label_root(runs_dir()))} (set $MAFIASCOPE_RUNS to change).")
    why = "Fix the probe errors above first." if not valid else "Fix the line-up errors above first." if not lineup_ok else None
    st.button("Launch game", icon=":material/rocket_launch:", type="primary", key="lf_go", disabled=bool(why),
              on_click=_do_launch, help=why or "Starts `mafiascope run` in the background.")
    if st.session_state.get("lf_error"):
        st.error(md_escape(st.session_state.pop("lf_error")))
    running_list()


WATCH = "— watch only —"
LU_MODELS = "lu_models"  # uids of the models defined in the line-up editor, in order


def _human_choice() -> str | None:
    human = st.session_state.get("lf_human") or ""
    return None if not human or human.startswith("—") else human


def _lineup_state(cfg_name: str, cfg: Path) -> tuple[dict[str, Any], list[lineup.ModelDef], dict[int, str], int | None]:
    """(config data, models, seat choices, human seat index) from the editor's widgets in session state."""
    ss = st.session_state
    data = lineup.load(cfg)
    models = []
    for uid in ss.get(LU_MODELS, []):
        temp = ss.get(f"lu_temp_{uid}") if ss.get(f"lu_temp_on_{uid}") else None
        var = keys.session_var(uid) if _pasted(uid) else str(ss.get(f"lu_key_{uid}", ""))
        models.append(lineup.ModelDef(uid, str(ss.get(f"lu_name_{uid}", "")), str(ss.get(f"lu_model_{uid}", "")),
                                      str(ss.get(f"lu_url_{uid}", "")), var, None if temp is None else float(temp)))
    labels = lineup.seat_labels(data)
    choices = {i: str(ss.get(f"lu_seat:{cfg_name}:{i}") or lineup.CONFIG) for i in range(len(labels))}
    human = _human_choice()
    return data, models, choices, labels.index(human) if human in labels else None


def _pasted(uid: str) -> str:
    """The visitor's own key pasted for model ``uid`` (kept in session state only), or ''."""
    return str(st.session_state.get(f"lu_paste_{uid}") or "").strip()


def _key_checks(models: list[lineup.ModelDef]) -> tuple[set[str], KeyPolicy]:
    """(key names usable now, the policy in force): the operator's allowed keys plus this form's pasted keys,
    each pasted key only for its own model's base URL."""
    pasted: dict[str, tuple[str, ...]] = {}
    for m in models:
        if m.key_var.startswith(lineup.SESSION_PREFIX):
            try:
                origin(m.base_url)
            except ValueError:
                continue  # the base_url's own error is reported with the model
            pasted[m.key_var] = (m.base_url,)
    return keys.available() | set(pasted), keys.operator_policy().merged(KeyPolicy(keys=pasted))


def _lu_add() -> None:
    ss = st.session_state
    n = int(ss.get("lu_next", 0)) + 1
    ss["lu_next"] = n
    uid = str(n)
    ss[LU_MODELS] = list(ss.get(LU_MODELS, [])) + [uid]
    ss[f"lu_name_{uid}"] = f"model{n}"
    ss[f"lu_prov_{uid}"] = "OpenAI"
    _lu_provider(uid)


def _lu_provider(uid: str) -> None:
    ss = st.session_state
    url, var, model = lineup.PROVIDERS.get(ss.get(f"lu_prov_{uid}"), (None, None, None))
    if url is not None:
        ss[f"lu_url_{uid}"], ss[f"lu_key_{uid}"], ss[f"lu_model_{uid}"] = url, var, model


def _lu_remove(uid: str) -> None:
    ss = st.session_state
    ss[LU_MODELS] = [u for u in ss.get(LU_MODELS, []) if u != uid]
    ss.pop(f"lu_paste_{uid}", None)
    keys.drop_session_key(uid)
    for k in [k for k in ss if str(k).startswith("lu_seat:") and ss[k] == f"model:{uid}"]:
        ss[k] = lineup.CONFIG


def lineup_editor(cfg_name: str, cfg: Path) -> bool:
    """The line-up editor: models defined once, a backend per seat; returns whether the line-up may launch."""
    ss = st.session_state
    st.caption("Define a model once, then pick it in any number of seats. For its API key, give the name of a key "
               "the operator allows for that base URL (the derived config refers to it as `${VAR}`), or paste your own "
               "key: it is kept for this browser session only and handed to the game process, never written anywhere.")
    data, models, choices, skip = _lineup_state(cfg_name, cfg)
    avail, policy = _key_checks(models)
    allowed = ", ".join(sorted(keys.operator_policy().keys)) or "none"
    found = lineup.problems(data, choices, models, skip=skip, available=avail, policy=policy, source=f"line-up of {cfg_name}")
    for m in models:
        uid = m.uid
        with st.container(border=True):
            a, b, c, d = st.columns([2, 2, 3, 1])
            a.text_input("Name", key=f"lu_name_{uid}", help="How the seat pickers refer to this model.")
            b.selectbox("Provider", ["custom", *lineup.PROVIDERS], key=f"lu_prov_{uid}", on_change=_lu_provider, args=(uid,),
                        help="Fills base_url, the key variable and a model name; edit them freely.")
            c.text_input("Model", key=f"lu_model_{uid}", help="The model name sent to the API.")
            d.button("Remove", key=f"lu_rm_{uid}", icon=":material/delete:", on_click=_lu_remove, args=(uid,))
            a, b, c, d = st.columns([3, 2, 1, 1])
            a.text_input("base_url", key=f"lu_url_{uid}", help="Any OpenAI-compatible endpoint (…/v1).")
            b.text_input("API key variable", key=f"lu_key_{uid}", disabled=bool(_pasted(uid)),
                         help=f"Name of a key the operator allows (allowed here: {md_escape(allowed)}); empty for keyless "
                              "local servers. Never the key itself.")
            st.text_input("…or paste your own API key (this session only)", key=f"lu_paste_{uid}", type="password",
                          help="Used for this model's base_url only, passed to the game process in its environment; "
                               "never shown, logged or written to a file. Closing the tab forgets it.")
            on = c.toggle("Temperature", key=f"lu_temp_on_{uid}")
            d.number_input("value", 0.0, 2.0, 0.7, 0.1, key=f"lu_temp_{uid}", disabled=not on, label_visibility="hidden")
            var = m.key_var.strip()
            if var.startswith(lineup.SESSION_PREFIX):
                st.caption("key: your pasted key, for this session and this base_url only")
            elif var and not lineup.key_var_problem(var):
                refused = policy.problem(var, m.base_url)
                if refused:
                    st.warning(md_escape(f"{refused}: a seat using this model cannot start."), icon=":material/key_off:")
                elif var in avail:
                    st.caption(f"key: `${var}` is set ✓")
                else:
                    st.warning(f"`${var}` is set neither in the environment nor in st.secrets: a seat using this "
                               "model cannot start.", icon=":material/key_off:")
            elif not var:
                st.caption("no API key (keyless local server)")
            for p in found:
                if p.model == uid and p.seat is None:
                    st.error(md_escape(p.text))
    st.button("Add a model", key="lu_add", icon=":material/add:", on_click=_lu_add)
    labels = lineup.seat_labels(data)
    seats = lineup.base_seats(data)
    opts = lineup.options(models)
    st.markdown("**Seats**")
    for i, label in enumerate(labels):
        a, b, c = st.columns([1, 2, 3])
        a.markdown(f"**{md_escape(label)}**")
        key = f"lu_seat:{cfg_name}:{i}"
        if ss.get(key) not in opts:
            ss[key] = lineup.CONFIG
        if i == skip:
            b.selectbox("Backend", opts, key=key, disabled=True, label_visibility="collapsed",
                        format_func=lambda o: lineup.option_label(o, models))
            c.caption("you play this seat (human seat)")
            continue
        b.selectbox(f"Backend of {label}", opts, key=key, label_visibility="collapsed",
                    format_func=lambda o: lineup.option_label(o, models))
        c.caption(md_escape(lineup.describe(choices.get(i, lineup.CONFIG), seats[i], data, models)))
        for p in found:
            if p.seat == i:
                st.error(md_escape(p.text))
    for p in found:
        if p.seat is None and p.model is None:
            st.error(md_escape(p.text))
    block = lineup.blocking(found)
    if not block and any(c != lineup.CONFIG for i, c in choices.items() if i != skip):
        with st.expander("Derived config (written next to the launch metadata)"):
            st.code(lineup.to_yaml(lineup.derive(data, choices, models, skip=skip), source=str(cfg)), language="yaml")
    return not block


def _do_launch() -> None:
    """on_click of the launch button (runs before the script, so it may update the sidebar's widgets)."""
    ss = st.session_state
    cfgs = launcher.configs()
    cfg = cfgs.get(ss.get("lf_cfg"))
    if cfg is None:
        ss["lf_error"] = "Pick a game config."
        return
    logs = runs_dir()
    probes_on = bool(ss.get("lf_probes", True))
    gid = launcher.new_game_id()
    probes_file = None
    if probes_on and ss.get("lf_custom") and probe_editor.KEY in ss:
        probes_file = logs / ".launch" / f"{gid}.probes.yaml"
        probes_file.parent.mkdir(parents=True, exist_ok=True)
        probes_file.write_text(probe_editor.to_yaml(ss[probe_editor.KEY]), encoding="utf-8")
    derived = None
    if ss.get("lf_lineup"):
        data, models, choices, skip = _lineup_state(str(ss.get("lf_cfg")), cfg)
        avail, policy = _key_checks(models)
        block = lineup.blocking(lineup.problems(data, choices, models, skip=skip, available=avail, policy=policy))
        if block:
            ss["lf_error"] = "Fix the line-up first: " + "; ".join(p.text for p in block)
            return
        if any(c != lineup.CONFIG for i, c in choices.items() if i != skip):
            derived = lineup.derive(data, choices, models, skip=skip)
            used = {c for i, c in choices.items() if i != skip}
            for m in models:  # the pasted keys of the models in use go to the game's environment, nowhere else
                if m.choice in used and m.key_var.startswith(lineup.SESSION_PREFIX):
                    keys.set_session_key(m.uid, _pasted(m.uid), m.base_url)
    try:
        item = launcher.launch(cfg, seed=int(ss.get("lf_seed", 1)), probes=probes_on, snapshots=bool(ss.get("lf_snaps", True)),
                               probes_file=probes_file, logs=logs, game_id=gid, human_seat=_human_choice(),
                               games=int(ss.get("lf_games", 1)), lineup=derived)
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
    ss["lf_seed_default"] = int(ss.get("lf_seed", 1)) + 1


def _ensure_runs_root(logs: Path) -> None:
    roots = st.session_state.get("sb_roots")
    if roots is None:
        return  # the default roots already include the runs directory
    lab = label_root(logs)
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


# ----------------------------------------------------------------------------- live tail


def is_live(gm: GameModel) -> bool:
    item = launcher.registry().get(gm.game_id)
    if item is not None:
        return item.running
    if gm.winner:
        return False
    try:
        mtime = max(Path(gm.dir, f).stat().st_mtime for f in (GAME_FILE,) if Path(gm.dir, f).exists())
    except ValueError:
        return False
    return time.time() - mtime < 60


def _moves_sig(gm: GameModel) -> tuple[str, ...]:
    """Request ids of the game's open human moves: the engine waits on one without writing to the log."""
    item = launcher.registry().get(gm.game_id)
    logs = item.logs if item else str(Path(gm.dir).parent)
    return tuple(sorted(str(r.get("request_id")) for r in launcher.pending_moves(logs, gm.game_id)))


def live_banner(gm: GameModel) -> None:
    """While the game runs: a fragment polls the log (and the human seat's open moves) every 1.5 s and reruns
    the page when either changed."""
    item = launcher.registry().get(gm.game_id)
    if not is_live(gm):
        if S.get("ms_follow_game") == gm.game_id:
            # followed to the end (or it ended before this page saw it running): land on the last step once
            S.put("ms_follow_game", None)
            if S.get("ms_follow", True):
                S.put(S.K_STEP, 10**9)
        if item is not None and item.returncode not in (None, 0):
            st.error(f"The game process exited with code {item.returncode}.")
            st.code(item.tail(30) or "(no output)", language="text")
        return
    st.session_state["w_follow"] = bool(S.get("ms_follow", True))
    follow = st.toggle("Follow the latest step", key="w_follow", on_change=lambda: S.put("ms_follow", st.session_state["w_follow"]),
                       help="Keep the timeline on the newest step while the game runs (moving the timeline turns this off).")
    if follow:
        S.put(S.K_STEP, 10**9)  # clamped to the last step by the timeline
        S.put("ms_follow_game", gm.game_id)
    sig0 = (file_sig(gm.dir), _moves_sig(gm))

    @st.fragment(run_every=1.5)
    def _tail() -> None:
        sig = (file_sig(gm.dir), _moves_sig(gm))
        it = launcher.registry().get(gm.game_id)
        st.caption(f"🔴 live · {plural(len(gm.steps), 'step')} so far · log {sig[0][0][0] / 1024:.0f} KB"
                   + (f" · process {'running' if it.running else 'finished'}" if it else ""))
        if sig != sig0 or (it is not None and not it.running):
            st.rerun(scope="app")

    _tail()


def human_panel(gm: GameModel) -> None:
    item = launcher.registry().get(gm.game_id)
    logs = item.logs if item else str(Path(gm.dir).parent)
    pend = launcher.pending_moves(logs, gm.game_id)
    if not pend:
        if item is not None and item.human_seat and item.running:
            st.info(f"You play **{md_escape(item.human_seat)}**. Waiting for your turn ...", icon="🧑")
        return
    for req in pend:
        _move_form(gm, logs, req)


_ROLE_LINE = re.compile(r"(?:secret role|Your role|Ваша роль|Твоя роль)\s*[:：]\s*([^\n.]+)", re.IGNORECASE)


def _move_form(gm: GameModel, logs: str, req: dict[str, Any]) -> None:
    seat = str(req.get("seat"))
    rid = str(req.get("request_id"))
    msgs = req.get("messages") or []
    system = str(msgs[0].get("content") or "") if msgs and isinstance(msgs[0], dict) and msgs[0].get("role") == "system" else ""
    m = _ROLE_LINE.search(system)
    role = f" · your role: **{md_escape(m.group(1).strip())}**" if m else ""
    with st.container(border=True):
        st.markdown(f"#### 🧑 Your move as **{md_escape(seat)}** · {md_escape(req.get('purpose') or req.get('kind') or '')}{role}")
        if system:
            with st.expander("Your secret briefing (role, partners, rules)"):
                st.text(system)
        st.text(str(req.get("instruction") or ""))
        fmt = req.get("format")
        alive = sorted(gm.steps[-1].alive) if gm.steps else gm.names
        proto = str(fmt).split("<")[0] if fmt and "<" in str(fmt) else None
        target = None
        if fmt:
            st.caption(f"End your reply with a line like: {md_escape(fmt)}")
            if proto:
                # no form: a callback writes the closing line into the text box before it is drawn again
                target = st.selectbox("Target (writes the closing line into your reply)", ["—"] + [n for n in alive if n != seat],
                                      key=f"hp_tgt_{rid}", on_change=_fill_target, args=(rid, proto))
        text = st.text_area("Your reply", key=f"hp_text_{rid}", height=120,
                            placeholder="Write what your character says, then Send")
        sent = st.button("Send", type="primary", icon=":material/send:", key=f"hp_send_{rid}")
        if sent:
            reply = (text or "").strip()
            if proto and target and target != "—" and proto.strip().rstrip(":").lower() not in reply.lower():
                reply = (reply + f"\n{proto}{target}").strip()
            if not reply:
                st.error("Write a reply first.")
                return
            launcher.answer(logs, gm.game_id, seat, rid, reply)
            st.success("Sent. Waiting for the others ...")
            time.sleep(0.3)
            st.rerun()


def with_closing_line(text: str, proto: str, target: str | None) -> str:
    """``text`` with its closing line (``VOTE: <name>``, ``ACTION: Kill <name>``) set to ``target``: an earlier line
    of the same kind is replaced, none is written for no target."""
    head = proto.strip().split(":")[0].lower() + ":"
    lines = [ln for ln in (text or "").rstrip().splitlines() if not ln.strip().lower().startswith(head)]
    if target and target != "—":
        lines.append(f"{proto}{target}")
    return "\n".join(lines).strip()


def _fill_target(rid: str, proto: str) -> None:
    ss = st.session_state
    ss[f"hp_text_{rid}"] = with_closing_line(str(ss.get(f"hp_text_{rid}") or ""), proto, ss.get(f"hp_tgt_{rid}"))


# ----------------------------------------------------------------------------- inspector


def human_seat(gm: GameModel) -> str | None:
    """The seat played by a person in this game (backend type human), if any."""
    for p in gm.players:
        if str(p.get("backend")) == "app_human" or str(p.get("model")) == "human":
            return str(p["name"])
    return None


def masked_roles(gm: GameModel, viewer: str) -> dict[str, str]:
    """Roles as ``viewer`` knows them: its own, and its partners' when it is Mafia."""
    from mafiascope.logs.schema import MAFIA_ROLES

    mine = gm.roles.get(viewer)
    return {n: (r if n == viewer or (mine in MAFIA_ROLES and r in MAFIA_ROLES) else "Unknown") for n, r in gm.roles.items()}


def ground_truth(gm: GameModel, step: int, metrics: Any, *, roles: dict[str, str] | None = None) -> str | None:
    s = gm.steps[step]
    dec = charts.deception_at(metrics, s.label) if metrics is not None and roles is None else None
    pers = {p["name"]: p.get("personality") or {} for p in gm.players} if roles is None else {}
    if st.session_state.get("sb_renderer") == "vis.js (streamlit-agraph)":
        st.markdown("**Ground truth** (vis.js renderer) · dashed = Mafia partners")
        return graph.render_agraph(gm.names, roles or gm.roles, gm.alive_at(step), s.speaker)
    chart = graph.ground_truth(gm.names, roles or gm.roles, gm.models, gm.alive_at(step), s.speaker, dec, pers)
    st.markdown("**Ground truth** · ▲ Mafia ◆ Don ✚ Doctor ■ Sheriff ● Villager · dashed = Mafia partners · ring = “hid N%”")
    clicked = graph.render(chart, key=f"gt_{gm.game_id}")
    if dec is None and roles is None:
        st.caption("Deception rings appear once the analytics layer provides per-step viewer metrics.")
    return clicked


def agent_panels(gm: GameModel, step: int, threshold: float, per_row: int = 4) -> str | None:
    s = gm.steps[step]
    alive_now = gm.alive_at(step)
    clicked = None
    names = gm.names
    role_less = bool(gm.probes_total) and not battery_has(gm, PROBE_ROLE)
    if role_less:
        st.caption(md_escape(probe_gap(gm, PROBE_ROLE)) + (" The graphs show suspicion edges only; nodes are not coloured by a guessed role."
                               if PROBE_SUSPICION in gm.probes_by_id else ""))
    for r0 in range(0, len(names), per_row):
        cols = st.columns(per_row)
        for c, name in zip(cols, names[r0:r0 + per_row]):
            with c:
                ass, carried = assessment(gm, name, step)
                sus, _ = suspicion(gm, name, step)
                dead = name not in alive_now
                head = f"**{md_escape(name)}** · {md_escape(gm.roles.get(name, '?'))}" + (" · :gray[ELIMINATED]" if dead else "")
                if name == s.speaker:
                    head += " · 🗣️"
                st.markdown(head)
                if not ass and not sus:
                    st.caption("No suspicion_ranking answer up to this step." if role_less
                               else "No role assessment up to this step.")
                    continue
                ch = graph.belief_graph(name, names, ass, sus, alive_now, threshold=threshold, carried=carried,
                                        height=230, speaker=s.speaker, personality=personality_guesses(gm, name, step),
                                        true_roles=gm.roles)
                clicked = clicked or graph.render(ch, key=f"ag_{gm.game_id}_{name}")
                if carried:
                    st.caption("beliefs carried forward from an earlier step")
    return clicked


def go_impersonate(gm: GameModel, agent: str, step: int) -> None:
    st.switch_page("pages/impersonate.py", query_params={"game": gm.game_id, "step": str(step), "agent": agent})


def transcript(gm: GameModel, step: int, agent: str | None = None, roles: dict[str, str] | None = None) -> None:
    st.markdown("**Transcript** (newest first)" + (f" · what {md_escape(agent)} can see" if agent else ""))
    render_transcript(gm, step, height=430, agent=agent, roles=roles, show_plans=roles is None)


def metrics_for(gm: GameModel) -> dict[str, Any]:
    """The game's per-step viewer metrics (analytics.viewer.step_metrics as long tables)."""
    return charts.viewer_metrics(gm.dir)


def metrics_strip(gm: GameModel, step: int, metrics: dict[str, Any]) -> int | None:
    """Draw the strip; return a step clicked on a chart (or None)."""
    gaps = strip_gaps(gm)
    if gaps:
        st.caption(md_escape(gaps))
    picked = charts.metrics_strip(metrics, gm, step)
    charts.custom_strip(gm, step)  # numeric fields of custom probes, when the game has any
    return picked


def strip_gaps(gm: GameModel) -> str:
    """Why some strip charts will be empty: the game's battery lacks the probes they are computed from."""
    out = []
    if not gm.probes_total:
        return ""
    if not battery_has(gm, PROBE_ROLE):
        out.append("1st-order accuracy, crowd recall and deception need role_assessment answers")
    if not battery_has(gm, PROBE_SOCIAL):
        out.append("2nd-order consistency needs social_map answers")
    if not out:
        return ""
    asked = ", ".join(sorted(gm.probes_by_id)) or "none"
    return f"This game's probe battery asked only {asked}: " + "; ".join(out) + " (launch with the standard battery to get them)."


def raw_records(gm: GameModel, step: int) -> None:
    """The step's own log records, verbatim: the message and every probe call (question, raw and parsed answer)."""
    from .data import load_raw

    s = gm.steps[step]
    with st.expander(f"Raw records at {md_escape(s.label)} (message and probe calls, verbatim)", expanded=False):
        if s.event_idx is not None:
            st.caption("game.jsonl record")
            st.json(gm.events[s.event_idx], expanded=False)
        probes = [p for p in load_raw(gm.dir).probes
                  if p.get("round") == s.round and p.get("public_msg_seq") == s.seq]
        if not probes:
            st.caption("No probe calls at this step.")
            return
        agents = sorted({str(p.get("player_name")) for p in probes}, key=lambda n: gm.names.index(n) if n in gm.names else 99)
        who = st.selectbox("Agent", agents, key="raw_agent")
        for p in sorted((p for p in probes if str(p.get("player_name")) == who), key=lambda p: p.get("probe_seq", 0)):
            ok = "parsed" if p.get("answer_parse_ok") else "NOT parsed"
            meta = f"{p.get('latency_ms')} ms" if p.get("latency_ms") is not None else ""
            st.markdown(f"**{md_escape(p.get('probe_id'))}** · {ok} · {md_escape(meta)}"
                        + (f" · :red[error: {md_escape(p.get('error'))}]" if p.get("error") else ""))
            q, a = st.columns(2)
            q.caption("question")
            q.text(str(p.get("question") or ""))
            a.caption("raw answer")
            a.text(str(p.get("answer_raw") or ""))
