"""Arena: build a roster, launch ten-seat tournaments, read the leaderboards (app/arena_view.py)."""

from app.frame import page_guard

page_guard()

from app import arena_view  # noqa: E402

arena_view.render()
