"""Search page under AppTest: the query and sources live in the URL; hits link to Live Game and Impersonate."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.slow  # AppTest/real games: tens of seconds on the 2-core machine

pytest.importorskip("streamlit")

from .app_support import DEMO, assert_clean, new_app, plain  # noqa: E402


@pytest.fixture(autouse=True)
def _env(monkeypatch, tmp_path):
    monkeypatch.setenv("MAFIASCOPE_LOGS", str(DEMO))
    monkeypatch.setenv("MAFIASCOPE_RUNS", str(tmp_path / "runs"))
    monkeypatch.setenv("MAFIASCOPE_CACHE_DIR", str(tmp_path / "cache"))


def test_url_query_finds_reasons_and_links_to_the_step():
    at = new_app(page="search", q="keeps accusing", **{"in": "reason"}).run()
    assert_clean(at)
    df = at.dataframe[0].value
    assert len(df) > 0 and {x.split(" · ")[0] for x in df["source"]} == {"Probe reasons"}
    assert all("keeps accusing" in t.lower() for t in df["text"])
    first = df.iloc[0]
    assert first["live"].startswith("live?") and f"step={first['step']}" in first["live"]
    assert "agent=" in first["impersonate"]
    assert at.query_params["q"] in ("keeps accusing", ["keeps accusing"]) and at.query_params["in"] in ("reason", ["reason"])


def test_typing_a_query_writes_it_to_the_url_and_a_bad_source_is_reported():
    at = new_app(page="search", **{"in": "bogus"}).run()
    assert_clean(at)
    assert any("in='bogus'" in plain(e.value) for e in at.error)
    at.text_input(key="search_q").input("VOTE").run()
    assert_clean(at)
    assert at.query_params["q"] in ("VOTE", ["VOTE"])
    assert len(at.dataframe[0].value) > 0


def test_markdown_in_a_query_is_searched_as_text():
    at = new_app(page="search", q="[x](http://example.invalid) **bold**").run()
    assert_clean(at)
    assert not at.dataframe  # no match, and nothing rendered as a link
    assert any("No match" in i.value for i in at.info)


def test_hits_show_their_links_first_and_their_text_on_several_lines():
    """The hits' text was cut to one line and the links sat past the table's right edge (issue 35 item 5)."""
    at = new_app(page="search", q="Mafia").run()
    assert_clean(at)
    table = at.dataframe[0]
    assert list(table.value.columns)[:6] == ["game", "step", "speaker", "live", "impersonate", "text"]
    assert table.proto.row_height >= 70  # four lines of text a row
