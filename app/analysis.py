"""Cached corpus-level analytics calls for the analysis pages (results are plain dicts/frames).

The metric modules are imported inside the calls: a fresh process whose results are on disk
(app/disk_memo.py) draws the Dashboard without importing them."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pandas as pd
import streamlit as st

from . import bridge, disk_memo
from .data import model_list, models_of
from .sidebar import context


def selection_dirs(include_forks: bool = False) -> tuple[str, ...]:
    sel = context().selection
    if sel is None or sel.empty:
        return ()
    if not include_forks:
        sel = sel[~sel["is_branch"]]
    return tuple(sorted(sel["dir"].astype(str)))


def analysed_games(dirs: tuple[str, ...], mode: Any, **kw: Any) -> Any:
    """The selection's games as the report counts them: every root game, transcript-only ones included (their
    outcomes and votes count; ``.probed()`` gives the probe-based figures their games); compat mode: the
    original's selection, the probed games; with a probe layer picked, the games that hold it (as ``--probe-layer``).
    One corpus for both (the probed games are a view of it)."""
    return bridge.corpus(dirs, probed_only=bool(mode.is_compat) or bridge.probe_layer_choice() is not None, **kw)


def cache_key(dirs: tuple[str, ...]) -> tuple:
    """The arguments a cached builder takes for a selection: the directories (passed un-hashed, as a leading
    underscore argument), the digest that covers them and their files, and the analytics mode."""
    return (dirs, bridge.digest(dirs), bridge.current_mode())


@st.cache_data(max_entries=32, show_spinner="Computing calibration (F2) ...")
def _f2(_dirs: tuple[str, ...], key: str, mode: Any, model: str | None) -> dict[str, Any]:
    from mafiascope.analytics.f2 import f2 as f2_of

    c = analysed_games(_dirs, mode, model=model).probed()
    # a model's calibration = the guesses of the seats it played, in the games where it sat (not every seat there)
    return {"m": c.m, **f2_of(c, mode, model=model)} if c.m else {"m": 0}


def f2(dirs: tuple[str, ...], model: str | None = None) -> dict[str, Any]:
    return _f2(*cache_key(dirs), model)


@st.cache_data(max_entries=32, show_spinner="Computing second-order consistency (F3) ...")
def _f3(_dirs: tuple[str, ...], key: str, mode: Any, tau: float) -> dict[str, Any]:
    from mafiascope.analytics.f3 import f3 as f3_of

    c = analysed_games(_dirs, mode).probed()
    return {"m": c.m, **f3_of(c, mode, tau=tau)} if c.m else {"m": 0}


def f3(dirs: tuple[str, ...], tau: float) -> dict[str, Any]:
    return _f3(*cache_key(dirs), float(tau))


@st.cache_data(max_entries=16, show_spinner="Collecting second-order pairs ...")
def _f3_pairs(_dirs: tuple[str, ...], key: str, mode: Any, tau: float) -> pd.DataFrame:
    from mafiascope.analytics.f3 import actual_attitude
    from mafiascope.analytics.f3 import f3_pairs as f3_pairs_of
    from mafiascope.analytics.viewer import step_label
    from mafiascope.lexicon.labels import ATTITUDES

    c = analysed_games(_dirs, mode).probed()
    if not c.m:
        return pd.DataFrame()
    p = f3_pairs_of(c, mode)
    act = actual_attitude(p["guess"].to_numpy(), p["conf"].to_numpy(), tau)
    names = c.players.set_index(["g", "seat"])["name"]
    roles = c.players.set_index(["g", "seat"])["role"]
    gid = c.games["game_id"].to_numpy()
    out = pd.DataFrame({
        "game_id": gid[p["g"].to_numpy()],
        "predictor": names.reindex(pd.MultiIndex.from_arrays([p["g"], p["A"]])).to_numpy(),
        "predictor_role": roles.reindex(pd.MultiIndex.from_arrays([p["g"], p["A"]])).to_numpy(),
        "about": names.reindex(pd.MultiIndex.from_arrays([p["g"], p["B"]])).to_numpy(),
        "about_role": roles.reindex(pd.MultiIndex.from_arrays([p["g"], p["B"]])).to_numpy(),
        "predicted": [ATTITUDES[int(x)] for x in p["pred"].to_numpy()],
        "actual": [ATTITUDES[int(x)] for x in act],
        "their_guess_conf": p["conf"].to_numpy(),
        "round": p["round"].to_numpy(),
        "seq": p["public_msg_seq"].to_numpy(),
    })
    out["step"] = [step_label(int(r), int(s)) for r, s in zip(out["round"], out["seq"])]
    out["match"] = out["predicted"] == out["actual"]
    return out


def f3_pairs(dirs: tuple[str, ...], tau: float) -> pd.DataFrame:
    return _f3_pairs(*cache_key(dirs), float(tau))


@st.cache_data(max_entries=16, show_spinner="Finding suspicion episodes ...")
def _episodes(_dirs: tuple[str, ...], key: str, mode: Any, merge_gap: int) -> dict[str, Any]:
    from mafiascope.analytics.episodes import find_episodes

    c = analysed_games(_dirs, mode).probed()
    return find_episodes(c, merge_gap=merge_gap) if c.m else {"candidates": [], "windows": []}


def episodes(dirs: tuple[str, ...], merge_gap: int = 2) -> dict[str, Any]:
    return _episodes(*cache_key(dirs), int(merge_gap))


@st.cache_data(max_entries=16, show_spinner="Building the corpus report ...")
@disk_memo.persist("report", bridge.corpus_choices)
def _report(_dirs: tuple[str, ...], key: str, mode: Any) -> dict[str, Any]:
    return _compute_report(_dirs, mode)


def _compute_report(dirs: tuple[str, ...], mode: Any, include_invalid: bool | None = None) -> dict[str, Any]:
    from mafiascope.analytics.metric import Place
    from mafiascope.analytics.report import build_report
    from mafiascope.analytics.sections import section_keys

    c = analysed_games(dirs, mode, include_invalid=include_invalid)
    # the sections the dashboard shows (plans/personality/episodes have their own pages or the CLI report)
    return build_report(c, mode, sections=section_keys(Place.DASHBOARD)) if c.m else {"n_games": 0}


def report_stored(dirs: tuple[str, ...]) -> bool:
    """Whether the Dashboard's report of this selection is already on disk (no corpus load needed)."""
    _, key, mode = cache_key(dirs)
    return any(disk_memo.has(name, disk_memo.entry_key(key, mode, (), bridge.corpus_choices))
               for name in ("report_summary", "report"))


