"""Replay QA (found driving the page in a browser): interventions act once, bundled games are
never written to, a finished batch shows up without a reload, and the branch tree says
what each batch changed, with n and intervals."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from mafiascope.logs.io import read_jsonl
from mafiascope.replay.forks import plan_fork, run_fork_batch
from mafiascope.replay.source import ParentGame

from .test_replay_forks import play_bot


@pytest.fixture(scope="module")
def parent(tmp_path_factory) -> Path:
    return play_bot(tmp_path_factory.mktemp("qa-parent"), gid="qaparent", seed=4)


def _own(recs, seat):
    return [r for r in recs if r.get("player") == seat and not r.get("inherited") and r.get("kind") != "setup"]


def test_replaced_utterance_is_said_once_not_at_every_later_turn(parent, tmp_path):
    """The seat's later turns carry the forced text in their history; they must reach the real
    backend (the branch used to repeat the replacement at every later vote, night action and speech)."""
    p = ParentGame.load(parent)
    ev = next(e for e in p.records if e["kind"] == "day_discuss" and e["round"] == 1)
    text = "A sentence only the intervention would ever say, about nobody in particular."
    rec = asyncio.run(run_fork_batch(plan_fork(p, (ev["round"], ev["msg_seq"]), 2, logs=tmp_path, replace_text=text,
                                               seat=ev["player"], batch_seed=3)))  # fmt: skip
    for br in rec["branches"]:
        mine = _own(read_jsonl(Path(br["path"]) / "game.jsonl"), ev["player"])
        said = [(r["round"], r["msg_seq"], r["kind"]) for r in mine if text in (r.get("response") or "")]
        assert said == [(ev["round"], ev["msg_seq"], "day_discuss")], said
        assert len(mine) > 1  # the seat did act again, with its own words


def test_night_override_applies_to_that_night_only(parent, tmp_path):
    p = ParentGame.load(parent)
    ev = next(e for e in p.records if e["kind"] == "night_mafia" and e["round"] == 1)
    mafia = {pl["name"] for pl in p.setup["players"] if pl["role"] == "Mafia"}
    victim = next(pl["name"] for pl in p.setup["players"] if pl["name"] not in mafia and pl["name"] != ev.get("target"))
    rec = asyncio.run(run_fork_batch(plan_fork(p, (1, ev["msg_seq"]), 2, logs=tmp_path, override_night=(ev["player"], victim),
                                               batch_seed=3)))  # fmt: skip
    for br in rec["branches"]:
        recs = read_jsonl(Path(br["path"]) / "game.jsonl")
        forced = recs[0]["intervention"]["text"]
        mine = _own(recs, ev["player"])
        assert {r["round"] for r in mine if (r.get("response") or "") == forced} == {1}, [(r["round"], r["msg_seq"], r["kind"]) for r in mine if (r.get("response") or "") == forced]
