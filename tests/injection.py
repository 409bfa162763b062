"""Markdown/HTML injection corpus and checks shared by the escaping tests (AppTest and browser).

:func:`injection_logs` plays one offline game and rewrites its logs so that player names,
utterances, probe reasons and the model names carry the corpus; :func:`problems` renders a
Markdown string the way Streamlit's renderer would (CommonMark + GFM tables/strikethrough +
``$`` math, and GFM's bare-URL autolinks) and names anything that is not plain text.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from app.sidebar import CHIPS_WRAP_CSS
from app.transcript import NEWEST_FIRST_CSS

from .app_support import play

HOST = "example.invalid"
# one per seat of configs/classic.yaml (7); none is a substring of another
NAMES = (
    f"[Session expired](http://{HOST}/login)",
    f"![x](http://{HOST}/name.png)",
    "<img src=x onerror=alert(1)>",
    ":red[Boss] $x^2$",
    "<script>alert(1)</script>",
    "[js](javascript:alert(1))",
    f"www.{HOST}",
)
TEXT = (f" ![tracker](http://{HOST}/pixel.png) [click](http://{HOST}/x) <img src=x onerror=alert(2)> "
        f"<script>alert(3)</script> [j](javascript:alert(4)) :red[red] :material/home: $\\frac{{a}}{{b}}$ "
        f"http://{HOST}/bare mail@{HOST} <http://{HOST}/auto> # heading | a | b |")
URL_VALUES = (f"[Session expired](http://{HOST}/p)", f"![i](http://{HOST}/u.png)", "<img src=x onerror=alert(5)>",
              ":red[x] $y$")


def _rewrite(value: Any, names: dict[str, str], *, text_field: bool = False) -> Any:
    if isinstance(value, str):
        for old, new in names.items():
            value = re.sub(rf"\b{re.escape(old)}\b", new.replace("\\", "\\\\"), value)
        return value + TEXT if text_field else value
    if isinstance(value, list):
        return [_rewrite(v, names) for v in value]
    if isinstance(value, dict):
        return {_rewrite(k, names): _rewrite(v, names, text_field=k in ("response", "reason", "reasoning", "text"))
                for k, v in value.items()}
    return value


def injection_logs(root: Path, gid: str = "inject-0001") -> Path:
    """A logs root holding one game whose names, utterances, probe reasons and models carry the corpus."""
    gdir = play(root, gid, 3)
    setup = json.loads((gdir / "game.jsonl").read_text(encoding="utf-8").splitlines()[0])
    names = {p["name"]: NAMES[i] for i, p in enumerate(setup["players"])}
    names.update({p["model"]: f"[model](http://{HOST}/m{i}.png)" for i, p in enumerate(setup["players"])})
    for f in gdir.glob("*.jsonl"):
        lines = [json.dumps(_rewrite(json.loads(ln), names)) for ln in f.read_text(encoding="utf-8").splitlines() if ln.strip()]
        f.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return gdir


# ----------------------------------------------------------------------------- rendering checks

_GFM_AUTOLINK = re.compile(r"(?i)(?:https?://|www\.)[-.\w]+|[-.\w+]+@[-\w]+(?:\.[-\w]+)+")
_SAFE_HREF = re.compile(r"^(\./|/|\?)")


def renderer():
    from markdown_it import MarkdownIt
    from mdit_py_plugins.dollarmath import dollarmath_plugin

    return MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"]).use(dollarmath_plugin)


_MD = None


def tokens(md: str) -> list[Any]:
    global _MD
    if _MD is None:
        _MD = renderer()
    out = []
    for t in _MD.parse(md):
        out.append(t)
        out.extend(t.children or [])
    return out


def plain_text(md: str) -> str:
    """The text a reader sees (the word joiners md_escape inserts are invisible)."""
    parts = [t.content if t.type in ("text", "text_special", "code_inline") else "\n" for t in tokens(md)
             if t.type in ("text", "text_special", "code_inline", "softbreak", "hardbreak", "paragraph_close")]
    return "".join(parts).replace("\u2060", "")


def problems(md: str) -> list[str]:
    """What in ``md`` is not inert text: raw HTML, images, math, links other than relative app links, bare URLs."""
    out = []
    for t in tokens(md):
        if t.type in ("html_inline", "html_block", "image", "math_inline", "math_block", "math_inline_double"):
            out.append(f"{t.type}: {t.content[:60]!r}")
        elif t.type == "link_open":
            href = str(t.attrGet("href") or "")
            if not _SAFE_HREF.match(href) or HOST in href:
                out.append(f"link to {href[:60]!r}")
        elif t.type in ("text", "text_special") and _GFM_AUTOLINK.search(t.content):
            out.append(f"bare URL autolink: {t.content[:60]!r}")
    return out


_LITERAL = {"json", "code", "text"}
APP_STYLES = {NEWEST_FIRST_CSS, CHIPS_WRAP_CSS}
_STRING_FIELDS = {"body", "label", "help", "placeholder", "captions"}


def _strings(msg: Any, out: list[str]) -> None:
    for fd, value in msg.ListFields():
        many = list(value) if not isinstance(value, (str, bytes)) and hasattr(value, "__len__") else [value]
        if fd.message_type is not None:
            for v in many:
                if hasattr(v, "ListFields"):
                    _strings(v, out)
        elif fd.name in _STRING_FIELDS:
            out.extend(str(v) for v in many if isinstance(v, str))


def rendered_markdown(at: Any) -> list[str]:
    """Every string an AppTest run sends that the browser renders as Markdown (bodies, labels, help texts)."""
    out: list[str] = []

    def walk(node: Any) -> None:
        if getattr(node, "type", "") == "table":  # st.table renders Markdown in its cells
            df = node.value
            out.extend(str(v) for v in [*df.index, *df.columns, *df.to_numpy().ravel()] if isinstance(v, str))
        proto = getattr(node, "proto", None)
        if getattr(node, "type", "") == "html" and proto is not None and proto.body in APP_STYLES:
            proto = None  # the app's own fixed stylesheets (no model text in them); any other st.html is checked
        if getattr(node, "type", "") in _LITERAL:
            proto = None  # shown verbatim, never as Markdown
        if proto is not None and hasattr(proto, "ListFields"):
            _strings(proto, out)
        for child in getattr(node, "children", {}).values():
            walk(child)

    walk(at._tree)
    return out


def injected(at: Any) -> list[str]:
    """Problems of every Markdown string of an AppTest run, with the string they are in."""
    return [f"{p} in {s[:120]!r}" for s in rendered_markdown(at) for p in problems(s)]