def report(dirs: tuple[str, ...]) -> dict[str, Any]:
    return _report(*cache_key(dirs))


def summary_of(rep: dict[str, Any]) -> dict[str, Any]:
    """The report without F2's per-agent rows (about 1 MB of the 1.3 MB at 1,000 games), which only the
    report's JSON download uses."""
    f2 = rep.get("f2")
    if not isinstance(f2, dict) or "by_agent" not in f2:
        return rep
    return {**rep, "f2": {k: v for k, v in f2.items() if k != "by_agent"}}


@st.cache_data(max_entries=16, show_spinner="Building the corpus report ...")
@disk_memo.persist("report_summary", bridge.corpus_choices)
def _report_summary(_dirs: tuple[str, ...], key: str, mode: Any) -> dict[str, Any]:
    return summary_of(_report(_dirs, key, mode))


def report_summary(dirs: tuple[str, ...]) -> dict[str, Any]:
    """What the Dashboard draws of the report (:func:`summary_of`); a fresh process with it on disk reads
    this small entry instead of the whole report, and st.cache_data copies it on every rerun."""
    return _report_summary(*cache_key(dirs))


def report_json(dirs: tuple[str, ...]) -> Callable[[], str]:
    """The whole report as JSON, serialised when called: a download button's callable, which runs outside
    the script run (no session state), so the selection's key and the invalid-games choice are taken now."""
    _, key, mode = cache_key(dirs)
    invalid = bridge.include_invalid_choice()
    entry = disk_memo.entry_key(key, mode, (), lambda: invalid)

    def dump() -> str:
        found, rep = disk_memo.load("report", entry)
        return json.dumps(rep if found else _compute_report(dirs, mode, invalid), default=str, indent=1)

    return dump


