"""The report directory's LaTeX (issue 34 item 1): tables that fit the page, and report.tex compiled with
pdflatex without an overfull box or a float too large (skipped only where pdflatex is missing)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from mafiascope.analytics import latex
from mafiascope.analytics.report_dir import write_report_dir
from mafiascope.export_text import tex_inline
from tests.studies import three_model_study

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "tests" / "golden" / "reports" / "demo.default.json"
PDFLATEX = shutil.which("pdflatex")
SAFE_TOKENS = re.compile(r"\\(textbackslash|allowbreak|textasciicircum|textasciitilde|textless|textgreater|textbar|"
                         r"textquotedbl|textasciigrave|textendash|textemdash|textquoteleft|textquoteright|"
                         r"textquotedblleft|textquotedblright|dots|textminus|texttimes|textperiodcentered)\{\}"
                         r"|\\[{}$&#%_]|-\{\}")


def _golden_rep() -> dict:
    gold = json.loads(GOLDEN.read_text(encoding="utf-8"))
    return {**gold["report"], "comparisons": gold["comparisons"],
            "provenance": {"mafiascope_version": "X", "git_commit": "X", "python": "X"}}


@given(st.text(max_size=80))
@settings(max_examples=300, deadline=None)
def test_tex_inline_leaves_nothing_that_latex_would_run(text):
    out = SAFE_TOKENS.sub("", tex_inline(text))
    assert not set(out) & set("\\{}$&#^_%~"), out
    assert all(" " <= ch <= "~" or "\u00a1" <= ch <= "\u00ff" for ch in out), out  # what T1 fonts set


def test_numbers_have_a_real_minus_and_fixed_decimals():
    assert latex.number(-0.25) == "$-$0.250"
    assert latex.number(0.0004, 3) == "0.000" and latex.number(-0.0001) == "0.000"  # no "-0.000"
    assert latex.interval(-0.5, 0.25, 2) == "[$-$0.50, 0.25]"
    assert latex.integer(13.0) == "13" and latex.number(None) == latex.MISSING


def test_every_table_is_labelled_captioned_and_narrow(tmp_path):
    rep = _golden_rep()  # five models: ten pairs, ~20 metrics each
    write_report_dir(rep, tmp_path, figures=False)
    texs = sorted((tmp_path / "tables").glob("*.tex"))
    assert len(texs) >= 9
    for f in texs:
        t = f.read_text(encoding="utf-8")
        assert rf"\label{{tab:{f.stem}}}" in t and r"\caption{" in t, f.name
        body = t[t.index(r"\toprule"):]
        assert not re.search(r"(?<![\w${])-\d", body), f.name  # numbers take $-$, never a hyphen
        assert re.search(r"\\begin\{(tabularx|xltabular)\}\{\\linewidth\}|\\begin\{tabular\}", t), f.name
    comparisons = (tmp_path / "tables" / "comparisons.tex").read_text(encoding="utf-8")
    spec = re.search(r"\\begin\{xltabular\}\{\\linewidth\}\{(.*)\}\n", comparisons).group(1)
    assert spec.count(" ") + 1 <= 6  # metric, A, B, A - B, CI, Holm p
    size = rep["comparisons"][0]["p_holm_family"]["size"]
    assert f"Holm family: {size} metrics" in comparisons and "longtable" not in comparisons
    by_model = (tmp_path / "tables" / "by_model.tex").read_text(encoding="utf-8")
    assert by_model.count(r"\\") > latex.FLOAT_ROWS and r"\begin{xltabular}" in by_model  # 105 rows: broken over pages
    assert r"F1 committed accuracy~$\uparrow$" in by_model and r"F2 ECE~$\downarrow$" in by_model
    doc = (tmp_path / "report.tex").read_text(encoding="utf-8")
    assert all(rf"\input{{tables/{f.stem}.tex}}" in doc for f in texs)


def _compile(out: Path) -> str:
    for _ in range(2):  # the second run settles longtable widths and references
        res = subprocess.run([PDFLATEX, "-interaction=nonstopmode", "-halt-on-error", "report.tex"], cwd=out,
                             capture_output=True, text=True, timeout=300)
        assert res.returncode == 0, res.stdout[-3000:]
    return (out / "report.log").read_text(encoding="utf-8", errors="replace")


def _assert_fits(out: Path) -> None:
    log = _compile(out)
    bad = re.findall(r"^(Overfull \\[hv]box.*|.*Float too large.*)$", log, re.M)
    assert not bad, bad
    assert (out / "report.pdf").stat().st_size > 10_000


@pytest.mark.slow
@pytest.mark.skipif(PDFLATEX is None, reason="pdflatex is not installed")
@pytest.mark.parametrize("corpus", ["bundled", "study"])
def test_report_tex_compiles_without_overfull_boxes(tmp_path, corpus):
    from mafiascope.analytics.corpus import load_corpus
    from mafiascope.analytics.modes import Mode
    from mafiascope.analytics.report_dir import build_dir_report

    logs = ROOT / "data" / "demo" if corpus == "bundled" else three_model_study(tmp_path)
    c = load_corpus(logs, cache_dir=tmp_path / "cache")
    rep = build_dir_report(c, Mode(boot=50))
    out = tmp_path / "report"
    written = write_report_dir(rep, out, figures=True)
    assert any(f.endswith(".pdf") for f in written["figures"])
    doc = (out / "report.tex").read_text(encoding="utf-8")
    assert doc.count(r"\includegraphics") == len([f for f in written["figures"] if f.endswith(".pdf")])
    _assert_fits(out)
