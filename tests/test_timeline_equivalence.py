"""The app's game model and the viewer's step model give the steps they gave before the timeline moved into
mafiascope.logs (values recorded from the app's own build_model at commit b9faaf2 on data/demo), and they agree
with logs.Timeline. Two changes are intended: the round-end label ("R1 end" -> "R1.end"), and a step carried by
a record that is not a seat's reply (the night analysis) now points at that record (``event_idx``; it was None)."""

from __future__ import annotations

import hashlib
import json
import warnings
from pathlib import Path

import pytest

from mafiascope.logs import iter_games
from mafiascope.logs.io import list_game_dirs

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "data" / "demo"
BEFORE = json.loads((ROOT / "tests" / "fixtures" / "timeline" / "demo_app_steps.json").read_text())


def _beliefs_digest(beliefs: dict) -> str:
    flat = {a: [{k: [v[0], v[1]] for k, v in sorted(r.items())} for r in rows] for a, rows in sorted(beliefs.items())}
    return hashlib.sha256(json.dumps(flat, sort_keys=True, default=str).encode()).hexdigest()


@pytest.fixture(scope="module")
def app_models():
    pytest.importorskip("streamlit")
    from app.data import load_raw
    from app.gamemodel import build_model

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {d.name: build_model(load_raw(str(d))) for d in list_game_dirs(DEMO)}


def test_before_values_cover_every_demo_game(app_models):
    assert set(BEFORE) == set(app_models) and len(BEFORE) >= 10


@pytest.mark.parametrize("game", sorted(BEFORE))
def test_app_game_model_unchanged(app_models, game):
    from mafiascope.logs import kinds

    gm, ref = app_models[game], BEFORE[game]
    old = [[*s[:3], s[3].replace(" end", ".end"), *s[4:]] for s in ref["steps"]]
    now = [[s.idx, s.round, s.seq, s.label, s.phase, s.ts, s.speaker, s.event_idx, sorted(s.alive)] for s in gm.steps]
    records = [s.event_idx for s in gm.steps if s.event_idx is not None and kinds.of(gm.events[s.event_idx]) not in kinds.UTTERANCE_KINDS]
    assert all(kinds.of(gm.events[i]) == kinds.NIGHT_ANALYSIS for i in records)
    assert [[*row[:7], None if row[7] in records else row[7], row[8]] for row in now] == old
    assert gm.event_step == ref["event_step"]
    assert _beliefs_digest(gm.beliefs) == ref["beliefs"]
    assert [gm.probes_total, gm.probes_ok, sorted([k, list(v)] for k, v in gm.probes_by_id.items())] == ref["probes"]
    assert any(s.label.endswith(".end") for s in gm.steps)  # every demo game has a round end


def test_logs_timeline_is_the_app_timeline(app_models):
    for log in iter_games(DEMO):
        gm, tl = app_models[log.game_id], log.timeline()
        assert tl.steps == gm.steps and tl.event_step == gm.event_step and tl.beliefs == gm.beliefs


@pytest.mark.parametrize("root", [DEMO, ROOT / "data" / "arena", ROOT / "tests" / "fixtures" / "logs", ROOT / "data" / "corpus"],
                         ids=["demo", "arena", "fixtures", "original-corpus"])  # fmt: skip
def test_viewer_step_model_agrees(tmp_path, root):
    """The viewer's step model (logs.Timeline over the corpus tables) and its columnar step table (the
    corpus-wide fast path the episodes metric reads) both give the timeline read_game gives from the files,
    unprobed ten-seat games (a night analysis carries a message number) included."""
    import numpy as np

    from mafiascope.analytics.corpus import load_corpus
    from mafiascope.analytics.viewer import build_step_model, step_table

    c = load_corpus(root, cache_dir=tmp_path, probed_only=False)
    table = step_table(c)
    n = 0
    for log in iter_games(root):
        g = c.game_index(log.game_id)
        sm, tl = build_step_model(c, g), log.timeline()
        want = [(s.label, s.speaker, s.ts, sorted(s.alive)) for s in tl.steps]
        assert [(s.label, s.speaker, s.ts, sorted(s.alive)) for s in sm.steps] == want
        rows = np.flatnonzero(table["g"] == g)
        names = c.seat_names(g)
        cols = [(f"R{table['round'][i]}." + ("end" if table["seq"][i] == -1 else str(table["seq"][i])),
                 names[table["speaker"][i]] if table["speaker"][i] >= 0 else None, float(table["ts"][i]),
                 sorted(names[j] for j in np.flatnonzero(table["alive"][i]))) for i in rows]  # fmt: skip
        assert cols == want
        n += 1
    assert n == c.m
