"""The entrypoint's script run: page config, navigation, the shared sidebar and the chosen page.

``streamlit_app.py`` runs :func:`main` on every script run (under ``streamlit run``, AppTest, or a page's
guard); its module also holds the ``st.App`` the server is started with (app/warm.py).
"""

from __future__ import annotations

from urllib.parse import urlparse

import streamlit as st

from . import keys, nav, public_mode, sidebar
from .frame import framed
from .paths import REPO_ROOT
from .state import add_url_error, qp, quoted


def _requested_path() -> str:
    """The page path the browser asked for ('' for the root), without the server's base path."""
    try:
        path = urlparse(str(st.context.url or "")).path
    except Exception:  # no browser context (tests, bare mode)
        return ""
    base = str(st.get_option("server.baseUrlPath") or "").strip("/")
    path = path.strip("/")
    if base and (path == base or path.startswith(base + "/")):
        path = path[len(base):].strip("/")
    return path


def main() -> None:
    """Frame the page chosen by st.navigation (its sidebar first) and run it."""
    st.set_page_config(page_title="mafiascope", page_icon="🕵️", layout="wide", initial_sidebar_state="expanded")
    keys.install()  # ${VAR} keys resolve through the operator's policy (app/keys.py), in this process and in the games it starts

    pages: dict[str, list[st.Page]] = {}
    objs: dict[str, st.Page] = {}
    for p in nav.PAGES:
        page = st.Page(str(REPO_ROOT / p.file), title=p.title, icon=p.icon, url_path=p.url, help=p.help)
        pages.setdefault(p.section, []).append(page)
        objs[p.url] = page

    def _home() -> None:
        """The root URL opens Live Game at /live, keeping the query parameters (so every page has a named path).
        Streamlit runs this default page for an unknown path too (/nosuchpage): that is said on Live Game."""
        asked = _requested_path()
        if asked and asked != "home" and asked not in objs:
            add_url_error(f"Unknown page /{asked} (pages: {', '.join('/' + u for u in objs)}); showing Live Game instead.")
        params = st.query_params.to_dict()
        target = objs.get(params.pop("page", nav.PAGES[0].url), objs[nav.PAGES[0].url])
        st.switch_page(target, query_params=params)

    pages.setdefault("Games", []).insert(0, st.Page(_home, title="mafiascope", url_path="home", default=True, visibility="hidden"))

    current = st.navigation(pages, position="sidebar", expanded=True)

    # ?page=<name> on any page jumps to that page, keeping the other parameters
    want = qp("page")
    if want is not None:
        rest = {k: v for k, v in st.query_params.to_dict().items() if k != "page"}
        if want in objs:
            if objs[want].url_path != current.url_path:
                st.switch_page(objs[want], query_params=rest)
            del st.query_params["page"]
        else:
            add_url_error(f"URL parameter page={quoted(want)}: unknown page (choose one of {', '.join(objs)}).")
            del st.query_params["page"]

    sidebar.render()
    public_mode.sidebar_note()
    with framed():  # the page's page_guard sees it runs inside this frame
        current.run()
