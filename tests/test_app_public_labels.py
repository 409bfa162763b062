"""Issue 31 item 4 (no server path is shown): in public mode no element of any page names a directory of the
server, whatever the operator configured. Log roots outside the checkout (``MAFIASCOPE_LOGS``, the runs
directory) used to be labelled with their absolute path in the sidebar's roots box, the corpus picker, the
"Games are written to" caption and the warnings about roots; every such label now goes through
``app/paths.public_path``."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

pytest.importorskip("streamlit")

from .app_support import DEMO, ROOT, assert_clean, each_tab, new_app, plain  # noqa: E402
from .test_app_hostile_visitor import _protos  # noqa: E402


def _shown(at) -> str:
    """Everything the app sent for ``at``'s last run, as the text a visitor reads (escapes and word joiners removed)."""
    raw = b"\n".join(_protos(at._tree)).decode("utf-8", errors="replace")
    return plain(raw)


def _server_paths(text: str, places: list[Path]) -> list[str]:
    found = []
    for p in places:
        for form in {str(p), str(p.resolve())}:
            for m in re.finditer(re.escape(form), text):
                found.append(text[max(0, m.start() - 60):m.end() + 40])
    return found


@pytest.fixture()
def server(tmp_path, monkeypatch):
    """An operator's layout outside the checkout: two log roots of one name, a runs directory, a missing root."""
    srv = tmp_path / "srv"
    for root, gids in ((srv / "a" / "logs", ("demo-classic-01",)), (srv / "b" / "logs", ("demo-sheriff-01",))):
        for gid in gids:
            shutil.copytree(DEMO / gid, root / gid)
    shutil.copytree(DEMO / "demo-classic-02", srv / "runs" / "batch-x" / "demo-classic-02")
    monkeypatch.setenv("MAFIASCOPE_LOGS", ":".join(str(p) for p in (srv / "a" / "logs", srv / "b" / "logs", srv / "gone")))
    monkeypatch.setenv("MAFIASCOPE_RUNS", str(srv / "runs"))
    monkeypatch.setenv("MAFIASCOPE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("MAFIASCOPE_PUBLIC", "1")
    monkeypatch.delenv("MAFIASCOPE_ALLOW_FREE_PATHS", raising=False)
    return tmp_path


def test_roots_outside_the_checkout_get_stable_names(server):
    from app.paths import default_roots, public_path, root_labels, runs_dir

    labels = root_labels()
    srv = server / "srv"
    assert labels[srv / "a" / "logs"] == "logs" and labels[srv / "b" / "logs"] == "logs-2"
    assert labels[runs_dir()] == "runs" and labels[ROOT / "data" / "demo"] == "data/demo"
    assert len(set(labels.values())) == len(labels) == len(default_roots())
    assert public_path(srv / "b" / "logs" / "demo-sheriff-01") == "logs-2/demo-sheriff-01"
    assert public_path(srv / "runs" / "batch-x") == "runs/batch-x"
    assert public_path(srv / "elsewhere" / "x") == "x"
    assert public_path(ROOT / "data" / "arena") == "data/arena"


@pytest.mark.slow  # every page, each of its tabs
def test_no_page_shows_a_server_path_in_public_mode(server):
    places = [server, ROOT, Path.home() / ".cache"]
    leaks: dict[str, list[str]] = {}
    from app.nav import PAGES

    for page in PAGES:
        at = new_app(page=page.url, game="demo-classic-01")
        at.session_state["sb_roots_open"] = True  # the roots box is drawn while its expander is open
        at.run()
        assert_clean(at)
        hits = _server_paths(_shown(at), places)
        for _ in each_tab(at):
            assert_clean(at)
            hits += _server_paths(_shown(at), places)
        if hits:
            leaks[page.url] = hits[:3]
    at = new_app(mode="launch")  # Live Game's launch form: "Games are written to ..."
    at.run()
    assert_clean(at)
    hits = _server_paths(_shown(at), places)
    if hits:
        leaks["live launch"] = hits[:3]
    assert not leaks, leaks
    assert "Games are written to runs " in plain("\n".join(c.value for c in at.caption))
