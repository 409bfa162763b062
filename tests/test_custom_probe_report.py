"""Custom probes in the report (issue 34 item 7): counts printed as integers, free text summarised by its
length and a few examples (not a column per sentence), per-model tables as CSV and LaTeX, and offline-bot
answers marked not meaningful (``_direction`` null) left out of the field summaries and counted."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from mafiascope.analytics.corpus import load_corpus
from mafiascope.analytics.modes import Mode
from mafiascope.analytics.report_dir import build_dir_report, write_report_dir
from mafiascope.cli import main

BATTERY = """\
name: report_probes
probes:
  - id: threat
    question: You are {player}. Who is most likely Mafia ({players}), and how sure are you?
    answer:
      target: player
      danger: score
      mood: {enum: [calm, worried, angry]}
      why: text
  - id: pick
    question: You are {player}. Pick a player.
    answer:
      chosen: player
      sure: probability
"""


@pytest.fixture(scope="module")
def report_dir(tmp_path_factory) -> tuple[dict, Path]:
    root = tmp_path_factory.mktemp("custom_report")
    (root / "battery.yaml").write_text(BATTERY)
    logs = root / "logs"
    for seed in (3, 4):
        assert main(["run", "-c", "configs/classic.yaml", "--probes-file", str(root / "battery.yaml"), "--logs", str(logs),
                     "--seed", str(seed), "-q", "--json"]) == 0
    c = load_corpus(logs, cache_dir=root / "cache")
    rep = build_dir_report(c, Mode(boot=0))
    write_report_dir(rep, root / "out", figures=False)
    return rep, root / "out"


def _section(md: str, head: str) -> str:
    start = md.index(head)
    end = md.find("\n## ", start + len(head))
    return md[start:end if end >= 0 else None]


def test_answers_marked_not_meaningful_are_left_out_and_counted(report_dir):
    rep, _ = report_dir
    pick = rep["custom_probes"]["pick"]
    assert pick["bot_answers"] == pick["calls"] > 0
    assert pick["not_meaningful"] == pick["calls"]  # "Pick a player." points nowhere: every bot answer
    for field in ("chosen", "sure"):
        assert pick["fields"][field]["not_meaningful"] == pick["calls"] and pick["fields"][field]["n"] == 0
    threat = rep["custom_probes"]["threat"]
    assert threat["not_meaningful"] == 0 and threat["fields"]["target"]["n"] == threat["calls"]


def test_free_text_is_summarised_not_tabulated(report_dir):
    rep, out = report_dir
    why = rep["custom_probes"]["threat"]["fields"]["why"]
    assert why["kind"] == "text" and why["n"] == rep["custom_probes"]["threat"]["calls"]
    assert why["mean_chars"] > 10 and 1 <= len(why["examples"]) <= 3 and set(why["by_model"])
    md = (out / "report.md").read_text(encoding="utf-8")
    section = _section(md, "## Custom probe `threat`")
    assert "`why`: free text" in section and "> " in section
    assert "because" not in "".join(ln for ln in section.splitlines() if ln.startswith("| role"))  # no column per sentence


def test_counts_are_integers_and_tables_per_model(report_dir):
    rep, out = report_dir
    md = (out / "report.md").read_text(encoding="utf-8")
    section = _section(md, "## Custom probe `threat`")
    mood = section[section.index("`mood` answers by model"):]
    rows = [ln for ln in mood.splitlines()[1:12] if ln.startswith("| bot-") or ln.startswith("| Mafia")]
    assert rows and not any(re.search(r"\d\.000", ln) for ln in rows), rows
    assert "2 bot answers" not in md  # the not-meaningful note names the probe's own count
    assert f"{rep['custom_probes']['pick']['not_meaningful']} bot answers were marked not meaningful" in md
    csv = pd.read_csv(out / "tables" / "custom_threat.csv")
    models = set(rep["by_model"])
    assert set(csv["model"]) == models and set(csv["field"]) == {"target", "danger", "mood", "why"}
    mood_rows = csv[csv["field"] == "mood"]
    assert (mood_rows.groupby("model")["count"].sum() == mood_rows.groupby("model")["n"].first()).all()
    tex = (out / "tables" / "custom_threat.tex").read_text(encoding="utf-8")
    assert r"\label{tab:custom_threat}" in tex and "13.000" not in tex
    assert r"\input{tables/custom_threat.tex}" in (out / "report.tex").read_text(encoding="utf-8")
