"""Vega-Lite charts sent with their named datasets as Arrow bytes built here, not by Streamlit.

``st.vega_lite_chart`` turns every named dataset (a list of row dicts) into a pandas frame and
then into Arrow IPC bytes: about 15-25 ms per dataset, so ~0.5 s for the Live Game's eleven
charts on every timeline step. Bytes it is given are sent as they are. :func:`arrow_bytes`
builds them with pyarrow directly (same columns, types and values as Streamlit's conversion:
tests/test_app_vega_data.py) and memoises them by content, so an unchanged dataset costs a
dictionary lookup and reaches the browser byte-identical (the browser then skips it).
"""

from __future__ import annotations

import json
import math
import threading
from collections import OrderedDict
from typing import Any

import pyarrow as pa
import streamlit as st

_MEMO: OrderedDict[str, bytes] = OrderedDict()
_MEMO_MAX = 2048
_LOCK = threading.Lock()  # sessions run their scripts in threads of one process
CANVAS = {"embedOptions": {"renderer": "canvas"}}  # spec["usermeta"]: one <canvas> to repaint, not hundreds of SVG nodes


def records(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows as ``json.loads(pd.DataFrame(rows).to_json(orient="records"))`` gave them, without pandas: every key
    of any row in first-seen order (missing -> None), NaN -> None, floats to 10 decimals, and a column that mixes
    ints with floats written as floats."""
    keys = list(dict.fromkeys(k for r in rows for k in r))
    floaty = {k for k in keys if any(isinstance(r.get(k), float) for r in rows)}
    out = []
    for r in rows:
        row = {}
        for k in keys:
            v = r.get(k)
            if isinstance(v, float):
                v = None if math.isnan(v) else round(v, 10)
            elif k in floaty and isinstance(v, int) and not isinstance(v, bool):
                v = float(v)
            row[k] = v
        out.append(row)
    return out


def _to_arrow(rows: list[dict[str, Any]]) -> bytes:
    if not rows:  # once per process: the exact empty table Streamlit sends (its pandas metadata included)
        from streamlit.dataframe_util import convert_anything_to_arrow_bytes

        return convert_anything_to_arrow_bytes([])
    keys = list(dict.fromkeys(k for r in rows for k in r))
    table = pa.Table.from_pydict({k: [r.get(k) for r in rows] for k in keys})
    # Streamlit's path (pandas 3) stores text as large_string: keep the browser's column types identical
    table = table.cast(pa.schema([pa.field(f.name, pa.large_string() if f.type == pa.string() else f.type)
                                  for f in table.schema]))
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()


def arrow_bytes(rows: list[dict[str, Any]] | bytes) -> bytes:
    """Arrow IPC stream bytes of a dataset (a list of row dicts), memoised by content."""
    if isinstance(rows, bytes):
        return rows
    key = json.dumps(rows, ensure_ascii=False, default=str)
    with _LOCK:
        hit = _MEMO.get(key)
        if hit is not None:
            _MEMO.move_to_end(key)
            return hit
    hit = _to_arrow(rows)
    with _LOCK:
        _MEMO[key] = hit
        if len(_MEMO) > _MEMO_MAX:
            _MEMO.popitem(last=False)
    return hit


def with_arrow(spec: dict[str, Any]) -> dict[str, Any]:
    """A shallow copy of ``spec`` whose named datasets are Arrow bytes."""
    if not spec.get("datasets"):
        return spec
    return {**spec, "datasets": {k: arrow_bytes(v) for k, v in spec["datasets"].items()}}


def chart(spec: dict[str, Any], key: str, **kwargs: Any) -> Any:
    """``st.vega_lite_chart`` of ``spec`` (datasets as lists of row dicts) with the datasets sent as Arrow bytes."""
    return st.vega_lite_chart(with_arrow(spec), key=key, **kwargs)
