"""Graph adapter: player graphs drawn as Altair charts with fixed positions.

Seats sit on an ellipse in seat order, so nodes never move while the timeline moves.
Node clicks come back through Altair's point selection (``on_select="rerun"``); every
node and edge carries a tooltip with the agent's verbatim reason (Vega tooltips render
text, never HTML). streamlit-agraph is kept as an optional renderer for a single graph
(see :func:`render_agraph`): its released version has no ``key`` (two graphs per page
clash), edge clicks return nothing and a click always reruns, so Altair is the default.
"""

from __future__ import annotations

import functools
import html
import json
import math
from typing import Any

import altair as alt
import streamlit as st
from pydantic import BaseModel

from . import vega_data
from .palette import ATTITUDE_COLORS, BRAND, MISMATCH_COLOR, ROLE_COLORS, canonical_role, lerp_hex, role_color, role_shape

NODE_PARAM = "node"
_DOMAIN_X = (-1.45, 1.45)
_DOMAIN_Y = (-1.32, 1.3)
_DASH = alt.Scale(domain=["solid", "dashed", "dotted"], range=[[1, 0], [5, 4], [2, 3]])


def ellipse_positions(names: list[str], rx: float = 1.0, ry: float = 0.92) -> dict[str, tuple[float, float]]:
    """Seat i of n at angle 90° - 360°·i/n (clockwise from the top): stable for a game."""
    n = max(1, len(names))
    out = {}
    for i, name in enumerate(names):
        a = math.pi / 2 - 2 * math.pi * i / n
        out[name] = (round(rx * math.cos(a), 4), round(ry * math.sin(a), 4))
    return out


def _xy(field: str, domain: tuple[float, float]) -> alt.X | alt.Y:
    cls = alt.X if field.startswith("x") else alt.Y
    return cls(f"{field}:Q", scale=alt.Scale(domain=list(domain)), axis=None)


def _edge_layers(tooltip: list[str], dx: tuple[float, float] = _DOMAIN_X, dy: tuple[float, float] = _DOMAIN_Y) -> list[alt.Chart]:
    base = alt.Chart(alt.NamedData("edges"))
    rule = base.mark_rule(strokeCap="round").encode(
        x=_xy("x", dx), y=_xy("y", dy), x2="x2:Q", y2="y2:Q",
        color=alt.Color("color:N", scale=None),
        strokeWidth=alt.StrokeWidth("width:Q", scale=None),
        strokeDash=alt.StrokeDash("dash:N", scale=_DASH, legend=None),
        opacity=alt.Opacity("opacity:Q", scale=None),
        tooltip=tooltip,
    )
    # arrow heads / hover targets at 72 % of the way to the target
    heads = base.transform_calculate(hx="datum.x + 0.72*(datum.x2-datum.x)", hy="datum.y + 0.72*(datum.y2-datum.y)").mark_point(
        filled=True, size=70, shape="circle").encode(
        x=alt.X("hx:Q", scale=alt.Scale(domain=list(dx)), axis=None),
        y=alt.Y("hy:Q", scale=alt.Scale(domain=list(dy)), axis=None),
        color=alt.Color("color:N", scale=None), opacity=alt.Opacity("opacity:Q", scale=None), tooltip=tooltip)
    return [rule, heads]


def _node_layers(tooltip: list[str], selectable: bool, dx: tuple[float, float] = _DOMAIN_X,
                 dy: tuple[float, float] = _DOMAIN_Y) -> list[alt.Chart]:
    """The nodes (named dataset ``nodes``; a click selects the node's name) and their labels."""
    nb = alt.Chart(alt.NamedData("nodes"))
    pts = nb.mark_point(filled=True).encode(
        x=_xy("x", dx), y=_xy("y", dy),
        color=alt.Color("color:N", scale=None), shape=alt.Shape("shape:N", scale=None),
        size=alt.Size("size:Q", scale=None), opacity=alt.Opacity("opacity:Q", scale=None),
        stroke=alt.Stroke("stroke:N", scale=None), strokeWidth=alt.StrokeWidth("stroke_width:Q", scale=None),
        tooltip=tooltip,
    )
    if selectable:
        pts = pts.add_params(alt.selection_point(name=NODE_PARAM, fields=["name"], on="click", clear="dblclick", empty=False))
    return [pts, *halo_text(nb, dy=27, fontSize=12, x=_xy("x", dx), y=_xy("y", dy), text="label:N",
                            opacity=alt.Opacity("label_opacity:Q", scale=None))]


