"""A lazy table's game index read from the Parquet file's dictionary chunks equals the one the pandas
frame of the same column gives (lazy_table._Part._game_of_rows' two paths)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from mafiascope.analytics.cache import open_table, read_columns
from mafiascope.analytics.lazy_table import _Part


def _write(path: Path, groups: list[list[str | None]]) -> None:
    schema = pa.schema([("game_id", pa.string()), ("x", pa.int32())])
    with pq.ParquetWriter(path, schema) as w:
        for ids in groups:  # a row group each (its own dictionary)
            w.write_table(pa.table({"game_id": pa.array(ids, pa.string()), "x": pa.array(range(len(ids)), pa.int32())}))


CASES = {
    "all selected": ([["b", "b", "a"], ["c", "a"], ["d"]], ["a", "b", "c", "d"], {"a", "b", "c", "d"}),
    "some selected": ([["b", "b", "a"], ["c", "a", "zz"], ["d", "d"]], ["a", "d"], {"a", "b", "c", "d"}),
    "not ok": ([["b", "a"], ["c"]], ["a", "b", "c"], {"a", "c"}),  # b selected elsewhere, not parsed here
    "nulls": ([["b", None, "a"], [None, None], ["c"]], ["a", "b", "c"], {"a", "b", "c"}),
    "none": ([["x", "y"]], ["a"], {"a"}),
    "many ids": ([[f"g{i:04d}" for i in range(300)][::-1] * 2, [f"g{i:04d}" for i in range(150, 400)]],
                 [f"g{i:04d}" for i in range(0, 400, 3)], {f"g{i:04d}" for i in range(400)}),
}


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("as_dictionary", [True, False])
def test_game_of_rows_from_arrow_equals_the_frame_path(tmp_path: Path, case: str, as_dictionary: bool) -> None:
    groups, selected, ok = CASES[case]
    path = tmp_path / "t.parquet"
    _write(path, groups)
    gmap = {gid: i for i, gid in enumerate(sorted(selected))}
    pf = open_table(path, "sr") if as_dictionary else pq.ParquetFile(pa.OSFile(str(path)))
    part = _Part(pf, "sr", gmap, ok)
    ref = _Part(read_columns(open_table(path, "sr"), "sr", ["game_id"]), "sr", gmap, ok)  # the frame path
    for frame in (ref, _Part(pq.read_table(path).to_pandas(), "sr", gmap, ok)):  # categorical and plain strings
        sel, g = part._game_of_rows()
        rsel, rg = frame._game_of_rows()
        assert g.dtype == rg.dtype == np.int32
        np.testing.assert_array_equal(g, rg)
        assert (sel is None) == (rsel is None)
        if sel is not None:
            np.testing.assert_array_equal(sel, rsel)
    flat = [x for grp in groups for x in grp]
    want = [gmap[x] for x in flat if x in gmap and x in ok]
    np.testing.assert_array_equal(part.g, np.array(want, dtype=np.int32))
    assert len(part) == len(want)


def _old_read(pf: pq.ParquetFile, table: str, columns: list[str]):
    """read_columns before the categoricals were built from the row groups' dictionaries."""
    from mafiascope.analytics.load import DICT_COLUMNS

    df = pf.read(columns=columns).to_pandas(split_blocks=True, self_destruct=True)
    for c in DICT_COLUMNS.get(table, []):
        if c in df.columns:
            cats = df[c].cat.categories
            if not cats.is_monotonic_increasing:
                df[c] = df[c].cat.reorder_categories(cats.sort_values())
    return df


KINDS = {
    "unsorted": [["vote", "accuse", "vote"], ["zeta", "accuse"], ["beta"]],
    "sorted": [["a", "b"], ["b", "c"], ["c"]],
    "nulls": [["x", None, "b"], [None], ["a", "x"]],
    "one group": [["q", "p", "q", "r"]],
    "unicode": [["Ёж", "ёж", "éa"], ["ea", "Ёж", "z"]],
    "many": [[f"k{(i * 7919) % 300:03d}" for i in range(600)], [f"k{i:03d}" for i in range(290, 310)]],
    "empty": [],
}


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_read_columns_categoricals_equal_pandas_unification(tmp_path: Path, kind: str) -> None:
    from mafiascope.analytics.cache import read_columns

    groups = KINDS[kind]
    schema = pa.schema([("game_id", pa.string()), ("rec", pa.int32()), ("probe_id", pa.string()), ("phase", pa.string())])
    path = tmp_path / "p.parquet"
    with pq.ParquetWriter(path, schema) as w:
        for i, vals in enumerate(groups):
            n = len(vals)
            w.write_table(pa.table({"game_id": [f"g{i}"] * n, "rec": pa.array(range(n), pa.int32()),
                                    "probe_id": pa.array(vals, pa.string()),
                                    "phase": pa.array(["night" if j % 3 else "day" for j in range(n)], pa.string())},
                                   schema=schema))
    pf = open_table(path, "probes")
    for cols in (["probe_id"], ["rec", "probe_id", "phase"], ["phase", "game_id", "probe_id", "rec"], ["rec"]):
        new, old = read_columns(pf, "probes", cols), _old_read(pf, "probes", cols)
        import pandas as pd

        pd.testing.assert_frame_equal(new, old, check_exact=True, check_categorical=True)
        assert list(new.columns) == cols and new.columns.dtype == old.columns.dtype
        for c in cols:
            if c in ("probe_id", "phase"):
                assert new[c].cat.codes.dtype == old[c].cat.codes.dtype
                assert new[c].cat.categories.dtype == old[c].cat.categories.dtype
                assert list(new[c].cat.categories) == sorted(new[c].cat.categories)


def test_categorical_declines_what_it_does_not_convert() -> None:
    from mafiascope.analytics.categoricals import categorical

    assert categorical(pa.chunked_array([pa.array(["a", "b"])])) is None  # no dictionary
    with_null = pa.DictionaryArray.from_arrays(pa.array([0, 1], pa.int32()), pa.array(["a", None]))
    assert categorical(pa.chunked_array([with_null])) is None
    assert categorical(pa.chunked_array([], type=pa.dictionary(pa.int32(), pa.string()))) is None
