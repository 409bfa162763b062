"""The Live Game's agents' graphs as the panels of ONE chart (app/graph.belief_panels): each panel holds exactly what
that agent's own graph (belief_graph) held, moved into its cell, with the same tooltips and the node click."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("streamlit")

from app import graph  # noqa: E402
from app.gamemodel import assessment, suspicion  # noqa: E402

from .app_support import DEMO  # noqa: E402


def _layers(spec):
    return spec.get("layer", [])


def _panels(gm, step: int, threshold: float = 6):
    s = gm.steps[step]
    alive = gm.alive_at(step)
    out, own = [], []
    for name in gm.names:
        ass, carried = assessment(gm, name, step)
        sus, _ = suspicion(gm, name, step)
        nodes, edges = graph.belief_rows(name, gm.names, ass, sus, alive, threshold=threshold, carried=carried,
                                         speaker=s.speaker, true_roles=gm.roles)
        out.append(graph.BeliefPanel(head=name, nodes=nodes, edges=edges))
        own.append(graph.belief_graph(name, gm.names, ass, sus, alive, threshold=threshold, carried=carried,
                                      speaker=s.speaker, true_roles=gm.roles)["datasets"])
    return out, own


def test_each_panel_holds_its_agents_graph_moved_into_its_cell():
    from app.data import load_raw
    from app.gamemodel import build_model

    gm = build_model(load_raw(str(DEMO / "demo-ru-01")))
    panels, own = _panels(gm, 30)
    spec = graph.belief_panels(panels, truth=True)
    data = spec["datasets"]
    cards = data["cards"]
    assert [c["head"] for c in cards] == gm.names
    nodes_per = len(gm.names)
    for i, ds in enumerate(own):
        card = cards[i]
        mine = data["nodes"][i * nodes_per:(i + 1) * nodes_per]
        assert len(mine) == len(ds["nodes"])
        for got, want in zip(mine, ds["nodes"]):
            assert card["x"] <= got["x"] <= card["x2"] and card["y"] <= got["y"] <= card["y2"]
            moved = {k: v for k, v in got.items() if k not in ("x", "y")}
            assert moved == {k: v for k, v in want.items() if k not in ("x", "y")}
            assert got["x"] - want["x"] == pytest.approx(card["x"] - cards[0]["x"])
            assert got["y"] - want["y"] == pytest.approx(card["y"] - cards[0]["y"])
    # edges: every agent's suspicion edges at or above the threshold, with their reasons, in the panels' order
    assert [e["Reason"] for e in data["edges"]] == [e["Reason"] for ds in own for e in ds["edges"]]
    assert data["edges"], "this step has suspicion edges"


def test_panels_keep_tooltips_click_and_fixed_spec():
    a = graph.BeliefPanel(head="A · Villager", note="ELIMINATED", nodes=[], edges=[])
    spec = graph.belief_panels([a] * 7, truth=True)
    s2 = graph.belief_panels([a] * 7, truth=True)
    assert {k: v for k, v in spec.items() if k != "datasets"} == {k: v for k, v in s2.items() if k != "datasets"}
    layers = _layers(spec)
    tips = [[t["field"] for t in lay["encoding"].get("tooltip", [])] for lay in layers]
    assert ["Name", "Guess", "Confidence", "Suspicion", "Reason", "Personality", "Truth"] in tips
    assert ["From", "To", "Suspicion", "Reason"] in tips
    params = spec.get("params", []) + [p for lay in layers for p in lay.get("params", [])]  # Altair hoists them
    assert [p["name"] for p in params] == [graph.NODE_PARAM] and params[0]["select"]["fields"] == ["name"]
    assert spec["usermeta"] == {"embedOptions": {"renderer": "canvas"}}
    # two rows of four: taller than one row, and model text goes in as data, never into the spec
    one = graph.belief_panels([a] * 4, truth=False)
    assert one["height"] < spec["height"]
    assert "Truth" not in json.dumps(one["layer"])
    evil = graph.BeliefPanel(head="<img src=x onerror=alert(1)>")
    assert "<img" not in json.dumps({k: v for k, v in graph.belief_panels([evil], truth=True).items() if k != "datasets"})
