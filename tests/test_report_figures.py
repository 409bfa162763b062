"""The report directory's figures (issue 34 item 2): calibration with Wilson whiskers and per-bin n per model;
belief dynamics, outcomes, F4 and custom probes per model, not pooled; the forest plot says which way is
better; one- and two-column sizes; PDF beside SVG and PNG."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from mafiascope.analytics import figures as F
from mafiascope.analytics import report_figures as RF
from mafiascope.analytics.report_dir import write_report_dir

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "tests" / "golden" / "reports" / "demo.default.json"  # five bot models


@pytest.fixture(scope="module")
def rep() -> dict:
    gold = json.loads(GOLDEN.read_text(encoding="utf-8"))
    return {**gold["report"], "comparisons": gold["comparisons"],
            "provenance": {"mafiascope_version": "X", "git_commit": "X", "python": "X"}}


def _data(chart) -> list[dict]:
    spec = chart.to_dict()
    return [row for rows in spec.get("datasets", {}).values() for row in rows]


def test_calibration_has_wilson_whiskers_and_n_per_bin_per_model(rep):
    bins, _ = F.calibration_frames(rep["by_model"])
    assert {"wilson_lo", "wilson_hi"} <= set(bins.columns)
    ok = bins.dropna(subset=["wilson_lo"])
    assert len(ok) and (ok["wilson_lo"] <= ok["accuracy"]).all() and (ok["accuracy"] <= ok["wilson_hi"]).all()
    spec = F.calibration_per_model_chart(bins, rep["by_model"]).to_dict()
    assert spec["facet"]["field"] == "model"  # a panel per model
    layers = spec["spec"]["layer"]
    assert any(x["encoding"].get("y2", {}).get("field") == "wilson_hi" for x in layers)
    assert any(x["mark"]["type"] == "text" and x["encoding"]["text"]["field"] == "n_text" for x in layers)


def test_dynamics_outcomes_and_f4_are_per_model(rep):
    models = set(rep["by_model"])
    for chart in (RF.dynamics_per_model(rep), RF.outcomes_per_model(rep), RF.f4_per_model(rep)):
        rows = _data(chart)
        assert {r["model"] for r in rows} == models  # every model its own rows, none pooled over models
    dyn = _data(RF.dynamics_per_model(rep))
    assert {"all", "Mafia"} <= {r["group"] for r in dyn}


def test_custom_probe_figure_is_per_model():
    cp = {"fields": {"mood": {"kind": "string", "by_model": {"m1": {"calm": 3, "angry": 1}, "m2": {"calm": 1}}},
                     "danger": {"kind": "numeric", "mean_by_model": {"m1": 4.0, "m2": 6.5}, "n_by_model": {"m1": 4, "m2": 1}}}}
    rows = _data(RF.custom_per_model("threat", F.custom_frame(cp)))
    assert {(r["model"], r.get("answer"), r.get("share")) for r in rows if r["field"] == "mood"} == {
        ("m1", "angry", 0.25), ("m1", "calm", 0.75), ("m2", "calm", 1.0)}
    assert {(r["model"], r["mean"]) for r in rows if r["field"] == "danger"} == {("m1", 4.0), ("m2", 6.5)}


def test_forest_plot_marks_the_better_direction(rep):
    df = F.comparison_frame([rep["comparisons"][0]])
    rows = [r for r in _data(F.comparison_chart(df, df["model_a"].iloc[0], df["model_b"].iloc[0])) if "metric" in r]
    labels = {r["metric"]: r["label"] for r in rows}
    assert labels["f1.accuracy"].endswith("(higher better)") and labels["f2.ece"].endswith("(lower better)")
    assert labels["dynamics.flip_rate"] == "top-suspect flip rate"  # descriptive: no better side
    a = df["model_a"].iloc[0]
    for r in rows:
        if r["metric"] == "f1.unknown_rate" and r["diff"] < 0:
            assert r["favours"] == f"favours {a}"  # lower is better and A is lower


def test_forest_plot_panels_follow_each_statistics_declared_scale(rep):
    """Differences of statistics declared off the 0-1 scale (a ratio, trait errors on 0-100) get the panel with
    an axis of their own, whatever their key: the registry says which, not a list in the figure code."""
    from mafiascope.analytics.metrics import statistics

    df = F.comparison_frame([rep["comparisons"][0]])
    spec = F.comparison_chart(df, df["model_a"].iloc[0], df["model_b"].iloc[0]).to_dict()
    panels = {}
    for panel in spec["vconcat"]:
        title = panel["layer"][0]["encoding"]["x"]["title"]
        panels[title.rsplit("(", 1)[1].rstrip(")")] = {r["metric"] for r in spec["datasets"][panel["data"]["name"]]}
    unbounded = {st.key for _, st in statistics() if not st.format.bounded}
    assert {"f3.ratio", "personality.mae"} <= unbounded and "f2.ece" not in unbounded
    plotted = set(df.loc[df["diff"].notna(), "metric"])
    assert panels["ratio and trait errors"] == plotted & unbounded and panels["rates"] == plotted - unbounded


@pytest.mark.slow
def test_figures_are_sized_for_columns_and_written_as_pdf(rep, tmp_path):
    written = write_report_dir(rep, tmp_path, figures=True)
    names = {Path(f).stem for f in written["figures"]}
    assert {"calibration_per_model", "belief_dynamics_per_model", "outcomes_per_model", "f4_per_model"} <= names
    for name in names:
        for ext in (".svg", ".png", ".pdf"):
            assert f"figures/{name}{ext}" in written["figures"]
        assert (tmp_path / "figures" / f"{name}.pdf").read_bytes()[:5] == b"%PDF-"
    width = {n: float(re.search(r'width="([\d.]+)"', (tmp_path / "figures" / f"{n}.svg").read_text()).group(1)) for n in names}
    assert width["f4_per_model"] <= RF.COLUMN_PT + 10 and width["outcomes_per_model"] <= RF.COLUMN_PT + 10
    assert all(w <= RF.PAGE_PT + 25 for n, w in width.items() if n.startswith(("compare_", "calibration", "belief")))
