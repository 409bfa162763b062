"""A cached string column read as dictionaries, made the categorical the cache's readers hand out
(:func:`~.cache.read_columns`, :func:`~.cache.read_tables`): categories sorted, codes in pandas'
smallest integer type.

``Table.to_pandas`` unifies the row groups' dictionaries (a pass over the rows to transpose their
indices) and the readers then sort the categories (a second pass to recode them). Here each row
group's few values are mapped to their final code once and its rows take them in one pass: the same
categorical (tested), ~0.05 s less CPU a probe column read at 10,000 games.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc


def categorical(col: pa.ChunkedArray) -> pd.Series | None:
    """``col`` (dictionary chunks) as the readers' sorted categorical; None when a chunk is no
    dictionary or its dictionary holds a null (the caller converts those as before)."""
    chunks = col.chunks
    if not chunks or not all(pa.types.is_dictionary(ch.type) and ch.dictionary.null_count == 0 for ch in chunks):
        return None
    seen: dict = {}  # the values in first-seen order, as Arrow's unification orders them
    luts = [np.array([seen.setdefault(v, len(seen)) for v in ch.dictionary.to_pylist()] + [-1], dtype=np.int64)
            for ch in chunks]
    empty = pa.array([], type=pa.int32())
    dtype = pa.DictionaryArray.from_arrays(empty, pa.array(list(seen), type=col.type.value_type)).to_pandas().dtype
    cats = dtype.categories
    if not cats.is_monotonic_increasing:
        dtype = pd.CategoricalDtype(cats.sort_values(), ordered=dtype.ordered)
    final = np.append(dtype.categories.get_indexer(cats), -1)  # first-seen place -> code (the -1: a null row)
    n = len(dtype.categories)
    codes = np.empty(len(col), dtype=np.int8 if n < 127 else np.int16 if n < 32767 else np.int32)
    at = 0
    for ch, lut in zip(chunks, luts):
        idx = ch.indices
        if idx.null_count:
            idx = pc.fill_null(idx.cast(pa.int64()), -1)
        codes[at:at + len(ch)] = final[lut][idx.to_numpy()]
        at += len(ch)
    return pd.Series(pd.Categorical.from_codes(codes, dtype=dtype), copy=False)
