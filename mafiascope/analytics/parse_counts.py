"""The parse section's counts from one pass over the probe rows: rows per (probe id, flags), where the
flags are a record's stored answer parsed, its repaired answer parsed, a transport error and a repair at
record time. Every headline figure and the per-probe counts are sums of this small table, instead of a
pass (and a row-sized temporary) per figure over millions of records."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ..probes.shapes import STANDARD_PROBES
from .load import K_NONE

REP, RAW, TRANSPORT, REPAIRED = 1, 2, 4, 8  # flag bits of a record
_BLOCK = 1 << 18  # rows keyed at a time: temporaries of 2 MB


def countable(p: pd.DataFrame) -> bool:
    """Whether :func:`flag_counts` applies: probe ids a categorical column, the two flags booleans."""
    return isinstance(p["probe_id"].dtype, pd.CategoricalDtype) and all(
        p[k].dtype == bool for k in ("transport", "repaired"))


def flag_counts(p: pd.DataFrame) -> np.ndarray:
    """(categories + 1, 16) rows per (probe id code + 1, flag bits); row 0 holds the missing ids."""
    codes = p["probe_id"].cat.codes.to_numpy()
    size = 16 * (len(p["probe_id"].cat.categories) + 1)
    stored, eff = p["stored_kind"].to_numpy(), p["eff_kind"].to_numpy()
    transport, repaired = p["transport"].to_numpy(), p["repaired"].to_numpy()
    out = np.zeros(size, dtype=np.int64)
    for lo in range(0, len(codes), _BLOCK):
        b = slice(lo, lo + _BLOCK)
        key = codes[b].astype(np.intp)
        key += 1
        key *= 16
        key += eff[b] != K_NONE
        key += np.multiply(stored[b] != K_NONE, RAW, dtype=np.intp)
        key += np.multiply(transport[b], TRANSPORT, dtype=np.intp)
        key += np.multiply(repaired[b], REPAIRED, dtype=np.intp)
        out += np.bincount(key, minlength=size)
    return out.reshape(-1, 16)


def _has(bit: int) -> np.ndarray:
    return (np.arange(16) & bit) > 0


def headline(flags: np.ndarray, standard: np.ndarray) -> dict[str, int]:
    """The standard battery's counts (``standard``: per row of ``flags``, a standard probe id)."""
    s = flags[standard].sum(0)
    rep, raw, tr = _has(REP), _has(RAW), _has(TRANSPORT)
    return {"calls": int(s.sum()), "parsed": int(s[rep].sum()), "parsed_raw": int(s[raw].sum()),
            "repair_recovered": int(s[rep & ~raw].sum()), "not_raw": int(s[~raw].sum()),
            "repaired_at_record_time": int(s[_has(REPAIRED)].sum()), "transport_errors": int(s[~rep & tr].sum()),
            "custom_calls": int(flags[~standard].sum())}


def standard_rows(cats: pd.Index) -> np.ndarray:
    """Per row of :func:`flag_counts`: the probe id is one of the standard battery's (row 0, a missing id: not)."""
    return np.r_[False, cats.isin(STANDARD_PROBES)]


def per_probe(flags: np.ndarray, cats: pd.Index, order: list[int]) -> tuple[dict[Any, list[int]], dict[Any, list[int]]]:
    """[stored answers parsed, calls] and [repaired answers parsed, calls] per probe id (codes ``order``)."""
    n, raw, rep = flags.sum(1), flags[:, _has(RAW)].sum(1), flags[:, _has(REP)].sum(1)
    return ({cats[i]: [int(raw[i + 1]), int(n[i + 1])] for i in order},
            {cats[i]: [int(rep[i + 1]), int(n[i + 1])] for i in order})
