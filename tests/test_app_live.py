"""Live Game: launching offline games as subprocesses, playing a human seat, editing the probe battery."""

from __future__ import annotations

import json
import time

import pytest
import yaml

pytest.importorskip("streamlit")

from mafiascope.logs.io import iter_probe_records  # noqa: E402

from .app_support import assert_clean, errors, new_app, texts  # noqa: E402


@pytest.fixture()
def runs(tmp_path, monkeypatch):
    monkeypatch.setenv("MAFIASCOPE_LOGS", str(tmp_path / "none"))
    monkeypatch.setenv("MAFIASCOPE_RUNS", str(tmp_path / "runs"))
    return tmp_path / "runs"


def _stop_all():
    from app import launcher

    for item in launcher.registry().every():  # every session's, not only those this thread may see
        item.stop()


def _wait(pred, timeout=60.0):
    t0 = time.time()
    while time.time() - t0 < timeout:
        if pred():
            return True
        time.sleep(0.2)
    return False


@pytest.mark.slow
def test_launch_offline_game(runs):
    at = new_app(mode="launch").run()
    assert_clean(at)
    at.number_input(key="seed").set_value(5)
    at.button(key="lf_go").click().run()
    assert_clean(at)
    try:
        gid = at.session_state["ms_game"]
        assert gid.startswith("live-")
        gdir = runs / gid
        assert _wait(lambda: '"game_over"' in (gdir / "game.jsonl").read_text())
        at.run()
        assert_clean(at)
        assert "win" in texts(at) and "Ground truth" in texts(at)
        assert (gdir / "introspection.jsonl").stat().st_size > 0
        q = at.query_params["game"]
        assert (q[0] if isinstance(q, list) else q) == gid
    finally:
        _stop_all()


@pytest.mark.slow
def test_launch_twenty_games_at_once(runs):
    at = new_app(mode="launch").run()
    at.number_input(key="games").set_value(20)
    at.toggle(key="probes").set_value(False)
    at.button(key="lf_go").click().run()
    assert_clean(at)
    try:
        first = at.session_state["ms_game"]
        assert first.endswith("-0000")
        prefix = first[: -len("-0000")]

        def finished() -> int:
            return sum('"game_over"' in (runs / f"{prefix}-{i:04d}" / "game.jsonl").read_text()
                       for i in range(20) if (runs / f"{prefix}-{i:04d}" / "game.jsonl").exists())  # fmt: skip

        assert _wait(lambda: finished() == 20, timeout=120)
        at = new_app(mode="launch").run()
        assert_clean(at)
        table = [d.value for d in at.dataframe if "finished" in d.value.columns]
        assert table and "20/20" in table[0]["finished"].tolist()
    finally:
        _stop_all()


@pytest.mark.slow
def test_human_seat_needs_a_single_game(runs):
    at = new_app(mode="launch").run()
    at.number_input(key="games").set_value(3)
    at.selectbox(key="seat").set_value("seat 2")
    at.button(key="lf_go").click().run()
    assert "one game at a time" in " ".join(e.value for e in at.error)
    _stop_all()


@pytest.mark.slow
def test_launch_without_probes(runs):
    at = new_app(mode="launch").run()
    at.toggle(key="probes").set_value(False)
    at.button(key="lf_go").click().run()
    try:
        gdir = runs / at.session_state["ms_game"]
        assert _wait(lambda: '"game_over"' in (gdir / "game.jsonl").read_text())
        assert not (gdir / "introspection.jsonl").exists() or (gdir / "introspection.jsonl").stat().st_size == 0
        at.run()
        assert_clean(at)
        assert "transcript only" in texts(at)
    finally:
        _stop_all()


