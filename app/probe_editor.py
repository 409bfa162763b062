"""Probe battery editor for the launch form: add, remove, reorder, edit, validate, export YAML.

A battery is ``{"probes": [{id, question, when, max_tokens, enabled}, ...]}`` (configs/probes/*.yaml).
Validation uses the probe engine's pydantic loader (mafiascope.probes) when it is present;
until then a small structural check runs so mistakes still show inline.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import streamlit as st
import yaml

from .paths import PROBE_DIR

KEY = "pe_battery"
WHEN = ("always", "own_turn")
_ID = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_PLACEHOLDER = re.compile(r"(?<!\{)\{([A-Za-z_][A-Za-z0-9_]*)\}(?!\})")


def presets() -> dict[str, Path]:
    return {p.stem: p for p in sorted(PROBE_DIR.glob("*.yaml"))} if PROBE_DIR.is_dir() else {}


def load_yaml(text: str) -> list[dict[str, Any]]:
    data = yaml.safe_load(text) or {}
    if isinstance(data, dict):
        data = data.get("probes", data.get("introspection", {}).get("probes") if isinstance(data.get("introspection"), dict) else None)
    if not isinstance(data, list):
        raise ValueError("expected a YAML mapping with a `probes:` list")
    out = []
    for i, p in enumerate(data):
        if not isinstance(p, dict):
            raise ValueError(f"probe #{i + 1} is not a mapping")
        out.append({"id": str(p.get("id", "")), "question": str(p.get("question", "")),
                    "when": str(p.get("when", "always")), "max_tokens": int(p.get("max_tokens", 300) or 300),
                    "enabled": bool(p.get("enabled", True)), **{k: v for k, v in p.items()
                                                                 if k not in ("id", "question", "when", "max_tokens", "enabled")}})
    return out


def to_yaml(battery: list[dict[str, Any]]) -> str:
    return yaml.safe_dump({"probes": battery}, sort_keys=False, allow_unicode=True, width=100)


def validate(battery: list[dict[str, Any]]) -> tuple[list[str], dict[int, list[str]]]:
    """(battery-level errors, per-probe errors). Uses mafiascope.probes when available."""
    errors: list[str] = []
    per: dict[int, list[str]] = {}
    try:
        from mafiascope import probes as P  # type: ignore

        loader = getattr(P, "load_battery", None) or getattr(P, "parse_battery", None) or getattr(P, "Battery", None)
    except Exception:
        loader = None
    if loader is not None:
        try:
            if hasattr(loader, "model_validate"):
                loader.model_validate({"probes": battery})
            else:
                try:
                    loader({"probes": battery})
                except TypeError:
                    loader(to_yaml(battery))
        except Exception as exc:  # pydantic ValidationError or ValueError: show its text
            errors.append(str(exc))
    ids = [p.get("id", "") for p in battery]
    for i, p in enumerate(battery):
        e = per.setdefault(i, [])
        if not _ID.match(p.get("id") or ""):
            e.append("id must be letters, digits or _ and not start with a digit")
        if ids.count(p.get("id")) > 1:
            e.append(f"duplicate id {p.get('id')!r}")
        if p.get("when") not in WHEN:
            e.append(f"when must be one of {', '.join(WHEN)}")
        mt = p.get("max_tokens")
        if not isinstance(mt, int) or not 16 <= mt <= 8192:
            e.append("max_tokens must be between 16 and 8192")
        q = p.get("question") or ""
        if not q.strip():
            e.append("the question is empty")
        for name in _PLACEHOLDER.findall(q):
            if name in ("player", "players"):
                continue
            m = re.match(r"^(prev|last)_(.+)$", name)
            if not m:
                e.append(f"unknown placeholder {{{name}}} (use {{player}}, {{players}}, {{prev_<id>}}, {{last_<id>}}; double literal braces)")
            elif m.group(2) not in ids:
                e.append(f"{{{name}}} refers to an unknown probe id {m.group(2)!r}")
    if not any(p.get("enabled", True) for p in battery):
        errors.append("every probe is disabled: launch with “no probes” instead")
    return errors, {k: v for k, v in per.items() if v}


def _move(i: int, d: int) -> None:
    b = st.session_state[KEY]
    j = i + d
    if 0 <= j < len(b):
        b[i], b[j] = b[j], b[i]
        _reset_widgets()


def _delete(i: int) -> None:
    st.session_state[KEY].pop(i)
    _reset_widgets()


def _add() -> None:
    b = st.session_state[KEY]
    n = len(b) + 1
    b.append({"id": f"probe_{n}", "question": "In one sentence, who do you think is Mafia and why, {player}?",
              "when": "always", "max_tokens": 300, "enabled": True})
    _reset_widgets()


def _reset_widgets() -> None:
    st.session_state["pe_gen"] = st.session_state.get("pe_gen", 0) + 1


def _load_preset(path: Path) -> None:
    try:
        st.session_state[KEY] = load_yaml(path.read_text(encoding="utf-8"))
        st.session_state.pop("pe_load_error", None)
    except Exception as exc:
        st.session_state["pe_load_error"] = f"{path.name}: {exc}"
    _reset_widgets()


DEFAULT_BATTERY = [
    {"id": "role_assessment", "when": "always", "max_tokens": 960, "enabled": True,
     "question": "For each player ({players}), including yourself, what role do they actually have, how sure are you "
                 "(0-100) and why? Answer only as JSON: [{{\"player\": \"...\", \"guessed_role\": \"Mafia|Villager|Doctor|Unknown\", "
                 "\"confidence\": N, \"reason\": \"...\"}}]"},
    {"id": "suspicion_ranking", "when": "always", "max_tokens": 300, "enabled": True,
     "question": "Rank the alive players ({players}) from most to least suspicious. Answer only as JSON: "
                 "[{{\"player\": \"...\", \"score\": N}}]"},
    {"id": "social_map", "when": "always", "max_tokens": 960, "enabled": True,
     "question": "Your role assessment was: {prev_role_assessment}. How does each alive player feel about you? Answer only "
                 "as JSON: {{\"toward_me\": [{{\"player\": \"...\", \"attitude\": \"trusts|neutral|suspects\", "
                 "\"confidence\": N, \"reason\": \"...\"}}]}}"},
    {"id": "planned_action", "when": "own_turn", "max_tokens": 1024, "enabled": True,
     "question": "What will you do next and why? Answer only as JSON: {{\"action\": \"...\", \"target\": \"...\", \"reasoning\": \"...\"}}"},
]


def editor() -> tuple[list[dict[str, Any]], bool]:
    """Draw the editor; return (battery, valid)."""
    if KEY not in st.session_state:
        pre = presets()
        if pre:
            _load_preset(next(iter(pre.values())))
        if KEY not in st.session_state or not st.session_state[KEY]:
            st.session_state[KEY] = [dict(p) for p in DEFAULT_BATTERY]
    battery: list[dict[str, Any]] = st.session_state[KEY]
    gen = st.session_state.get("pe_gen", 0)
    pre = presets()
    c1, c2 = st.columns([3, 2])
    with c1:
        if pre:
            choice = st.selectbox("Start from a preset battery", list(pre), key="pe_preset",
                                  help="Batteries in configs/probes/. Loading one replaces the probes below.")
            st.button("Load preset", key="pe_load", on_click=_load_preset, args=(pre[choice],))
        else:
            st.caption("No preset batteries in configs/probes/ yet: editing the built-in default battery.")
    with c2:
        up = st.file_uploader("Import YAML", type=["yaml", "yml"], key=f"pe_upload_{gen}",
                              help="A YAML file with a `probes:` list (or an `introspection:` block).")
        if up is not None:
            try:
                st.session_state[KEY] = load_yaml(up.getvalue().decode("utf-8"))
                _reset_widgets()
                st.rerun()
            except Exception as exc:
                st.error(f"Could not import {up.name}: {exc}")
    if st.session_state.get("pe_load_error"):
        st.error(st.session_state["pe_load_error"])
    st.caption("Placeholders: `{player}` probed agent, `{players}` alive players, `{prev_<id>}` this step's answer to "
               "another probe, `{last_<id>}` this agent's previous answer. Literal JSON braces must be doubled: `{{` `}}`.")
    errors, per = validate(battery)
    for i, p in enumerate(battery):
        with st.container(border=True):
            a, b, c, d, e = st.columns([3, 2, 2, 1.3, 2.2])
            p["id"] = a.text_input("id", p.get("id", ""), key=f"pe_id_{gen}_{i}")
            p["when"] = b.selectbox("when", WHEN, index=WHEN.index(p["when"]) if p.get("when") in WHEN else 0,
                                    key=f"pe_when_{gen}_{i}", help="always = every probed agent; own_turn = only the acting agent")
            p["max_tokens"] = int(c.number_input("max_tokens", 16, 8192, int(p.get("max_tokens") or 300), step=16,
                                                 key=f"pe_mt_{gen}_{i}"))
            p["enabled"] = d.checkbox("on", bool(p.get("enabled", True)), key=f"pe_en_{gen}_{i}")
            with e:
                bc = st.columns(3)
                bc[0].button("↑", key=f"pe_up_{gen}_{i}", on_click=_move, args=(i, -1), disabled=i == 0, help="Move up")
                bc[1].button("↓", key=f"pe_dn_{gen}_{i}", on_click=_move, args=(i, 1), disabled=i == len(battery) - 1, help="Move down")
                bc[2].button("✕", key=f"pe_rm_{gen}_{i}", on_click=_delete, args=(i,), help="Remove this probe")
            p["question"] = st.text_area("question template", p.get("question", ""), key=f"pe_q_{gen}_{i}", height=90)
            for msg in per.get(i, []):
                st.error(msg, icon="⚠️")
    st.button("＋ Add probe", key="pe_add", on_click=_add)
    errors, per = validate(battery)
    for msg in errors:
        st.error(msg, icon="⚠️")
    valid = not errors and not per
    text = to_yaml(battery)
    with st.expander("Export as YAML", expanded=False):
        st.code(text, language="yaml")
        st.download_button("Download battery.yaml", text, file_name="battery.yaml", mime="text/yaml", key="pe_dl")
    return battery, valid