@functools.lru_cache(maxsize=32)
def _skeleton(height: int, node_tooltip: tuple[str, ...], edge_tooltip: tuple[str, ...], rings: bool, selectable: bool,
              title: str | None, ring_tooltip: str = "Deception:N") -> str:
    """The graph's Vega-Lite spec without data (named datasets nodes/edges/rings), built once.

    Building and validating Altair objects costs ~0.2 s per graph; the structure never
    changes between steps, so only the datasets are swapped on each rerun.
    """
    layers: list[alt.Chart] = _edge_layers(list(edge_tooltip))
    if rings:
        rb = alt.Chart(alt.NamedData("rings"))
        layers.append(rb.mark_point(filled=False, shape="circle", size=1900).encode(
            x=_xy("x", _DOMAIN_X), y=_xy("y", _DOMAIN_Y),
            stroke=alt.Stroke("color:N", scale=None), strokeWidth=alt.value(4),
            strokeDash=alt.StrokeDash("dash:N", scale=_DASH, legend=None), tooltip=[ring_tooltip]))
        layers.append(rb.mark_text(dy=-34, fontSize=11, fontWeight="bold").encode(
            x=_xy("x", _DOMAIN_X), y=_xy("y", _DOMAIN_Y), text="ring_label:N", color=alt.Color("color:N", scale=None)))
    layers.extend(_node_layers(list(node_tooltip), selectable))
    chart = alt.layer(*layers).properties(height=height, background=CARD)  # (a numeric padding broke Streamlit's frontend)
    if title:
        chart = chart.properties(title=alt.TitleParams(title, anchor="start", fontSize=13, color=CARD_INK))
    spec = chart.configure_view(strokeWidth=0).configure_axis(grid=False).to_dict()
    spec["usermeta"] = vega_data.CANVAS  # a step repaints one canvas per graph instead of rebuilding its SVG nodes
    return json.dumps(spec)


def graph_chart(nodes: list[dict[str, Any]], edges: list[dict[str, Any]], *, height: int = 360, node_tooltip: list[str],
                edge_tooltip: list[str], rings: list[dict[str, Any]] | None = None, title: str | None = None,
                selectable: bool = True, ring_tooltip: str = "Deception:N") -> dict[str, Any]:
    """A Vega-Lite spec (dict). Nodes: name,x,y,color,shape,size,opacity,stroke,stroke_width,label (+ tooltip fields).
    Rings: x,y,color,dash,ring_label and the ``ring_tooltip`` field. Rows are plain dicts (no pandas: a graph is a
    handful of rows, and building frames for them cost more than the rest of a timeline step)."""
    spec = json.loads(_skeleton(height, tuple(node_tooltip), tuple(edge_tooltip), rings is not None, selectable, title,
                                ring_tooltip))
    spec["datasets"] = {"nodes": vega_data.records(nodes), "edges": vega_data.records(edges),
                        "rings": vega_data.records(rings or [])}
    return spec


# graphs draw on their own light card in both themes: on the dark theme the dark labels' light halos smeared and
# faded (dead) seats in dark role colours vanished into the background
CARD = "#f7f5f1"
CARD_INK = "#1d1b17"


def halo_text(base: alt.Chart, *, dy: float = 0, fontSize: int = 12, **enc: Any) -> list[alt.Chart]:
    """Dark text over a light halo: readable on the light and on the dark theme alike.

    An ``opacity`` encoding (faded labels of dead seats) applies to the ink only: a faded halo turned
    into a grey smudge with dark-on-dark text on the dark theme."""
    halo_enc = {k: v for k, v in enc.items() if k != "opacity"}
    halo = base.mark_text(dy=dy, fontSize=fontSize, stroke=CARD, strokeWidth=3.5, strokeJoin="round", fill=CARD,
                          strokeOpacity=0.9).encode(**halo_enc)
    ink = base.mark_text(dy=dy, fontSize=fontSize, fill=CARD_INK).encode(**enc)
    return [halo, ink]


