"""Where a branch starts is said the same way everywhere, experiment batches are labelled in the branch tree, and the
night-override hint at a day step names the step to move to (issue 35 item 7)."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytest.importorskip("streamlit")

from app.fork_start import fork_start  # noqa: E402

from .app_support import ROOT, assert_clean, new_app, plain, texts, use_logs  # noqa: E402


def cli(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "mafiascope", *args], check=True, cwd=ROOT, timeout=180,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    logs = tmp_path_factory.mktemp("forks")
    cli("run", "-c", str(ROOT / "configs" / "classic.yaml"), "--seed", "4", "--logs", str(logs), "--game-id", "parent-01", "-q")
    parent = str(logs / "parent-01")
    cli("fork", parent, "--at", "1.6", "-n", "1", "--probes", "none", "--logs", str(logs), "--batch-id", "resample16")
    cli("fork", parent, "--at", "1.6", "-n", "1", "--probes", "none", "--logs", str(logs), "--batch-id", "replace16",
        "--replace-utterance", "I am sure Logan is Mafia.")
    cli("replay", "attribution", parent, "--utterances", "1.6", "-n", "1", "--probes", "none", "--logs", str(logs))
    return logs


@pytest.fixture()
def env(logs, tmp_path, monkeypatch):
    return use_logs(monkeypatch, logs, tmp_path)


def test_a_replacement_and_a_resample_at_one_step_say_what_they_share():
    rep = fork_start([1, 5], {"type": "replace_utterance", "step": [1, 6], "seat": "Riley", "text": "x"})
    res = fork_start([1, 6], None)
    assert (rep.shared, rep.new, rep.step) == ("R1.5", "R1.6 replaced", "R1.6")
    assert (res.shared, res.new, res.step) == ("R1.6", "new after R1.6", "R1.6")
    night = fork_start([2, 1], {"type": "override_night", "step": [2, 2], "seat": "Quinn", "action": "protect", "target": "Ava"})
    assert night.shared == "R2.1" and night.new.startswith("R2.2 forced")
    later = fork_start([1, -1], {"type": "override_night", "step": [1, -1], "seat": "Quinn", "action": "protect", "target": "Ava"})
    assert later.shared == "R1.end" and later.new.startswith("new after R1.end")


@pytest.mark.slow
def test_branch_tree_names_where_each_batch_starts_and_which_experiment_made_it(env):
    at = new_app(page="replay", game="parent-01", step="R1.6").run()
    assert_clean(at)
    labels = [plain(e.label) for e in at.expander]
    assert any("R1.6 replaced · Riley says" in lab for lab in labels), labels
    assert any("new after R1.6 · resample" in lab for lab in labels), labels
    assert any("attribution attr-" in lab and "PRE of R1.6 (Riley)" in lab for lab in labels), labels
    assert any("attribution attr-" in lab and "POST of R1.6 (Riley)" in lab for lab in labels), labels
    body = texts(at)
    assert "shared with the parent through R1.5; R1.6 replaced" in body
    assert "shared with the parent through R1.6; new after R1.6" in body
    # the branch links open each branch at its own first step: R1.6 for the replacement, the step after it otherwise
    links = " ".join(m.value for m in at.markdown)
    assert "fork-replace16-000" in links and "step=R1.6" in links and "step=R1.7" in links
    # the night-override hint at a day step: a night is still to come, and the form says from which step
    assert "R1.6 is a day step" in body and "from R1.end" in body


@pytest.mark.slow
def test_a_branch_header_says_what_it_shares(env):
    at = new_app(page="live", game="fork-replace16-000").run()
    assert_clean(at)
    assert "branch of parent-01: shared with the parent through R1.5; R1.6 replaced" in texts(at)


@pytest.mark.slow
def test_experiment_results_and_unprobed_branches_show_no_internals(env):
    """The attribution's tables name messages by their timeline label and show no None; branches run without probes are
    not drawn as flat suspicion lines (issue 35 item 5)."""
    at = new_app(page="replay", game="parent-01", step="R1.6", tab="Experiments").run()
    assert_clean(at)
    tables = [d.value for d in at.dataframe]
    attribution = next(t for t in tables if "measure" in t.columns and "n per arm" in t["measure"].tolist())
    assert list(attribution.columns) == ["measure", "R1.6 Riley"]  # a column per message, named by its timeline label
    for t in tables:
        cells = [str(c) for c in t.to_numpy().ravel()]
        assert "None" not in cells and "error" not in t.columns, (list(t.columns), cells[:20])
    at = new_app(page="replay", game="parent-01", step="R1.6").run()
    assert "not drawn: it would only repeat the last answers before the fork as flat lines" in texts(at)
    charts = at.get("vega_lite_chart")
    assert charts and not [c for c in charts if "steps after the fork" in str(c.proto.spec)]  # the outcome bars only
