"""Custom probes end to end: a declared answer schema is validated at load time, shown to the
seat, answered by offline bots from their belief state (flagged), validated and normalised in
the record, kept out of the headline parse rate, summarised by analytics; `validate repeat`
counts unparsed pairs apart from agreement."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mafiascope.logs.io import iter_probe_records
from mafiascope.analytics.corpus import load_corpus
from mafiascope.analytics.custom import custom_summary, numeric_series
from mafiascope.analytics.modes import Mode
from mafiascope.analytics.report import build_report
from mafiascope.cli import main
from mafiascope.probes.answer_schema import AnswerSchema, check, read_schema, schema_suffix
from mafiascope.probes.dsl import BatteryError, parse_battery

BATTERY = """\
name: custom_test
probes:
  - id: suspicion_ranking
    question: |-
      You are {player}. Rank the living players ({players}) and give each a suspicion score from 0 to 10.
      Reply with JSON only: [{"player": "<name>", "score": <0-10>}, ...]
  - id: threat
    question: You are {player}. Who threatens your side most ({players}), who helps them, how sure are you, how do you feel?
    answer:
      target: player
      allies: players
      p_right: probability
      danger: score
      mood: {enum: [calm, worried, angry]}
      why: text
  - id: musing
    question: You are {player}. Describe your mood in a sentence.
"""


@pytest.fixture(scope="module")
def game(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("custom")
    (root / "battery.yaml").write_text(BATTERY)
    logs = root / "logs"
    assert main(["run", "-c", "configs/classic.yaml", "--probes-file", str(root / "battery.yaml"), "--logs", str(logs),
                 "--seed", "3", "-q", "--json"]) == 0
    return logs


def test_schema_is_checked_at_load_time():
    bad = BATTERY.replace("mood: {enum: [calm, worried, angry]}", "mood: {enum: [calm]}")
    with pytest.raises(BatteryError, match="enum needs a list of at least two"):
        parse_battery(__import__("yaml").safe_load(bad), "b.yaml")
    with pytest.raises(BatteryError, match="unknown type 'colour'"):
        parse_battery(__import__("yaml").safe_load(BATTERY.replace("danger: score", "danger: colour")), "b.yaml")


def test_check_validates_and_normalises():
    s = AnswerSchema.parse({"t": "player", "ps": "players", "p": "probability", "s": "score", "m": {"enum": ["Calm", "Angry"]}, "w": "text"})
    seats = ["Ann", "Bob"]
    ok, norm = check(s, {"t": "ann", "ps": ["Bob", "ANN"], "p": "0.4", "s": 7, "m": "calm", "w": " hm "}, seats)
    assert ok and norm == {"t": "Ann", "ps": ["Bob", "Ann"], "p": 0.4, "s": 7.0, "m": "Calm", "w": "hm"}
    ok, norm = check(s, {"t": "Zed", "ps": ["Bob"], "p": 1.5, "s": 11, "m": "sad", "w": ""}, seats)
    assert not ok and norm == {"t": None, "ps": ["Bob"], "p": None, "s": None, "m": None, "w": None}
    assert check(s, ["not", "an", "object"], seats) == (False, None)
    assert read_schema("Q?" + schema_suffix(s)) == s


def test_bots_answer_a_declared_schema_flagged_and_valid(game):
    recs = [r for d in game.iterdir() for r in iter_probe_records(d)]
    threat = [r for r in recs if r["probe_id"] == "threat"]
    assert threat and all(r["answer_valid"] for r in threat)
    assert all(r["answer_parsed"]["_answered_by"] == "offline-bot" for r in threat)
    assert "Answer schema:" in threat[0]["question"] and '"mood": "calm|worried|angry"' in threat[0]["question"]
    musing = [r for r in recs if r["probe_id"] == "musing"]
    assert musing and not any(r["answer_parse_ok"] for r in musing)  # free text without a schema: bots cannot answer


@pytest.mark.slow
def test_custom_probes_are_kept_out_of_the_headline_and_summarised(game, tmp_path):
    c = load_corpus(game, cache_dir=tmp_path)
    rep = build_report(c, Mode(boot=100))
    p = rep["parse"]
    assert p["parse_rate"] == 1.0 and p["calls"] == p["by_probe_repaired"]["suspicion_ranking"][1]  # musing's failures apart
    assert p["custom_calls"] == p["by_probe_repaired"]["threat"][1] + p["by_probe_repaired"]["musing"][1]
    cp = rep["custom_probes"]
    assert set(cp) == {"threat", "musing"}
    t = cp["threat"]
    assert t["valid"] == t["calls"] == t["bot_answers"] and t["usable_rate"] == 1.0 and set(t["by_model"]) == set(
        c.players["model"])
    assert t["fields"]["target"]["kind"] == "player" and sum(t["fields"]["target"]["distribution"].values()) == t["calls"]
    assert set(t["fields"]["target"]["by_role"]) <= {"Mafia", "Villager", "Doctor"}
    assert 0 <= t["fields"]["p_right"]["mean"] <= 1 and set(t["fields"]["danger"]["mean_by_round"])
    assert set(t["fields"]["mood"]["distribution"]) <= {"calm", "worried", "angry"}
    assert cp["musing"]["parsed"] == 0 and cp["musing"]["schema_declared"] is False and cp["musing"]["usable_rate"] == 0
    series = numeric_series(c, 0, "threat", "danger")
    assert len(series) == t["calls"] and series["value"].between(0, 10).all()
    assert custom_summary(c, Mode(boot=0), "threat")["by_model"]


def test_validate_repeat_counts_unparsed_pairs_apart(game, capsys):
    assert main(["validate", "repeat", str(game), "--states", "2", "--repeats", "2", "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    musing = rep["per_probe"]["musing"]
    assert musing["pairs"] == 0 and musing["unparsed_pairs"] > 0 and musing["p"] is None  # not "perfectly repeatable"
    assert rep["per_probe"]["threat"]["pairs"] > 0 and rep["overall"]["unparsed_pairs"] == musing["unparsed_pairs"]
    assert rep["overall"]["ci95"] is not None


@pytest.mark.parametrize("page", ["live", "impersonate"])
@pytest.mark.slow
def test_live_game_and_impersonate_plot_custom_numeric_fields(game, page, monkeypatch, tmp_path):
    pytest.importorskip("streamlit")
    from .app_support import assert_clean, errors, new_app

    monkeypatch.setenv("MAFIASCOPE_LOGS", str(game))
    monkeypatch.setenv("MAFIASCOPE_RUNS", str(tmp_path / "runs"))
    at = new_app(page=page).run()
    assert_clean(at)
    assert not errors(at)
    boxes = [b for b in at.selectbox if b.label == "Custom probe field"]
    assert boxes and set(boxes[0].options) == {"threat.p_right", "threat.danger"}
    boxes[0].set_value("threat.danger").run()
    assert_clean(at)


@pytest.mark.slow
def test_custom_probes_in_analyze_text_and_report(game, tmp_path, capsys):
    assert main(["analyze", str(game), "--boot", "0", "--cache-dir", str(tmp_path / "c")]) == 0
    out = capsys.readouterr().out
    assert "Custom probe threat:" in out and "not in the headline parse rate" in out and "Custom probe musing:" in out
    assert main(["report", str(game), "--out", str(tmp_path / "r"), "--no-figures", "--boot", "0",
                 "--cache-dir", str(tmp_path / "c")]) == 0
    md = (tmp_path / "r" / "report.md").read_text()
    assert "## Custom probe `threat`" in md and "`p_right` mean by role:" in md and "`mood` answers by" in md
