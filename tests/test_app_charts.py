"""Chart-spec audit of the app (Streamlit 1.67 sizes a chart with autosize "fit", sharing a fixed pixel
height with title, axes and legend): each test inspects the Vega-Lite spec a page sends, or calls the
chart-building helper, and fails on the defect that was seen in a browser screenshot."""

from __future__ import annotations

import json

import pandas as pd
import pytest

pytest.importorskip("streamlit")

from .app_support import assert_clean, demo_logs, each_tab, new_app  # noqa: E402


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
    if isinstance(spec.get("spec"), dict):  # a faceted chart's inner spec
        out.extend(_layers(spec["spec"]))
    if "mark" in spec:
        out.append(spec)
    return out


def _mark(layer: dict) -> dict:
    m = layer["mark"]
    return m if isinstance(m, dict) else {"type": m}


def _leaves(spec: dict) -> list[dict]:
    out = []
    for lay in spec.get("layer", []):
        out += _leaves(lay) if "layer" in lay else [lay]
    return out


def _strip(at) -> dict:
    """The metrics strip: one chart with a layer group ``lines`` (app/strip_chart.py); its named datasets (sent beside
    the spec as Arrow bytes: the cursor) as lists of rows."""
    from streamlit.dataframe_util import convert_arrow_bytes_to_pandas_df

    found = []

    def walk(node):
        if getattr(node, "type", "") == "vega_lite_chart":
            spec = json.loads(node.proto.spec)
            if any(lay.get("name") == "lines" for lay in spec.get("layer", [])):
                spec["datasets"] = {d.name: convert_arrow_bytes_to_pandas_df(d.data.data).to_dict("records")
                                    for d in node.proto.datasets}
                found.append(spec)
        for c in getattr(node, "children", {}).values():
            walk(c)

    walk(at._tree)
    assert len(found) == 1, [_title(s) for s in _specs(at)]
    return found[0]


@pytest.mark.slow
def test_metrics_strip_plots_have_one_height(logs):
    """The three strip panels sit side by side; with a fixed pixel height shared with the legend, the 7-agent
    legend (3 rows) halved the 1st-order plot next to the crowd chart (1 legend row). Now the three panels share
    one y scale whose [0, 1] spans PLOT_PX pixels, each panel with its "step" axis title."""
    from app import strip_chart
    from app.strip_chart import fixed_data

    at = new_app().run()
    assert_clean(at)
    s = _strip(at)
    assert s.get("autosize", {}).get("type") == "fit-x", s.get("autosize")
    ys = {json.dumps(lay["encoding"]["y"]["scale"]) for lay in _leaves(s) if "scale" in lay["encoding"].get("y", {})}
    assert len(ys) == 1  # one y scale for every layer: the panels' plots have one height
    y = json.loads(ys.pop())["domain"]
    assert s["height"] == pytest.approx((y[1] - y[0]) * strip_chart.PLOT_PX, abs=1)
    frame = fixed_data(s)["frame"]
    titles = [r["text"] for r in frame if r["kind"] == "title"]
    assert [t.split(" ")[0] for t in titles] == ["1st-order", "Crowd", "2nd-order"]
    n_plots = len([t for t in frame if t["kind"] == "xtitle"])
    assert n_plots >= 2 and all(r["text"] == "step" for r in frame if r["kind"] == "xtitle")  # an axis title per plot


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
    with no domain (a model without calibration bins shifted every other model's colour against the F1 tab).
    Now a reliability diagram per model: the diagonal, each bin's accuracy with its Wilson interval and n."""
    at = new_app(page="dashboard").run()
    assert_clean(at)
    specs = []
    for at in each_tab(at):  # only the open tab is drawn: collect every tab's charts
        assert_clean(at)
        specs += _specs(at)
    cal = [s for s in specs if "Calibration per model" in _title(s)]
    f1 = [s for s in specs if "per round" in _title(s)]
    assert cal and f1, [_title(s) for s in specs]
    cal_layers, f1_layers = _layers(cal[0]), _layers(f1[0])
    diagonal = [lay for lay in cal_layers if _mark(lay)["type"] == "rule" and "datum" in lay["encoding"].get("x2", {})]
    assert diagonal and diagonal[0]["encoding"]["y2"]["datum"] == 1.0  # perfect calibration
    assert any(lay["encoding"].get("y2", {}).get("field") == "wilson_hi" for lay in cal_layers)

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
    from mafiascope.analytics.figures import MODEL_PALETTE, model_color_map

    one = model_colors(["m1"]).to_dict()
    assert one["domain"] == ["m1"] and one["range"][0] in MODEL_PALETTE
    many = model_colors([f"m{i:02d}" for i in range(15)][::-1]).to_dict()
    assert many["domain"] == sorted(many["domain"]) and len(many["range"]) == 15
    # a model keeps its colour when another joins the selection; ten models get ten different colours
    two = model_color_map(["deepseek-chat", "gpt-4o-mini"])
    three = model_color_map(["deepseek-chat", "gpt-4o-mini", "bot-balanced"])
    assert two["deepseek-chat"] == three["deepseek-chat"] or two["gpt-4o-mini"] == three["gpt-4o-mini"]
    assert len(set(model_color_map([f"model-{i}" for i in range(10)]).values())) == 10


def _hue_and_lightness(c: str) -> tuple[float, float]:
    import colorsys

    rgb = [int(c[i:i + 2], 16) / 255 for i in (1, 3, 5)]
    lin = [x / 12.92 if x <= 0.04045 else ((x + 0.055) / 1.055) ** 2.4 for x in rgb]
    y = 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]
    return colorsys.rgb_to_hsv(*rgb)[0] * 360, 116 * (y ** (1 / 3) if y > 0.008856 else 7.787 * y + 16 / 116) - 16