@st.cache_data(max_entries=16, show_spinner="Per-model figures ...")
@disk_memo.persist("per_model", bridge.corpus_choices)
def _per_model(_dirs: tuple[str, ...], key: str, mode: Any) -> dict[str, Any]:
    from mafiascope.analytics.f1 import f1_by_round
    from mafiascope.analytics.f2 import f2 as f2_of
    from mafiascope.analytics.seats import model_frame

    c = analysed_games(_dirs, mode).probed()
    models = models_of(c.games["models"])
    out: dict[str, Any] = {}
    for mdl in models:
        # per model = the seats that model played (games often mix models), its intervals over its own games
        games = sum(mdl in model_list(ms) for ms in c.games["models"])
        if games:
            with model_frame(c, mode, mdl):
                out[mdl] = {"games": games, "f1_by_round": f1_by_round(c, mode, model=mdl),
                            "f2": f2_of(c, mode, breakdowns=False, model=mdl)}
    return out


@st.cache_data(max_entries=32, show_spinner="Comparing the two models ...")
@disk_memo.persist("compare", bridge.corpus_choices)
def _compare(_dirs: tuple[str, ...], key: str, mode: Any, a: str, b: str) -> dict[str, Any]:
    from mafiascope.analytics.seats import compare as compare_models

    return compare_models(analysed_games(_dirs, mode), mode, a, b)


def compare(dirs: tuple[str, ...], a: str, b: str) -> dict[str, Any]:
    """Model a minus model b on every seat-level metric (difference, cluster-bootstrap CI, p, Holm p)."""
    return _compare(*cache_key(dirs), a, b)


@st.cache_data(max_entries=32, show_spinner=False)
@disk_memo.persist("seat_models", bridge.corpus_choices)
def _seat_models(_dirs: tuple[str, ...], key: str, mode: Any) -> list[str]:
    from mafiascope.analytics.seats import models_of as seated_models

    return seated_models(analysed_games(_dirs, mode))


def seat_models(dirs: tuple[str, ...]) -> list[str]:
    """Models seated in the analysed games (sorted)."""
    return _seat_models(*cache_key(dirs))


def per_model(dirs: tuple[str, ...]) -> dict[str, Any]:
    return _per_model(*cache_key(dirs))


@st.cache_data(max_entries=16, show_spinner="Outcomes ...")
@disk_memo.persist("outcomes", bridge.corpus_choices)
def _outcomes(_dirs: tuple[str, ...], key: str, mode: Any) -> dict[str, Any]:
    from mafiascope.analytics.accounting import outcomes as game_outcomes
    from mafiascope.analytics.accounting import parse_accounting
    from mafiascope.logs.schema import MAFIA_ROLES

    c = analysed_games(_dirs, mode)
    pl = c.players
    # models of each game's Mafia and town seats, in one pass over the seats (games in g order)
    sides: dict[int, tuple[set[str], set[str]]] = {}
    for g, role, model in zip(pl["g"].tolist(), pl["role"].tolist(), pl["model"].tolist()):
        sides.setdefault(g, (set(), set()))[0 if role in MAFIA_ROLES else 1].add(str(model))
    gid, winner = c.games["game_id"].tolist(), c.games["winner"].tolist()
    rounds, completed = c.games["last_round"].tolist(), c.games["completed"].tolist()
    rows = [{"game_id": gid[g], "mafia_models": ",".join(sorted(maf)), "town_models": ",".join(sorted(town)),
             "winner": winner[g], "rounds": rounds[g], "completed": bool(completed[g])}
            for g, (maf, town) in sorted(sides.items())]
    return {"outcomes": game_outcomes(c) if c.m else {}, "parse": parse_accounting(c.probed(), mode) if c.m else {}, "games": pd.DataFrame(rows)}


def outcomes(dirs: tuple[str, ...]) -> dict[str, Any]:
    return _outcomes(*cache_key(dirs))
