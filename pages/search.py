"""Search: utterances, probe reasons and plans across the selected corpus."""

from app.frame import page_guard

page_guard()

from app import search_view  # noqa: E402

search_view.render()
