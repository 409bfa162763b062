"""What a fresh server process's first script run can skip: the cyclic garbage collector during its imports.

The first script run of a fresh ``streamlit run`` process imports pandas, pyarrow, pydantic and the app
(about a thousand modules). The collector's full passes keep walking every object those imports create;
with it off during the imports they take about a quarter less CPU (issue 17 item 4, third pass; the run is
in the history of docs/benchmarks.md). ``gc.freeze()`` afterwards moves the imported objects out of the collector's view, so later
collections (every script run allocates) do not walk them either. Later runs import nothing: no effect.
"""

from __future__ import annotations

import gc
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

IMPORTED = threading.Event()  # cleared while app/warm.py imports the first view's modules in a server's lifespan
IMPORTED.set()
IMPORT_WAIT_S = 120.0


@contextmanager
def first_imports(marker: str, freeze: bool = True, wait: bool = True) -> Iterator[None]:
    """Run the block's imports with the collector off when module ``marker`` is not imported yet; then
    freeze what exists (``freeze=False`` in a page, whose run already holds objects that may become garbage).
    With ``wait``, first let a warm-up that is importing the same modules finish (app/warm.py)."""
    if wait:
        IMPORTED.wait(IMPORT_WAIT_S)
    if marker in sys.modules:
        yield
        return
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if freeze:
            gc.freeze()
        if collecting:
            gc.enable()

