"""Untrusted text (model and player names, probe ids, anything read from a log) written into files other
programs open: CSV for spreadsheets and Markdown for viewers.

* **CSV.** A spreadsheet runs a cell that starts with ``=``, ``+``, ``-`` or ``@`` (or a TAB or CR
  before one) as a formula: ``=HYPERLINK(...)``, ``+cmd|' /C calc'!A0``, ``@SUM(...)``. Every CSV the
  project writes (report tables, the edge stream, the app's downloads) goes through :func:`csv_text` /
  :func:`write_csv`, which put a ``'`` before such a *text* cell (OWASP's advice) and before such a
  header. Numbers stay numbers: numeric columns are not touched, and a text cell that is a plain number
  (``-0.25``) is left as it is.
* **Markdown.** :func:`md_inline` makes a name safe inside a line or a table cell of a Markdown
  document: no raw HTML or entity, no link, image or autolink, no code span, no ``$`` math, no table
  cell break. Text without those constructs comes out unchanged, so ordinary reports read as before.
  (The app has its own, stricter helper for Streamlit's renderer: app/text.py.)
* **LaTeX.** :func:`tex_inline` makes a name literal text in a LaTeX document compiled with pdflatex
  (T1 fonts): every special character escaped (no command, group, math or comment can start), line breaks
  as spaces, break points after ``/ _ . :`` and inside long runs of letters (a model named by a file path
  wraps in a table cell instead of running past the page), Cyrillic transliterated and any other
  character outside Latin-1 written as its closest ASCII or ``?`` (pdflatex stops on a character its
  fonts lack).
"""

from __future__ import annotations

import math
import os
import re
import unicodedata
from typing import Any

import pandas as pd

FORMULA_START = frozenset("=+-@")
_LEADING_BLANKS = " \t\r\n"
_AUTOLINK = re.compile(r"(?i)(?<=http)(?=:)|(?<=https)(?=:)|(?<=www)(?=\.)|(?=@)")
WORD_JOINER = "\u2060"


def _is_number(text: str) -> bool:
    try:
        return math.isfinite(float(text))
    except ValueError:
        return False


def csv_cell(value: Any) -> Any:
    """``value`` safe as a spreadsheet cell: a text that a spreadsheet would read as a formula gets a leading ``'``."""
    if not isinstance(value, str) or len(value) < 2:
        return value
    head = value.lstrip(_LEADING_BLANKS)[:1]
    if (value[0] in "\t\r" or head in FORMULA_START) and not _is_number(value.strip()):
        return "'" + value
    return value


def csv_frame(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with every text cell and column name passed through :func:`csv_cell` (numeric columns untouched)."""
    out = df.rename(columns={c: csv_cell(c) for c in df.columns if isinstance(c, str)})
    for i, dtype in enumerate(out.dtypes):
        if pd.api.types.is_object_dtype(dtype) or pd.api.types.is_string_dtype(dtype) or isinstance(dtype, pd.CategoricalDtype):
            col = out.iloc[:, i]
            out.isetitem(i, pd.Series([csv_cell(v) for v in col.astype(object)], index=col.index, dtype=object))
    return out


def csv_text(df: pd.DataFrame) -> str:
    """``df`` as CSV text (no index), formula cells neutralised: the app's downloads."""
    return csv_frame(df).to_csv(index=False)


def write_csv(df: pd.DataFrame, path: str | os.PathLike[str]) -> None:
    """Write ``df`` as CSV (no index) to ``path``, formula cells neutralised: every CSV file the project writes."""
    csv_frame(df).to_csv(path, index=False)


def md_inline(text: Any) -> str:
    """``text`` as literal Markdown inside a line or a table cell (see the module doc); line breaks become spaces."""
    s = "" if text is None else str(text)
    s = s.replace("\\", "\\\\").replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    s = s.replace("|", "\\|").replace("`", "\\`").replace("$", "\\$")
    s = s.replace("![", "\\![").replace("](", "]\\(").replace("][", "]\\[").replace("[^", "\\[^")
    s = _AUTOLINK.sub(WORD_JOINER, s)
    return " ".join(s.splitlines())


def md_code(text: Any) -> str:
    """``text`` as a Markdown code span when it can be one (no backtick, one line), else :func:`md_inline`."""
    s = "" if text is None else str(text)
    return f"`{s}`" if s and "`" not in s and not any(c in s for c in "\r\n") else md_inline(s)


_TEX_SPECIAL = {
    "\\": r"\textbackslash{}", "{": r"\{", "}": r"\}", "$": r"\$", "&": r"\&", "#": r"\#", "%": r"\%", "_": r"\_",
    "^": r"\textasciicircum{}", "~": r"\textasciitilde{}", "<": r"\textless{}", ">": r"\textgreater{}",
    "|": r"\textbar{}", '"': r"\textquotedbl{}", "`": r"\textasciigrave{}", "-": "-{}",
    "\u2013": r"\textendash{}", "\u2014": r"\textemdash{}", "\u2018": r"\textquoteleft{}", "\u2019": r"\textquoteright{}",
    "\u201c": r"\textquotedblleft{}", "\u201d": r"\textquotedblright{}", "\u2026": r"\dots{}", "\u2212": r"\textminus{}",
    "\u00d7": r"\texttimes{}", "\u00b7": r"\textperiodcentered{}", "\u00a0": " ", "\u00ad": "",
}
_CYRILLIC = dict(zip("абвгдеёжзийклмнопрстуфхцчшщъыьэюя",
                     "a b v g d e e zh z i y k l m n o p r s t u f kh ts ch sh shch \" y ' e yu ya".split(" ")))
_TEX_BREAK_AFTER = frozenset("/_.:\\")
_TEX_RUN = 16  # letters without a break point after which a break is allowed


def _tex_char(ch: str) -> str:
    if ch in _TEX_SPECIAL:
        return _TEX_SPECIAL[ch]
    if " " <= ch <= "~" or "\u00a1" <= ch <= "\u00ff":
        return ch
    low = ch.lower()
    if low in _CYRILLIC:
        lat = _CYRILLIC[low].replace('"', "").replace("'", "")
        return lat.capitalize() if ch != low else lat
    if ch in "\t\r\n\v\f" or unicodedata.category(ch) == "Zs":
        return " "
    if unicodedata.category(ch).startswith("C"):
        return ""
    ascii_form = unicodedata.normalize("NFKD", ch).encode("ascii", "ignore").decode("ascii")
    return "".join(_tex_char(c) for c in ascii_form) if ascii_form else "?"


def tex_inline(text: Any) -> str:
    """``text`` as literal LaTeX text for pdflatex (see the module doc): nothing in it can run a command."""
    s = "" if text is None else str(text)
    out: list[str] = []
    run = 0
    for ch in s:
        out.append(_tex_char(ch))
        if ch in _TEX_BREAK_AFTER:
            out.append(r"\allowbreak{}")
            run = 0
        elif ch.isalnum():
            run += 1
            if run >= _TEX_RUN:
                out.append(r"\allowbreak{}")
                run = 0
        else:
            run = 0
    return "".join(out)
