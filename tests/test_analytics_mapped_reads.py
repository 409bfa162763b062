"""Cached tables read through a memory map of their open file (analytics/mapped_read.py)."""

from __future__ import annotations

import os
import shutil
import sys
import threading
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from mafiascope.analytics import cache, mapped_read
from mafiascope.analytics.cache import DICT_COLUMNS, TABLES, open_table, read_columns
from mafiascope.analytics.mapped_read import read_mapped

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from mafiascope.analytics.corpus import load_corpus

    d = tmp_path_factory.mktemp("mapped-cache")
    load_corpus(ROOT / "data" / "demo", cache_dir=d, probed_only=False)
    found = sorted(p.parent for p in d.rglob("manifest.json"))
    assert found and all((found[0] / f"{t}.parquet").is_file() for t in TABLES)
    return found[0]


def _dicts(table: str) -> list[str]:
    return ["game_id", *DICT_COLUMNS.get(table, [])]


def _maps_of(path: Path) -> int:
    with open("/proc/self/maps") as f:
        return sum(str(path) in line for line in f)


@pytest.mark.parametrize("table", TABLES)
def test_mapped_read_equals_the_plain_read(tables: Path, table: str) -> None:
    path = tables / f"{table}.parquet"
    pf = open_table(path, table)
    plain = pq.ParquetFile(path, read_dictionary=_dicts(table))
    for cols in ([c] for c in pf.schema_arrow.names):
        assert read_mapped(pf, cols, _dicts(table)).equals(plain.read(columns=cols))
    every = pf.schema_arrow.names
    assert read_mapped(pf, every, _dicts(table), use_threads=False).equals(plain.read(columns=every))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/maps")
def test_no_map_outlives_a_read(tables: Path) -> None:
    """The file's pages are not kept mapped (they would count in the process's memory)."""
    for table in TABLES:
        path = tables / f"{table}.parquet"
        pf = open_table(path, table)
        df = read_columns(pf, table, [c for c in pf.schema_arrow.names if c != "game_id"])
        assert len(df.columns) and _maps_of(path) == 0


def test_rows_stay_readable_after_the_file_is_replaced(tables: Path, tmp_path: Path) -> None:
    """The map is of the open file, not of the path: a rebuild that replaces the file does not
    change what an already opened table reads."""
    path = tmp_path / "probes.parquet"
    shutil.copy(tables / "probes.parquet", path)
    pf = open_table(path, "probes")
    before = pq.read_table(path, read_dictionary=_dicts("probes"))
    other = tmp_path / "other.parquet"
    pq.write_table(before.slice(0, 3), other)
    os.replace(other, path)
    assert pq.ParquetFile(path).metadata.num_rows == 3
    assert read_mapped(pf, before.column_names, _dicts("probes")).equals(before)