MID_INK = "#6e7681"  # about 4.3:1 on the light (#f7f5f1) and on the dark (#0d0c0a) background alike


def mid_text(base: alt.Chart, *, dy: float = 0, fontSize: int = 11, **enc: Any) -> alt.Chart:
    """An annotation on the page's own background (no card), readable on both themes without a halo: a halo made
    for one theme smears on the other. Place it clear of other marks."""
    return base.mark_text(dy=dy, fontSize=fontSize, fill=MID_INK, fontWeight="bold").encode(**enc)


def render(spec: dict[str, Any], key: str, *, selectable: bool = True) -> str | None:
    """Draw a graph spec; return the clicked node's name once per click (None otherwise)."""
    if not selectable:
        vega_data.chart(spec, key=key, width="stretch")
        return None
    event = vega_data.chart(spec, key=key, on_select="rerun", selection_mode=NODE_PARAM, width="stretch")
    return clicked_node(event, key)


def selection_value(event: Any, param: str, field: str, key: str) -> Any:
    """The newly selected ``field`` value of an Altair selection event, once per click (else None)."""
    try:
        pts = event["selection"][param]
    except (KeyError, TypeError):
        try:
            pts = event.selection[param]
        except Exception:
            return None
    val = pts[0].get(field) if isinstance(pts, list) and pts and isinstance(pts[0], dict) else None
    memo = f"_sel:{key}:{param}"
    last = st.session_state.get(memo)
    st.session_state[memo] = val
    return val if val is not None and val != last else None


def clicked_node(event: Any, key: str) -> str | None:
    """The newly clicked node name of a graph's selection event (pure, tested without a browser)."""
    return selection_value(event, NODE_PARAM, "name", key)


# --------------------------------------------------------------------------- builders


def _node_row(name: str, pos: tuple[float, float], *, role: str, alive: bool, size: float = 520,
              opacity: float = 1.0, stroke: str = "#00000000", stroke_width: float = 0.0, label: str | None = None,
              **tips: Any) -> dict[str, Any]:
    return {
        "name": name, "x": pos[0], "y": pos[1], "color": role_color(role), "shape": role_shape(role),
        "size": size, "opacity": opacity if alive else min(opacity, 0.25), "stroke": stroke, "stroke_width": stroke_width,
        "label": label if label is not None else (name if alive else f"✝ {name}"),
        "label_opacity": 1.0 if alive else 0.5, **tips,
    }


def ground_truth(names: list[str], roles: dict[str, str], models: dict[str, str], alive: set[str],
                 speaker: str | None, deception: dict[str, float | None] | None = None,
                 personality: dict[str, dict[str, Any]] | None = None, height: int = 380) -> dict[str, Any]:
    pos = ellipse_positions(names)
    nodes, edges, rings = [], [], []
    for n in names:
        is_sp = n == speaker
        p = (personality or {}).get(n) or {}
        big5 = " ".join(f"{k}{p.get(k)}" for k in "OCEAN" if p.get(k) is not None)
        nodes.append(_node_row(
            n, pos[n], role=roles.get(n, "Unknown"), alive=n in alive, size=900 if is_sp else 520,
            stroke=BRAND if is_sp else "#00000000", stroke_width=4 if is_sp else 0,
            Name=n, Role=roles.get(n, "?"), Status=("speaking" if is_sp else "alive") if n in alive else "eliminated",
            Model=models.get(n, ""), BigFive=big5 or "-"))
    mafia = [n for n in names if canonical_role(roles.get(n)) in ("Mafia", "Don")]
    for i, a in enumerate(mafia):
        for b in mafia[i + 1:]:
            both = a in alive and b in alive
            edges.append({"x": pos[a][0], "y": pos[a][1], "x2": pos[b][0], "y2": pos[b][1], "color": ROLE_COLORS["Mafia"],
                          "width": 2.0, "dash": "dashed", "opacity": 0.8 if both else 0.25, "Link": f"Mafia partners: {a} & {b}"})
    for n, hid in (deception or {}).items():
        if n not in alive or hid is None or n not in pos:
            continue
        rings.append({"x": pos[n][0], "y": pos[n][1], "color": lerp_hex(ROLE_COLORS["Mafia"], ROLE_COLORS["Villager"], hid),
                      "dash": "dashed" if hid < 0.5 else "solid", "ring_label": f"hid {round(100 * hid)}%",
                      "Deception": f"{n} hid from {round(100 * hid)}% of informed town observers"})
    return graph_chart(nodes, edges, rings=rings, height=height,
                       node_tooltip=["Name:N", "Role:N", "Status:N", "Model:N", "BigFive:N"], edge_tooltip=["Link:N"])


