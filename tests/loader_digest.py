"""Digests of the analytics tables a loader builds, to compare two loader implementations.

``python tests/loader_digest.py OUT.json`` (run with ``PYTHONPATH`` at the loader's checkout)
writes, for every corpus in :func:`corpora`, each table's dtypes, categories, row count and
a hash of its values (``pandas.util.hash_pandas_object``), plus the audit counts, the
selection and the loader's warnings. tests/golden/loader_tables.json holds the digests of the
per-game pandas loader this branch replaced (main at b9faaf2); test_analytics_loader_equiv.py
checks the current loader against them. Paths are made relative to the corpus root.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
import warnings
from pathlib import Path
from typing import Any

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
TABLES = ("games", "players", "events", "votes", "probes", "ra", "sr", "sm", "pp", "pa")


def make_malformed(dest: Path) -> Path:
    """Three demo games damaged the ways the loader must tolerate (deterministic)."""
    src = sorted(d for d in (ROOT / "data" / "demo").iterdir() if (d / "game.jsonl").is_file())[:4]
    for d in src:
        shutil.copytree(d, dest / d.name, dirs_exist_ok=True)
    a, b, c, e = (dest / d.name for d in src)
    g = (a / "game.jsonl").read_bytes().split(b"\n")
    g.insert(3, b'{"kind": "oops", "round": 1e30, "msg_seq": true}')
    g.insert(4, b"not json at all")
    g.insert(5, b'{"kind": [], "player": 7}')
    g.insert(6, b"\xff\xfe bad utf8")
    (a / "game.jsonl").write_bytes(b"\n".join(g) + b'{"kind": "day_vote", "resp')  # torn last line
    p = (a / "introspection.jsonl").read_bytes().split(b"\n")
    p.insert(2, b'{"player_name": "Nobody", "probe_id": "role_assessment", "answer_parsed": [{"player": "X", '
                b'"guessed_role": "Mafia", "confidence": NaN}, 5], "timestamp": "x", "round": "2"}')
    p.insert(3, b"[1, 2, 3]")
    (a / "introspection.jsonl").write_bytes(b"\n".join(p))
    lines = (b / "game.jsonl").read_bytes().splitlines()
    (b / "game.jsonl").write_bytes(b"\n".join(lines + lines[:1]) + b"\n")  # a second setup record
    (c / "game.jsonl").write_bytes(b'{"kind": "day_discuss", "player": "A", "response": "hi"}\n')  # no setup
    (e / "introspection.jsonl").unlink()  # transcript only
    return dest


def corpora(tmp: Path) -> dict[str, Path]:
    out = {"demo": ROOT / "data" / "demo"}
    for v in ("v0", "v1", "v2", "v3"):
        out[f"fixtures_{v}"] = ROOT / "tests" / "fixtures" / "logs" / v
    for name in ("mafiascope_en_demo", "mafiascope_ru_legacy"):
        out[name] = ROOT / "data" / "corpus" / name
    out["malformed"] = make_malformed(tmp / "malformed")
    return out


def loaded_corpora(tmp: Path, names: tuple[str, ...]) -> dict[str, Any]:
    """The named corpora of :func:`corpora`, loaded with forks, unprobed games and one worker, their
    analytics cache under ``tmp``."""
    from mafiascope.analytics.corpus import load_corpus

    paths = corpora(tmp)
    return {n: load_corpus(paths[n], cache_dir=tmp / "cache", probed_only=False, include_forks=True, workers=1)
            for n in names}


def _frame_digest(df: pd.DataFrame, root: str) -> dict[str, Any]:
    df = df.reset_index(drop=True)
    if "path" in df.columns:
        df = df.assign(path=df["path"].astype(str).str.replace(root, "<root>", regex=False))
    cats = {c: [str(x) for x in df[c].cat.categories] for c in df.columns if isinstance(df[c].dtype, pd.CategoricalDtype)}
    h = hashlib.sha256(pd.util.hash_pandas_object(df, index=False).to_numpy().tobytes()).hexdigest() if len(df) else ""
    return {"columns": list(df.columns), "dtypes": [str(t) for t in df.dtypes], "categories": cats, "rows": len(df),
            "hash": h}


def corpus_digest(path: Path, cache: Path) -> dict[str, Any]:
    from mafiascope.analytics.corpus import load_corpus

    root = str(path.resolve())
    out: dict[str, Any] = {}
    for run in ("cold", "warm"):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            c = load_corpus(path, cache_dir=cache, probed_only=False, include_forks=True, workers=1)
        d = {t: _frame_digest(getattr(c, t), root) for t in TABLES}
        d["event_texts"] = _frame_digest(c.event_texts()[["g", "ev", "text"]], root)
        d["audit"] = {k: dict(sorted(v.items())) for k, v in sorted(c.audit.items())}
        sel = dict(c.selection)
        sel["sources"] = ["<root>"]
        d["selection"] = sel
        d["warnings"] = sorted(str(w.message).replace(root, "<root>") for w in caught)
        out[run] = d
    return out


def all_digests(tmp: Path) -> dict[str, Any]:
    return {name: corpus_digest(p, tmp / f"cache-{name}") for name, p in corpora(tmp).items()}


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as t:
        Path(sys.argv[1]).write_text(json.dumps(all_digests(Path(t)), indent=1, sort_keys=True) + "\n")
