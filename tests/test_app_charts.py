"""Chart-spec audit of the app (Streamlit 1.67 sizes a chart with autosize "fit", sharing a fixed pixel
height with title, axes and legend): each test inspects the Vega-Lite spec a page sends, or calls the
chart-building helper, and fails on the defect that was seen in a browser screenshot."""

from __future__ import annotations

import json

import pandas as pd
import pytest

pytest.importorskip("streamlit")

from .app_support import assert_clean, demo_logs, new_app  # noqa: E402


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    return demo_logs(tmp_path_factory)


@pytest.fixture
def logs(demo, monkeypatch, tmp_path):
    monkeypatch.setenv("MAFIASCOPE_LOGS", str(demo))
    monkeypatch.setenv("MAFIASCOPE_RUNS", str(tmp_path / "runs"))
    return demo


def _specs(at) -> list[dict]:
    out: list[dict] = []

    def walk(node):
        if getattr(node, "type", "") == "vega_lite_chart":
            out.append(json.loads(node.proto.spec))
        for c in getattr(node, "children", {}).values():
            walk(c)

    walk(at._tree)
    return out


def _title(spec: dict) -> str:
    t = spec.get("title")
    return str(t.get("text") if isinstance(t, dict) else t or "")


def _layers(spec: dict) -> list[dict]:
    out = []
    for key in ("layer", "hconcat", "vconcat"):
        for sub in spec.get(key) or []:
            out.extend(_layers(sub))
    if "mark" in spec:
        out.append(spec)
    return out


def _mark(layer: dict) -> dict:
    m = layer["mark"]
    return m if isinstance(m, dict) else {"type": m}


@pytest.mark.slow
def test_metrics_strip_plots_have_one_height(logs):
    """The three strip charts sit side by side; with a fixed pixel height shared with the legend, the 7-agent
    legend (3 rows) halved the 1st-order plot next to the crowd chart (1 legend row)."""
    from app import charts

    plot_height = getattr(charts, "STRIP_HEIGHT", 150)
    at = new_app().run()
    assert_clean(at)
    strip = [s for s in _specs(at) if any(k in _title(s) for k in ("1st-order", "Crowd", "2nd-order"))]
    assert len(strip) >= 2, [_title(s) for s in _specs(at)]
    for s in strip:
        assert s.get("autosize", {}).get("type") == "fit-x", (_title(s), s.get("autosize"))
        assert s.get("height") == plot_height, (_title(s), s.get("height"))
        x = s["layer"][0]["encoding"]["x"]
        assert x.get("title") == "step"  # an axis title, not a bare tick row


@pytest.mark.slow
def test_arena_interval_rules_have_a_visible_colour(monkeypatch, tmp_path):
    """Vega-Lite's default rule colour is black: the leaderboard's ±1.96 SE whiskers vanished on the dark theme."""
    monkeypatch.setenv("MAFIASCOPE_RUNS", str(tmp_path / "runs"))
    at = new_app(page="arena").run()
    assert_clean(at)
    boards = [s for s in _specs(at) if "SE" in _title(s)]
    assert boards, "no leaderboard chart on the default (bundled) run"
    for s in boards:
        rules = [lay for lay in _layers(s) if _mark(lay)["type"] == "rule" and "x2" in lay.get("encoding", {})]
        assert rules, "no interval rule"
        for r in rules:
            colour = _mark(r).get("color") or (r["encoding"].get("color") or {}).get("value")
            assert colour and colour.lower() not in ("black", "#000", "#000000"), _mark(r)
        tips = [t if isinstance(t, str) else t.get("title") or t.get("field") for lay in _layers(s)
                for t in (lay.get("encoding", {}).get("tooltip") or [])]
        assert any("n" in str(t).split() or str(t).startswith("n ") for t in tips), tips


@pytest.mark.slow
def test_dashboard_calibration_has_reference_and_shared_model_colours(logs):
    """Per-model calibration bars had no perfect-calibration reference, rotated bin labels, and a colour scale
    with no domain (a model without calibration bins shifted every other model's colour against the F1 tab)."""
    at = new_app(page="dashboard").run()
    assert_clean(at)
    specs = _specs(at)
    cal = [s for s in specs if "confidence bin" in _title(s)]
    f1 = [s for s in specs if "per round" in _title(s)]
    assert cal and f1, [_title(s) for s in specs]
    cal_layers, f1_layers = _layers(cal[0]), _layers(f1[0])
    ticks = [lay for lay in cal_layers if _mark(lay)["type"] == "tick"]
    assert ticks and ticks[0]["encoding"]["y"]["field"] == "perfect"
    bars = [lay for lay in cal_layers if _mark(lay)["type"] == "bar"]
    assert bars[0]["encoding"]["x"]["axis"]["labelAngle"] == 0

    def scale(layers):
        for lay in layers:
            c = lay.get("encoding", {}).get("color") or {}
            if c.get("field") == "model":
                return c["scale"]
        return (cal[0].get("encoding") or {}).get("color", {}).get("scale")

    cal_scale = scale(cal_layers) or cal[0]["encoding"]["color"]["scale"]
    f1_scale = scale(f1_layers) or f1[0]["encoding"]["color"]["scale"]
    assert cal_scale.get("domain") and cal_scale["domain"] == f1_scale["domain"]
    assert cal_scale["range"] == f1_scale["range"]


def test_model_colours_are_stable_for_one_and_many_models():
    from app.dashboard_view import model_colors
    from app.palette import AGENT_PALETTE

    one = model_colors(["m1"]).to_dict()
    assert one["domain"] == ["m1"] and one["range"] == AGENT_PALETTE[:1]
    many = model_colors([f"m{i:02d}" for i in range(15)][::-1]).to_dict()
    assert many["domain"] == sorted(many["domain"]) and len(many["range"]) == 15


@pytest.mark.slow
def test_belief_dynamics_uses_role_colours_units_and_row_steps():
    """The facet coloured role groups with the agent palette (Mafia green, Doctor amber), titled its panels with
    raw field names and had no x-axis titles, and fixed a pixel height over a discrete y axis."""
    from app.dashboard_view import dynamics_chart
    from app.palette import ROLE_COLORS

    groups = ["Doctor", "Don", "Mafia", "Sheriff", "Villager", "all", "non-Mafia"]
    rows = [{"group": g, "measure": m, "value": 0.1, "ci_lo": 0.05, "ci_hi": 0.2, "n": 9}
            for g in groups for m in ("flip_rate", "return_rate", "volatility")]
    spec = dynamics_chart(pd.DataFrame(rows)).to_dict()
    layers = _layers(spec)
    colour = layers[0]["encoding"]["color"]["scale"]
    dom, rng = colour["domain"], colour["range"]
    assert len(dom) == len(set(dom)) == len(groups)
    for g in ("Mafia", "Don", "Doctor", "Sheriff", "Villager"):
        assert rng[dom.index(g)] == ROLE_COLORS[g], g
    assert rng[dom.index("all")] not in ROLE_COLORS.values()
    titles = {lay["encoding"]["x"].get("title") for lay in layers}
    assert None not in titles and not titles & {"value", "flip_rate", "return_rate", "volatility"}, titles
    assert any("%" == (lay["encoding"]["x"].get("axis") or {}).get("format") for lay in layers)
    for panel in spec["hconcat"]:
        assert panel["height"] == {"step": 24}
    assert all("n" in [t.get("title") if isinstance(t, dict) else t for t in lay["encoding"]["tooltip"]] for lay in layers)