def _alike(a: str, b: str) -> bool:
    (ha, la), (hb, lb) = _hue_and_lightness(a), _hue_and_lightness(b)
    dh = abs(ha - hb)
    return min(dh, 360 - dh) < 16 and abs(la - lb) < 20


def test_two_models_get_distinct_hues():
    """Two models were drawn in near-identical oranges (#E69F00 and #D55E00: 15 degrees of hue, 16 points of L*)."""
    from mafiascope.analytics.figures import MODEL_PALETTE, model_color_map

    assert _alike("#E69F00", "#D55E00")
    pairs = [(a, b) for i, a in enumerate(MODEL_PALETTE) for b in MODEL_PALETTE[i + 1:]]
    assert not [p for p in pairs if _alike(*p)]
    for pair in (["bot-aggressive", "bot-balanced"], ["deepseek-chat", "gpt-4o-mini"], ["m1", "m2"]):
        a, b = model_color_map(pair).values()
        assert a != b


def test_intervals_are_clipped_to_0_1():
    """Whiskers ran past 0 % and 100 % (a normal-approximation interval near the ends)."""
    from app.charts import reliability
    from mafiascope.analytics.figures import f1_per_model_chart

    bins = pd.DataFrame({"lo": [0, 80], "hi": [20, 100], "n": [12, 30], "acc": [0.02, 0.98], "ci_lo": [-0.05, 0.9],
                         "ci_hi": [0.1, 1.04]})
    spec = reliability(bins).to_dict()
    rows = [r for d in spec["datasets"].values() for r in d if "ci_lo" in r]
    assert rows and all(0.0 <= r["ci_lo"] <= r["ci_hi"] <= 1.0 for r in rows), rows
    f1 = pd.DataFrame({"model": ["a", "a"], "round": [1, 2], "accuracy": [0.02, 0.97], "ci_lo": [-0.1, 0.9], "ci_hi": [0.2, 1.1],
                       "n": [10, 10], "chance": [0.3, 0.3], "mafia_recall": [0.5, 0.5], "unknown_rate": [0, 0]})
    rows = [r for d in f1_per_model_chart(f1).to_dict()["datasets"].values() for r in d]
    assert all(0.0 <= r["ci_lo"] <= r["ci_hi"] <= 1.0 for r in rows), rows


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


def test_heatmap_count_colour_follows_the_cell():
    """Second-Order's matrix wrote black counts on its darkest orange cell."""
    from app.analysis_view import with_cell_colours
    from app.palette import INK_DARK, INK_LIGHT, luminance

    mat = with_cell_colours(pd.DataFrame({"predicted": ["trusts", "suspects"], "actual": ["trusts", "suspects"], "n": [2, 40]}), "n")
    dark, light = mat.iloc[1], mat.iloc[0]
    assert luminance(dark["fill"]) < luminance(light["fill"])
    assert dark["ink"] == INK_LIGHT and light["ink"] == INK_DARK


@pytest.mark.slow
def test_second_order_matrix_text_uses_the_cell_ink(logs):
    at = new_app(page="second_order").run()
    assert_clean(at)
    heat = [s for s in _specs(at) if any(_mark(lay)["type"] == "rect" for lay in _layers(s))]
    assert heat, [_title(s) for s in _specs(at)]
    text = [lay for lay in _layers(heat[0]) if _mark(lay)["type"] == "text"]
    assert text and text[0]["encoding"]["color"]["field"] == "ink", text[0]["encoding"]