@pytest.mark.slow
def test_human_seat_plays_from_the_page(runs):
    at = new_app(mode="launch").run()
    at.selectbox(key="seat").set_value("seat 2")
    at.button(key="lf_go").click().run()
    try:
        gid = at.session_state["ms_game"]
        hdir = runs / gid / "human"
        assert _wait(lambda: any(hdir.glob("*.pending.json")))
        at.run()
        assert_clean(at)
        body = texts(at)
        assert "Your move as" in body
        assert "Spoiler-free" in [t.label.split(":")[0] for t in at.toggle] or any("Spoiler-free" in t.label for t in at.toggle)
        pending = json.loads(next(hdir.glob("*.pending.json")).read_text())
        area = [t for t in at.text_area if t.key and t.key.startswith("hp_text_")][0]
        area.input("Hello everyone, I am new here and will listen carefully.")
        [b for b in at.button if "Send" in str(b.label)][0].click().run()
        assert_clean(at)
        # the engine consumed the reply and moved on (the intro line is in the log)
        assert _wait(lambda: "I am new here" in (runs / gid / "game.jsonl").read_text())
    finally:
        _stop_all()


@pytest.mark.slow
def test_probe_battery_editor(runs):
    at = new_app(mode="launch").run()
    at.toggle(key="custom_probes").set_value(True).run()
    assert_clean(at)
    n0 = len([t for t in at.text_input if t.key and t.key.startswith("pe_id_")])
    assert n0 >= 3
    at.button(key="pe_add").click().run()
    ids = [t for t in at.text_input if t.key and t.key.startswith("pe_id_")]
    assert len(ids) == n0 + 1
    # an unknown placeholder is reported inline and blocks the launch
    q = [t for t in at.text_area if t.key and t.key.startswith("pe_q_")][-1]
    q.input("Who is {suspect}? Reply with JSON only.").run()
    assert any("unknown placeholder" in m for m in errors(at)), errors(at)
    assert at.button(key="lf_go").disabled
    # remove it again: valid, exportable, and the engine's loader accepts the export
    rm = [b for b in at.button if b.key and b.key.startswith("pe_rm_")][-1]
    rm.click().run()
    assert not errors(at), errors(at)
    assert not at.button(key="lf_go").disabled
    # reorder: move the second probe up
    first = [t.value for t in at.text_input if t.key and t.key.startswith("pe_id_")][:2]
    [b for b in at.button if b.key and b.key.startswith("pe_up_")][1].click().run()
    now = [t.value for t in at.text_input if t.key and t.key.startswith("pe_id_")][:2]
    assert now == first[::-1]
    exported = [c.value for c in at.code if "probes:" in c.value][0]
    from mafiascope.probes.dsl import parse_battery

    battery = parse_battery(yaml.safe_load(exported))
    assert [p.id for p in battery.probes][:2] == now


@pytest.mark.slow
def test_custom_battery_is_used(runs):
    at = new_app(mode="launch").run()
    at.toggle(key="custom_probes").set_value(True).run()
    # keep only the first two probes
    while len([b for b in at.button if b.key and b.key.startswith("pe_rm_")]) > 2:
        [b for b in at.button if b.key and b.key.startswith("pe_rm_")][-1].click().run()
    keep = [t.value for t in at.text_input if t.key and t.key.startswith("pe_id_")]
    at.button(key="lf_go").click().run()
    try:
        gdir = runs / at.session_state["ms_game"]
        assert _wait(lambda: '"game_over"' in (gdir / "game.jsonl").read_text())
        ids = {r["probe_id"] for r in iter_probe_records(gdir)}
        assert ids <= set(keep), (ids, keep)
    finally:
        _stop_all()


@pytest.mark.slow
def test_follow_reaches_the_last_step_of_a_game_that_ended(runs):
    """A quick game ends between two reruns: following it must land on its last step (the step stayed where the
    last live rerun had clamped it, because only a running game moved the timeline)."""
    at = new_app(mode="launch").run()
    at.toggle(key="probes").set_value(False)
    at.toggle(key="snapshots").set_value(False)
    at.button(key="lf_go").click().run()
    try:
        gdir = runs / at.session_state["ms_game"]
        assert _wait(lambda: '"game_over"' in (gdir / "game.jsonl").read_text())
        at.run()
        assert_clean(at)
        slider = [s for s in at.slider if str(s.key).startswith("w_step:")][0]
        assert slider.value == slider.max, (slider.value, slider.max)
        # one-shot: moving back afterwards stays where the user put it
        at.button(key="tl_first").click().run()
        at.run()
        assert [s for s in at.slider if str(s.key).startswith("w_step:")][0].value == 0
    finally:
        _stop_all()
