"""The batched Arrow loader builds the same tables as the per-game pandas loader it replaced.

tests/golden/loader_tables.json holds digests (dtypes, categories, row counts, value hashes,
audit counts, selection, skipped-line warnings) made by running tests/loader_digest.py on
main's loader (commit b9faaf2, before the batched loader); here the same digests are taken of
the current loader, cold (cache built) and warm (cache read), on the bundled demo games, the
versioned log fixtures, both original corpora and a corpus of damaged games. Regenerate the
golden file only when the tables change on purpose.

``fixtures_v3`` (compact probe records, newer than that loader) was added later: its digests are
the loader's at 67c4d1d, taken once with the scanner's fast path and once with the full decoder
behind it (equal), so the compact path's columns (``probe_seq`` included) are pinned too.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.loader_digest import corpora, corpus_digest

GOLDEN = json.loads((Path(__file__).parent / "golden" / "loader_tables.json").read_text())


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_tables_equal_previous_loader(name, tmp_path):
    path = corpora(tmp_path)[name]
    got = corpus_digest(path, tmp_path / "cache")
    for run in ("cold", "warm"):
        want = GOLDEN[name][run]
        for key in want:
            assert got[run][key] == want[key], f"{name} {run} {key}"
