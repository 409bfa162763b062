"""Probe battery editor for the launch form: load a preset, add, remove, reorder, edit
templates and budgets, see validation errors inline, export YAML.

Validation is the probe engine's own (:mod:`mafiascope.probes.dsl`: pydantic models and
:func:`~mafiascope.probes.render.check_template`), so the editor accepts exactly what
``mafiascope run --probes-file`` accepts.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import streamlit as st
import yaml

from mafiascope.config import ConfigError, parse_yaml_bytes, read_yaml

from .paths import PROBE_DIR
from .text import md_escape

KEY = "pe_battery"
WHEN_HELP = ("after_each_message: every public message and the night analysis (all probed seats) · "
             "after_night_action: the actor after a private night action · after_round: once per round (all) · "
             "own_turn: only the seat that just spoke or acted (cannot be combined)")


def _dsl() -> Any:
    from mafiascope.probes import dsl

    return dsl


def presets() -> dict[str, Path]:
    return {p.stem: p for p in sorted(PROBE_DIR.glob("*.yaml"))} if PROBE_DIR.is_dir() else {}


def normalise(data: Any) -> dict[str, Any]:
    """A battery mapping from YAML data (a mapping with ``probes:`` or a bare list)."""
    if isinstance(data, list):
        data = {"probes": data}
    if not isinstance(data, dict) or not isinstance(data.get("probes"), list):
        raise ValueError("expected a mapping with a `probes:` list (or a bare list of probes)")
    out = {k: v for k, v in data.items() if k in ("name", "language", "description")}
    probes = []
    for i, p in enumerate(data["probes"]):
        if not isinstance(p, dict):
            raise ValueError(f"probe #{i + 1} is not a mapping")
        q = dict(p)
        w = q.get("when", list(_dsl().DEFAULT_WHEN))
        q["when"] = list(_dsl().DEFAULT_WHEN) if w in ("always", ["always"]) else ([w] if isinstance(w, str) else list(w))
        q.setdefault("max_tokens", 300)
        q.setdefault("enabled", True)
        probes.append(q)
    out["probes"] = probes
    return out


def to_yaml(battery: dict[str, Any]) -> str:
    clean = {k: v for k, v in battery.items() if v not in (None, "")}
    clean["probes"] = [{k: v for k, v in p.items() if v is not None} for p in battery.get("probes", [])]
    return yaml.safe_dump(clean, sort_keys=False, allow_unicode=True, width=110)


def validate(battery: dict[str, Any]) -> tuple[list[str], dict[int, list[str]]]:
    """(battery-level errors, per-probe errors) from the probe engine's validators."""
    dsl = _dsl()
    from mafiascope.probes.render import check_template
    from pydantic import ValidationError

    per: dict[int, list[str]] = {}
    ids = [str(p.get("id", "")) for p in battery.get("probes", [])]
    for i, p in enumerate(battery.get("probes", [])):
        errs: list[str] = []
        try:
            dsl.Probe.model_validate(p)
        except ValidationError as exc:
            for e in exc.errors():
                errs.append(f"{'.'.join(str(x) for x in e['loc']) or 'probe'}: {e['msg'].removeprefix('Value error, ')}")
        errs += [f"question: {e}" for e in check_template(str(p.get("question", "")), ids)]
        if ids.count(p.get("id")) > 1:
            errs.append(f"duplicate id {p.get('id')!r}")
        if errs:
            per[i] = errs
    errors: list[str] = []
    if not per:
        try:
            dsl.parse_battery(battery, "battery")
        except Exception as exc:  # BatteryError: its text names the probe and field
            errors.append(str(exc))
    return errors, per


def _bump() -> None:
    st.session_state["pe_gen"] = st.session_state.get("pe_gen", 0) + 1


def _move(i: int, d: int) -> None:
    b = st.session_state[KEY]["probes"]
    if 0 <= i + d < len(b):
        b[i], b[i + d] = b[i + d], b[i]
        _bump()


def _delete(i: int) -> None:
    st.session_state[KEY]["probes"].pop(i)
    _bump()


def _add() -> None:
    b = st.session_state[KEY]["probes"]
    b.append({"id": f"probe_{len(b) + 1}", "when": ["after_each_message"], "max_tokens": 300, "enabled": True,
              "question": "You are {player}. In one sentence: who among {players} is most likely Mafia, and why?\n"
                          'Reply with JSON only: {"player": "<name>", "reason": "<short>"}'})
    _bump()


def _load(path: Path) -> None:
    try:
        st.session_state[KEY] = normalise(read_yaml(path, ConfigError, "battery"))
        st.session_state.pop("pe_load_error", None)
    except Exception as exc:
        st.session_state["pe_load_error"] = f"{path.name}: {exc}"
    _bump()


