"""Issue 12 item 2 (log roots, bind address): a public deploy reads only the roots the operator
configured; an unreadable root is a message on every page; local runs bind to 127.0.0.1."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("streamlit")

from .app_support import ROOT, assert_clean, new_app, plain, play  # noqa: E402

PAGES = ("live", "impersonate", "replay", "calibration", "second_order", "episodes", "dashboard", "arena")


@pytest.fixture()
def env(tmp_path, monkeypatch):
    monkeypatch.setenv("MAFIASCOPE_RUNS", str(tmp_path / "runs"))
    monkeypatch.setenv("MAFIASCOPE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("MAFIASCOPE_ALLOW_FREE_PATHS", raising=False)
    return tmp_path


@pytest.mark.slow
@pytest.mark.parametrize("page", PAGES)
def test_an_unreadable_root_is_a_warning_on_every_page(env, monkeypatch, page):
    monkeypatch.setenv("MAFIASCOPE_LOGS", "/proc")  # lists, but /proc/1/cwd is not readable
    at = new_app(page=page).run()
    assert_clean(at)
    assert any("Log root proc cannot be read" in plain(w.value) for w in at.warning), [w.value for w in at.warning]


@pytest.mark.slow
def test_the_roots_box_offers_only_configured_roots(env, monkeypatch):
    elsewhere = env / "elsewhere"
    play(elsewhere, "free-game", 2, "--no-probes")
    monkeypatch.setenv("MAFIASCOPE_LOGS", str(env / "configured"))
    at = new_app()
    at.session_state["sb_roots_open"] = True  # the roots are drawn while the Log directories expander is open
    at.run()
    assert_clean(at)
    box = at.multiselect(key="sb_roots")
    assert "configured" in box.options and not [o for o in box.options if "elsewhere" in o or str(env) in o]
    assert not [t for t in at.text_area if t.key == "sb_roots"]  # nothing to type a path into
    assert "elsewhere" not in at.multiselect(key="sb_corpora").options
    # the game URL cannot reach it either
    at = new_app(game="free-game").run()
    assert any("unknown game" in plain(e.value) for e in at.error)
    # the arena's run box refuses a directory outside the roots
    at = new_app(page="arena").run()
    at.text_input(key="ms_arena_path").set_value(str(elsewhere)).run()
    assert_clean(at)
    assert any("not under a log root this app is configured to read" in plain(e.value) for e in at.error)
    at.text_input(key="ms_arena_path").set_value("/etc").run()
    assert any("/etc: not under a log root" in plain(e.value) for e in at.error)


@pytest.mark.slow
def test_free_paths_when_the_operator_allows_them(env, monkeypatch):
    elsewhere = env / "elsewhere"
    play(elsewhere, "free-game", 2, "--no-probes")
    monkeypatch.setenv("MAFIASCOPE_LOGS", str(env / "configured"))
    monkeypatch.setenv("MAFIASCOPE_ALLOW_FREE_PATHS", "1")
    at = new_app()
    at.session_state["sb_roots_open"] = True
    at.run()
    box = at.text_area(key="sb_roots")
    box.set_value(box.value + "\n" + str(elsewhere)).run()
    assert_clean(at)
    assert "elsewhere" in at.multiselect(key="sb_corpora").options, at.multiselect(key="sb_corpora").options


@pytest.mark.slow
def test_arena_extra_models_refuse_keys_the_policy_does_not_allow(env, monkeypatch):
    monkeypatch.setenv("MAFIASCOPE_LOGS", str(env / "configured"))
    monkeypatch.delenv("MAFIASCOPE_KEYS", raising=False)
    at = new_app(page="arena").run()
    area = at.text_area(key="ms_arena_extra")
    area.set_value('evil: {type: openai, model: m, base_url: "http://127.0.0.1:9/v1", api_key: "${DEPLOY_SECRET}"}').run()
    assert_clean(at)
    assert any("$DEPLOY_SECRET is not a key the operator allows" in plain(e.value) for e in at.error), [e.value for e in at.error]
    area.set_value('mine: {type: openai, model: m, api_key: "sk-pasted-0123456789abcdef"}').run()
    msgs = [plain(e.value) for e in at.error]
    assert any("never the key itself" in m for m in msgs) and not any("sk-pasted" in m for m in msgs), msgs
    # header values are credentials too (seen: neither a literal key nor an undeclared name there was refused)
    area.set_value('mine: {type: openai, model: m, headers: {X-Api-Key: "sk-pasted-0123456789abcdef"}}').run()
    msgs = [plain(e.value) for e in at.error]
    assert any("headers.X-Api-Key: give the name" in m for m in msgs) and not any("sk-pasted" in m for m in msgs), msgs
    area.set_value('evil: {type: openai, model: m, base_url: "http://127.0.0.1:9/v1", headers: {X-K: "${DEPLOY_SECRET}"}}').run()
    assert any("$DEPLOY_SECRET is not a key the operator allows" in plain(e.value) for e in at.error), [e.value for e in at.error]
