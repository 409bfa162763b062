"""Streamlit helpers for the mafiascope app: cached data access over mafiascope.analytics,
URL state, widgets, charts and the graph adapter. Pages in ``pages/`` stay thin and call
into this package; no metric is computed here (they all come from mafiascope.analytics).
"""
