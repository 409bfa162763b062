"""The report directory's LaTeX: tables that fit the text width and a standalone ``report.tex``.

A table is declared as columns (:class:`Col`: what a cell holds and how it is set) over a DataFrame's
rows, optionally grouped (a group's rows follow a full-width header row, so a table never needs a
column per model or pair). Text columns wrap (``X`` columns of ``tabularx``/``xltabular``, taking the
width the numbers leave); numbers are right-aligned with a fixed number of decimals per column, so
their decimal points line up, and a negative number has a real minus sign. A short table is a
``table`` float; a long one (more than :data:`FLOAT_ROWS` rows) an ``xltabular`` that breaks across
pages with its header repeated. Every table has a ``\\caption`` (what n and the interval are) and a
``\\label{tab:<name>}``; names from the logs go through :func:`~mafiascope.export_text.tex_inline`.

The packages the tables need are :data:`TABLE_PACKAGES` (``booktabs``, ``xltabular``, ``array``;
Debian: texlive-latex-recommended, texlive-latex-extra); ``report.tex`` (:func:`document`) loads them
and ``\\input``'s every table and includes every figure (PDF), floats kept in their section (placeins).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from ..export_text import tex_inline
from .pvalues import format_p

FLOAT_ROWS = 30  # body rows above which a table is a longtable (a float cannot break across pages)
TABLE_PACKAGES = ("booktabs", "array", "xltabular")
MISSING = "--"


def _absent(v: Any) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v)) or v is pd.NA


def number(v: Any, decimals: int = 3, sign: bool = False) -> str:
    """A number with a fixed number of decimals and a real minus sign (``$-$0.250``); ``--`` when absent."""
    if _absent(v):
        return MISSING
    x = float(v)
    s = f"{abs(x):.{decimals}f}"
    if x < 0 and float(s) != 0:
        return "$-$" + s
    return ("$+$" + s) if sign and x > 0 and float(s) != 0 else s


def integer(v: Any) -> str:
    if _absent(v):
        return MISSING
    x = int(round(float(v)))
    return f"$-${-x}" if x < 0 else str(x)


def interval(lo: Any, hi: Any, decimals: int = 3) -> str:
    """``[lo, hi]`` with real minus signs; ``--`` when either end is absent."""
    if _absent(lo) or _absent(hi):
        return MISSING
    return f"[{number(lo, decimals)}, {number(hi, decimals)}]"


@dataclass(frozen=True)
class Col:
    """One column: its header (plain text, escaped here), what a cell holds and how it is set.

    ``kind``: ``text`` (wraps; an ``X`` column), ``label`` (short text, not wrapped), ``int``, ``num``
    (``decimals``), ``ci`` (``key`` and ``hi`` name the interval's ends), ``p`` (a p-value,
    :func:`.pvalues.format_p`), ``tex`` (the cell is LaTeX already). ``cell`` overrides how a row
    becomes the cell's LaTeX."""

    key: str
    head: str
    kind: str = "num"
    decimals: int = 3
    hi: str | None = None
    cell: Callable[[dict[str, Any]], str] | None = None

    @property
    def align(self) -> str:
        return {"text": r">{\raggedright\arraybackslash}X", "label": "l"}.get(self.kind, "r")

    def render(self, row: dict[str, Any]) -> str:
        if self.cell is not None:
            return self.cell(row)
        v = row.get(self.key)
        if self.kind in ("text", "label"):
            return MISSING if _absent(v) else tex_inline(v)
        if self.kind == "int":
            return integer(v)
        if self.kind == "ci":
            return interval(v, row.get(self.hi or ""), self.decimals)
        if self.kind == "p":
            return format_p(None if _absent(v) else v, MISSING, latex=True)
        if self.kind == "tex":
            return MISSING if _absent(v) else str(v)
        return number(v, self.decimals)


@dataclass(frozen=True)
class Group:
    """Rows grouped by ``keys``: each group opens with a full-width row, ``head(first row of the group)``
    (LaTeX), and the grouping columns are not repeated in the body."""

    keys: tuple[str, ...]
    head: Callable[[dict[str, Any]], str]


def escape_caption(text: str) -> str:
    """A caption written by us (plain text, may hold ``%``, ``_``, ``&``): escaped, ``−`` as math minus."""
    return tex_inline(text).replace(r"\allowbreak{}", "")


