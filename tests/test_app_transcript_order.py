"""The transcript is sent in chunks, oldest chunk first, each chunk newest block first, and shown newest first by the
page's CSS (app/transcript.py): read back in display order it is the newest-first transcript block by block, and a
step leaves every chunk but the last one or two byte-identical (the browser then keeps them)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("streamlit")

from streamlit.testing.v1 import AppTest  # noqa: E402

DEMO = Path(__file__).resolve().parents[1] / "data" / "demo"


def _script(game_dir: str, step: int, agent: str | None, newest_first: bool) -> None:
    from app.gamemodel import load_model
    from app.transcript import render

    render(load_model(game_dir), step, agent=agent, newest_first=newest_first)


def _run(game: str, step: int, agent: str | None = None, newest_first: bool = True) -> AppTest:
    at = AppTest.from_function(_script, args=(str(DEMO / game), step, agent, newest_first), default_timeout=60)
    return at.run()


def _display_order(at: AppTest) -> list[str]:
    """Paragraphs as the reader sees them: the chunks (one markdown each) reversed by the CSS, blank-line separated
    blocks inside each."""
    return [p for chunk in reversed([m.value for m in at.markdown]) for p in chunk.split("\n\n")]


@pytest.mark.parametrize(("game", "agent"), [("demo-ru-01", None), ("demo-classic-01", None), ("demo-classic-01", "Indigo")])
def test_chunks_read_newest_first_and_keep_earlier_chunks(game: str, agent: str | None):
    from app.transcript import CHUNK, NEWEST_FIRST_CSS

    for step in (3, 17, 30):
        at = _run(game, step, agent)
        assert not at.exception
        assert [h.proto.body for h in at.get("html")] == [NEWEST_FIRST_CSS]
        flat = _run(game, step, agent, newest_first=False)  # one markdown element per block, oldest first
        assert _display_order(at) == [m.value for m in flat.markdown][::-1]
        assert len(at.markdown) == -(-len(flat.markdown) // CHUNK)
        nxt = [m.value for m in _run(game, step + 1, agent).markdown]
        cur = [m.value for m in at.markdown]
        # the next step appends to the last chunk (or opens a new one); the current-step marker leaves the previous
        # step's block, so at most the last two chunks differ
        assert nxt[:max(0, len(cur) - 2)] == cur[:max(0, len(cur) - 2)]
