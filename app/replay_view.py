"""Replay page views: the branch tree with outcome bars, attribution, bifurcation and validation results."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote, urlencode

import altair as alt
import pandas as pd
import streamlit as st

from mafiascope.analytics.pvalues import format_p as _format_p
from mafiascope.logs import step_label as _label
from mafiascope.logs import step_order

from . import branch_compare_view as BC
from .fork_start import fork_start
from .text import md_escape, md_link, plural
from .widgets import dashes

SIDE_COLOURS = {"Mafia": "#D55E00", "Villagers": "#0072B2", "Draw": "#999999"}


def live_link(game_id: str, step: str | None = None) -> str:
    """URL of a game in Live Game (the entrypoint honours ?page=), at timeline label ``step`` if given."""
    return "?" + urlencode({"page": "live", "game": game_id, **({"step": step} if step else {})}, quote_via=quote)


def step_label(key: list[int] | tuple[int, int] | None) -> str:
    """The timeline label of a (round, seq) key: ``R1.5``, ``R1.end`` for a round end."""
    r, q = (list(key) + [0, 0])[:2] if key else (0, 0)
    return _label(r, q)


def _order(key: list[int] | None) -> tuple[int, float]:
    """Chronological order of (round, seq) keys: a round's end (seq -1) after its messages."""
    r, q = (list(key) + [0, 0])[:2] if key else (0, 0)
    return step_order(r, q)


def describe_intervention(iv: dict[str, Any] | None) -> str:
    """What a batch changed, in words: the replaced line, the forced night action, or a plain reroll."""
    if not iv:
        return "resample"
    if iv.get("type") == "replace_utterance":
        text = str(iv.get("text") or "").replace("\n", " ")
        return f"{iv.get('seat')} says “{text[:60]}{'…' if len(text) > 60 else ''}”"
    if iv.get("type") == "override_night":
        return f"{iv.get('seat')} {iv.get('action') or 'acts on'} → {iv.get('target')}"
    return str(iv.get("type"))


def no_snapshot_hint(parent: Any, labels: list[str], keys: list[tuple[int, int]], step: int) -> str:
    """What to do when the step cannot be forked: the nearest forkable steps, or why no step of this game can be.

    ``labels``/``keys`` are the timeline's step labels and (round, seq) keys; ``parent`` is a ParentGame."""
    ok = [i for i, k in enumerate(keys) if parent.has(k)]
    if not ok:
        return ("None of this game's steps can be forked: its state.jsonl holds no snapshot the engine can resume "
                "(games recorded by the original MafiaScope keep another state format, and games launched with "
                "snapshots off have none). Fork a game made by mafiascope (data/demo, runs/).")
    before = [i for i in ok if i < step]
    after = [i for i in ok if i > step]
    near = ([f"{labels[before[-1]]} (step {before[-1]}, before)"] if before else []) + \
        ([f"{labels[after[0]]} (step {after[0]}, after)"] if after else [])
    return f"No snapshot at this step. Nearest forkable steps: {' · '.join(near)}."


def branch_form_note(parent: Any, key: tuple[int, int], label: str, is_message: bool) -> str:
    """Where a branch from ``label`` starts, for each kind of branch the form makes (app/fork_start.py's words)."""
    note = f"A resample or a night override keeps {label} and plays on after it."
    prev = parent.previous_key(key) if is_message else None
    if prev is not None:
        shared = "nothing but the set-up" if tuple(prev) == (0, 0) else step_label(list(prev))
        note += f" A replacement replaces {label} itself: the branch shares the game through {shared} and {label} is its first move of its own."
    return note


def night_override_hint(parent: Any, steps: list[Any], i: int, look: int = 40) -> str:
    """Why no night action can be overridden from step ``i`` and the nearest later step where one can (the round end
    before the next night, or a night action), from the engine's own check (app.replay_jobs.night_actors)."""
    from .replay_jobs import night_actors

    s = steps[i]
    for later in steps[i + 1:i + 1 + look]:
        if (later.phase == "night" or later.seq == -1) and parent.has((later.round, later.seq)) and night_actors(parent, (later.round, later.seq)):
            where = "is a day step" if s.phase != "night" else "comes after the last night action to force"
            return (f"Night override: {s.label} {where}, so no night action can be forced from here. The next night's "
                    f"actions can be forced from {later.label}: move the timeline there.")
    return f"Night override: no night action is left to force after {s.label} (the game has no night to come)."