def table(df: pd.DataFrame, cols: Sequence[Col], *, name: str, caption: str, group: Group | None = None,
          caption_tex: str = "") -> str:
    """The LaTeX of one table (see the module doc). ``caption`` is plain text; ``caption_tex`` is appended
    as LaTeX (symbols the caption explains)."""
    rows = df.to_dict("records")
    width = len(cols)
    spec = "@{}" + " ".join(c.align for c in cols) + "@{}"
    wraps = any(c.kind == "text" for c in cols)  # else numbers only: the table's natural width
    head = " & ".join(tex_inline(c.head).replace(r"\allowbreak{}", "") for c in cols) + r" \\"
    body: list[str] = []
    last: tuple[Any, ...] | None = None
    for r in rows:
        if group is not None:
            key = tuple(r.get(k) for k in group.keys)
            if key != last:
                if last is not None:
                    body.append(r"\addlinespace")
                body.append(rf"\multicolumn{{{width}}}{{@{{}}>{{\raggedright\arraybackslash}}p{{\linewidth}}@{{}}}}"
                            rf"{{{group.head(r)}}} \\")
                last = key
        body.append(" & ".join(c.render(r) for c in cols) + r" \\")
    if not rows:
        body.append(rf"\multicolumn{{{width}}}{{@{{}}l}}{{\emph{{(no rows)}}}} \\")
    cap = escape_caption(caption) + (" " + caption_tex if caption_tex else "")
    label = rf"\label{{tab:{name}}}"
    n_body = len(body)
    if n_body <= FLOAT_ROWS:
        env = (rf"\begin{{tabularx}}{{\linewidth}}{{{spec}}}", r"\end{tabularx}") if wraps else \
            (rf"\begin{{tabular}}{{{spec}}}", r"\end{tabular}")
        return "\n".join([r"\begin{table}[htbp]", r"\centering", r"\small", rf"\caption{{{cap}}}{label}", env[0],
                          r"\toprule", head, r"\midrule", *body, r"\bottomrule", env[1], r"\end{table}", ""])
    if not wraps:  # xltabular needs one X column: the first takes the slack
        spec = spec.replace(cols[0].align, r">{\raggedright\arraybackslash}X", 1)
    return "\n".join([r"\begingroup\small", rf"\begin{{xltabular}}{{\linewidth}}{{{spec}}}",
                      rf"\caption{{{cap}}}{label} \\", r"\toprule", head, r"\midrule", r"\endfirsthead",
                      rf"\multicolumn{{{width}}}{{@{{}}l}}{{\emph{{Table~\ref{{tab:{name}}}, continued}}}} \\",
                      r"\toprule", head, r"\midrule", r"\endhead", r"\midrule",
                      rf"\multicolumn{{{width}}}{{@{{}}r@{{}}}}{{\emph{{continued on the next page}}}} \\",
                      r"\endfoot", r"\bottomrule", r"\endlastfoot", *body, r"\end{xltabular}", r"\endgroup", ""])


@dataclass(frozen=True)
class Figure:
    """A figure of ``report.tex``: its file (without suffix, relative to the report directory), caption
    (plain text) and whether it spans the page (``wide``) or one column."""

    name: str
    caption: str
    wide: bool = True


def document(title: str, summary: str, tables: Sequence[tuple[str, str]], figures: Sequence[Figure], *,
             figure_suffix: str = ".pdf") -> str:
    """A standalone article that ``\\input``'s every table (``(section title, tables/<name>.tex)``) and
    includes every figure; compiles with pdflatex (:data:`TABLE_PACKAGES`, graphicx, adjustbox, caption)."""
    L = [r"\documentclass[10pt,a4paper]{article}", r"\usepackage[T1]{fontenc}", r"\usepackage[utf8]{inputenc}",
         r"\usepackage{lmodern}", r"\usepackage{textcomp}", r"\usepackage[margin=2.2cm]{geometry}",
         *[rf"\usepackage{{{p}}}" for p in TABLE_PACKAGES], r"\usepackage{graphicx}", r"\usepackage[export]{adjustbox}",
         r"\usepackage[font=small,labelfont=bf]{caption}", r"\usepackage[section]{placeins}", r"\setlength{\emergencystretch}{3em}",
         r"\setcounter{topnumber}{3}\setcounter{totalnumber}{4}\renewcommand{\topfraction}{0.9}",
         r"\renewcommand{\textfraction}{0.07}\renewcommand{\floatpagefraction}{0.8}",
         rf"\title{{{escape_caption(title)}}}", r"\date{}", r"\begin{document}", r"\maketitle", summary, ""]
    section = None
    for sec, path in tables:
        if sec != section:
            L += [rf"\section{{{escape_caption(sec)}}}", ""]
            section = sec
        L.append(rf"\input{{{path}}}")
    if figures:
        L += ["", r"\clearpage", r"\section{Figures}", ""]
        for f in figures:
            width = r"\linewidth" if f.wide else r"0.6\linewidth"
            L += [r"\begin{figure}[htbp]", r"\centering",
                  rf"\includegraphics[max width={width},max totalheight=0.8\textheight]{{{f.name}{figure_suffix}}}",
                  rf"\caption{{{escape_caption(f.caption)}}}\label{{fig:{f.name.rsplit('/', 1)[-1]}}}", r"\end{figure}", ""]
    L += [r"\end{document}", ""]
    return "\n".join(L)
