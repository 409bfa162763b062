"""What a fresh server process's first script run can skip: the cyclic garbage collector during its imports,
and Streamlit's REPL probe before its first element.

The first script run of a fresh ``streamlit run`` process imports pandas, pyarrow, pydantic and the app
(about a thousand modules). The collector's full passes keep walking every object those imports create;
with it off during the imports they take about a quarter less CPU (docs/benchmarks.md, issue 17 item 4,
third pass). ``gc.freeze()`` afterwards moves the imported objects out of the collector's view, so later
collections (every script run allocates) do not walk them either. Later runs import nothing: no effect.
"""

from __future__ import annotations

import gc
import sys
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def first_imports(marker: str, freeze: bool = True) -> Iterator[None]:
    """Run the block's imports with the collector off when module ``marker`` is not imported yet; then
    freeze what exists (``freeze=False`` in a page, whose run already holds objects that may become garbage)."""
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


def skip_repl_probe() -> None:
    """Spare a server process the REPL probe of Streamlit's first element.

    Before the first element of a process, Streamlit checks whether it runs in a Python REPL (to print a
    "use streamlit run" hint) with ``inspect.stack()``, which resolves the module of every frame by walking
    the file of every imported module: with pandas and the app imported, 0.2 s of CPU in the first script
    run (docs/benchmarks.md). Under a running server that hint can never be printed, so the check is
    marked done; elsewhere (bare mode, scripts) nothing changes.
    """
    import streamlit.delta_generator as dg
    from streamlit import runtime

    if runtime.exists() and hasattr(dg, "_use_warning_has_been_displayed"):
        dg._use_warning_has_been_displayed = True
