"""The one escaping helper: untrusted text (model output, player names, probe reasons, log fields,
URL parameters) shown through Streamlit's Markdown renders as the same literal text.

Streamlit renders Markdown in ``st.markdown``/``st.caption``/alerts, widget labels, ``help=``
tooltips, tab and expander labels, metric labels and page links. :func:`md_escape` backslash-escapes
every ASCII punctuation character (so no link, image, emphasis, directive such as ``:red[...]``, LaTeX
``$...$``, table or HTML survives) and puts an invisible WORD JOINER (U+2060) inside the patterns of
GFM's bare-URL autolinks (``http://``, ``www.``, ``user@host``): Streamlit finds those in the text
*after* escapes are resolved, so escaping alone would still make them links. Raw model text that needs
no formatting is better shown with ``st.text``/``st.code``/``st.dataframe``.

It also names the server's directories as the app names them (:func:`app.paths.hide_paths`: a configured log
root by its label, the checkout as ``.``), so an error quoting an exception shows no absolute server path.
"""

from __future__ import annotations

import re
from typing import Any

from .paths import hide_paths

WORD_JOINER = "\u2060"
_PUNCT = re.compile(r"([!-/:-@\[-`{-~])")  # every ASCII punctuation character
_INDENT = re.compile(r"^[ \t]+", re.MULTILINE)  # 4 leading spaces would start a code block
_AUTOLINK = re.compile(r"(?i)(?<=http)(?=:)|(?<=https)(?=:)|(?<=www)(?=\.)|(?=@)")  # http(s):, www., user@host (and mailto:/xmpp:)


def md_escape(text: Any) -> str:
    """``text`` as Markdown that Streamlit renders literally (line breaks kept); None is ''."""
    s = hide_paths("" if text is None else str(text))
    s = _AUTOLINK.sub(WORD_JOINER, s)
    s = _PUNCT.sub(r"\\\1", s).replace("\r\n", "\n").replace("\r", "\n")
    s = _INDENT.sub(lambda m: "\u00a0" * len(m.group(0).expandtabs(4)), s)
    return s.replace("\n", "  \n")


def md_link(label: Any, href: str) -> str:
    """A Markdown link to a page of this app: ``href`` must be relative (``?``, ``./`` or ``/``), its label is escaped.

    Build the query with :func:`urllib.parse.urlencode` so a value cannot end the link early."""
    if not href.startswith(("?", "./", "/")) or href.startswith("//"):
        raise ValueError("md_link only links within the app")
    return f"[{md_escape(label)}](<{href.replace('<', '%3C').replace('>', '%3E')}>)"


def code(text: Any) -> str:
    """``text`` as a Markdown code span (shown verbatim: no escaping inside; a backtick in it is dropped)."""
    return "`" + str(text).replace("`", "").replace("\n", " ") + "`"


def plural(n: int, word: str, many: str | None = None) -> str:
    """``1 game``, ``2 games`` (``many`` for irregular plurals)."""
    return f"{n:,} {word if n == 1 else (many or word + 's')}"