@pytest.mark.slow
def test_agent_view_tooltip_truth_is_filled(logs):
    """The agent-view graphs listed a "Truth" row in their tooltip, always empty (the pages never passed the roles)."""
    at = new_app(page="live", game="demo-classic-01", step="30").run()
    assert_clean(at)
    from streamlit.dataframe_util import convert_arrow_bytes_to_pandas_df

    views = []

    def walk(node):
        if getattr(node, "type", "") == "vega_lite_chart":
            spec = json.loads(node.proto.spec)
            if any("Truth" in str(t) for lay in _layers(spec) for t in lay.get("encoding", {}).get("tooltip") or []):
                # Streamlit sends named datasets beside the spec
                views.append({d.name: convert_arrow_bytes_to_pandas_df(d.data.data) for d in node.proto.datasets})
        for c in getattr(node, "children", {}).values():
            walk(c)

    walk(at._tree)
    assert views, "no agent view with a Truth row"
    for ds in views:
        truth = ds["nodes"]["Truth"].tolist()
        assert truth and all(t and t != "?" for t in truth), truth


def test_graphs_draw_on_a_light_card_in_both_themes():
    """On the dark theme the graph labels' light halos smeared around dark text and dead seats (opacity 0.25 of a dark
    role colour) vanished: a graph now carries its own light background, the one its halos and ink are made for."""
    from app import graph
    from app.palette import luminance

    spec = graph.belief_graph("A", ["A", "B", "C"], {"B": {"role": "Mafia", "confidence": 80, "reason": "r"}}, {"B": 7.0},
                              {"A", "B"}, threshold=5, carried=False, true_roles={"A": "Villager", "B": "Mafia", "C": "Doctor"})
    assert luminance(spec["background"]) > 0.8
    halo, ink = [lay for lay in _layers(spec) if _mark(lay)["type"] == "text"][-2:]
    assert _mark(halo)["stroke"] == spec["background"] and luminance(_mark(ink)["fill"]) < 0.05


def test_reliability_n_labels_sit_above_every_whisker_in_a_neutral_ink():
    """The "n=" labels sat at each whisker's top (crossed by it) with a light halo that smeared on the dark theme."""
    from app.charts import N_ROW, reliability
    from app.palette import luminance

    bins = pd.DataFrame({"lo": [0, 20, 80], "hi": [20, 40, 100], "n": [0, 67, 1207], "acc": [None, 0.55, 0.6],
                         "ci_lo": [None, 0.43, 0.57], "ci_hi": [None, 1.0, 0.63]})
    spec = reliability(bins).to_dict()
    texts = [lay for lay in _layers(spec) if _mark(lay)["type"] == "text" and lay["encoding"].get("text", {}).get("field") == "ntext"]
    assert len(texts) == 1 and not _mark(texts[0]).get("stroke"), texts  # one ink layer, no halo
    assert 0.1 < luminance(_mark(texts[0])["fill"]) < 0.3
    calc = {t["as"]: t["calculate"] for t in texts[0].get("transform", []) if "calculate" in t}
    assert float(calc[texts[0]["encoding"]["y"]["field"]]) == N_ROW > 1.0  # above the highest whisker (clipped to 1)


@pytest.mark.slow
def test_metrics_strip_legends_fit_a_narrow_column(logs):
    """A 3-column legend (140 px labels) is wider than a third of a 1000-px page: Vega cannot fit the view narrower than
    its legend, so the plot's right edge and its last x label were cut ("5C" for 50). The strip's legends are at most
    two columns of labels cut at LEGEND_LABEL_LIMIT px in each panel."""
    from app.strip_chart import LEGEND_LABEL_LIMIT, fixed_data

    at = new_app().run()
    assert_clean(at)
    s = _strip(at)
    label = next(lay for lay in _leaves(s) if "datum.kind === 'legend'" in json.dumps(lay.get("transform", []))
                 and lay["mark"]["type"] == "text")
    assert label["mark"]["limit"] == LEGEND_LABEL_LIMIT
    legend = [r for r in fixed_data(s)["frame"] if r["kind"] == "legend"]
    titles = sorted(r["gx"] for r in fixed_data(s)["frame"] if r["kind"] == "title")
    for lo, hi in zip(titles, [*titles[1:], float("inf")]):
        cols = {r["gx"] for r in legend if lo <= r["gx"] < hi}
        assert len(cols) <= 2
    assert 2 * (LEGEND_LABEL_LIMIT + 30) <= 200  # symbol, padding: fits a ~200 px panel
