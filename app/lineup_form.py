"""The launch form's line-up editor: models defined once, a backend per seat, pasted keys kept in
the session (Streamlit helpers of the Live Game page)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import streamlit as st

from mafiascope.backends.keys import KeyPolicy, origin

from . import keys, lineup
from .text import md_escape

LU_MODELS = "lu_models"  # uids of the models defined in the line-up editor, in order
SEAT = "seat"  # the launch form's "take a seat yourself" (a widget bound to ?seat=)


def human_choice() -> str | None:
    human = st.session_state.get(SEAT) or ""
    return None if not human or human.startswith("—") else human


def lineup_state(cfg_name: str, cfg: Path) -> tuple[dict[str, Any], list[lineup.ModelDef], dict[int, str], int | None]:
    """(config data, models, seat choices, human seat index) from the editor's widgets in session state."""
    ss = st.session_state
    data = lineup.load(cfg)
    models = []
    for uid in ss.get(LU_MODELS, []):
        temp = ss.get(f"lu_temp_{uid}") if ss.get(f"lu_temp_on_{uid}") else None
        var = keys.session_var(uid) if pasted_key(uid) else str(ss.get(f"lu_key_{uid}", ""))
        models.append(lineup.ModelDef(uid, str(ss.get(f"lu_name_{uid}", "")), str(ss.get(f"lu_model_{uid}", "")),
                                      str(ss.get(f"lu_url_{uid}", "")), var, None if temp is None else float(temp)))
    labels = lineup.seat_labels(data)
    choices = {i: str(ss.get(f"lu_seat:{cfg_name}:{i}") or lineup.CONFIG) for i in range(len(labels))}
    human = human_choice()
    return data, models, choices, labels.index(human) if human in labels else None


def pasted_key(uid: str) -> str:
    """The visitor's own key pasted for model ``uid`` (kept in session state only), or ''."""
    return str(st.session_state.get(f"lu_paste_{uid}") or "").strip()


def key_checks(models: list[lineup.ModelDef]) -> tuple[set[str], KeyPolicy]:
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
    data, models, choices, skip = lineup_state(cfg_name, cfg)
    avail, policy = key_checks(models)
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
            b.text_input("API key variable", key=f"lu_key_{uid}", disabled=bool(pasted_key(uid)),
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
