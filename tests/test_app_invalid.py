"""The app leaves games over their fault budget out of the sidebar selection (and so of every
page's figures) by default, says how many, and marks such a game when it is opened."""

from __future__ import annotations

import pytest

pytest.importorskip("streamlit")

from .app_support import ROOT, assert_clean, new_app, plain, play, texts  # noqa: E402
from .servers import dead_port  # noqa: E402


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    root = tmp_path_factory.mktemp("inv")
    play(root, "ok-game", 1, "--no-probes")
    cfg = root / "dead.yaml"
    seats = "".join(f"  - {{backend: {b}}}\n" for b in ["gpt"] * 3 + ["bot"] * 4)
    cfg.write_text(f"name: dead\nseats:\n{seats}backends:\n"
                   f'  gpt: {{type: openai, base_url: "http://127.0.0.1:{dead_port()}/v1", model: m, max_retries: 0, timeout: 1}}\n'
                   "  bot: {type: bot, preset: analyst}\nprobes: {enabled: false}\n")  # fmt: skip
    import subprocess
    import sys

    res = subprocess.run([sys.executable, "-m", "mafiascope", "run", "-c", str(cfg), "--seed", "2", "--logs", str(root),
                          "--game-id", "bad-game", "-q", "--no-preflight"], cwd=ROOT, timeout=120)  # fmt: skip
    assert res.returncode == 1  # invalid
    cfg.unlink()
    return root


@pytest.mark.slow
def test_invalid_games_are_left_out_and_counted(logs, monkeypatch, tmp_path):
    monkeypatch.setenv("MAFIASCOPE_LOGS", str(logs))
    monkeypatch.setenv("MAFIASCOPE_RUNS", str(tmp_path / "runs"))
    at = new_app(game="bad-game").run()
    assert_clean(at)
    assert "1 invalid game left out (over the fault budget)" in texts(at)
    assert "bad-game" not in at.selectbox(key="sb_game").options[1:]  # only the URL-picked game stays visible
    warn = " ".join(plain(w.value) for w in at.warning)
    assert "Invalid game" in warn and "moves fell back" in warn and "20%" in warn  # text, escaped for markdown
    n_without = len(at.selectbox(key="sb_game").options)
    at.session_state["sb_filters_open"] = True  # the checkbox is drawn while the Filters expander is open
    at.run().checkbox(key="sb_invalid").check().run()
    assert_clean(at)
    assert "invalid game left out" not in texts(at)
    assert len(at.selectbox(key="sb_game").options) == n_without
    at2 = new_app(game="ok-game").run()
    assert "bad-game" not in at2.selectbox(key="sb_game").options
