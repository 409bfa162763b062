"""The Live Game's step-dependent part runs as one fragment (app/live_view.inspector): a step writes the URL, the
share link and the page as a full run does; the raw records are drawn only while their expander is open."""

from __future__ import annotations

import pytest

pytest.importorskip("streamlit")

from app.live_view import RAW_LABEL  # noqa: E402

from .app_support import assert_clean, demo_logs, new_app, panel_heads, texts, timeline  # noqa: E402

GAME = "demo-classic-01"


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    return demo_logs(tmp_path_factory)


@pytest.fixture()
def logs(demo, monkeypatch, tmp_path):
    monkeypatch.setenv("MAFIASCOPE_LOGS", str(demo))
    monkeypatch.setenv("MAFIASCOPE_RUNS", str(tmp_path / "runs"))
    return demo


def _q(at, name):
    v = at.query_params[name]
    return v[0] if isinstance(v, list) else v


@pytest.mark.slow
def test_next_step_updates_url_share_link_and_page(logs):
    at = new_app(page="live", game=GAME, step="12").run()
    assert_clean(at)
    assert _q(at, "step") == "12" and timeline(at).value == 12
    at.button(key="tl_next").click().run()
    assert_clean(at)
    assert _q(at, "step") == "13" and timeline(at).value == 13
    assert any("step=13" in c.value for c in at.code), [c.value for c in at.code]  # the share link follows the step
    charts = {c.key: c for c in at.get("vega_lite_chart")}
    assert "Ground truth" in texts(at) and f"gt_{GAME}" in charts and f"ms_strip_{GAME}" in charts
    # the metrics strip (its three panels as one chart, app/strip_chart.py): the cursor (its one named dataset) moved
    from streamlit.dataframe_util import convert_arrow_bytes_to_pandas_df

    strip = {d.name: convert_arrow_bytes_to_pandas_df(d.data.data) for d in charts[f"ms_strip_{GAME}"].proto.datasets}
    assert len(strip["cursor"]) == 3 and strip["cursor"]["gx"].iloc[0] == 13
    # every agent's graph, drawn as the panels of one chart (app/graph.belief_panels), at the new step
    assert len(panel_heads(charts[f"ag_{GAME}"])) == 7



@pytest.mark.slow
def test_raw_records_are_drawn_only_while_open(logs):
    at = new_app(page="live", game=GAME, step="12").run()
    assert_clean(at)
    raw = [e for e in at.expander if e.label == RAW_LABEL]
    assert len(raw) == 1 and not at.json, "closed: nothing of the records is sent"
    at.session_state["ms_raw_open"] = True  # what opening it stores (its on_change)
    at.run()
    assert_clean(at)
    captions = [c.value for c in at.caption]
    label = next(c for c in captions if c.startswith("12\\/")).split(" · ")[1]  # the timeline's caption names the step
    assert at.json and "game.jsonl record" in captions and f"Step {label}" in captions, captions  # and so does the box
    assert any(s.label == "Agent" for s in at.selectbox), "the step's probe calls are listed by agent"
    at.button(key="tl_next").click().run()  # stays open on the next step
    assert_clean(at)
    assert at.json and _q(at, "step") == "13"


def test_a_step_keeps_the_raw_records_expander(logs):
    """The raw records' expander has the same label, hence the same widget id, at every step: a step keeps the
    browser's expander (a label naming the step made a new widget that the browser mounted anew on every step)."""
    at = new_app(page="live", game=GAME, step="12").run()
    assert_clean(at)
    ids = [[e.proto.id for e in at.expander if e.label == RAW_LABEL]]
    for _ in range(2):
        at.button(key="tl_next").click().run()
        assert_clean(at)
        ids.append([e.proto.id for e in at.expander if e.label == RAW_LABEL])
    assert _q(at, "step") == "14" and len(ids[0]) == 1 and ids[0][0].endswith("-lg_raw") and ids == [ids[0]] * 3, ids


def test_the_game_header_is_one_row(logs):
    """The header's two popovers sit in one horizontal container (one block where three columns made four): the
    browser re-renders every block of the page on each of a step's whole-page commits."""
    at = new_app(page="live", game=GAME, step="12").run()
    assert_clean(at)
    main = list(at.main.children.values())
    rows = [b for b in main if b.type == "flex_container" and str(b.proto.id).endswith("-ms_head_row")]
    assert len(rows) == 1, [b.type for b in main]
    assert [(c.type, c.proto.popover.label) for c in rows[0].children.values()] == [
        ("popover", "How to read this page"), ("popover", "Share this view")]
    head = main[:main.index(rows[0]) + 2]  # down to the title
    assert "Live Game" in head[-1].value and not any(b.type == "column" for b in head)

    def codes(node) -> list[str]:
        kids = list(node.children.values()) if hasattr(node, "children") else []
        return ([node.value] if node.type == "code" else []) + [v for k in kids for v in codes(k)]

    assert any("step=12" in c for c in codes(rows[0])), "the share link (in the row's popover) is filled in"
