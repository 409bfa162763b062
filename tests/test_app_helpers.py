"""Pure helpers of the app: graph layout and click handling, URL step parsing, escaping, visibility."""

from __future__ import annotations

import pytest

pytest.importorskip("streamlit")

from app import graph, state  # noqa: E402
from app.transcript import md_escape, visible_to  # noqa: E402


def test_positions_are_deterministic_and_on_an_ellipse():
    names = ["A", "B", "C", "D", "E", "F", "G"]
    p1 = graph.ellipse_positions(names)
    p2 = graph.ellipse_positions(list(names))
    assert p1 == p2
    assert p1["A"] == (0.0, 0.92)  # seat 1 at the top
    for x, y in p1.values():
        assert abs((x / 1.0) ** 2 + (y / 0.92) ** 2 - 1) < 1e-3


def test_clicked_node_fires_once_per_click():
    ev = {"selection": {graph.NODE_PARAM: [{"name": "Bailey"}]}}
    assert graph.clicked_node(ev, "k1") == "Bailey"
    assert graph.clicked_node(ev, "k1") is None  # the same selection on the next rerun is not a new click
    assert graph.clicked_node({"selection": {graph.NODE_PARAM: []}}, "k1") is None
    assert graph.clicked_node(ev, "k1") == "Bailey"  # clicked again after clearing
    assert graph.clicked_node({"selection": {}}, "k2") is None
    assert graph.clicked_node(None, "k3") is None


@pytest.mark.parametrize("value, expected", [("0", 0), ("3", 3), ("R1.2", 2), ("R1 end", 3), ("R1.end", 3), ("r1-end", 3), ("R1end", 3)])
def test_parse_step(value, expected):
    assert state.parse_step(value, ["R0.1", "R0.2", "R1.2", "R1.end"]) == expected


@pytest.mark.parametrize("value", ["-1", "99", "x", "R7.1", "1.5", "", "R9.end", "R1..end"])
def test_parse_step_rejects(value):
    with pytest.raises(ValueError):
        state.parse_step(value, ["R0.1", "R0.2", "R1.2", "R1.end", "R2.1", "R2.2"][:5] if value != "99" else ["R0.1"])


def test_md_escape_neutralises_markup():
    evil = "<script>alert(1)</script> [click](http://x) **bold** $x$ `code` # head"
    out = md_escape(evil)
    for token in ("<script>", "](", "**", "`code`", "$x$"):
        assert token not in out
    assert "alert" in out


@pytest.mark.slow
def test_graph_tooltips_carry_text_not_html():
    ch = graph.belief_graph("A", ["A", "B"], {"B": {"role": "Mafia", "confidence": 80, "reason": "<img src=x onerror=1>"}},
                            {"B": 9}, {"A", "B"}, threshold=5, carried=False)
    spec = ch
    assert "<img src=x onerror=1>" in str(spec)  # passed verbatim as data; Vega renders tooltip values as text


class _GM:
    def __init__(self):
        self.roles = {"M1": "Mafia", "M2": "Mafia", "D": "Doctor", "V": "Villager", "S": "Sheriff"}


@pytest.mark.parametrize(
    "event, agent, expected",
    [
        ({"kind": "night_mafia", "player": "M1", "response": "x\nACTION: Kill V"}, "M1", "full"),
        ({"kind": "night_mafia", "player": "M1", "response": "x\nACTION: Kill V"}, "M2", "action"),
        ({"kind": "night_mafia", "player": "M1", "response": "x"}, "V", "hidden"),
        ({"kind": "night_doctor", "player": "D", "response": "x"}, "V", "hidden"),
        ({"kind": "night_sheriff_result", "sheriff": "S", "checked": "M1", "result": "Mafia"}, "S", "full"),
        ({"kind": "night_sheriff_result", "sheriff": "S", "checked": "M1", "result": "Mafia"}, "V", "hidden"),
        ({"kind": "day_discuss", "player": "V", "response": "hi"}, "M1", "full"),
        ({"kind": "night_mafia", "player": "M1", "response": "x", "visible_to": ["M1", "M2"]}, "M2", "action"),
        ({"kind": "night_save", "saved": "V", "visible_to": ["D"]}, "V", "hidden"),
    ],
)
def test_visibility(event, agent, expected):
    assert visible_to(_GM(), event, agent) == expected


def test_plural_names_one_game_in_the_singular():
    from app.text import plural

    assert plural(1, "game") == "1 game" and plural(2, "game") == "2 games" and plural(0, "match", "matches") == "0 matches"
    assert plural(1200, "game") == "1,200 games"
