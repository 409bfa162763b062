"""`analyze --model` (seats), `compare`, `report`, transcript-only corpora, provenance and the
edge export, on hand-built logs with known answers (tests/handbuilt.py)."""

from __future__ import annotations

import hashlib
import json
import math

import pandas as pd
import pytest

from mafiascope.analytics.metrics import statistics
from mafiascope.cli import main

from .handbuilt import write_corpus


def _json(capsys, *args: str) -> dict:
    assert main([*args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.fixture()
def logs(tmp_path):
    return write_corpus(tmp_path / "logs")


def _common(tmp_path, boot: int = 50) -> list[str]:
    return ["--boot", str(boot), "--cache-dir", str(tmp_path / "cache")]


@pytest.mark.slow
def test_model_selects_seats_and_games_with_model_keeps_whole_games(logs, tmp_path, capsys):
    seat = _json(capsys, "analyze", str(logs), "--model", "A", *_common(tmp_path))
    assert seat["seat_filter"] == {"model": "A", "seats": 6}
    assert math.isclose(seat["f1"]["by_round"]["1"]["acc"], 2 / 3, abs_tol=1e-6)  # Bob's guesses only
    assert seat["parse"]["calls"] == 3 and seat["votes"]["town_votes"] == 3
    whole = _json(capsys, "analyze", str(logs), "--games-with-model", "A", *_common(tmp_path))
    assert "seat_filter" not in whole and whole["f1"]["by_round"]["1"]["acc"] == pytest.approx(9 / 15, abs=1e-6)
    assert set(whole["by_model"]) == {"A", "B"}
    assert main(["analyze", str(logs), "--model", "A", "--games-with-model", "A"]) == 2


@pytest.mark.slow
def test_json_outputs_carry_provenance_with_file_hashes(logs, tmp_path, capsys):
    rep = _json(capsys, "analyze", str(logs), *_common(tmp_path, 0))
    prov = rep["provenance"]
    assert {"mafiascope_version", "git_commit", "python", "packages", "manifest", "config_sha256", "seeds"} <= set(prov)
    first = prov["manifest"][0]
    assert first["game_id"] == "hb-00"
    want = hashlib.sha256((logs / "hb-00" / "game.jsonl").read_bytes()).hexdigest()
    assert first["files"]["game.jsonl"] == want and "introspection.jsonl" in first["files"]
    assert len(prov["config_sha256"]) == 1  # the three games share one run configuration
    for cmd in ("dynamics", "episodes"):
        assert "provenance" in _json(capsys, cmd, str(logs), *_common(tmp_path, 0))


@pytest.mark.slow
def test_compare_cli_known_differences(logs, tmp_path, capsys):
    res = _json(capsys, "compare", str(logs), "--models", "A,B", *_common(tmp_path, 99))
    rows = {r["metric"]: r for r in res["rows"]}
    assert rows["f1.accuracy"]["diff"] == pytest.approx(1 / 6, abs=1e-6)
    assert rows["parse.parse_rate"]["diff"] == pytest.approx(0.5)
    assert rows["f1.accuracy"]["p"] is None  # the same difference in every game: not testable
    assert "outcome.seat_win_rate" not in rows  # confounded with the side drawn: compared per side and adjusted
    adj = rows["outcome.side_adjusted"]  # A and B win as often as their sides do: 0 each
    assert adj["diff"] == 0 and adj["p"] == 1.0 and "outcome.side_adjusted" in res["p_holm_family"]["tests"]
    assert res["design"] == "paired" and rows["f1.accuracy"]["direction"] == "higher"
    assert "provenance" in res
    assert main(["compare", str(logs), "--models", "A,C"]) == 2
    assert "sat in none" in capsys.readouterr().err
    assert main(["compare", str(logs), "--models", "A"]) == 2
    assert main(["compare", str(logs), "--models", "A,B", "--boot", "50", "--cache-dir", str(tmp_path / "c")]) == 0
    out = capsys.readouterr().out
    k = res["p_holm_family"]["size"]
    assert "F1 committed accuracy" in out and f"Holm p ({k})" in out and f"the {k} metrics of A vs B that have a p" in out
    assert "n/a: not testable" in out


def test_transcript_only_corpus_is_analysed_not_refused(tmp_path, capsys):
    logs = write_corpus(tmp_path / "np", probes=False)
    rep = _json(capsys, "analyze", str(logs), *_common(tmp_path))
    assert rep["probe_logs"] is False and rep["n_games"] == 3
    assert rep["f1"] == {"absent": "no probe logs in the selected games"} and "absent" in rep["dynamics"]
    assert rep["outcome"]["mafia_wins"] == 1
    assert (rep["votes"]["town_votes"], rep["votes"]["town_on_mafia"]) == (9, 6)  # Bob and Dee vote Ann each game
    # transcript baselines: only Dee's vote (Ann, mentioned twice before it) matches the most-mentioned other
    mm = rep["f4"]["innocent"]["transcript_most_mentioned"]
    assert (mm["k"], mm["n"]) == (3, 9)
    without_probes = [st.key for m, st in statistics() if not m.needs_probes]  # e.g. the seat win rate
    assert "outcome.seat_win_rate" in without_probes and list(rep["by_model"]["A"]["metrics"]) == without_probes
    assert main(["analyze", str(logs), "--boot", "0", "--cache-dir", str(tmp_path / "cache")]) == 0
    assert "probe-based sections absent" in capsys.readouterr().out


def test_report_directory_without_figures(logs, tmp_path, capsys):
    out = tmp_path / "rep"
    res = _json(capsys, "report", str(logs), "--out", str(out), "--no-figures", *_common(tmp_path))
    assert res["figures"] == [] and "tables/by_model.csv" in res["tables"]
    md = (out / "report.md").read_text()
    assert "## Per model" in md and "### A vs B" in md and "## Outcomes" in md
    fam = json.loads((out / "report.json").read_text())["comparisons"][0]["p_holm_family"]
    assert f"| Holm p ({fam['size']} metrics) | Holm p (all {fam['size']} tests) |" in md  # one pair: the same family
    assert f"Holm family of this pair: the {fam['size']} metrics of A vs B that have a p." in md
    by_model = pd.read_csv(out / "tables" / "by_model.csv")
    acc = by_model[(by_model["model"] == "A") & (by_model["metric"] == "f1.accuracy")]["value"].item()
    assert acc == pytest.approx(2 / 3, abs=1e-6)
    cmp = pd.read_csv(out / "tables" / "comparisons.csv")
    assert cmp[cmp["metric"] == "f1.unknown_rate"]["diff"].item() == pytest.approx(-1 / 3, abs=1e-6)
    tex = (out / "tables" / "comparisons.tex").read_text()
    assert "\\toprule" in tex and "\\midrule" in tex and "95\\%" in tex
    assert set(cmp["holm_family_size"].dropna()) == {fam["size"]}
    rep = json.loads((out / "report.json").read_text())
    assert rep["comparisons"][0]["a"] == "A" and rep["provenance"]["manifest"][2]["game_id"] == "hb-02"
    # a non-empty --out is refused (exit 2) and left as it was
    before = sorted(p.name for p in out.iterdir())
    assert main(["report", str(logs), "--out", str(out), "--no-figures"]) == 2
    assert sorted(p.name for p in out.iterdir()) == before
    (tmp_path / "afile").write_text("x")
    assert main(["report", str(logs), "--out", str(tmp_path / "afile")]) == 2


@pytest.mark.slow
def test_report_figures_are_svg_and_png_from_the_dashboard_charts(logs, tmp_path, capsys):
    out = tmp_path / "rep"
    res = _json(capsys, "report", str(logs), "--out", str(out), *_common(tmp_path))
    figs = set(res["figures"])
    assert {"figures/f1_by_round_per_model.svg", "figures/calibration_per_model.png", "figures/compare_A_vs_B.svg"} <= figs
    assert (out / "figures" / "compare_A_vs_B.svg").read_text().lstrip().startswith("<svg")
    assert (out / "figures" / "f1_by_round_per_model.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "![compare_A_vs_B](figures/compare_A_vs_B.svg)" in (out / "report.md").read_text()


def test_transcript_only_report(tmp_path, capsys):
    logs = write_corpus(tmp_path / "np", probes=False)
    out = tmp_path / "rep"
    _json(capsys, "report", str(logs), "--out", str(out), "--no-figures", *_common(tmp_path))
    md = (out / "report.md").read_text()
    assert "No probe logs" in md and "Absent sections" in md
    assert not (out / "tables" / "f1_by_round_per_model.csv").exists()


def test_edge_export_creates_directories_and_has_model_role_columns(logs, tmp_path, capsys):
    target = tmp_path / "new" / "deep" / "edges.csv"
    res = _json(capsys, "dynamics", str(logs), "--export-graph", str(target), *_common(tmp_path, 0))
    df = pd.read_csv(target)
    assert res["export"]["rows"] == len(df) > 0
    assert {"source_model", "source_role", "destination_model", "destination_role"} <= set(df.columns)
    assert (df["source"] != df["destination"]).all()
    bob = df[df["source"] == "Bob"]
    assert set(bob["source_model"]) == {"A"} and set(bob["source_role"]) == {"Villager"}


@pytest.mark.slow
def test_episodes_text_prints_full_game_ids(tmp_path, capsys):
    from pathlib import Path

    demo = Path(__file__).resolve().parents[1] / "data" / "demo"
    assert main(["episodes", str(demo), "--boot", "0", "--cache-dir", str(tmp_path / "c")]) == 0
    lines = [ln.split()[0] for ln in capsys.readouterr().out.splitlines()[1:] if ln.startswith("  ")]
    assert lines and all(x.startswith("demo-") and len(x) > 8 for x in lines)


def test_model_filter_reaches_report_export_and_is_refused_by_compare(logs, tmp_path, capsys):
    rep = _json(capsys, "report", str(logs), "--out", str(tmp_path / "r"), "--no-figures", "--model", "B", *_common(tmp_path))
    saved = json.loads((tmp_path / "r" / "report.json").read_text())
    assert rep["files"] and saved["seat_filter"]["model"] == "B"
    assert saved["f1"]["by_round"]["1"]["acc"] == pytest.approx(0.5)  # Cy's guesses only
    target = tmp_path / "e" / "edges.csv"
    _json(capsys, "dynamics", str(logs), "--model", "B", "--export-graph", str(target), *_common(tmp_path, 0))
    assert set(pd.read_csv(target)["source_model"]) == {"B"}
    assert main(["compare", str(logs), "--models", "A,B", "--model", "A"]) == 2
