"""URL parameters: copying a URL reproduces the view; bad values give clear messages, never tracebacks."""

from __future__ import annotations

import pytest

pytest.importorskip("streamlit")

from .app_support import CORPUS, assert_clean, errors, new_app, timeline  # noqa: E402

GAME = "0da78714-88e0-4445-b161-f2eaf029184c"


@pytest.fixture(autouse=True)
def shared(monkeypatch, tmp_path):
    root = CORPUS
    monkeypatch.setenv("MAFIASCOPE_LOGS", str(root))
    monkeypatch.setenv("MAFIASCOPE_RUNS", str(tmp_path / "runs"))
    return root


def qp(at, key):
    v = at.query_params[key]
    return v[0] if isinstance(v, list) else v


@pytest.mark.slow
def test_round_trip_live_game():
    at = new_app(game=GAME, step="12").run()
    assert_clean(at)
    assert timeline(at).value == 12
    assert at.selectbox(key="sb_game").value == GAME
    # the URL the app writes back opens the same view in a new session
    params = {k: qp(at, k) for k in ("game", "step")}
    again = new_app(**params).run()
    assert timeline(again).value == 12 and again.selectbox(key="sb_game").value == GAME


@pytest.mark.slow
def test_step_label_and_game_prefix():
    at = new_app(game=GAME[:8], step="R1.5").run()
    assert_clean(at)
    assert at.selectbox(key="sb_game").value == GAME
    assert qp(at, "step") == str(timeline(at).value)


@pytest.mark.slow
def test_round_trip_impersonate():
    at = new_app(page="impersonate", game=GAME, step="20", agent="Bailey").run()
    assert_clean(at)
    assert at.selectbox(key="w_agent").value == "Bailey"
    assert timeline(at).value == 20
    assert qp(at, "agent") == "Bailey"
    again = new_app(page="impersonate", game=qp(at, "game"), step=qp(at, "step"), agent=qp(at, "agent")).run()
    assert again.selectbox(key="w_agent").value == "Bailey" and timeline(again).value == 20


@pytest.mark.slow
def test_round_trip_mode():
    at = new_app(page="calibration", mode="model").run()
    assert_clean(at)
    assert at.segmented_control(key="cal_scope").value == "model"
    assert qp(at, "mode") == "model"
    at = new_app(mode="launch").run()
    assert_clean(at)
    assert any(b.label == "Launch game" for b in at.button)


@pytest.mark.parametrize(
    "params, needle",
    [
        ({"game": "../../etc/passwd"}, "invalid game id"),
        ({"game": "/etc"}, "invalid game id"),
        ({"game": ".hidden"}, "invalid game id"),
        ({"game": "nosuchgame-123"}, "unknown game"),
        ({"game": GAME, "step": "9999"}, "out of range"),
        ({"game": GAME, "step": "-3"}, "out of range"),
        ({"game": GAME, "step": "abc"}, "not a step"),
        ({"game": GAME, "step": "R9.9"}, "not a step"),
        ({"page": "impersonate", "game": GAME, "agent": "Nobody"}, "no such player"),
        ({"page": "calibration", "mode": "bogus"}, "choose one of"),
        ({"page": "nosuchpage"}, "unknown page"),
    ],
)
@pytest.mark.slow
def test_bad_parameters(params, needle):
    at = new_app(**params).run()
    assert_clean(at)
    msgs = errors(at)
    assert any(needle in m for m in msgs), msgs


@pytest.mark.slow
def test_bad_step_then_recovers():
    at = new_app(game=GAME, step="9999").run()
    assert timeline(at).value == timeline(at).max  # falls back to the last step
    at.button(key="tl_first").click().run()
    assert_clean(at)
    assert timeline(at).value == 0 and not errors(at)


@pytest.mark.parametrize("page", ["live", "impersonate"])
@pytest.mark.slow
def test_russian_legacy_game(page):
    at = new_app(page=page, game="050b6221", step="R1.3").run()
    assert_clean(at)
    assert not errors(at), errors(at)
    assert at.selectbox(key="sb_game").value.startswith("050b6221")
