"""The load's directory scan (analytics/game_dirs.py) finds what list_game_dirs + Path.resolve found,
and a warm load that reuses the scan's stats still sees every change to a game's files."""

from __future__ import annotations

import glob
import json
import os
import shutil
from pathlib import Path

import pandas as pd
import pytest

from mafiascope.analytics import cache as cache_mod
from mafiascope.analytics.cache import cache_dir_for, open_warm
from mafiascope.analytics.corpus import find_game_dirs, load_corpus, pending_corpus
from mafiascope.analytics.game_dirs import scan
from mafiascope.analytics.load import TABLES
from mafiascope.logs.io import is_game_dir, list_game_dirs

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "data" / "demo"


def _reference(sources: list) -> list[Path]:
    """The previous find_game_dirs: list_game_dirs, then Path.resolve."""
    out: dict[str, Path] = {}
    for s in sources:
        s = str(s)
        paths = [Path(p) for p in sorted(glob.glob(s))] if any(ch in s for ch in "*?[") else [Path(s)]
        for p in paths:
            for d in list_game_dirs(p) if not is_game_dir(p) else [p]:
                out[str(d.resolve())] = d.resolve()
    return list(out.values())


def _game(d: Path, text: str = "{}\n") -> None:
    d.mkdir(parents=True, exist_ok=True)
    (d / "game.jsonl").write_text(text)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    r = tmp_path / "root"
    for name in ("b-game", "a-game", "Z-upper", "g 1", "g-10", "g-9"):
        _game(r / name)
    _game(r / "batch" / "x2")
    _game(r / "batch" / "x1")
    (r / "batch" / "notes").mkdir()
    (r / "batch" / "file.txt").write_text("x")
    (r / "empty").mkdir()
    (r / "top.txt").write_text("x")
    (r / "not-a-game").mkdir()
    (r / "not-a-game" / "game.jsonl").mkdir()  # a directory named like the log: no game
    _game(tmp_path / "elsewhere" / "far")
    (r / "link-game").symlink_to(tmp_path / "elsewhere" / "far", target_is_directory=True)
    (r / "link-dup").symlink_to(r / "a-game", target_is_directory=True)  # the same game twice: once
    (r / "batch" / "link-x").symlink_to(tmp_path / "elsewhere" / "far", target_is_directory=True)
    (r / "dangling").symlink_to(tmp_path / "nowhere", target_is_directory=True)
    (r / "loop").symlink_to(r / "loop")
    _game(r / "log-link")
    (r / "log-link" / "game.jsonl").unlink()
    (r / "log-link" / "game.jsonl").symlink_to(r / "a-game" / "game.jsonl")  # a symlinked log counts
    (tmp_path / "root-link").symlink_to(r, target_is_directory=True)
    return tmp_path


def test_scan_finds_what_list_game_dirs_found(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    r = tree / "root"
    monkeypatch.chdir(r)
    cases = [[r], [tree / "root-link"], [str(r) + "/"], [str(r / "*game")], [str(tree / "root-link" / "g-?")],
             [r / "a-game"], [r / "link-game"], [tree / "root-link" / "batch"], [tree / "root" / ".." / "root"],
             ["."], ["batch"], ["a-game"], [r / "batch", r, r / "a-game"], [r / "missing"], [r / "top.txt"],
             [str(r / "[ab]*")], [r / "batch" / ".."]]
    for sources in cases:
        want = _reference(sources)
        assert find_game_dirs(sources) == want, sources
        found = scan(sources)
        by_parent: dict[Path, list[Path]] = {}
        for d in want:
            by_parent.setdefault(d.parent, []).append(d)
        assert found.dirs == dict(sorted(by_parent.items())), sources
        assert list(found.dirs) == sorted(by_parent), sources
        for parent, dirs in found.dirs.items():
            assert sorted(found.stats[parent]) == sorted(d.name for d in dirs)
            for d in dirs:
                st, ref = found.stats[parent][d.name], os.stat(d / "game.jsonl")
                assert (st.st_size, st.st_mtime_ns, st.st_ino) == (ref.st_size, ref.st_mtime_ns, ref.st_ino)
    assert find_game_dirs(r) == _reference([r]) and len(_reference([r])) == 10


def _same(a, b) -> None:
    assert a.game_ids == b.game_ids
    assert a.audit == b.audit
    for t in TABLES:  # an incremental rebuild puts the kept games' rows first: the same rows per game
        x, y = (getattr(c, t).sort_values("g", kind="stable").reset_index(drop=True) for c in (a, b))
        pd.testing.assert_frame_equal(x, y, check_exact=True, obj=t)


@pytest.mark.parametrize("change", ["game_log", "probe_log", "probe_log_removed", "vanished", "log_is_a_dir"])
def test_warm_load_after_a_change_equals_a_fresh_load(tmp_path: Path, change: str,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "logs"
    for d in sorted(DEMO.iterdir())[:3]:  # three games keep the test fast
        shutil.copytree(d, root / d.name)
    cache = tmp_path / "cache"
    load_corpus(root, cache_dir=cache, probed_only=False)
    assert pending_corpus(root, cache_dir=cache) == 0

    def serves() -> bool:  # whether the warm path (the scan's stats) takes the cache as it is
        found = scan(root)
        (parent, dirs), = found.dirs.items()
        return open_warm(parent, dirs, cache, found.stats[parent]) is not None

    assert serves()
    g = sorted(d for d in root.iterdir() if (d / "introspection.jsonl").is_file())[1]
    if change == "game_log":
        (g / "game.jsonl").write_bytes((g / "game.jsonl").read_bytes() + b'{"kind": "oops", "round": 1}\n')
    elif change == "probe_log":
        lines = (g / "introspection.jsonl").read_bytes().splitlines(keepends=True)
        (g / "introspection.jsonl").write_bytes(b"".join(lines[: len(lines) // 2]))
    elif change == "probe_log_removed":
        (g / "introspection.jsonl").unlink()
    elif change == "vanished":
        shutil.rmtree(g)
    else:  # the log replaced by a directory: no longer a game
        (g / "game.jsonl").unlink()
        (g / "game.jsonl").mkdir()
    assert pending_corpus(root, cache_dir=cache) == (0 if change in ("vanished", "log_is_a_dir") else 1)
    assert not serves()
    parsed: list[str] = []
    real = cache_mod._parse_all
    monkeypatch.setattr(cache_mod, "_parse_all", lambda paths, *a: (parsed.extend(paths), real(paths, *a))[1])
    warm = load_corpus(root, cache_dir=cache, probed_only=False)
    assert [Path(p).name for p in parsed] == ([] if change in ("vanished", "log_is_a_dir") else [g.name])
    manifest = json.loads((cache_dir_for(root, cache) / "manifest.json").read_text())
    assert (g.name in manifest["games"]) == (change not in ("vanished", "log_is_a_dir"))  # the cache dropped it
    parsed.clear()
    assert load_corpus(root, cache_dir=cache, probed_only=False).game_ids == warm.game_ids and not parsed
    assert serves()
    fresh = load_corpus(root, cache_dir=tmp_path / "fresh", probed_only=False)
    _same(warm, fresh)
    assert (g.name in warm.game_ids) == (change not in ("vanished", "log_is_a_dir"))