def _batches(tree: dict[str, Any], depth: int = 0, parent: str | None = None, made_by: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """The tree's batches in fork order, each with where it starts (app/fork_start.py) and what made it: its
    intervention, or the experiment that started it (``made_by``: batch id -> label)."""
    made_by = made_by or {}
    rows = []
    starts = {b["fork_batch_id"]: fork_start(b.get("fork_point"), b.get("intervention")) for b in tree.get("batches", [])}
    for b in sorted(tree.get("batches", []), key=lambda b: _order(_key(starts[b["fork_batch_id"]].step))):
        start = starts[b["fork_batch_id"]]
        what = made_by.get(str(b["fork_batch_id"])) or describe_intervention(b.get("intervention"))
        rows.append({"batch": b["fork_batch_id"], "depth": depth, "parent": parent or tree.get("game_id"), "start": start,
                     "fork_point": start.step, "first_new": b.get("first_new"), "intervention": what, "summary": b["summary"],
                     "branches": b["branches"], "inherited": b.get("inherited")})  # fmt: skip
        for br in b["branches"]:
            rows.extend(_batches(br, depth + 1, br["game_id"], made_by))
    return rows


def _key(label: str) -> list[int] | None:
    """``R1.6`` -> [1, 6], ``R1.end`` -> [1, -1] (the order of the tree's rows)."""
    from mafiascope.logs import StepKey

    try:
        k = StepKey.parse(label)
    except ValueError:
        return None
    return [k.round, k.msg_seq]


def outcome_rows(summary: dict[str, Any], inherited: dict[str, dict[str, str]] | None) -> list[dict[str, Any]]:
    """Eliminations per round with k/n and Wilson intervals; ``before the fork`` marks the ones the branches
    inherited from the parent (``inherited``: see app.replay_jobs.inherited_outcomes). Inherited rows come
    first: they are the shared history, the rest are what the branches did."""
    inherited = inherited or {}
    rows = [{"before the fork": "inherited" if (inherited.get(key) or {}).get(str(rnd)) == name else "",
             "round": int(rnd), "how": how, "player": name, "branches": f"{v['k']}/{v['n']}", "share": v["p"],
             "95% CI": f"{v['ci95'][0]:.2f}–{v['ci95'][1]:.2f}"}
            for how, key in (("killed at night", "night_killed"), ("voted out", "day_eliminated"))
            for rnd, d in summary.get(key, {}).items() for name, v in d.items()]  # fmt: skip
    # a round's night comes before its day vote
    rows.sort(key=lambda o: (not o["before the fork"], o["round"], o["how"] != "killed at night"))
    if not any(o["before the fork"] for o in rows):  # a fork before any elimination: no empty column
        for o in rows:
            del o["before the fork"]
    return rows


PARENT_LABEL = "the game itself (no fork)"


def outcome_chart(rows: list[dict[str, Any]], parent_winner: str | None = None) -> alt.Chart | None:
    """Winner shares per batch as stacked bars, with the parent game's own result as the first bar (a finished
    parent: one game, so one side at 100%)."""
    data = []
    for r in rows:
        n = r["summary"]["finished"]
        label = f"{r['start'].new} · {r['intervention']} · n={n} ({r['batch'][:6]})"
        for side, v in r["summary"]["winner"].items():
            if v["k"]:
                data.append({"batch": label, "winner": side, "branches": v["k"], "n": n,
                             "share": f"{v['k']}/{n} = {v['p']:.0%} (95% CI {v['ci95'][0]:.0%}–{v['ci95'][1]:.0%})"})  # fmt: skip
    if not data:
        return None
    if parent_winner:
        data.insert(0, {"batch": PARENT_LABEL, "winner": parent_winner, "branches": 1, "n": 1,
                        "share": f"the parent game was won by {parent_winner}"})
    df = pd.DataFrame(data)
    return (
        alt.Chart(df)
        .mark_bar()
        .encode(
            # labels name the step, the change and n; Vega-Lite's default 180 px limit cut them to "R1…"
            y=alt.Y("batch:N", title=None, sort=None, axis=alt.Axis(labelLimit=480)),
            x=alt.X("branches:Q", stack="normalize", title="winner share of finished branches",
                    axis=alt.Axis(format="%", tickCount=5)),
            color=alt.Color("winner:N", scale=alt.Scale(domain=list(SIDE_COLOURS), range=list(SIDE_COLOURS.values()))),
            tooltip=["batch", "winner", "share"],
        )
        .properties(height=alt.Step(28))  # per row; a fixed height is shared with the axis and squashes one-batch charts
    )


def _dirs_of(tree: dict[str, Any], root_dir: str | None) -> dict[str, str]:
    """game id -> directory for the root game and every branch in the tree."""
    out = {str(tree.get("game_id")): root_dir} if root_dir else {}
    for b in tree.get("batches", []):
        for br in b.get("branches", []):
            if br.get("path"):
                out[str(br["game_id"])] = str(br["path"])
            out.update(_dirs_of(br, None))
    return out


def branch_tree(tree: dict[str, Any], root_dir: str | None = None, parent_winner: str | None = None,
                made_by: dict[str, str] | None = None) -> None:
    rows = _batches(tree, made_by=made_by)
    dirs = _dirs_of(tree, root_dir)
    if not rows:
        st.caption("No branches yet. Pick a step and press **Branch**.")
        return
    chart = outcome_chart(rows, parent_winner)
    if chart is not None:
        st.altair_chart(chart, width="stretch")
    for r in rows:
        s = r["summary"]
        wins = ", ".join(f"{k} {v['k']}/{v['n']} [{v['ci95'][0]:.2f}–{v['ci95'][1]:.2f}]" for k, v in s["winner"].items() if v["n"] and v["k"])
        pad = "  " * r["depth"]
        opens = r["first_new"] or r["fork_point"]
        with st.expander(f"{pad}↳ {md_escape(r['start'].new)} · {md_escape(r['intervention'])} · {s['finished']}/{s['n']} finished · "
                         f"{md_escape(wins)} · batch {md_escape(r['batch'])}"):
            links = " · ".join(f"{md_link(b['game_id'], live_link(b['game_id'], opens))} ({md_escape(b['winner'] or 'unfinished')}, {md_escape(b['rounds'])} r)"
                               for b in r["branches"])  # fmt: skip
            st.markdown(links)
            st.caption(f"The branches are {md_escape(r['start'].text)}. Each link opens a branch in Live Game at "
                       f"{md_escape(opens)}, its first step of its own.")
            outs = outcome_rows(s, r.get("inherited"))
            if outs:
                st.dataframe(pd.DataFrame(outs), hide_index=True, width="stretch",
                             column_config={"share": st.column_config.NumberColumn(format="percent")})  # fmt: skip
                if any(o.get("before the fork") for o in outs):
                    st.caption("Rows marked “inherited” happened in the parent before the fork point: every branch starts "
                               "with them, so their k/n is history, not an effect of the branch.")  # fmt: skip
            st.caption(f"rounds per branch: mean {s['rounds'].get('mean')}, min {s['rounds'].get('min')}, max {s['rounds'].get('max')} "
                       f"(n={s['rounds'].get('n', 0)}); shares are of the {s['finished']} finished branches, Wilson 95% intervals")  # fmt: skip
            if dirs.get(str(r["parent"])):
                st.markdown("**Compared with the parent**")
                BC.render(dirs[str(r["parent"])], r["branches"], key=r["batch"])


def utterance_label(ut: dict[str, Any]) -> str:
    """An attribution's message as the timeline names it (``R1.6 Riley``; the result stores ``1.6``)."""
    try:
        at = step_label([int(ut["round"]), int(ut["msg_seq"])])
    except (KeyError, TypeError, ValueError):
        at = str(ut.get("step") or "?")
    return f"{at} {ut.get('speaker') or ''}".strip()


def format_p(p: Any) -> str:
    """A result file's p-value as the report prints it; anything but a number (a crafted file) as a dash."""
    return _format_p(p) if isinstance(p, (int, float)) and not isinstance(p, bool) else "–"


def attribution(res: dict[str, Any]) -> None:
    from mafiascope.lexicon import glossary

    st.caption(glossary.tip("PRE/POST"))
    cols: dict[str, dict[str, Any]] = {}
    for u in res["utterances"]:
        d = u["delta_post_minus_pre"]
        col = {"n per arm": d["p_mafia_win"]["pre"]["n"],
               "P(Mafia wins) PRE": d["p_mafia_win"]["pre"]["p"], "P(Mafia wins) POST": d["p_mafia_win"]["post"]["p"],
               "Δ P(Mafia wins), POST − PRE": d["p_mafia_win"]["diff"], "Fisher p (Mafia wins)": format_p(d["p_mafia_win"]["fisher_p"]),
               "Holm p (Mafia wins)": format_p(d["p_mafia_win"].get("fisher_p_holm"))}  # fmt: skip
        if "p_eliminate_target" in d:
            t = d["p_eliminate_target"]
            col.update({f"P({res['target']} out) PRE": t["pre"]["p"], f"P({res['target']} out) POST": t["post"]["p"],
                        f"Δ P({res['target']} out)": t["diff"], f"Δ P({res['target']} out), 95% CI": _ci(t["ci95"]),
                        f"Fisher p ({res['target']} out)": format_p(t["fisher_p"]),
                        f"Holm p ({res['target']} out)": format_p(t.get("fisher_p_holm"))})  # fmt: skip
        for p, v in d["suspicion"].items():
            col[f"Δ suspicion of {p}"] = v
        cols[utterance_label(u["utterance"])] = col
    # one row per measure, a column per message: the measures are many, the messages few (a row per message ran
    # past the table's right edge)
    table = pd.DataFrame(cols).rename_axis("measure").reset_index()
    table[list(cols)] = table[list(cols)].map(lambda v: round(v, 3) if isinstance(v, float) else v)
    st.dataframe(dashes(table.astype({c: object for c in cols})), hide_index=True, width="stretch",
                 height=38 + 35 * len(table))
    family = (res.get("p_holm_family") or {}).get("text")
    st.caption("Fisher p: Fisher's exact test, two-sided: how likely a PRE-POST gap this large is by chance."
               + (f" Holm p: {family}." if family else ""))
    chart = attribution_chart(res)
    if chart is not None:
        st.altair_chart(chart, width="content")
    st.caption(md_escape(res.get("notes", "")))


def _ci(ci: list[float] | None) -> str:
    return f"{ci[0]:+.2f} to {ci[1]:+.2f}" if ci else ""


def attribution_chart(res: dict[str, Any]) -> alt.FacetChart | None:
    """P(target eliminated) per arm and utterance, PRE then POST, with Wilson 95% intervals and n.
    (The bars used to be drawn without their intervals, POST before PRE, with rotated labels.)"""
    if not res.get("target"):
        return None
    long = []
    for u in res["utterances"]:
        t = u["delta_post_minus_pre"]["p_eliminate_target"]
        for arm in ("pre", "post"):
            a = t[arm]
            long.append({"utterance": utterance_label(u["utterance"]), "arm": arm.upper(), "p": a["p"],
                         "lo": a["ci95"][0], "hi": a["ci95"][1], "k/n": f"{a['k']}/{a['n']}"})  # fmt: skip
    df = pd.DataFrame(long)
    x = alt.X("arm:N", title=None, sort=["PRE", "POST"], axis=alt.Axis(labelAngle=0))
    y = alt.Y("p:Q", title=f"P({res['target']} eliminated), 95% CI", scale=alt.Scale(domain=[0, 1]))
    bars = alt.Chart().mark_bar(width=28).encode(x=x, y=y, color=alt.Color("arm:N", sort=["PRE", "POST"], legend=None),
                                                 tooltip=["utterance", "arm", "k/n", "p", "lo", "hi"])  # fmt: skip
    from .charts import CI_COLOR
    from .graph import mid_text

    # grey whiskers and mid-grey k/n labels above them: "#333" and the default black text vanished on the dark theme
    rules = alt.Chart().mark_rule(color=CI_COLOR, strokeWidth=2).encode(x=x, y="lo:Q", y2="hi:Q")
    label = mid_text(alt.Chart(), dy=-10, fontSize=11, x=x, y="hi:Q", text="k/n:N")
    return alt.layer(bars, rules, label, data=df).properties(width=110, height=220).facet(
        column=alt.Column("utterance:N", title="utterance (n per arm on the bars)"))


EXP_OPEN = "ms_rp_exp_open"  # ids of the experiment results the researcher has open, the last opened last (the URL's ?exp=)


def open_experiments(ids: list[str]) -> list[str]:
    """Which experiment results are open: those the researcher opened (plus a new ``?exp=`` from the URL), else the
    newest. Kept in the session (the last opened one in the URL), not only in the browser: an expander's open state
    that lives only in the browser is lost whenever the page draws it as a new element (a rerun that adds or removes
    something above it, a reload, a visit to another page), and the result a researcher was reading closed."""
    from . import state as S

    raw = S.fresh_url_value("exp")
    opened = S.get(EXP_OPEN)
    if raw is not None:
        if raw in ids:
            opened = [*(o for o in opened or [] if o != raw), raw]
        else:
            S.add_url_error(f"URL parameter exp={S.quoted(raw)}: no experiment of this game has that id.")
    opened = [o for o in (ids[:1] if opened is None else opened) if o in ids]
    S.put(EXP_OPEN, opened)
    S.sync_url(exp=opened[-1] if opened else None)
    S.report_url_errors()
    return opened


def _experiment_toggled(exp_id: str, key: str) -> None:
    from . import state as S

    rest = [o for o in S.get(EXP_OPEN) or [] if o != exp_id]
    S.put(EXP_OPEN, [*rest, exp_id] if st.session_state.get(key) else rest)


def experiment_expander(label: str, res: dict[str, Any], opened: list[str]) -> Any:
    """An experiment's result panel whose open state the server tracks (a key per result file, so a new result
    does not shift the others' keys): it stays open across reruns (see :func:`open_experiments`)."""
    import hashlib

    exp_id = str(res.get("experiment_id"))
    key = "rp_exp_" + hashlib.sha1(str(res.get("path", exp_id)).encode()).hexdigest()[:12]
    return st.expander(label, expanded=exp_id in opened, key=key, on_change=_experiment_toggled, args=(exp_id, key))


def bifurcation(res: dict[str, Any]) -> None:
    df = pd.DataFrame([{"#": v["variant_idx"], "source": v["source"], "target": v["target"], "winner": v["winner"],
                        "rounds": v["rounds"], "open": live_link(v["fork_game_id"]) if v.get("fork_game_id") else None,
                        "text": v["text"]} for v in res["variants"]])  # fmt: skip
    st.dataframe(df, hide_index=True, width="stretch",
                 column_config={"open": st.column_config.LinkColumn("branch", display_text="open")})  # fmt: skip
    st.caption(md_escape(f"{res['samples']} samples ({res['n_unique_texts']} distinct) at temperature {res['temperature']}; "
                         f"targets in samples: {res['target_dist_samples']}"))  # fmt: skip


def validation(res: dict[str, Any]) -> None:
    if res.get("kind") == "validate_ab":
        m = res["mafia_wins"]
        st.markdown(f"**A/B** ({plural(int(res['games_per_arm']), 'game')} per arm): Mafia wins probed {m['probed']['k']}/{m['probed']['n']}, "
                    f"unprobed {m['unprobed']['k']}/{m['unprobed']['n']}; difference {m['diff']} (95% CI {m['ci95']}), Fisher p = {format_p(m['fisher_p'])} "
                    f"(Holm {format_p(m.get('fisher_p_holm'))}); rounds Mann-Whitney p = {format_p(res['rounds']['mann_whitney_p'])} "
                    f"(Holm {format_p(res['rounds'].get('mann_whitney_p_holm'))}), messages p = {format_p(res['messages']['mann_whitney_p'])} "
                    f"(Holm {format_p(res['messages'].get('mann_whitney_p_holm'))})"
                    + (f". Holm p: {res['p_holm_family']['text']}" if res.get("p_holm_family") else ""))  # fmt: skip
    elif res.get("kind") == "validate_repeat":
        o = res["overall"]
        st.markdown(f"**Repeatability** ({res['states']} states × {res['repeats']} repeats): {o['disagreements']}/{o['pairs']} answer pairs disagree")
        def row(name: str, v: dict[str, Any]) -> dict[str, Any]:
            ci = v.get("ci95") or [None, None]
            return {"probe": name, "disagreement rate": v["p"], "95% CI (Wilson)": f"{ci[0]:.2f}–{ci[1]:.2f}" if ci[0] is not None else "",
                    "pairs": v["pairs"]}  # fmt: skip

        df = pd.DataFrame([row(k, v) for k, v in res["per_probe"].items()] + [row(f"phase: {k}", v) for k, v in res["per_phase"].items()])
        st.dataframe(df, hide_index=True, width="stretch")
