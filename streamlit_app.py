"""mafiascope Streamlit app: entrypoint (``streamlit run streamlit_app.py``).

Each script run (``__name__ == "__main__"``) frames every page: it sets up the page, draws the shared sidebar
(log directories, corpus selection, game picker) and runs the page chosen by st.navigation (app/entry.py).

Imported as a module (``streamlit run`` finds the ``st.App`` below and serves it with uvicorn, Streamlit's
ASGI mode), this file is the server: the same routes and config as Streamlit's own server, plus a lifespan
hook that warms the first view in a thread while the first visitor's browser loads (app/warm.py).
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent
if str(ROOT) not in sys.path:  # Community Cloud runs the repo without `pip install -e .`
    sys.path.insert(0, str(ROOT))

import streamlit as st  # noqa: E402

if __name__ != "__main__" and hasattr(st, "App"):  # the server process (Streamlit >= 1.67 has st.App)
    from app.warm import lifespan

    app = st.App(__file__, lifespan=lifespan)
else:
    from app.boot import first_imports

    with first_imports("app.sidebar"):  # a new server process: pandas, pyarrow, pydantic and the app
        from app.entry import main

    main()
