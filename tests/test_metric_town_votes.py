"""Town votes on a true Mafia member, per model, with its interval: the hand-built games' known answer, in
every place that shows a seat-level metric."""

from __future__ import annotations

import json

from mafiascope.analytics.corpus import load_corpus
from mafiascope.analytics.modes import Mode
from mafiascope.analytics.report import build_report, format_report
from mafiascope.cli import main

from .handbuilt import write_corpus

KEY = "votes.town_on_mafia_rate"


def test_town_votes_on_mafia_per_model(tmp_path, capsys) -> None:
    """Each hand-built game: Bob (A, town) votes Ann (Mafia); Cy (B) votes Dee (town), Dee (B) votes Ann;
    Ann (A, Mafia) is no town voter. So A's town votes are all on the Mafia, B's half, in every game: the
    intervals, resampling whole games, are points."""
    logs = write_corpus(tmp_path / "logs", winners=("Mafia", "Villagers", "Villagers", "Mafia"))
    c = load_corpus(logs, cache_dir=tmp_path / "cache")
    rep = build_report(c, Mode(boot=200))
    a, b = rep["by_model"]["A"]["metrics"][KEY], rep["by_model"]["B"]["metrics"][KEY]
    assert (a["point"], a["n"], a["ci95"], a["games"]) == (1.0, 4, [1.0, 1.0], 4)
    assert (b["point"], b["n"], b["ci95"]) == (0.5, 8, [0.5, 0.5])
    assert rep["by_model_role"]["B"]["Villager"]["metrics"][KEY]["point"] == 0.5
    assert rep["by_model_role"]["A"]["Mafia"]["metrics"][KEY]["n"] == 0  # Ann votes, but not as town
    assert any(KEY in line and "1.000" in line for line in format_report(rep).splitlines())
    # compare: the difference, its interval and p, as text and JSON
    assert main(["compare", str(logs), "--models", "A,B", "--boot", "200", "--cache-dir", str(tmp_path / "cache"),
                 "--json"]) == 0
    row = next(r for r in json.loads(capsys.readouterr().out)["rows"] if r["metric"] == KEY)
    assert (row["a"], row["b"], row["diff"], row["diff_ci95"]) == (1.0, 0.5, 0.5, [0.5, 0.5])
    assert main(["compare", str(logs), "--models", "A,B", "--boot", "200", "--cache-dir", str(tmp_path / "cache")]) == 0
    assert "town votes on Mafia" in capsys.readouterr().out
    # the report directory's per-model table and comparisons
    out = tmp_path / "report"
    assert main(["report", str(logs), "--out", str(out), "--no-figures", "--boot", "200",
                 "--cache-dir", str(tmp_path / "cache")]) == 0
    assert KEY in (out / "tables" / "by_model.csv").read_text() and KEY in (out / "tables" / "comparisons.csv").read_text()
    assert "town votes on Mafia" in (out / "report.md").read_text()


def test_without_probe_logs_it_is_still_there(tmp_path) -> None:
    """It needs only the tally: transcript-only games have it too."""
    logs = write_corpus(tmp_path / "logs", probes=False)
    c = load_corpus(logs, cache_dir=tmp_path / "cache", probed_only=False)
    rep = build_report(c, Mode(boot=0))
    assert rep["probe_logs"] is False and rep["by_model"]["B"]["metrics"][KEY]["point"] == 0.5
