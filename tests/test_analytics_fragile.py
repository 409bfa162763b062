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


def test_f4_rates_on_few_counted_votes_are_marked(tmp_path):
    """F4's corpus-level rates and baselines resting on fewer than 20 counted votes say so (text, report.md, f4.csv)."""
    from mafiascope.analytics.report import format_report

    gold = G.read("en_demo", "default")
    f4 = gold["report"]["f4"]
    assert f4["mafia"]["top1"]["n"] < 20 <= f4["innocent"]["top1"]["n"]
    lines = [x for x in format_report(gold["report"]).splitlines() if " top1 " in x and "/" in x]
    (maf,) = [x for x in lines if x.strip().startswith("mafia")]
    (inn,) = [x for x in lines if x.strip().startswith("innocent")]
    assert maf.endswith(f"{FRAGILE_MARK} n {f4['mafia']['top1']['n']} < 20") and FRAGILE_MARK not in inn
    md = _md(gold, tmp_path)
    rows = {r[0]: r for r in ([c.strip() for c in x.strip("|").split("|")] for x in md.splitlines()
                              if x.startswith(("| mafia | top1 |", "| innocent | top1 |")))}
    assert rows["mafia"][-1] == f"n {f4['mafia']['top1']['n']} &lt; 20" and rows["innocent"][-1] == "–"
    csv = (tmp_path / "tables" / "f4.csv").read_text(encoding="utf-8").splitlines()
    assert csv[0].endswith(",fragile") and any(x.startswith("mafia,top1,") and x.endswith("< 20") for x in csv)


def test_study_figures_are_marked_when_fragile():
    """The study report's and Studies tab's per-model figures (mafiascope.study.status.figure)."""
    from mafiascope.analytics.metric import PROPORTION
    from mafiascope.study.status import figure

    thin = {"point": 0.5, "ci95": [0.1, 0.9], "n": 6, "games": 3, "fragile": "n 6 < 20; 3 games < 10"}
    assert figure(thin, PROPORTION) == "0.500 [0.100, 0.900] †"
    assert figure({**thin, "fragile": None}, PROPORTION) == "0.500 [0.100, 0.900]"