def editor(default_preset: str = "chained_en") -> tuple[dict[str, Any], bool]:
    """Draw the editor; return (battery mapping, valid)."""
    pre = presets()
    if KEY not in st.session_state:
        if default_preset in pre:
            _load(pre[default_preset])
        elif pre:
            _load(next(iter(pre.values())))
        else:
            st.session_state[KEY] = {"name": "custom", "probes": []}
    battery: dict[str, Any] = st.session_state[KEY]
    gen = st.session_state.get("pe_gen", 0)
    c1, c2, c3 = st.columns([2, 1, 2])
    if pre:
        names = list(pre)
        choice = c1.selectbox("Preset", names, index=names.index(default_preset) if default_preset in names else 0,
                              key="pe_preset", help="Batteries shipped in configs/probes/. Loading replaces the probes below.")
        c2.button("Load preset", key="pe_load", on_click=_load, args=(pre[choice],))
    up = c3.file_uploader("Import YAML", type=["yaml", "yml"], key=f"pe_up_{gen}",
                          help="A battery file (`probes:` list) such as configs/probes/*.yaml.")
    if up is not None:
        try:
            # bounded like every YAML input: size cap, alias bombs and non-UTF-8 bytes are one-line errors
            st.session_state[KEY] = normalise(parse_yaml_bytes(up.getvalue(), up.name))
            _bump()
            st.rerun()
        except ConfigError as exc:  # names the file, line and column
            st.error(md_escape(f"Could not import: {exc}"))
        except Exception as exc:
            st.error(md_escape(f"Could not import {up.name}: {exc}"))
    if st.session_state.get("pe_load_error"):
        st.error(md_escape(st.session_state["pe_load_error"]))
    battery["name"] = st.text_input("Battery name", battery.get("name") or "custom", key=f"pe_name_{gen}")
    st.caption("Placeholders: `{player}` the probed agent, `{players}` living players, `{roles}` role options, "
               "`{prev_<id>}` this step's answer to another probe, `{last_<id>}` this agent's previous answer. "
               "Other braces are literal: write JSON formats as they should look.")
    from mafiascope.probes.dsl import WHEN_VALUES
    from mafiascope.probes.shapes import SHAPES

    probes = battery["probes"]
    slots = []
    for i, p in enumerate(probes):
        with st.container(border=True):
            a, b, c, d, e = st.columns([2.2, 3.4, 1.4, 0.8, 1.6])
            p["id"] = a.text_input("id", str(p.get("id", "")), key=f"pe_id_{gen}_{i}")
            when = [w for w in (p.get("when") or []) if w in WHEN_VALUES]
            p["when"] = b.multiselect("when", list(WHEN_VALUES), default=when, key=f"pe_when_{gen}_{i}", help=WHEN_HELP)
            p["max_tokens"] = int(c.number_input("max_tokens", 16, 32768, int(p.get("max_tokens") or 300), step=32,
                                                 key=f"pe_mt_{gen}_{i}", help="Answer budget of this probe"))
            p["enabled"] = d.checkbox("on", bool(p.get("enabled", True)), key=f"pe_en_{gen}_{i}")
            with e:
                bc = st.columns(3)
                bc[0].button("", icon=":material/arrow_upward:", key=f"pe_up_{gen}_{i}", on_click=_move, args=(i, -1),
                             disabled=i == 0, help="Move up")
                bc[1].button("", icon=":material/arrow_downward:", key=f"pe_dn_{gen}_{i}", on_click=_move, args=(i, 1),
                             disabled=i == len(probes) - 1, help="Move down")
                bc[2].button("", icon=":material/delete:", key=f"pe_rm_{gen}_{i}", on_click=_delete, args=(i,), help="Remove")
            p["question"] = st.text_area("question template", str(p.get("question", "")), key=f"pe_q_{gen}_{i}", height=110)
            shapes = ["(by id)"] + sorted(SHAPES)
            cur = p.get("shape") or "(by id)"
            sh = st.selectbox("answer shape", shapes, index=shapes.index(cur) if cur in shapes else 0, key=f"pe_sh_{gen}_{i}",
                              help="Standard answer shape the answer is validated against (defaults to the id when it is a standard probe).")
            p["shape"] = None if sh == "(by id)" else sh
            slots.append(st.container())
    errors, per = validate(battery)  # after every widget of this run has been read
    for i, slot in enumerate(slots):
        for msg in per.get(i, []):
            slot.error(msg, icon=":material/error:")
    st.button("Add probe", icon=":material/add:", key="pe_add", on_click=_add)
    for msg in errors:
        st.error(msg, icon=":material/error:")
    valid = not errors and not per
    text = to_yaml(battery)
    with st.expander("Export as YAML", expanded=False):
        st.code(text, language="yaml")
        st.download_button("Download battery YAML", text, file_name=f"{battery.get('name') or 'battery'}.yaml",
                           mime="text/yaml", key="pe_dl")
    return battery, valid
