"""Studies: plan, price, launch, watch, stop and resume studies (app/study_view.py)."""

from app.frame import page_guard

page_guard()

from app import study_view  # noqa: E402

study_view.render()
