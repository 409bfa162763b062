"""The Replay page: renders a game's branch tree and experiments, and Branch starts a background fork."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest

pytest.importorskip("streamlit")
from streamlit.testing.v1 import AppTest  # noqa: E402

from mafiascope.replay.forks import plan_fork, run_fork_batch  # noqa: E402

from .app_support import plain  # noqa: E402
from .test_replay_forks import play_bot  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture()
def logs(tmp_path, monkeypatch):
    logs = tmp_path / "logs"
    parent = play_bot(logs, gid="parentgame", seed=4)
    asyncio.run(run_fork_batch(plan_fork(parent, "1.-1", 2, batch_seed=1, batch_id="aaaa1111")))
    monkeypatch.setenv("MAFIASCOPE_LOGS", str(logs))
    monkeypatch.setenv("MAFIASCOPE_RUNS", str(tmp_path / "runs"))
    return logs


def app() -> AppTest:
    """The page through the real entrypoint (navigation, sidebar, ?page=replay&game=...)."""
    at = AppTest.from_file(str(ROOT / "streamlit_app.py"), default_timeout=60)
    at.query_params["page"] = "replay"
    at.query_params["game"] = "parentgame"
    return at


def page() -> AppTest:
    """The page after the shared sidebar, without st.navigation: AppTest drops button clicks
    in pages run through st.navigation (Streamlit 1.5x), so interaction tests use this frame."""
    script = f"""
import sys, runpy
sys.path.insert(0, {str(ROOT)!r})
from app import sidebar
sidebar.render()
from app.frame import framed
with framed():  # the harness is the frame: the page runs without the entrypoint
    runpy.run_path({str(ROOT / "pages" / "replay.py")!r}, run_name="__main__")
"""
    at = AppTest.from_string(script, default_timeout=60)
    at.query_params["game"] = "parentgame"
    return at


def texts(at: AppTest) -> str:
    parts = [e.label for e in at.expander] + [m.value for m in at.markdown] + [c.value for c in at.caption]
    parts += [str(e.value) for e in at.error] + [str(s.value) for s in at.success]
    return plain("\n".join(str(p) for p in parts))  # untrusted text is escaped Markdown (app/text.py)


@pytest.mark.slow
def test_replay_page_shows_branch_tree_and_starts_a_fork(logs):
    at = app().run()
    assert not at.exception, at.exception
    body = texts(at)
    assert "aaaa1111" in body and "fork-aaaa1111-000" in body  # the batch and links to its branches
    assert "?page=live&game=fork-aaaa1111-000" in body
    at = page().run()
    assert not at.exception, at.exception
    at.number_input(key="rp_n").set_value(2)
    at.selectbox(key="rp_probes").set_value("none")
    at.button(key="rp_go").click()
    at.run()
    assert not at.exception, at.exception
    assert any("Started fork batch" in str(s.value) for s in at.success), texts(at)
    deadline = time.time() + 60
    done = []
    while time.time() < deadline and not done:
        for p in (logs / "experiments").glob("fork-*.json"):
            rec = json.loads(p.read_text())
            if rec.get("fork_batch_id") != "aaaa1111" and rec.get("status") == "done":
                done.append(rec)
        time.sleep(0.2)
    assert done and done[0]["n"] == 2 and done[0]["failed"] == 0


@pytest.mark.slow
def test_branch_batch_is_compared_with_its_parent(logs):
    """Each batch in the tree aligns its branches with the parent at the fork step: suspicion panels,
    eliminations after the fork and the transcripts side by side with the first divergence marked."""
    asyncio.run(run_fork_batch(plan_fork(logs / "parentgame", "1.3", 2, batch_seed=2, batch_id="bbbb2222")))
    at = app().run()
    assert not at.exception, at.exception
    body = texts(at)
    assert "Compared with the parent" in body and "Parent's own result" in body
    assert "Step 0 is R1.end, the last step the branches share" in body and "Step 0 is R1.3, the last step" in body, body
    # the batch forked at the end of round 1: the game ended at night, nobody spoke again
    assert "Neither the parent nor this branch has a public utterance after the fork step." in body
    picker = at.selectbox(key="cmp_branch_bbbb2222")
    assert all(o.startswith("fork-bbbb2222-") for o in picker.options)
    sides = [d.value for d in at.dataframe if "parent said" in d.value.columns]
    assert sides, body
    side = sides[0]
    assert list(side.columns[:3]) == ["#", "", "parent step"] and len(side) > 0
    assert (side[""] == "▶").sum() == (0 if "(same words)" in picker.value else 1)


@pytest.mark.slow
def test_live_game_on_a_branch_compares_its_batch_with_the_parent(logs):
    asyncio.run(run_fork_batch(plan_fork(logs / "parentgame", "1.3", 2, batch_seed=2, batch_id="cccc3333")))
    at = AppTest.from_file(str(ROOT / "streamlit_app.py"), default_timeout=60)
    at.query_params["page"] = "live"
    at.query_params["game"] = "fork-cccc3333-000"
    at.run()
    assert not at.exception, at.exception
    assert any(e.label.startswith("↳ Compared with its parent parentgame") for e in at.expander)
    assert "Step 0 is R1.3, the last step the branches share with their parent" in texts(at)
    assert at.selectbox(key="cmp_branch_live_cccc3333").options