def belief_graph(agent: str, names: list[str], assessment: dict[str, dict[str, Any]], suspicion: dict[str, float],
                 alive: set[str], *, threshold: float, carried: bool, height: int = 300, speaker: str | None = None,
                 true_roles: dict[str, str] | None = None, personality: dict[str, str] | None = None) -> dict[str, Any]:
    """The agent's subjective graph: guessed roles (opacity ∝ confidence) and suspicion edges ≥ threshold."""
    nodes, edges = belief_rows(agent, names, assessment, suspicion, alive, threshold=threshold, carried=carried,
                               speaker=speaker, true_roles=true_roles, personality=personality)
    return graph_chart(nodes, edges, height=height, node_tooltip=list(_belief_node_tooltip(true_roles is not None)),
                       edge_tooltip=list(BELIEF_EDGE_TOOLTIP))


BELIEF_EDGE_TOOLTIP = ("From:N", "To:N", "Suspicion:N", "Reason:N")


def _belief_node_tooltip(truth: bool) -> tuple[str, ...]:
    return ("Name:N", "Guess:N", "Confidence:N", "Suspicion:N", "Reason:N", "Personality:N",
            *(("Truth:N",) if truth else ()))  # no empty row without the truth


def belief_rows(agent: str, names: list[str], assessment: dict[str, dict[str, Any]], suspicion: dict[str, float],
                alive: set[str], *, threshold: float, carried: bool, speaker: str | None = None,
                true_roles: dict[str, str] | None = None,
                personality: dict[str, str] | None = None) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The node and edge rows of :func:`belief_graph` (seats on the unit ellipse)."""
    pos = ellipse_positions(names)
    nodes, edges = [], []
    fade = 0.5 if carried else 1.0
    for n in names:
        a = assessment.get(n)
        role = a["role"] if a else "Unknown"
        conf = a["confidence"] if a else 0.0
        is_self = n == agent
        op = (0.25 + 0.75 * conf / 100.0) * fade
        nodes.append(_node_row(
            n, pos[n], role=role, alive=n in alive, size=700 if is_self else 420, opacity=op,
            stroke=BRAND if is_self else ("#888888" if n == speaker else "#00000000"), stroke_width=3 if is_self else (2 if n == speaker else 0),
            label=(f"{n} (me)" if is_self else (f"{n} {conf:.0f}%" if a else n)) if n in alive else f"✝ {n}",
            Name=n, Guess=role if a else "no data", Confidence=f"{conf:.0f}%" if a else "-",
            Reason=(a or {}).get("reason") or "-", Suspicion=f"{suspicion[n]:.0f}/10" if n in suspicion else "-",
            Personality=(personality or {}).get(n, "-"), **({"Truth": true_roles.get(n) or "?"} if true_roles is not None else {})))
    for n, s in suspicion.items():
        if n == agent or n not in pos or agent not in pos or s < threshold:
            continue
        a = assessment.get(n) or {}
        edges.append({"x": pos[agent][0], "y": pos[agent][1], "x2": pos[n][0], "y2": pos[n][1],
                      "color": ROLE_COLORS["Mafia"], "width": 1 + 3 * (s - threshold) / max(1e-9, 10 - threshold + 1),
                      "dash": "solid", "opacity": 0.85 * fade if n in alive else 0.2,
                      "From": agent, "To": n, "Suspicion": f"{s:.0f}/10", "Reason": a.get("reason") or "-"})
    return nodes, edges


class BeliefPanel(BaseModel):
    """One agent's graph among :func:`belief_panels`: its head line, a note under it, and its rows (from
    :func:`belief_rows`; none when the agent has no answer yet)."""

    head: str
    note: str = ""
    nodes: list[dict[str, Any]] = []
    edges: list[dict[str, Any]] = []


PANEL_X = 2.9 + 0.16  # a panel's pitch in data units: its graph's x domain and a gap of ~16 px
PANEL_HEAD_PX = 40  # the head line and the note above each graph
PANEL_GAP_PX = 16


@functools.lru_cache(maxsize=16)
def _panels_skeleton(rows: int, per_row: int, graph_px: int, node_tooltip: tuple[str, ...]) -> str:
    """The spec of :func:`belief_panels` without data: per-graph layers over one coordinate space."""
    unit = (_DOMAIN_Y[1] - _DOMAIN_Y[0]) / graph_px  # data units per pixel, as in one graph of ``graph_px``
    pitch_y = (graph_px + PANEL_HEAD_PX + PANEL_GAP_PX) * unit
    top = _DOMAIN_Y[1] + PANEL_HEAD_PX * unit
    dx = (_DOMAIN_X[0], _DOMAIN_X[0] + per_row * PANEL_X - (PANEL_X - (_DOMAIN_X[1] - _DOMAIN_X[0])))
    dy = (_DOMAIN_Y[0] - (rows - 1) * pitch_y, top)
    cards = alt.Chart(alt.NamedData("cards")).mark_rect(fill=CARD, strokeWidth=0).encode(
        x=_xy("x", dx), y=_xy("y", dy), x2="x2:Q", y2="y2:Q")
    heads = alt.Chart(alt.NamedData("cards"))
    text = {"x": alt.X("tx:Q", scale=alt.Scale(domain=list(dx)), axis=None),
            "y": alt.Y("y2:Q", scale=alt.Scale(domain=list(dy)), axis=None)}
    # a line longer than its card (a narrow page) ends in "…" at the card's edge; hovering it shows it whole
    limit = {"expr": f"width / {per_row} - 16"}
    head = heads.mark_text(align="left", baseline="top", dx=8, dy=6, fontSize=13, fontWeight="bold", fill=CARD_INK,
                           limit=limit).encode(text="head:N", tooltip=["head:N"], **text)
    note = heads.mark_text(align="left", baseline="top", dx=8, dy=23, fontSize=11, fill=MID_INK, limit=limit).encode(
        text="note:N", tooltip=["note:N"], **text)
    layers = [cards, head, note, *_edge_layers(list(BELIEF_EDGE_TOOLTIP), dx, dy), *_node_layers(list(node_tooltip), True, dx, dy)]
    height = round((dy[1] - dy[0]) / unit)
    spec = alt.layer(*layers).properties(height=height, background="transparent").configure_view(
        strokeWidth=0).configure_axis(grid=False).to_dict()
    spec["usermeta"] = vega_data.CANVAS
    return json.dumps(spec)


def belief_panels(panels: list[BeliefPanel], *, truth: bool, per_row: int = 4, graph_px: int = 230) -> dict[str, Any]:
    """Several agents' belief graphs as ONE chart: panel i sits in row i // per_row, column i % per_row, each on its
    own light card with its head line, so a timeline step updates one chart's data instead of redrawing one chart
    (with its head and caption elements) per agent. Nodes keep their tooltips and the click on a node (its name)."""
    rows = max(1, -(-len(panels) // per_row))
    unit = (_DOMAIN_Y[1] - _DOMAIN_Y[0]) / graph_px
    pitch_y = (graph_px + PANEL_HEAD_PX + PANEL_GAP_PX) * unit
    spec = json.loads(_panels_skeleton(rows, per_row, graph_px, _belief_node_tooltip(truth)))
    cards, nodes, edges = [], [], []
    for i, p in enumerate(panels):
        ox, oy = (i % per_row) * PANEL_X, -(i // per_row) * pitch_y
        cards.append({"x": _DOMAIN_X[0] + ox, "x2": _DOMAIN_X[1] + ox, "y": _DOMAIN_Y[0] + oy,
                      "y2": _DOMAIN_Y[1] + PANEL_HEAD_PX * unit + oy, "tx": _DOMAIN_X[0] + ox,
                      "head": p.head, "note": p.note})
        nodes += [{**r, "x": r["x"] + ox, "y": r["y"] + oy} for r in p.nodes]
        edges += [{**r, "x": r["x"] + ox, "y": r["y"] + oy, "x2": r["x2"] + ox, "y2": r["y2"] + oy} for r in p.edges]
    spec["datasets"] = {"cards": vega_data.records(cards), "nodes": vega_data.records(nodes),
                        "edges": vega_data.records(edges)}
    return spec


def ego_graph(agent: str, others: list[dict[str, Any]], *, kind: str, height: int = 300,
              mismatched: set[str] | None = None) -> dict[str, Any]:
    """Agent in the centre, others on the ellipse; edges point at the agent.

    kind="believed": items {name, attitude, confidence, reason}; colour = attitude.
    kind="actual": items {name, role, confidence, reason}; colour = the role they guess for the agent.
    ``mismatched`` names get a dashed amber ring (believed attitude != actual attitude).
    """
    names = [o["name"] for o in others]
    pos = ellipse_positions(names)
    centre = (0.0, 0.0)
    nodes = [_node_row(agent, centre, role="Unknown", alive=True, size=800, stroke=BRAND, stroke_width=3,
                       label=f"{agent} (me)", Name=agent, View="-", Confidence="-", Reason="-")]
    nodes[0]["color"] = "#6e7681"
    edges, rings = [], []
    for o in others:
        n, conf = o["name"], float(o.get("confidence") or 0.0)
        if kind == "believed":
            att = o.get("attitude") or "neutral"
            color = ATTITUDE_COLORS.get(att, ATTITUDE_COLORS["neutral"])
            view = att
        else:
            view = o.get("role") or "Unknown"
            color = role_color(view)
        bad = n in (mismatched or set())
        if bad:
            rings.append({"x": pos[n][0], "y": pos[n][1], "color": MISMATCH_COLOR, "dash": "dashed", "ring_label": "",
                          "Mismatch": f"{n}: how I think {n} sees me differs from how {n} actually sees me"})
        nodes.append(_node_row(n, pos[n], role="Unknown", alive=True, size=420,
                               label=f"{n} {conf:.0f}%" + (" ≠" if bad else ""),
                               Name=n, View=view, Confidence=f"{conf:.0f}%", Reason=o.get("reason") or "-"))
        nodes[-1]["color"] = color
        edges.append({"x": pos[n][0], "y": pos[n][1], "x2": centre[0], "y2": centre[1], "color": color,
                      "width": 1 + 4 * conf / 100.0, "dash": "dashed" if conf < 30 else "solid",
                      "opacity": 0.35 + 0.65 * conf / 100.0, "From": n, "View": view, "Confidence": f"{conf:.0f}%",
                      "Reason": o.get("reason") or "-"})
    return graph_chart(nodes, edges, height=height, rings=rings,
                       node_tooltip=["Name:N", "View:N", "Confidence:N", "Reason:N"],
                       edge_tooltip=["From:N", "View:N", "Confidence:N", "Reason:N"], ring_tooltip="Mismatch:N")


def render_agraph(names: list[str], roles: dict[str, str], alive: set[str], speaker: str | None) -> str | None:
    """Optional vis.js renderer of the ground-truth graph (one per page; titles HTML-escaped)."""
    try:
        from streamlit_agraph import Config, Edge, Node, agraph
    except Exception as exc:  # pragma: no cover - optional dependency
        st.warning(f"streamlit-agraph is unavailable ({exc}); showing the Altair graph instead.")
        return None
    pos = ellipse_positions(names, rx=260, ry=200)
    nodes = [Node(id=n, label=n, title=html.escape(f"{n}: {roles.get(n, '?')}"), color=role_color(roles.get(n)),
                  size=30 if n == speaker else 20, x=pos[n][0], y=-pos[n][1], shape="dot",
                  opacity=1.0 if n in alive else 0.3) for n in names]
    mafia = [n for n in names if canonical_role(roles.get(n)) in ("Mafia", "Don")]
    edges = [Edge(source=a, target=b, color=ROLE_COLORS["Mafia"], dashes=True) for i, a in enumerate(mafia) for b in mafia[i + 1:]]
    cfg = Config(width="100%", height=380, directed=False, physics=False, hierarchical=False, fixed=True)
    val = agraph(nodes=nodes, edges=edges, config=cfg)
    # the component keeps returning the last selected node on every rerun: report each click once
    last = st.session_state.get("_agraph_last")
    st.session_state["_agraph_last"] = val
    return val if isinstance(val, str) and val != last and val in names else None
