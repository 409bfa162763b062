"""Fragile figures are marked and every metric says which way is better, wherever a per-model figure is
printed: the text report, report.md, the CSV tables and ``mafiascope compare``'s text (issue 32 item 6)."""

from __future__ import annotations

from pathlib import Path

from mafiascope.analytics.metric import FRAGILE_MARK

from . import report_goldens as G


def _md(gold: dict, tmp_path: Path) -> str:
    from mafiascope.analytics.report_dir import write_report_dir

    write_report_dir({**gold["report"], "comparisons": gold["comparisons"], "provenance": {}}, tmp_path, figures=False)
    return (tmp_path / "report.md").read_text(encoding="utf-8")


def _row(md: str, key: str) -> list[str]:
    (line,) = [x for x in md.splitlines() if x.startswith("| ") and f"| {key} |" in x]
    return [c.strip() for c in line.strip("|").split("|")]


def test_report_md_marks_exactly_the_fragile_figures_and_says_which_way_is_better(tmp_path):
    gold = G.read("arena", "default")  # 30 games: 18 Mafia seats per model (< 20) but 42 town seats
    md = _md(gold, tmp_path)
    models = list(gold["report"]["by_model"])
    mafia, town = _row(md, "outcome.win_rate_mafia"), _row(md, "outcome.win_rate_town")
    assert mafia[2] == town[2] == "↑ higher"
    for i, mdl in enumerate(models):
        m = gold["report"]["by_model"][mdl]["metrics"]
        assert bool(m["outcome.win_rate_mafia"]["fragile"]) and mafia[3 + i].endswith(FRAGILE_MARK)
        assert not m["outcome.win_rate_town"]["fragile"] and not town[3 + i].endswith(FRAGILE_MARK)
    assert "† fragile: fewer units than the metric's minimum n" in md
    demo = _md(G.read("demo", "default"), tmp_path / "demo")
    assert _row(demo, "f2.ece")[2] == "↓ lower" and _row(demo, "dynamics.volatility")[2] == "neither"
    # each comparison says how its games were resampled, and marks a side's fragile figure
    assert "paired: both models sat in every game, resampled together" in demo
    csv = (tmp_path / "tables" / "by_model.csv").read_text(encoding="utf-8").splitlines()
    assert csv[0].endswith(",fragile") and any(line.endswith("n 18 < 20") for line in csv)


def test_text_report_and_compare_mark_fragile_figures():
    from mafiascope.analytics.report import format_report
    from mafiascope.cli.commands.analytics import _compare_text

    gold = G.read("arena", "default")
    text = format_report(gold["report"])
    (line,) = [x for x in text.splitlines() if x.strip().startswith("outcome.win_rate_mafia")][:1]
    assert "↑ higher" in line and f"{FRAGILE_MARK} n 18 < 20" in line
    (town,) = [x for x in text.splitlines() if x.strip().startswith("outcome.win_rate_town")][:1]
    assert FRAGILE_MARK not in town
    cmp = next(c for c in gold["comparisons"] if any(r.get("fragile_a") for r in c["rows"]))
    out = list(_compare_text(cmp, None))
    (row,) = [x for x in out if x.strip().startswith("win rate as Mafia")]
    assert "↑ higher" in row and FRAGILE_MARK in row
    assert any(x.strip().startswith(f"{FRAGILE_MARK} fragile") for x in out)