def test_without_a_map_the_same_rows(tables: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tables / "probes.parquet"
    pf = open_table(path, "probes")
    want = read_mapped(pf, pf.schema_arrow.names, _dicts("probes"))

    def no_mmap(*a: Any, **k: Any) -> Any:
        raise OSError("this file system cannot map files")

    monkeypatch.setattr(mapped_read.mmap, "mmap", no_mmap)
    assert read_mapped(pf, pf.schema_arrow.names, _dicts("probes")).equals(want)
    unopened = pq.ParquetFile(path, read_dictionary=_dicts("probes"))  # no open file kept beside it
    assert read_mapped(unopened, pf.schema_arrow.names, _dicts("probes")).equals(want)


def test_two_threads_read_one_table_at_once(tables: Path) -> None:
    pf = open_table(tables / "probes.parquet", "probes")
    cols = pf.schema_arrow.names
    want = read_mapped(pf, cols, _dicts("probes"))
    got: list[Any] = []
    start = threading.Barrier(2)

    def read() -> None:
        start.wait(5)
        for _ in range(5):
            got.append(read_mapped(pf, cols, _dicts("probes")))

    threads = [threading.Thread(target=read) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert len(got) == 10 and all(g.equals(want) for g in got)


def test_the_cache_is_written_with_its_codec(tables: Path) -> None:
    """Every column chunk of every table: the codec chosen for mapped reads (cache version 14)."""
    assert cache.CODEC == "lz4" and cache.CACHE_VERSION >= 14
    for table in TABLES:
        md = pq.ParquetFile(tables / f"{table}.parquet").metadata
        seen = {md.row_group(i).column(j).compression for i in range(md.num_row_groups) for j in range(md.num_columns)}
        assert seen == {"LZ4"}, (table, seen)


def _nullable(t: pa.Table) -> pa.Table:
    return t.cast(pa.schema([f.with_nullable(True) for f in t.schema]))


@pytest.mark.parametrize("version,codec,old", [(13, "zstd", lambda t: t), (14, "lz4", _nullable)])
def test_a_cache_of_the_previous_version_is_rebuilt(tmp_path: Path, version: int, codec: str, old: Any) -> None:
    """A cache an earlier version wrote (13: zstd; 14: every field nullable) is not read as is: the next
    load parses the games again and writes the tables as this version does; the corpus is the same."""
    import json

    from mafiascope.analytics.corpus import load_corpus
    from mafiascope.analytics.game_dirs import find_game_dirs
    from mafiascope.analytics.modes import Mode
    from mafiascope.analytics.report import build_report

    src = ROOT / "data" / "demo"
    first = load_corpus(src, cache_dir=tmp_path, probed_only=False)
    ids, rep = first.game_ids, build_report(first, Mode(boot=50))
    cpath = sorted(p.parent for p in tmp_path.rglob("manifest.json"))[0]
    for table in TABLES:  # what that version wrote: the same tables (replaced, as a rebuild does)
        path = cpath / f"{table}.parquet"
        pq.write_table(old(pq.read_table(path)), tmp_path / "old.parquet", compression=codec)
        os.replace(tmp_path / "old.parquet", path)
    man = json.loads((cpath / "manifest.json").read_text())
    (cpath / "manifest.json").write_text(json.dumps({**man, "version": version}))
    assert cache.pending_games(src, find_game_dirs(src), cache_dir=tmp_path) == len(ids)
    again = load_corpus(src, cache_dir=tmp_path, probed_only=False)
    assert json.loads((cpath / "manifest.json").read_text())["version"] == cache.CACHE_VERSION
    md = pq.ParquetFile(cpath / "probes.parquet").metadata
    assert md.row_group(0).column(0).compression == "LZ4" and md.schema.column(0).max_definition_level == 0
    assert again.game_ids == ids and build_report(again, Mode(boot=50)) == rep


def test_the_game_id_and_numeric_columns_are_required(tables: Path) -> None:
    """Cache version 15: the game id and every numeric column are required Parquet fields (no
    definition levels to decode); string columns, which may be missing, stay optional."""
    from mafiascope.analytics.batches import NUMERIC

    for table in TABLES:
        pf = pq.ParquetFile(tables / f"{table}.parquet")
        for j, field in enumerate(pf.schema_arrow):
            required = field.name == "game_id" or field.name in NUMERIC[table]
            assert field.nullable is not required, (table, field.name)
            assert pf.metadata.schema.column(j).max_definition_level == (0 if required else 1), (table, field.name)
    players = read_columns(open_table(tables / "players.parquet", "players"), "players", ["model", "seat"])
    assert players["seat"].dtype.kind == "i" and players["seat"].notna().all()


def test_a_missing_string_stays_missing(tmp_path: Path) -> None:
    """A null in an optional string column is written and read back as missing; the cache's writer
    (``batch_tables``' ``Table.from_arrays`` into a ``ParquetWriter``) rejects a null in a required field."""
    from mafiascope.analytics.batches import SCHEMAS

    schema = SCHEMAS["players"]
    cols = {f.name: pa.array([None] if f.nullable else ([0] if not pa.types.is_string(f.type) else ["g"]), type=f.type)
            for f in schema}
    path = tmp_path / "players.parquet"
    pq.write_table(pa.Table.from_pydict(cols, schema=schema), path)
    back = read_columns(open_table(path, "players"), "players", ["model", "name"])
    assert back["model"].isna().all() and back["name"].isna().all()
    bad = pa.Table.from_arrays([pa.array([None], type=f.type) if f.name == "seat" else cols[f.name] for f in schema],
                               schema=schema)
    with pq.ParquetWriter(tmp_path / "bad.parquet", schema) as w, pytest.raises(pa.ArrowInvalid, match="seat"):
        w.write_table(bad)
